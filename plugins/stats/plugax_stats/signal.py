"""plugax.scipy.signal: convolve, correlate, convolve2d, correlate2d (modes full/same/valid).

Written on `plugax.lax.conv_general_dilated` (the conv family) with one batch and
one feature dimension, so the same primitive that serves convolutional networks
gives these their jit, vmap and grad. As in JAX, the smaller input is the kernel
(one input must be at least as large as the other in every dimension) and "same"
keeps the first input's shape.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import plugax.lax as lax
import plugax.numpy as jnp

from ._common import promote

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "NAMES"]

_MODES = ("full", "same", "valid")


def _conj(x: Any) -> Any:
    return jnp.conj(x) if x.dtype.kind == "c" else x


def _convolve_nd(in1: Any, in2: Any, mode: str, precision: Any = None) -> Any:
    if mode not in _MODES:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    in1, in2 = jnp.asarray(in1), jnp.asarray(in2)
    if in1.ndim != in2.ndim:
        raise ValueError(f"in1 and in2 must have the same number of dimensions; got "
                         f"in1.shape={in1.shape}, in2.shape={in2.shape}")
    if in1.size == 0 or in2.size == 0:
        raise ValueError(f"zero-size arrays not supported in convolutions, got shapes "
                         f"{in1.shape} and {in2.shape}.")
    in1, in2 = promote("convolve", in1, in2)
    larger = all(a >= b for a, b in zip(in1.shape, in2.shape))
    smaller = all(a <= b for a, b in zip(in1.shape, in2.shape))
    if not (larger or smaller):
        raise ValueError(f"One input must be smaller than the other in every dimension; got "
                         f"in1.shape={in1.shape}, in2.shape={in2.shape}")
    out_like = in2.shape                  # "same" centres on the first input's shape
    if smaller and not larger:
        in1, in2 = in2, in1
    kernel_shape = in2.shape
    if mode == "valid":
        padding = [(0, 0)] * in1.ndim
    elif mode == "full":
        padding = [(k - 1, k - 1) for k in kernel_shape]
    else:
        padding = [(k - 1 - (o - 1) // 2, k - o + (o - 1) // 2)
                   for k, o in zip(kernel_shape, out_like)]
    # a convolution is a correlation with the flipped kernel
    kernel = jnp.flip(in2)
    out = lax.conv_general_dilated(in1[None, None], kernel[None, None], (1,) * in1.ndim,
                                   padding, precision=precision)
    return out[0, 0]


def convolve(in1: Any, in2: Any, mode: str = "full", method: str = "auto",
             precision: Any = None) -> Any:
    """N-dimensional convolution of `in1` and `in2`. `method="fft"` is computed directly
    (the same values up to rounding; plugax has no FFT convolution)."""
    if method not in ("auto", "direct", "fft"):
        raise ValueError(f"Got method={method!r}; expected 'auto', 'fft', or 'direct'.")
    return _convolve_nd(in1, in2, mode, precision)


def correlate(in1: Any, in2: Any, mode: str = "full", method: str = "auto",
              precision: Any = None) -> Any:
    """N-dimensional cross-correlation: convolution with the flipped (conjugated) `in2`."""
    return convolve(in1, jnp.flip(_conj(jnp.asarray(in2))), mode, method, precision)


def _check_2d(fn: str, in1: Any, in2: Any, boundary: str, fillvalue: Any) -> None:
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{fn}() only supports boundary='fill', fillvalue=0")
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError(f"{fn}() only supports 2-dimensional inputs; got {np.ndim(in1)}- and "
                         f"{np.ndim(in2)}-dimensional ones")


def convolve2d(in1: Any, in2: Any, mode: str = "full", boundary: str = "fill",
               fillvalue: Any = 0, precision: Any = None) -> Any:
    """Two-dimensional convolution (only zero fill at the boundary, as in JAX)."""
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    return _convolve_nd(in1, in2, mode, precision)


def correlate2d(in1: Any, in2: Any, mode: str = "full", boundary: str = "fill",
                fillvalue: Any = 0, precision: Any = None) -> Any:
    """Two-dimensional cross-correlation with SciPy's orientation of the result, which
    depends on which input is larger (hence the flips)."""
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    in1, in2 = jnp.asarray(in1), jnp.asarray(in2)
    swap = all(a <= b for a, b in zip(in1.shape, in2.shape))
    same_shape = in1.shape == in2.shape
    if mode == "valid" and swap and not same_shape:
        return _convolve_nd(jnp.flip(in2), _conj(in1), mode, precision)
    if mode not in ("same", "valid") and swap:
        return _conj(_convolve_nd(jnp.flip(in2), _conj(in1), mode, precision))
    return jnp.flip(_convolve_nd(jnp.flip(in1), _conj(in2), mode, precision))


NAMES = {"convolve": convolve, "correlate": correlate, "convolve2d": convolve2d,
         "correlate2d": correlate2d}
