"""Closeness tests (`isclose`, `allclose`, `array_equal`) and NaN/inf tests.

Built from other families' public NumPy front ends (elementwise comparisons,
this family's `all`), so they trace, batch and lower like any NumPy code.
`allclose` lives here rather than in elementwise because it reduces.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from plugax.extend import get_aval

__all__ = ["NUMPY"]


def _np():
    import plugax.numpy as pnp   # the assembled namespace, filled once plugins load
    return pnp


def isnan(x: Any, /) -> Any:
    """x != x: true exactly at NaNs (false everywhere for integers)."""
    return _np().not_equal(x, x)


def isinf(x: Any, /) -> Any:
    """|x| == inf, against a strongly typed inf: as in JAX, the result is a strong bool
    even for a weak x (isinf(2.5)); integers and bools are never infinite."""
    pnp = _np()
    x = pnp.asarray(x)
    dtype = get_aval(x).dtype
    if not np.issubdtype(dtype, np.inexact) and dtype.name != "bfloat16":
        return pnp.zeros_like(x, dtype=np.bool_)
    return pnp.equal(pnp.abs(x), pnp.asarray(np.asarray(np.inf, dtype)))


def isclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Any:
    """|a - b| <= atol + rtol |b| where b is finite; equal values (infinities of one
    sign included) are close; NaNs only with `equal_nan`. As JAX: integers and bools
    compare for equality."""
    pnp = _np()
    a, b = pnp.asarray(a), pnp.asarray(b)
    dtype = np.result_type(get_aval(a).dtype, get_aval(b).dtype)
    if not np.issubdtype(dtype, np.inexact):
        return pnp.equal(a, b)
    near = pnp.less_equal(pnp.abs(pnp.subtract(a, b)), atol + rtol * pnp.abs(b))
    out = pnp.logical_or(pnp.equal(a, b), pnp.logical_and(pnp.isfinite(b), near))
    if equal_nan:
        out = pnp.logical_or(out, pnp.logical_and(isnan(a), isnan(b)))
    return out


def allclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> Any:
    """Whether every entry is `isclose` (a rank-0 bool Array, traceable)."""
    return _np().all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> Any:
    """Same shape and equal entries; different shapes give False without comparing."""
    pnp = _np()
    a1, a2 = pnp.asarray(a1), pnp.asarray(a2)
    if get_aval(a1).shape != get_aval(a2).shape:
        return pnp.asarray(np.bool_(False))      # strongly typed, as JAX's
    eq = pnp.equal(a1, a2)
    if equal_nan:
        eq = pnp.logical_or(eq, pnp.logical_and(isnan(a1), isnan(a2)))
    return pnp.all(eq)


NUMPY = {"isnan": isnan, "isinf": isinf, "isclose": isclose, "allclose": allclose,
         "array_equal": array_equal}
