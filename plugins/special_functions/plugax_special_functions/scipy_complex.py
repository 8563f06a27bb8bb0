"""plugax.scipy.special's complex-valued members: wofz (the Faddeeva function) and
sph_harm_y (spherical harmonics).

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

import plugax.lax as lax
import plugax.numpy as pnp
from plugax.extend import default_float_dtype

from .scipy_api import floats

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


def sph_harm_y(n: Any, m: Any, theta: Any, phi: Any, diff_n: int | None = None,
               n_max: int | None = None) -> Any:
    """The spherical harmonic Y_n^m(theta, phi) (theta polar, phi azimuthal; SciPy's
    sph_harm_y with the Condon-Shortley phase), as a 1-D complex array like JAX's.

    The fully normalised associated Legendre functions are built by the stable
    recurrences P_m^m = -sqrt((2m+1)/(2m)) sin(theta) P_(m-1)^(m-1),
    P_(m+1)^m = sqrt(2m+3) cos(theta) P_m^m, then upward in degree, for every order
    and degree up to `n_max` (a static bound, as in JAX: by default max(n), which must
    then be concrete); each element picks its own (n, |m|). Degrees above n_max are
    clipped to it, as JAX does. Y_n^-m = (-1)^m conj(Y_n^m)."""
    if diff_n is not None:
        raise NotImplementedError("plugax.scipy.special.sph_harm_y: the 'diff_n' argument "
                                  "is not supported (as in JAX)")
    if n_max is None:
        try:
            n_max = int(np.max(np.asarray(n)))
        except Exception as err:   # a tracer: the loop bounds must be known
            raise TypeError("plugax.scipy.special.sph_harm_y: n_max must be given "
                            "statically when n is traced (under jit, vmap or grad)") from err
    n_max = int(n_max)
    theta, phi = floats("sph_harm_y", theta, phi)
    theta = pnp.atleast_1d(theta)
    n, m, theta, phi = pnp.broadcast_arrays(pnp.asarray(n), pnp.asarray(m), theta, phi)
    n = pnp.minimum(n, n_max)
    am = pnp.abs(m)
    x, sin = pnp.cos(theta), pnp.abs(pnp.sin(theta))
    legendre = pnp.zeros_like(x)
    pmm = pnp.full_like(x, 1 / math.sqrt(4 * math.pi))
    for order in range(n_max + 1):
        if order:
            pmm = -math.sqrt((2 * order + 1) / (2 * order)) * sin * pmm
        prev, cur = pnp.zeros_like(x), pmm
        for degree in range(order, n_max + 1):
            if degree == order + 1:
                prev, cur = cur, math.sqrt(2 * order + 3) * x * cur
            elif degree > order + 1:
                a = math.sqrt((4 * degree ** 2 - 1) / (degree ** 2 - order ** 2))
                a_prev = math.sqrt((4 * (degree - 1) ** 2 - 1) / ((degree - 1) ** 2 - order ** 2))
                prev, cur = cur, a * (x * cur - prev / a_prev)
            legendre = pnp.where((am == order) & (n == degree), cur, legendre)
    sign = pnp.where((m < 0) & (pnp.fmod(am, 2) == 1), -1.0, 1.0)
    legendre = pnp.where(am > n, 0.0, sign * legendre)
    angle = m.astype(phi.dtype) * phi
    return lax.complex(legendre * pnp.cos(angle), legendre * pnp.sin(angle))


SCIPY = {"wofz": wofz, "sph_harm_y": sph_harm_y}
