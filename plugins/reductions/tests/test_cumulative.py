"""Rules of the cumulative reductions: cumsum, cumprod, cummax, cummin."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import plugax
import plugax.lax as lax
from plugax.extend import ShapeError
from plugax.testing import TRACED_RULES, check_jvp, check_primitive, check_transpose
from plugax_reductions.cumulative import cummax_p, cummin_p, cumprod_p, cumsum_p

SETTINGS = settings(max_examples=12, deadline=None)
NUMPY = {cumsum_p: np.cumsum, cumprod_p: np.cumprod, cummax_p: np.maximum.accumulate,
         cummin_p: np.minimum.accumulate}


@st.composite
def operand_and_axis(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    axis = draw(st.integers(0, len(shape) - 1))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    x = rng.permutation(int(np.prod(shape))).reshape(shape)  # distinct: no ties
    return (x / x.size + 0.5).astype(np.float32), axis, draw(st.booleans())


def _reference(prim, x, axis, reverse):
    fn = NUMPY[prim]
    if reverse:
        return np.flip(fn(np.flip(x, axis), axis=axis), axis)
    return fn(x, axis=axis)


@SETTINGS
@given(operand_and_axis())
def test_cumulative_rules(case):
    x, axis, reverse = case
    for prim in NUMPY:
        ran = check_primitive(prim, x, axis=axis, reverse=reverse)
        assert ran[:3] == ["abstract_eval", "jvp", "vmap"]
        assert set(TRACED_RULES) <= set(ran) | set(ran.skipped)   # jit ones need xla_call
        assert ("transpose" in ran) == (prim is cumsum_p)          # linear: a deflinear jvp
        np.testing.assert_allclose(prim.bind(x, axis=axis, reverse=reverse),
                                   _reference(prim, x, axis, reverse), rtol=1e-6)


@SETTINGS
@given(operand_and_axis())
def test_cumsum_transpose(case):
    x, axis, reverse = case
    check_transpose(cumsum_p, x, linear_argnums=0, axis=axis, reverse=reverse)


@pytest.mark.parametrize("values", [[2., 0., 3., 5.], [0., 4., 0., 1.], [-1., 2., -3., 0.5]])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumprod_jvp_with_zeros(values, reverse):
    check_jvp(cumprod_p, np.array(values, np.float32), axis=0, reverse=reverse)


def test_cumprod_jvp_matches_jax_at_zeros():
    x = np.array([1., 0., 3., 2., 0.], np.float32)
    t = np.array([1., 2., 5., 7., 11.], np.float32)
    _, dt = plugax.jvp(lambda v: lax.cumprod(v), (x,), (t,))
    np.testing.assert_allclose(dt, [1., 2., 6., 12., 0.])  # JAX's values


def test_cummax_jvp_follows_the_running_maximum():
    x = np.array([1., 3., 2., 5., 4.], np.float32)
    t = np.array([1., 2., 3., 4., 6.], np.float32)
    ans, dt = plugax.jvp(lambda v: lax.cummax(v), (x,), (t,))
    np.testing.assert_array_equal(ans, [1., 3., 3., 5., 5.])
    np.testing.assert_allclose(dt, [1., 2., 2., 4., 4.])
    _, dt = plugax.jvp(lambda v: lax.cummin(v, reverse=True), (x,), (t,))
    np.testing.assert_allclose(dt, [1., 3., 3., 6., 6.])


@pytest.mark.parametrize("prim", list(NUMPY))
def test_integer_operands(prim):
    x = np.array([[3, 1, 4], [1, 5, 9]], np.int32)
    check_primitive(prim, x, axis=1, reverse=False)
    np.testing.assert_array_equal(prim.bind(x, axis=1, reverse=True), _reference(prim, x, 1, True))


def test_zero_length_axis():
    e = np.zeros((2, 0), np.float32)
    for prim in NUMPY:
        assert prim.bind(e, axis=1, reverse=False).shape == (2, 0)
        check_primitive(prim, e, axis=1, reverse=True)


def test_printed_like_jax():
    jaxpr = plugax.make_jaxpr(lambda v: lax.cumsum(v, 1))(np.zeros((2, 3), np.float32))
    assert "cumsum[axis=1 reverse=False]" in str(jaxpr)


def test_errors_name_primitive_and_operand():
    with pytest.raises(ShapeError, match=r"cumsum.*f32\[3\]"):
        cumsum_p.bind(np.ones(3, np.float32), axis=1, reverse=False)
    with pytest.raises(ShapeError, match=r"cumprod.*bool"):
        lax.cumprod(np.ones(3, bool))
