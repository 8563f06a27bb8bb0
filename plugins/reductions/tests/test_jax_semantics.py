"""Regression tests: reductions whose results silently differed from JAX's (issue 12,
class 8), found by tests/differential. Expected values checked against jax 0.10.2."""
import numpy as np
import pytest

import plugax
import plugax.lax as lax
import plugax.numpy as pnp


def test_isinf_and_array_equal_are_strong_bools():
    assert not pnp.isinf(2.5).weak_type and not pnp.isinf(np.inf).weak_type
    assert not pnp.array_equal(np.ones(2), np.ones(3)).weak_type
    assert not pnp.array_equal(np.ones(2), 0.5).weak_type


@pytest.mark.parametrize("x, want", [
    ([0.0, 2.0, np.nan], [np.nan, np.nan, 0.0]),
    ([0.0, 2.0, np.inf], [np.inf, np.nan, 0.0]),
    ([2.0, np.inf], [np.inf, 2.0]),
    ([0.0, 0.0, 2.0], [0.0, 0.0, 0.0]),
    ([1.5, 2.0, 3.0, 4.0, 5.0], [120.0, 90.0, 60.0, 45.0, 36.0]),
])
def test_grad_prod_propagates_nan_and_inf_like_jax(x, want):
    """prod's derivative is the product of the others, through JAX's pairwise tree: it
    used to divide by x (NaN at infinities) or drop NaNs next to zeros."""
    g = plugax.grad(pnp.prod)(np.array(x, np.float32))
    np.testing.assert_allclose(g, want)


def test_grad_cummax_ties_follow_jax_associative_scan():
    x = np.array([2.0, 0.0, 2.0, -1.0, 2.0], np.float32)
    g = plugax.grad(lambda x: (lax.cummax(x) * np.arange(1, 6)).sum())(x)
    np.testing.assert_allclose(g, [7.75, 0.0, 4.75, 0.0, 2.5])
    g = plugax.grad(lambda x: pnp.cumprod(x).sum())(np.array([2, 0, 3, 0, 1.5], np.float32))
    np.testing.assert_allclose(g, [1.0, 8.0, 0.0, 0.0, 0.0])


def test_lax_cummax_rejects_bool():
    with pytest.raises(TypeError, match="bool"):
        lax.cummax(np.array([True, False]))
