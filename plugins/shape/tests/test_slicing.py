"""slice, pad, concatenate, dynamic_slice, dynamic_update_slice: every rule kind."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import plugax
import plugax.lax as lax
from plugax.testing import DEFAULT_RULES, check_primitive, check_transpose, check_vmap, rand
from plugax_shape.slicing import dynamic_slice_p, dynamic_update_slice_p, pad_p, slice_p
from plugax.extend import concatenate_p   # the kernel's (with split, for the Jacobians)

ALL = (*DEFAULT_RULES, "transpose")   # the rule checks and those of traced use
fast = settings(max_examples=20, deadline=None)
shapes = st.lists(st.integers(0, 4), min_size=1, max_size=3).map(tuple)


def needs_elementwise(*names):
    missing = [n for n in names if not hasattr(lax, n)]
    return pytest.mark.skipif(bool(missing), reason=f"elementwise family lacks {missing}")


@st.composite
def slices(draw):
    shape = draw(shapes)
    starts, limits, strides = [], [], []
    for n in shape:
        s = draw(st.integers(0, n))
        starts.append(s), limits.append(draw(st.integers(s, n)))
        strides.append(draw(st.integers(1, 3)))
    return shape, tuple(starts), tuple(limits), draw(st.sampled_from([None, tuple(strides)]))


@fast
@given(slices())
def test_slice(case):
    shape, starts, limits, strides = case
    x = rand(shape)
    check_primitive(slice_p, x, rules=ALL, linear_argnums=0, start_indices=starts,
                    limit_indices=limits, strides=strides)
    want = x[tuple(slice(*t) for t in zip(starts, limits, strides or [1] * len(shape)))]
    np.testing.assert_array_equal(lax.slice(x, starts, limits, strides), want)


@st.composite
def pads(draw):
    shape = draw(shapes)
    config = []
    for n in shape:
        interior = draw(st.integers(0, 2))
        dilated = n + max(n - 1, 0) * interior
        lo = draw(st.integers(-dilated, 2))
        hi = draw(st.integers(-(dilated + lo) if dilated + lo > 0 else 0, 2))
        config.append((lo, hi, interior))
    return shape, tuple(config)


def numpy_pad(x, value, config):
    """Reference: dilate, pad positively, crop negatively."""
    for axis, (lo, hi, interior) in enumerate(config):
        n = x.shape[axis]
        dilated = np.full(x.shape[:axis] + (n + max(n - 1, 0) * interior,) + x.shape[axis + 1:],
                          value, x.dtype)
        index = [slice(None)] * x.ndim
        index[axis] = slice(None, None, interior + 1)
        dilated[tuple(index)] = x
        widths = [(0, 0)] * x.ndim
        widths[axis] = (max(lo, 0), max(hi, 0))
        x = np.pad(dilated, widths, constant_values=value)
        index[axis] = slice(max(-lo, 0), x.shape[axis] - max(-hi, 0))
        x = x[tuple(index)]
    return x


@fast
@given(pads())
def test_pad(case):
    shape, config = case
    x = rand(shape)
    rules = ("abstract_eval", "jvp", "vmap") if hasattr(lax, "select_n") else ("abstract_eval",
                                                                                "jvp")
    check_primitive(pad_p, x, np.float32(1.5), rules=rules, padding_config=config)
    # pad is linear in (operand, padding value) jointly; in the operand alone only when
    # the padding value is zero.
    check_transpose(pad_p, x, np.float32(0), linear_argnums=0, padding_config=config)
    if hasattr(lax, "sub"):
        check_transpose(pad_p, x, np.float32(1.5), linear_argnums=(0, 1), padding_config=config)
    np.testing.assert_array_equal(lax.pad(x, 1.5, config), numpy_pad(x, np.float32(1.5), config))


def test_pad_unbatched_value_vmap():
    x = rand((3, 2))
    check_vmap(lambda x: lax.pad(x, 0.0, ((1, -1, 1), (2, 0, 0))), x)


@needs_elementwise("select_n")
def test_pad_batched_padding_value_vmap():
    xs, vs = rand((4, 3)), rand((4,))
    out = plugax.vmap(lambda x, v: lax.pad(x, v, ((1, 2, 1),)))(xs, vs)
    np.testing.assert_array_equal(out, [numpy_pad(x, v, ((1, 2, 1),)) for x, v in zip(xs, vs)])


def test_pad_literal_and_jaxpr():
    text = str(plugax.make_jaxpr(lambda x: lax.pad(x, 0., ((1, -1, 1), (0, 0, 0))))(rand((2, 3))))
    assert "pad[padding_config=((1, -1, 1), (0, 0, 0))] a 0.0" in text


@fast
@given(shapes, st.data())
def test_concatenate(shape, data):
    axis = data.draw(st.integers(0, len(shape) - 1))
    sizes = data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=3))
    xs = [rand(shape[:axis] + (k,) + shape[axis + 1:], seed=i) for i, k in enumerate(sizes)]
    check_primitive(concatenate_p, *xs, rules=ALL, linear_argnums=tuple(range(len(xs))),
                    dimension=axis, vmap_options={"max_placements": 30})
    np.testing.assert_array_equal(lax.concatenate(xs, axis), np.concatenate(xs, axis))


def test_concatenate_transpose_with_only_some_linear():
    # Linear in one operand alone only when the others are zero.
    xs = [np.zeros((2, 3), np.float32), rand((2, 1)), np.zeros((2, 2), np.float32)]
    check_transpose(concatenate_p, *xs, linear_argnums=1, dimension=1)


@st.composite
def windows(draw):
    shape = draw(shapes)
    sizes = tuple(draw(st.integers(0, n)) for n in shape)
    starts = tuple(np.int32(draw(st.integers(-2, n + 2))) for n in shape)  # clamped
    return shape, sizes, starts


def _lax_starts(starts, shape, sizes):
    """lax's starts: negative ones count from the end (as in JAX), then the window is
    clamped into range (the primitive's rule)."""
    return [min(max(int(s) + n if s < 0 else int(s), 0), n - z)
            for s, n, z in zip(starts, shape, sizes)]


@fast
@given(windows())
def test_dynamic_slice(case):
    shape, sizes, starts = case
    x = rand(shape)
    rules = ALL if hasattr(lax, "clamp") else ("abstract_eval", "jvp", "transpose")
    check_primitive(dynamic_slice_p, x, *starts, rules=rules, linear_argnums=0,
                    slice_sizes=sizes, vmap_options={"max_placements": 12})
    clamped = _lax_starts(starts, shape, sizes)
    want = x[tuple(slice(s, s + z) for s, z in zip(clamped, sizes))]
    np.testing.assert_array_equal(lax.dynamic_slice(x, starts, sizes), want)


def test_dynamic_slice_unbatched_starts_vmap():
    x = rand((3, 4))
    check_vmap(lambda x: lax.dynamic_slice(x, (np.int32(1), np.int32(2)), (2, 2)), x)


@fast
@given(windows())
def test_dynamic_update_slice(case):
    shape, sizes, starts = case
    x, u = rand(shape), rand(sizes, seed=1)
    rules = ALL if hasattr(lax, "select_n") else ("abstract_eval", "jvp", "transpose")
    check_primitive(dynamic_update_slice_p, x, u, *starts, rules=rules, linear_argnums=(0, 1),
                    vmap_options={"max_placements": 12})
    clamped = _lax_starts(starts, shape, sizes)
    want = x.copy()
    want[tuple(slice(s, s + z) for s, z in zip(clamped, sizes))] = u
    np.testing.assert_array_equal(lax.dynamic_update_slice(x, u, starts), want)


def test_dynamic_update_slice_unbatched_starts_vmap():
    x, u = rand((3, 4)), rand((2, 2))
    check_vmap(lambda x, u: lax.dynamic_update_slice(x, u, (np.int32(1), np.int32(-1))), x, u)


def test_dynamic_slice_and_update_slice_are_transposes():
    x = rand((4, 5))
    check_transpose(dynamic_slice_p, x, np.int32(3), np.int32(1), linear_argnums=0,
                    slice_sizes=(2, 3))
    check_transpose(dynamic_update_slice_p, x, rand((2, 3)), np.int32(3), np.int32(1),
                    linear_argnums=(0, 1))
    check_transpose(dynamic_update_slice_p, np.zeros((4, 5), np.float32), rand((2, 3)),
                    np.int32(3), np.int32(1), linear_argnums=1)


@pytest.mark.parametrize("call, words", [
    (lambda: lax.slice(rand((3,)), (2,), (1,)), ["slice", "f32[3]", "start <= limit"]),
    (lambda: lax.slice(rand((3, 2)), (0,), (1,)), ["slice", "one start"]),
    (lambda: lax.pad(rand((3,)), np.int32(0), ((0, 0, 0),)), ["pad", "i32[]", "dtype"]),
    (lambda: lax.pad(rand((3,)), 0.0, ((-3, -1, 0),)), ["pad", "negative shape"]),
    (lambda: lax.concatenate([rand((2, 3)), rand((3, 3))], 1), ["concatenate", "f32[3,3]"]),
    (lambda: lax.dynamic_slice(rand((3,)), (1,), (4,)), ["dynamic_slice", "slice size"]),
    (lambda: lax.dynamic_slice(rand((3,)), (1.0,), (1,)), ["dynamic_slice", "integer"]),
    (lambda: lax.dynamic_update_slice(rand((3,)), rand((4,)), (0,)), ["dynamic_update_slice"]),
])
def test_errors_name_primitive_shapes_and_fix(call, words):
    with pytest.raises(plugax.ShapeError) as info:
        call()
    for word in words + ["Fix:"]:
        assert word in str(info.value)
