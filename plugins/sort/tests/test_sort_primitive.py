"""The sort primitive's semantics, as JAX defines them: the float total order
(-inf < ... < -0.0 == 0.0 < ... < inf < NaN, every NaN equal), stability, several
keys, and the same results eagerly (NumPy impl) and under jit (stablehlo.sort)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import plugax
import plugax.numpy as pnp
from plugax import lax
from plugax.extend import ShapeError
from plugax.testing import x64

NAN_BITS = np.array([0x7FC00000, 0xFFC00000, 0x7FC00001], np.uint32).view(np.float32)


def _bits(x):
    x = np.asarray(x)
    return x.view(f"u{x.dtype.itemsize}") if x.dtype.kind == "f" else x


def _reference_sort(operands, dimension, num_keys):
    """NumPy's stable sort: NaNs last (all equal), -0.0 == 0.0, ties in input order."""
    moved = [np.moveaxis(np.asarray(o), dimension, -1) for o in operands]
    keys = []
    for k in moved[:num_keys][::-1]:     # np.lexsort: last key primary
        if k.dtype.kind == "f":
            nan = np.isnan(k)
            keys += [np.where(nan, 0, k), nan]
        else:
            keys.append(k)
    perm = np.lexsort(keys, axis=-1)
    return [np.moveaxis(np.take_along_axis(m, perm, -1), -1, dimension) for m in moved]


def _both(fn, *args):
    return fn(*args), plugax.jit(fn)(*args)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_float_total_order_eager_and_jit(dtype):
    x = np.array([0.0, -0.0, np.nan, -np.inf, 1.5, np.inf, -1.0, 0.0, -0.0], np.float32)
    x = np.concatenate([x, NAN_BITS]).astype(dtype)
    expected = [-np.inf, -1.0, 0.0, -0.0, 0.0, -0.0, 1.5, np.inf] + [np.nan] * 4
    for out in _both(lax.sort, x):
        out = np.asarray(out).astype(np.float32)
        np.testing.assert_array_equal(out, np.float32(expected))
        # zeros keep their signs, in input order (stable): 0, -0, 0, -0
        np.testing.assert_array_equal(np.signbit(out[2:6]), [False, True, False, True])


def test_nan_payloads_travel_unchanged():
    x = np.concatenate([NAN_BITS, np.float32([2.0, -3.0])])
    for out in _both(lax.sort, x):
        np.testing.assert_array_equal(_bits(out)[2:], _bits(NAN_BITS))   # stable among NaNs


@pytest.mark.parametrize("dtype", ["int8", "int32", "uint8", "uint32", "bool"])
def test_integer_and_bool_keys(dtype):
    rng = np.random.default_rng(1)
    x = (rng.integers(0, 2, (3, 7)) if dtype == "bool" else
         rng.integers(0 if dtype.startswith("u") else -50, 100, (3, 7))).astype(dtype)
    for dimension in (0, 1):
        for out in _both(lambda v: lax.sort(v, dimension=dimension), x):
            np.testing.assert_array_equal(out, np.sort(x, axis=dimension))
            assert out.dtype == x.dtype


def test_stability_and_riders():
    keys = np.array([3.0, 1.0, 3.0, 1.0, np.nan, 0.0, -0.0, np.nan], np.float32)
    vals = np.arange(8, dtype=np.int32)
    for k, v in _both(lax.sort_key_val, keys, vals):
        np.testing.assert_array_equal(v, [5, 6, 1, 3, 0, 2, 4, 7])
        np.testing.assert_array_equal(_bits(k), _bits(keys[[5, 6, 1, 3, 0, 2, 4, 7]]))


def test_lexicographic_keys():
    rng = np.random.default_rng(2)
    a = rng.integers(0, 3, (4, 6)).astype(np.int32)
    b = rng.integers(0, 3, (4, 6)).astype(np.float32)
    b[0, :2] = np.nan
    c = rng.standard_normal((4, 6)).astype(np.float32)
    for num_keys in (1, 2, 3):
        expected = _reference_sort([a, b, c], 1, num_keys)
        for outs in _both(lambda *xs: lax.sort(xs, dimension=1, num_keys=num_keys), a, b, c):
            for o, e in zip(outs, expected):
                np.testing.assert_array_equal(_bits(o), _bits(e))


def test_errors_name_the_problem():
    with pytest.raises(ShapeError, match=r"equal shapes.*\(3,\) \(4,\)"):
        lax.sort((np.zeros(3), np.zeros(4)))
    with pytest.raises(ShapeError, match=r"equal shapes"):
        plugax.jit(lambda a, b: lax.sort((a, b)))(np.zeros(3), np.zeros(4))
    with pytest.raises(ValueError, match="num_keys=2 must equal 1 for a single operand"):
        lax.sort(np.zeros(3), num_keys=2)
    with pytest.raises(ValueError, match="between 1 and"):
        lax.sort((np.zeros(3), np.zeros(3)), num_keys=3)
    with pytest.raises(ValueError, match="out of bounds"):
        lax.sort(np.zeros((2, 3)), dimension=2)
    with pytest.raises(TypeError, match="at least one operand"):
        lax.sort(())


