"""NumPy's polynomial functions (coefficients highest power first) as JAX has them:
poly, polyadd, polysub, polymul, polydiv, polyder, polyint, polyfit.

Lengths are static (the coefficient arrays' shapes), so all of them trace; `polyfit`
solves the scaled Vandermonde least-squares problem with this family's lstsq, which
is why they live in the linalg family. Products of polynomials are a scatter-add of
the outer product of the coefficients (static indices i + j).
`poly` of a square matrix (its characteristic polynomial) and `roots` (in `eig`)
go through the general eigensolver, as in JAX.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import plugax.numpy as pnp
from plugax.extend import get_aval, promote_dtypes

__all__ = ["poly", "polyadd", "polysub", "polymul", "polydiv", "polyder", "polyint",
           "polyfit", "NUMPY"]


def _len(x: Any) -> int:
    return get_aval(x).shape[0]


def _inexact(name: str, *xs: Any) -> list:
    return [pnp.atleast_1d(x) for x in promote_dtypes(name, *xs, category="inexact")]


def _convolve_full(a: Any, b: Any) -> Any:
    """The full convolution of two 1-d coefficient arrays: c[i + j] += a[i] * b[j]."""
    la, lb = _len(a), _len(b)
    where = (np.arange(la)[:, None] + np.arange(lb)[None, :]).ravel().astype(np.int32)
    terms = pnp.ravel(a[:, None] * b[None, :])
    return pnp.zeros((la + lb - 1,), get_aval(terms).dtype).at[pnp.asarray(where)].add(terms)


def poly(seq_of_zeros: Any) -> Any:
    """The monic polynomial with the given roots (a 1-d sequence), or the characteristic
    polynomial of a square matrix (from its eigenvalues, so complex, as in JAX)."""
    (z,) = _inexact("poly", seq_of_zeros)
    shape = get_aval(z).shape
    if len(shape) == 2 and shape[0] == shape[1] and shape[0]:
        from .eig import eigvals      # the characteristic polynomial: complex, as in JAX
        z = eigvals(z)
        shape = get_aval(z).shape
    if len(shape) != 1:
        raise ValueError(f"poly: input must be 1d or non-empty square 2d array; got shape "
                         f"{shape}")
    a = pnp.ones((1,), get_aval(z).dtype)
    for k in range(shape[0]):
        a = _convolve_full(a, pnp.stack([pnp.ones((), get_aval(z).dtype), -z[k]]))
    return a


def polyadd(a1: Any, a2: Any) -> Any:
    a1, a2 = (pnp.atleast_1d(a) for a in promote_dtypes("polyadd", a1, a2))
    if _len(a2) <= _len(a1):
        return a1.at[_len(a1) - _len(a2):].add(a2)
    return a2.at[_len(a2) - _len(a1):].add(a1)


def polysub(a1: Any, a2: Any) -> Any:
    a1, a2 = promote_dtypes("polysub", a1, a2)
    return polyadd(a1, -a2)


def polymul(a1: Any, a2: Any, *, trim_leading_zeros: bool = False) -> Any:
    a1, a2 = _inexact("polymul", a1, a2)
    if trim_leading_zeros and (_len(a1) > 1 or _len(a2) > 1):
        a1, a2 = pnp.trim_zeros(a1, trim="f"), pnp.trim_zeros(a2, trim="f")
    if _len(a1) == 0:
        a1 = pnp.zeros((1,), get_aval(a2).dtype)
    if _len(a2) == 0:
        a2 = pnp.zeros((1,), get_aval(a1).dtype)
    return _convolve_full(a1, a2)


def polydiv(u: Any, v: Any, *, trim_leading_zeros: bool = False) -> tuple:
    """(quotient, remainder) by long division; the remainder keeps u's length (leading
    zeros) unless trim_leading_zeros, as in JAX."""
    u, v = _inexact("polydiv", u, v)
    m, n = _len(u) - 1, _len(v) - 1
    scale = 1.0 / v[0]
    q = pnp.zeros((max(m - n + 1, 1),), get_aval(u).dtype)
    for k in range(m - n + 1):
        d = scale * u[k]
        q = q.at[k].set(d)
        u = u.at[k:k + n + 1].add(-d * v)
    if trim_leading_zeros:
        tol = float(np.sqrt(np.finfo(get_aval(u).dtype).eps))
        c = np.asarray(u)
        nz = np.nonzero(np.abs(c) > tol)[0]
        u = u[int(nz[0]):] if nz.size else u[:0]
    return q, u


def polyder(p: Any, m: int = 1) -> Any:
    (p,) = _inexact("polyder", p)
    m = int(m)
    if m < 0:
        raise ValueError("polyder: order of derivative must be positive")
    if m == 0:
        return p
    n = _len(p)
    coeff = np.prod(np.arange(m, n)[None] - np.arange(m)[:, None], axis=0)[::-1]
    return p[:-m] * pnp.asarray(coeff.astype(get_aval(p).dtype))


def polyint(p: Any, m: int = 1, k: Any = None) -> Any:
    """The m-th antiderivative, with integration constants k (highest order first)."""
    m = int(m)
    p, k = _inexact("polyint", p, 0 if k is None else k)
    if m < 0:
        raise ValueError("polyint: order of integral must be positive (see polyder)")
    if _len(k) == 1:
        k = pnp.full((m,), k[0])
    if get_aval(k).shape != (m,):
        raise ValueError("polyint: k must be a scalar or a rank-1 array of length 1 or m")
    if m == 0:
        return p
    grid = np.arange(_len(p) + m)[None] - np.arange(m)[:, None]
    coeff = np.maximum(1, grid).prod(0)[::-1].astype(get_aval(p).dtype)
    return pnp.concatenate([p, k]) / pnp.asarray(coeff)


def polyfit(x: Any, y: Any, deg: int, rcond: float | None = None, full: bool = False,
            w: Any = None, cov: Any = False) -> Any:
    """Least-squares polynomial fit (columns of the Vandermonde matrix scaled to unit
    norm first, as NumPy and JAX)."""
    x, y = pnp.asarray(x), pnp.asarray(y)
    deg = int(deg)
    order = deg + 1
    if deg < 0:
        raise ValueError("polyfit: expected deg >= 0")
    if len(get_aval(x).shape) != 1 or _len(x) == 0:
        raise TypeError("polyfit: expected a non-empty 1D vector for x")
    if len(get_aval(y).shape) not in (1, 2):
        raise TypeError("polyfit: expected 1D or 2D array for y")
    if _len(x) != _len(y):
        raise TypeError("polyfit: expected x and y to have same length")
    x, y = promote_dtypes("polyfit", x, y, category="inexact")
    if rcond is None:
        rcond = _len(x) * float(np.finfo(get_aval(x).dtype).eps)
    lhs, rhs = pnp.vander(x, order), y
    if w is not None:
        (w,) = promote_dtypes("polyfit", w, category="inexact")
        if get_aval(w).shape != (_len(y),):
            raise TypeError("polyfit: expected a 1-d array of weights of y's length")
        lhs = lhs * w[:, None]
        rhs = rhs * (w[:, None] if len(get_aval(rhs).shape) == 2 else w)
    scale = pnp.sqrt(pnp.sum(lhs * lhs, axis=0))
    lhs = lhs / scale[None, :]
    c, resids, rank, s = pnp.linalg.lstsq(lhs, rhs, rcond)
    c = (c.T / scale[None, :]).T if len(get_aval(c).shape) > 1 else c / scale
    if full:
        return c, resids, rank, s, pnp.asarray(rcond)
    if cov:
        vbase = pnp.linalg.inv(pnp.dot(lhs.T, lhs)) / pnp.outer(scale, scale)
        if cov == "unscaled":
            fac = pnp.asarray(1.0)
        else:
            if _len(x) <= order:
                raise ValueError("polyfit: the number of data points must exceed order to "
                                 "scale the covariance matrix")
            fac = resids / (_len(x) - order)
        if len(get_aval(y).shape) == 1:
            return c, vbase * pnp.atleast_1d(fac)[None]
        return c, vbase[:, :, None] * pnp.atleast_1d(fac)[None, None, :]
    return c


NUMPY: dict[str, Any] = {name: globals()[name] for name in __all__ if name != "NUMPY"}
