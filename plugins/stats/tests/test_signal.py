"""plugax.scipy.signal: convolve, correlate, convolve2d, correlate2d against scipy.signal in
float64 for every mode and for each input being the larger one, jit against eager, vmap
against a loop, and gradients (a convolution is linear: its gradient is a correlation)
against central differences."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.signal as ss

import plugax
import plugax.numpy as jnp
import plugax.scipy.signal as ps
from plugax.testing import numeric_grad, x64

R = np.random.RandomState(0)
SHAPES = {"1d": ((7,), (3,)), "1d_swapped": ((3,), (7,)), "1d_even": ((6,), (4,)),
          "2d": ((5, 6), (2, 3)), "2d_swapped": ((2, 3), (5, 6)), "2d_equal": ((4, 4), (4, 4)),
          "3d": ((4, 3, 5), (2, 2, 3))}
FNS = ("convolve", "correlate", "convolve2d", "correlate2d")
CASES = [(fn, shape, mode) for fn in FNS for shape in SHAPES for mode in ("full", "same", "valid")
         if not (fn.endswith("2d") and not shape.startswith("2d"))]


def _inputs(shape: str) -> tuple:
    s1, s2 = SHAPES[shape]
    return R.randn(*s1), R.randn(*s2)


@pytest.mark.parametrize("fn, shape, mode", CASES, ids=[f"{f}-{s}-{m}" for f, s, m in CASES])
def test_against_scipy_float64_and_jit(fn, shape, mode):
    a, b = _inputs(shape)
    want = getattr(ss, fn)(a, b, mode=mode)
    with x64():
        got = np.asarray(getattr(ps, fn)(a, b, mode=mode))
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    eager = np.asarray(getattr(ps, fn)(a32, b32, mode=mode))
    jitted = np.asarray(plugax.jit(lambda x, y: getattr(ps, fn)(x, y, mode=mode))(a32, b32))
    np.testing.assert_allclose(jitted, eager, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("fn", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_gradients_in_both_inputs_against_finite_differences(fn, mode):
    a, b = _inputs("1d")
    w = R.randn(*getattr(ss, fn)(a, b, mode=mode).shape)
    with x64():
        ga, gb = plugax.grad(lambda x, y: jnp.sum(getattr(ps, fn)(x, y, mode=mode) * w),
                             argnums=(0, 1))(a, b)
    np.testing.assert_allclose(np.asarray(ga), numeric_grad(
        lambda x: np.sum(getattr(ss, fn)(x, b, mode=mode) * w), a), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(np.asarray(gb), numeric_grad(
        lambda y: np.sum(getattr(ss, fn)(a, y, mode=mode) * w), b), rtol=1e-6, atol=1e-8)


def test_vmap_over_signals_matches_a_loop():
    signals = R.randn(4, 9).astype(np.float32)
    kernel = R.randn(3).astype(np.float32)
    for mode in ("full", "same", "valid"):
        mapped = plugax.vmap(lambda s: ps.convolve(s, kernel, mode=mode))(signals)
        looped = np.stack([ss.convolve(s, kernel, mode=mode) for s in signals])
        np.testing.assert_allclose(np.asarray(mapped), looped, rtol=1e-5, atol=1e-5)


def test_errors_name_the_mistake():
    with pytest.raises(ValueError, match="mode must be one of"):
        ps.convolve(np.ones(3), np.ones(2), mode="wrap")
    with pytest.raises(ValueError, match="same number of dimensions"):
        ps.convolve(np.ones(3), np.ones((2, 2)))
    with pytest.raises(ValueError, match="smaller than the other in every dimension"):
        ps.convolve(np.ones((3, 1)), np.ones((1, 3)))
    with pytest.raises(ValueError, match="zero-size"):
        ps.convolve(np.ones(0), np.ones(2))
    with pytest.raises(NotImplementedError, match="boundary='fill'"):
        ps.convolve2d(np.ones((3, 3)), np.ones((2, 2)), boundary="wrap")
    with pytest.raises(ValueError, match="2-dimensional"):
        ps.correlate2d(np.ones(3), np.ones(2))
    with pytest.raises(ValueError, match="expected 'auto', 'fft', or 'direct'"):
        ps.convolve(np.ones(3), np.ones(2), method="overlap-add")
