"""plugax.scipy.special's complex-valued member: wofz, the Faddeeva function.

w(z) = exp(-z^2) erfc(-iz) by Weideman's rational approximation (SIAM J. Numer.
Anal. 31, 1994): for Im z >= 0, w(z) = 2 p(Z) / (L - iz)^2 + 1/sqrt(pi) / (L - iz),
with Z = (L + iz) / (L - iz) and p a polynomial whose N coefficients come from
the FFT of exp(-t^2)(L^2 + t^2) sampled on the real line — computed once here
with NumPy, so no table is copied. Below the real axis, the reflection
w(z) = 2 exp(-z^2) - w(-z). It is a composition of complex elementwise
operations, so jit, vmap and (holomorphic) grad work through it.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

import plugax.numpy as pnp
from plugax.extend import default_float_dtype

__all__ = ["SCIPY"]


def _weideman(n: int) -> tuple[float, np.ndarray]:
    """(L, coefficients highest degree first) of Weideman's approximation with n terms."""
    m = 2 * n
    length = math.sqrt(n / math.sqrt(2))
    k = np.arange(-m + 1, m)
    t = length * np.tan(k * math.pi / (2 * m))
    f = np.concatenate([[0.0], np.exp(-t * t) * (length ** 2 + t * t)])
    a = np.real(np.fft.fft(np.fft.fftshift(f))) / (2 * m)
    return length, a[1:n + 1][::-1].copy()


_L, _COEFFS = _weideman(40)
_INV_SQRT_PI = 1 / math.sqrt(math.pi)


def _upper(z: Any) -> Any:
    """w(z) for Im z >= 0."""
    iz = 1j * z
    denom = _L - iz
    big_z = (_L + iz) / denom
    p = pnp.zeros_like(z)
    for c in _COEFFS:
        p = p * big_z + float(c)
    return 2 * p / (denom * denom) + _INV_SQRT_PI / denom


def wofz(z: Any) -> Any:
    """The Faddeeva function exp(-z^2) erfc(-iz); real arguments give complex results
    (complex64, or complex128 under x64)."""
    z = pnp.asarray(z)
    if not pnp.iscomplexobj(z):
        real = z.dtype if pnp.issubdtype(z.dtype, pnp.floating) else default_float_dtype()
        complex_dtype = pnp.complex128 if np.dtype(real) == np.float64 else pnp.complex64
        z = z.astype(complex_dtype)
    lower = pnp.imag(z) < 0
    zu = pnp.where(lower, -z, z)
    w = _upper(zu)
    zl = pnp.where(lower, z, 0.0)             # exp(-z^2) only where it is used
    return pnp.where(lower, 2 * pnp.exp(-zl * zl) - w, w)


SCIPY = {"wofz": wofz}
