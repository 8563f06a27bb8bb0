"""Regression tests: elementwise results that silently differed from JAX's (issue 12,
class 8), found by tests/differential. Expected values checked against jax 0.10.2."""
import numpy as np
import pytest

import plugax
import plugax.lax as lax
import plugax.numpy as pnp

X = np.array([-3, -1, 0, 1, 3, 3, -3], np.int32)
Y = np.array([0, 0, 0, 2, -2, 0, 2], np.int32)


@pytest.mark.skipif(not hasattr(plugax, "jit"), reason="compares with jit: the xla_call plugin is not loaded")
def test_integer_floor_divide_by_zero_matches_jax():
    """JAX steps the quotient down where sign(x) != sign(y): 3 // 0 is -2, not -1."""
    np.testing.assert_array_equal(pnp.floor_divide(X, Y), [-2, -2, -1, 0, -2, -2, -2])
    np.testing.assert_array_equal(plugax.jit(pnp.floor_divide)(X, Y),
                                  [-2, -2, -1, 0, -2, -2, -2])


def test_integer_remainder_by_zero_is_zero():
    """JAX divides by 1 where the divisor is 0; lax.rem keeps XLA's x % 0 == x."""
    np.testing.assert_array_equal(pnp.remainder(X, Y), [0, 0, 0, 1, -1, 0, 1])
    np.testing.assert_array_equal(lax.rem(X, Y), [-3, -1, 0, 1, 1, 3, -1])


def test_logical_not_of_weak_scalar_is_weak():
    assert pnp.logical_not(2.5).weak_type
    assert not pnp.logical_not(np.float32(2.5)).weak_type


def test_grad_rem_wrt_divisor_at_zero_is_infinite():
    """d rem(x, y)/dy = -sign(x/y) floor(|x/y|): -inf at y = 0 (was NaN)."""
    g = plugax.grad(lambda y: pnp.remainder(np.float32(0.5), y))(np.float32(0.0))
    assert float(g) == -np.inf


def test_grad_pow_at_zero_to_float_zero_is_nan():
    """JAX: y * x**(y-1) = 0 * inf for a float y == 0 at x == 0 (an integer y gives 0)."""
    assert np.isnan(plugax.grad(lambda x: lax.pow(x, np.float32(0.0)))(np.float32(0.0)))
    assert float(plugax.grad(lambda x: lax.pow(x, np.int32(0)))(np.float32(0.0))) == 0.0


def test_grad_arccosh_at_minus_one_is_plus_inf():
    """JAX's derivative is rsqrt(x**2 - 1): +inf at x = -1 ((x-1)(x+1) gave -inf)."""
    assert float(plugax.grad(pnp.arccosh)(np.float32(-1.0))) == np.inf


def test_round_float16_with_decimals_does_not_overflow():
    """As JAX, float16 is scaled in float32: 60000 * 10 overflowed float16 to inf."""
    out = pnp.round(np.array([60000.0, 1.25], np.float16), 1)
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out, np.array([60000.0, 1.2], np.float16))