def test_jaxpr_and_negative_dimension():
    jaxpr = str(plugax.make_jaxpr(lambda x: lax.sort(x, dimension=-2))(np.ones((2, 3))))
    assert "sort[dimension=0 is_stable=True num_keys=1]" in jaxpr


def test_jvp_gathers_tangents_with_the_permutation():
    x = np.array([3.0, 1.0, 2.0])
    t = np.array([10.0, 20.0, 30.0])
    with x64():
        y, ty = plugax.jvp(lax.sort, (x,), (t,))
        np.testing.assert_array_equal(y, [1.0, 2.0, 3.0])
        np.testing.assert_array_equal(ty, [20.0, 30.0, 10.0])
        g = plugax.grad(lambda v: pnp.sum(lax.sort(v) * np.array([1.0, 2.0, 3.0])))(x)
        np.testing.assert_array_equal(g, [3.0, 1.0, 2.0])
        # integer riders get no tangent; float riders are permuted too
        (k, v), (tk, tv) = plugax.jvp(lambda v: lax.sort_key_val(np.array([2, 0, 1]), v),
                                      (t,), (x,))
        np.testing.assert_array_equal(v, [20.0, 30.0, 10.0])
        np.testing.assert_array_equal(tv, [1.0, 2.0, 3.0])


@pytest.mark.parametrize("in_axes", [(0, 0), (1, 1), (2, 0), (0, None), (None, 1), (2, 2)])
def test_vmap_matches_a_loop(in_axes):
    """Every batch-axis placement of keys and riders, an unbatched operand included."""
    rng = np.random.default_rng(3)
    keys = rng.integers(0, 3, (3, 4, 5)).astype(np.float32)     # batch of 3 (4, 5) examples
    keys[0, 1, :2] = np.nan
    vals = rng.standard_normal((3, 4, 5)).astype(np.float32)
    args = [x[0] if ax is None else np.moveaxis(x, 0, ax) for x, ax in zip((keys, vals), in_axes)]
    fn = lambda p, q: lax.sort((p, q), dimension=0, num_keys=1)
    got = plugax.vmap(fn, in_axes=in_axes)(*args)
    for i in range(3):
        want = _reference_sort([keys[0] if in_axes[0] is None else keys[i],
                                vals[0] if in_axes[1] is None else vals[i]], 0, 1)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(np.asarray(g)[i], w)


_VALUES = st.sampled_from([np.nan, -np.nan, -0.0, 0.0, 1.0, -1.0, 2.5, np.inf, -np.inf])


@settings(max_examples=25, derandomize=True, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data())
def test_hypothesis_matches_numpy(shape, data):
    """Random shapes and axes over a pool full of NaNs, signed zeros and ties."""
    values = data.draw(st.lists(_VALUES, min_size=int(np.prod(shape)),
                                max_size=int(np.prod(shape))))
    x = np.array(values, np.float32).reshape(shape)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    riders = np.arange(x.size, dtype=np.int32).reshape(shape)
    expected = _reference_sort([x, riders], axis % len(shape), 1)
    for outs in _both(lambda k, v: lax.sort_key_val(k, v, dimension=axis), x, riders):
        np.testing.assert_array_equal(outs[1], expected[1])
        np.testing.assert_array_equal(_bits(outs[0]), _bits(expected[0]))


def _xla_total_order(v):
    """A Python sort key for XLA's TOTALORDER of one float32: sign-magnitude bits."""
    bits = int(np.float32(v).view(np.uint32))
    return -(bits & 0x7FFFFFFF) - 1 if bits >> 31 else bits


_TOP_K_VALUES = st.sampled_from([np.nan, -np.nan, -0.0, 0.0, 1.0, -1.0, np.inf, -np.inf])


@settings(max_examples=25, derandomize=True, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data())
def test_hypothesis_top_k_eager_and_jit(shape, data):
    """top_k over NaNs of both signs, signed zeros and ties, every axis and k: largest
    first in TOTALORDER, equal entries lowest index first, eagerly and under jit."""
    values = data.draw(st.lists(_TOP_K_VALUES, min_size=int(np.prod(shape)),
                                max_size=int(np.prod(shape))))
    x = np.array(values, np.float32).reshape(shape)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    k = data.draw(st.integers(0, shape[axis]))
    moved = np.moveaxis(x, axis, -1)
    want = np.zeros(moved.shape[:-1] + (k,), np.int32)
    for i in np.ndindex(moved.shape[:-1]):
        row = moved[i]
        order = sorted(range(len(row)), key=lambda j: (-_xla_total_order(row[j]), j))
        want[i] = order[:k]
    want = np.moveaxis(want, -1, axis)
    for vals, idx in _both(lambda v: lax.top_k(v, k, axis=axis), x):
        np.testing.assert_array_equal(idx, want)
        np.testing.assert_array_equal(_bits(vals), _bits(np.take_along_axis(x, want, axis)))
