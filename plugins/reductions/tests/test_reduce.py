"""Rules of the axis reductions: reduce_sum/prod/max/min/and/or, argmax/argmin."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import plugax
import plugax.lax as lax
from plugax.extend import RuleContext, ShapeError, ShapedArray, UndefPrimal, rule_kinds
from plugax.testing import check_primitive, check_transpose, check_jvp
from plugax_reductions.reduce import (argmax_p, argmin_p, reduce_and_p, reduce_max_p,
                                      reduce_min_p, reduce_or_p, reduce_prod_p, reduce_sum_p)

SETTINGS = settings(max_examples=15, deadline=None)


@st.composite
def operand_and_axes(draw, max_rank=3, min_size=1):
    shape = tuple(draw(st.lists(st.integers(min_size, 3), min_size=0, max_size=max_rank)))
    axes = tuple(sorted(draw(st.sets(st.integers(0, max(len(shape) - 1, 0)),
                                     max_size=len(shape)))))
    seed = draw(st.integers(0, 2 ** 16))
    # distinct values: no ties, so max/min/argmax are differentiable / unambiguous
    x = np.random.default_rng(seed).permutation(int(np.prod(shape)) or 1)[:int(np.prod(shape))]
    x = (x.reshape(shape) - x.size / 2).astype(np.float32) / 2
    return x, axes


@SETTINGS
@given(operand_and_axes())
def test_reduce_sum_rules(case):
    x, axes = case
    ran = check_primitive(reduce_sum_p, x, rules=("abstract_eval", "jvp", "vmap", "transpose"),
                          linear_argnums=0, axes=axes)
    assert ran == ["abstract_eval", "jvp", "vmap", "transpose"]


@SETTINGS
@given(operand_and_axes())
def test_reduce_max_min_rules(case):
    x, axes = case
    for prim in (reduce_max_p, reduce_min_p):
        assert "jvp" in check_primitive(prim, x, axes=axes)


@SETTINGS
@given(operand_and_axes())
def test_reduce_prod_rules(case):
    x, axes = case
    assert "jvp" in check_primitive(reduce_prod_p, x / 4 + 0.1, axes=axes)


@pytest.mark.parametrize("values", [[2., 0., 3., 5.], [0., 4., 0., 1.], [0., 0., 0., 0.],
                                    [1.5, -2., 0.5, 3.]])
def test_reduce_prod_jvp_with_zeros(values):
    """The product rule must not divide by zero: one, several and only zeros."""
    x = np.array([values, values[::-1]], np.float32)
    check_jvp(reduce_prod_p, x, axes=(1,))
    check_jvp(reduce_prod_p, x, axes=(0, 1))


def test_reduce_prod_second_derivative_at_zero():
    f = lambda x: lax.reduce_prod(x, (0,))
    d = lambda g: (lambda x: plugax.jvp(g, (x,), (np.array([1., 0., 0.], np.float32),))[1])
    x = np.array([0., 2., 3.], np.float32)
    # d/dx0 prod = x1*x2 = 6; d2/dx0^2 = 0
    assert float(d(f)(x)) == pytest.approx(6.0)
    assert float(d(d(f))(x)) == pytest.approx(0.0)


def test_reduce_max_ties_split_the_derivative():
    x = np.array([1., 3., 3.], np.float32)
    t = np.array([1., 2., 5.], np.float32)
    ans, dans = plugax.jvp(lambda v: lax.reduce_max(v, (0,)), (x,), (t,))
    assert float(ans) == 3.0 and float(dans) == pytest.approx(3.5)  # JAX gives 3.5 too
    _, dmin = plugax.jvp(lambda v: lax.reduce_min(v, (0,)), (-x,), (t,))
    assert float(dmin) == pytest.approx(3.5)


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.bool_])
@pytest.mark.parametrize("prim", [reduce_and_p, reduce_or_p, reduce_max_p, reduce_min_p])
def test_integer_and_logical_reductions(prim, dtype):
    x = (np.arange(12).reshape(3, 4) * 7 % 5).astype(dtype)
    for axes in [(), (0,), (1,), (0, 1)]:
        check_primitive(prim, x, axes=axes)
    expected = {reduce_and_p: np.bitwise_and.reduce, reduce_or_p: np.bitwise_or.reduce,
                reduce_max_p: np.max, reduce_min_p: np.min}[prim](x, axis=1)
    np.testing.assert_array_equal(prim.bind(x, axes=(1,)), expected)


def test_empty_reductions_give_the_identity():
    e = np.zeros((0, 2), np.float32)
    np.testing.assert_array_equal(lax.reduce_max(e, (0,)), [-np.inf, -np.inf])
    np.testing.assert_array_equal(lax.reduce_min(e, (0,)), [np.inf, np.inf])
    np.testing.assert_array_equal(lax.reduce_prod(e, (0,)), [1., 1.])
    np.testing.assert_array_equal(lax.reduce_sum(e, (0,)), [0., 0.])
    assert int(lax.reduce_max(np.zeros(0, np.int32), (0,))) == np.iinfo(np.int32).min
    assert bool(lax.reduce_and(np.zeros(0, bool), (0,))) is True
    assert int(lax.reduce_and(np.zeros(0, np.uint8), (0,))) == 255


@SETTINGS
@given(operand_and_axes(min_size=1))
def test_argmax_argmin_rules(case):
    x, _ = case
    for axis in range(x.ndim):
        for prim in (argmax_p, argmin_p):
            check_primitive(prim, x, axes=(axis,), index_dtype=np.dtype(np.int32))
            np_fn = np.argmax if prim is argmax_p else np.argmin
            np.testing.assert_array_equal(prim.bind(x, axes=(axis,), index_dtype=np.int32),
                                          np_fn(x, axis=axis))


def test_argmax_jvp_is_a_float0_zero():
    x = np.array([[1., 5., 2.]], np.float32)
    check_jvp(argmax_p, x, axes=(1,), index_dtype=np.dtype(np.int32))
    ans, t = plugax.jvp(lambda v: lax.argmax(v, 1, np.int32), (x,), (x,))
    assert int(ans[0]) == 1 and t.dtype == plugax.dtypes.float0


def test_argmax_first_occurrence_and_nan():
    assert int(lax.argmax(np.array([1., 3., 3.], np.float32), 0, np.int32)) == 1
    assert int(lax.argmax(np.array([1., np.nan, 3.], np.float32), 0, np.int32)) == 1
    assert int(lax.argmin(np.array([1., np.nan, -3.], np.float32), 0, np.int32)) == 1


def test_reduce_sum_transpose_directly():
    ct = np.arange(3., dtype=np.float32)
    rule = rule_kinds["transpose"].table[reduce_sum_p]   # reduce_sum is the kernel's
    cts = rule(RuleContext("transpose"), ct, UndefPrimal(ShapedArray((2, 3), np.float32)),
               axes=(0,))
    np.testing.assert_array_equal(cts[0], np.broadcast_to(ct, (2, 3)))
    check_transpose(reduce_sum_p, np.ones((2, 3, 4), np.float32), linear_argnums=0, axes=(0, 2))


def test_weak_types_pass_through_reductions():
    weak = plugax.Array(np.ones(3, np.float32), weak_type=True)
    assert lax.reduce_sum(weak, (0,)).weak_type
    assert lax.reduce_max(weak, (0,)).weak_type
    assert not lax.argmax(weak, 0, np.int32).weak_type
    check_primitive(reduce_sum_p, weak, axes=(0,))


def test_printed_like_jax():
    jaxpr = plugax.make_jaxpr(lambda t: lax.reduce_sum(t, (0,)))(np.zeros(8, np.float32))
    assert "b:f32[] = reduce_sum[axes=(0,)] a" in str(jaxpr)
    jaxpr = plugax.make_jaxpr(lambda t: lax.argmax(t, 1, np.int32))(np.zeros((2, 3), np.float32))
    assert "argmax[axes=(1,) index_dtype=int32]" in str(jaxpr)


@pytest.mark.parametrize("call, message", [
    (lambda: lax.reduce_sum_p.bind(np.ones(3, np.float32), axes=(1,)), "reduce_sum"),
    (lambda: reduce_max_p.bind(np.ones(3, np.float32), axes=(0, 0)), "distinct axes"),
    (lambda: lax.reduce_sum(np.ones(3, bool), (0,)), "does not accept dtype bool"),
    (lambda: lax.reduce_and(np.ones(3, np.float32), (0,)), "bool or an integer"),
    (lambda: lax.argmax(np.ones((0, 2), np.float32), 0, np.int32), "non-empty"),
    (lambda: argmax_p.bind(np.ones((2, 2), np.float32), axes=(0, 1), index_dtype=np.int32),
     "exactly one axis"),
])
def test_shape_errors_name_the_primitive(call, message):
    with pytest.raises(ShapeError, match=message) as info:
        call()
    assert "f32[" in str(info.value) or "bool[" in str(info.value)


@pytest.mark.parametrize("reduce", [lax.reduce_sum, lax.reduce_max, lax.reduce_prod])
@pytest.mark.parametrize("axes", [(1,), (-2,), (0, 0), (0, -1)])
def test_lax_front_ends_refuse_bad_axes_as_jax_does(reduce, axes):
    """A ValueError naming the user's axes and operand, checked before binding: the
    primitive's own check would, under vmap, name the batched operand's axes."""
    for f in (reduce, plugax.vmap(reduce, in_axes=(0, None))):
        x = np.ones((2, 3) if f is not reduce else (3,), np.float32)
        with pytest.raises(ValueError, match=rf"reduction axes \({axes[0]},.*f32\[3\]"):
            f(x, axes)


def test_lax_front_ends_accept_negative_axes():
    x = np.arange(6., dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(lax.reduce_sum(x, (-1,)), x.sum(1))
    np.testing.assert_array_equal(lax.argmin(x, -2, np.int32), [0, 0, 0])
