"""broadcast_in_dim, reshape, transpose, squeeze, rev: every rule, on random shapes."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import plugax
import plugax.lax as lax
from plugax.testing import DEFAULT_RULES, check_primitive, rand
from plugax.extend import broadcast_in_dim_p, reshape_p, transpose_p   # the kernel's
from plugax_shape.structural import rev_p, squeeze_p

ALL = (*DEFAULT_RULES, "transpose")   # the rule checks and those of traced use
fast = settings(max_examples=25, deadline=None)
shapes = st.lists(st.integers(0, 3), max_size=3).map(tuple)


@st.composite
def broadcasts(draw):
    out = draw(st.lists(st.integers(0, 3), max_size=4).map(tuple))
    dims = tuple(d for d in range(len(out)) if draw(st.booleans()))
    operand = tuple(draw(st.sampled_from([1, out[d]])) for d in dims)
    return operand, out, dims


@fast
@given(broadcasts())
def test_broadcast_in_dim(case):
    operand, shape, dims = case
    x = rand(operand)
    check_primitive(broadcast_in_dim_p, x, rules=ALL, linear_argnums=0, shape=shape,
                    broadcast_dimensions=dims)
    want = np.broadcast_to(x.reshape([operand[dims.index(d)] if d in dims else 1
                                      for d in range(len(shape))]), shape)
    np.testing.assert_array_equal(lax.broadcast_in_dim(x, shape, dims), want)


@st.composite
def reshapes(draw):
    shape = draw(shapes)
    size = int(np.prod(shape))
    new = draw(st.sampled_from([(size,), (1, size), (size, 1), shape[::-1] if size else (0, 5)]))
    perm = draw(st.none() | st.permutations(range(len(shape))).map(tuple))
    return shape, new, perm


@fast
@given(reshapes())
def test_reshape(case):
    shape, new, perm = case
    x = rand(shape)
    check_primitive(reshape_p, x, rules=ALL, linear_argnums=0, new_sizes=new, dimensions=perm)
    want = (x if perm is None else x.transpose(perm)).reshape(new)
    np.testing.assert_array_equal(lax.reshape(x, new, perm), want)


@fast
@given(shapes.flatmap(lambda s: st.tuples(st.just(s), st.permutations(range(len(s))))))
def test_transpose(case):
    shape, perm = case
    x = rand(shape)
    check_primitive(transpose_p, x, rules=ALL, linear_argnums=0, permutation=tuple(perm))
    np.testing.assert_array_equal(lax.transpose(x, perm), x.transpose(perm))


@fast
@given(st.lists(st.sampled_from([1, 2, 0]), max_size=4).map(tuple), st.data())
def test_squeeze(shape, data):
    ones = [i for i, s in enumerate(shape) if s == 1]
    dims = tuple(sorted(data.draw(st.sets(st.sampled_from(ones)) if ones else st.just(set()))))
    x = rand(shape)
    check_primitive(squeeze_p, x, rules=ALL, linear_argnums=0, dimensions=dims)
    np.testing.assert_array_equal(lax.squeeze(x, dims), np.squeeze(x, dims))


@fast
@given(shapes.flatmap(lambda s: st.tuples(st.just(s), st.sets(st.sampled_from(range(len(s))))
                                          if s else st.just(set()))))
def test_rev(case):
    shape, dims = case
    x = rand(shape)
    check_primitive(rev_p, x, rules=ALL, linear_argnums=0, dimensions=tuple(sorted(dims)))
    np.testing.assert_array_equal(lax.rev(x, tuple(dims)), np.flip(x, tuple(dims)))


def test_expand_dims_is_broadcast_in_dim():
    closed = plugax.make_jaxpr(lambda x: lax.expand_dims(x, (0, -1)))(rand((2, 3)))
    [eqn] = closed.jaxpr.eqns
    assert eqn.primitive is broadcast_in_dim_p
    assert eqn.params == {"shape": (1, 2, 3, 1), "broadcast_dimensions": (1, 2)}
    check_primitive(lambda x: lax.expand_dims(x, (1,)), rand((2, 3)))


def test_weak_type_passes_through():
    weak = plugax.Array(np.float32(2.0), weak_type=True)
    out = lax.broadcast_in_dim(weak, (3,), ())
    assert out.weak_type and out.dtype == np.float32
    check_primitive(broadcast_in_dim_p, weak, shape=(3,), broadcast_dimensions=())


@pytest.mark.parametrize("call, words", [
    (lambda: lax.broadcast_in_dim(rand((2,)), (3,), (0,)), ["broadcast_in_dim", "f32[2]",
                                                             "size 1"]),
    (lambda: lax.broadcast_in_dim(rand((2, 2)), (2, 2), (1, 0)), ["strictly increasing"]),
    (lambda: lax.reshape(rand((2, 3)), (4,)), ["reshape", "size 6", "same product"]),
    (lambda: lax.transpose(rand((2, 3)), (0, 0)), ["transpose", "permutation"]),
    (lambda: lax.squeeze(rand((2, 3)), (0,)), ["squeeze", "size 1", "f32[2,3]"]),
    (lambda: lax.rev(rand((2,)), (1,)), ["rev", "axes"]),
])
def test_errors_name_primitive_shapes_and_fix(call, words):
    with pytest.raises(plugax.ShapeError) as info:
        call()
    for word in words + ["Fix:"]:
        assert word in str(info.value)


def test_errors_also_when_traced():
    with pytest.raises(plugax.ShapeError, match="reshape"):
        plugax.make_jaxpr(lambda x: lax.reshape(x, (5,)))(rand((2, 3)))


def test_vmap_machinery_uses_transpose_and_broadcast():
    x = rand((2, 3, 4))
    out = plugax.vmap(lambda v: lax.transpose(v, (1, 0)), in_axes=2, out_axes=1)(x)
    np.testing.assert_array_equal(out, np.stack([x[:, :, i].T for i in range(4)], 1))
