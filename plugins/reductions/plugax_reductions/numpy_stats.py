"""NaN-ignoring reductions and small statistics: nansum ... nanvar, count_nonzero,
average, ptp, trace, diff, ediff1d, cov, corrcoef.

Each is the plain reduction after NaNs are replaced by the operation's identity
(0 for sums, 1 for products, -inf/inf for max/min), as JAX writes them, so the
derivatives flow to the non-NaN entries and none needs a rule of its own.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import plugax.numpy as pnp
from plugax.extend import get_aval

__all__ = ["nansum", "nanprod", "nanmax", "nanmin", "nanargmax", "nanargmin", "nanmean",
           "nanvar", "nanstd", "count_nonzero", "average", "ptp", "trace", "diff", "ediff1d",
           "cov", "corrcoef", "NUMPY"]


def _replace_nan(a: Any, value: Any) -> Any:
    a = pnp.asarray(a)
    if get_aval(a).dtype.kind not in "fc":
        return a
    return pnp.where(pnp.isnan(a), value, a)


def nansum(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False, **kw: Any) -> Any:
    return pnp.sum(_replace_nan(a, 0), axis=axis, dtype=dtype, keepdims=keepdims, **kw)


def nanprod(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    return pnp.prod(_replace_nan(a, 1), axis=axis, dtype=dtype, keepdims=keepdims)


def nanmax(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """The maximum ignoring NaNs; NaN where every entry is."""
    a = pnp.asarray(a)
    out = pnp.max(_replace_nan(a, -np.inf), axis=axis, keepdims=keepdims)
    return pnp.where(pnp.all(pnp.isnan(a), axis=axis, keepdims=keepdims), np.nan, out) \
        if get_aval(a).dtype.kind == "f" else out


def nanmin(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    a = pnp.asarray(a)
    out = pnp.min(_replace_nan(a, np.inf), axis=axis, keepdims=keepdims)
    return pnp.where(pnp.all(pnp.isnan(a), axis=axis, keepdims=keepdims), np.nan, out) \
        if get_aval(a).dtype.kind == "f" else out


def nanargmax(a: Any, axis: int | None = None, keepdims: bool = False) -> Any:
    """argmax ignoring NaNs (-1 where a slice is all NaN, as JAX)."""
    a = pnp.asarray(a)
    out = pnp.argmax(_replace_nan(a, -np.inf), axis=axis, keepdims=keepdims)
    return pnp.where(pnp.all(pnp.isnan(a), axis=axis, keepdims=keepdims), -1, out)


def nanargmin(a: Any, axis: int | None = None, keepdims: bool = False) -> Any:
    a = pnp.asarray(a)
    out = pnp.argmin(_replace_nan(a, np.inf), axis=axis, keepdims=keepdims)
    return pnp.where(pnp.all(pnp.isnan(a), axis=axis, keepdims=keepdims), -1, out)


def _count(a: Any, axis: Any, keepdims: bool) -> Any:
    return pnp.sum(~pnp.isnan(a), axis=axis, keepdims=keepdims)


def nanmean(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    a = pnp.asarray(a)
    if get_aval(a).dtype.kind not in "fc":
        return pnp.mean(a, axis=axis, dtype=dtype, keepdims=keepdims)
    total = nansum(a, axis=axis, dtype=dtype, keepdims=keepdims)
    return total / _count(a, axis, keepdims)


def nanvar(a: Any, axis: Any = None, dtype: Any = None, ddof: int = 0,
           keepdims: bool = False) -> Any:
    a = pnp.asarray(a)
    if get_aval(a).dtype.kind not in "fc":
        return pnp.var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    centred = a - nanmean(a, axis=axis, keepdims=True)
    squares = nansum(centred * centred, axis=axis, keepdims=keepdims)
    return squares / pnp.maximum(_count(a, axis, keepdims) - ddof, 0)


def nanstd(a: Any, axis: Any = None, dtype: Any = None, ddof: int = 0,
           keepdims: bool = False) -> Any:
    return pnp.sqrt(nanvar(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims))


def count_nonzero(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    return pnp.sum(pnp.asarray(a) != 0, axis=axis, keepdims=keepdims)


def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False,
            keepdims: bool = False) -> Any:
    """The mean, or the weighted mean sum(a * w) / sum(w) (weights 1-D along `axis`, or
    of `a`'s shape)."""
    a = pnp.asarray(a)
    if weights is None:
        avg = pnp.mean(a, axis=axis, keepdims=keepdims)
        count = pnp.ones_like(avg) * (get_aval(a).size / max(get_aval(avg).size, 1))
        return (avg, count) if returned else avg
    w = pnp.asarray(weights)
    if get_aval(w).shape != get_aval(a).shape:
        if axis is None or get_aval(w).ndim != 1:
            raise ValueError(f"average: weights of shape {get_aval(w).shape} need an axis "
                             f"and one dimension to go with an array of shape "
                             f"{get_aval(a).shape}")
        shape = [1] * get_aval(a).ndim
        shape[axis] = -1
        w = pnp.reshape(w, tuple(shape))
    total = pnp.sum(w * pnp.ones_like(a), axis=axis, keepdims=keepdims)
    avg = pnp.sum(a * w, axis=axis, keepdims=keepdims) / total
    return (avg, total) if returned else avg


def ptp(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """The range, max - min."""
    return pnp.max(a, axis=axis, keepdims=keepdims) - pnp.min(a, axis=axis, keepdims=keepdims)


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None) -> Any:
    return pnp.sum(pnp.diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None) -> Any:
    """The n-th discrete difference along `axis`."""
    a = pnp.asarray(a)
    if n < 0:
        raise ValueError(f"diff: order must be non-negative but got {n}")
    nd = get_aval(a).ndim
    axis = axis % nd
    parts = []
    for extra in (prepend, None, append):
        if extra is None:
            continue
        extra = pnp.asarray(extra)
        if get_aval(extra).ndim == 0:
            shape = list(get_aval(a).shape)
            shape[axis] = 1
            extra = pnp.broadcast_to(extra, tuple(shape))
        parts.append(extra)
    if prepend is not None or append is not None:
        parts.insert(0 if prepend is None else 1, a)
        a = pnp.concatenate(parts, axis=axis)
    head = (slice(None),) * axis
    for _ in range(n):
        a = a[(*head, slice(1, None))] - a[(*head, slice(None, -1))]
    return a


def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Any:
    flat = pnp.ravel(ary)
    parts = [pnp.ravel(to_begin)] if to_begin is not None else []
    parts.append(flat[1:] - flat[:-1])
    if to_end is not None:
        parts.append(pnp.ravel(to_end))
    return pnp.concatenate(parts)


def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: int | None = None,
        fweights: Any = None, aweights: Any = None) -> Any:
    """The covariance matrix of the variables (rows, or columns with rowvar=False)."""
    if fweights is not None or aweights is not None:
        raise NotImplementedError("cov: fweights and aweights are not supported yet")
    x = pnp.asarray(m)
    if get_aval(x).ndim == 1:
        x = x[None, :]
    if not rowvar:
        x = x.T
    if y is not None:
        y = pnp.asarray(y)
        y = y[None, :] if get_aval(y).ndim == 1 else (y if rowvar else y.T)
        x = pnp.concatenate([x, y], axis=0)
    ddof = (0 if bias else 1) if ddof is None else ddof
    n = get_aval(x).shape[1]
    centred = x - pnp.mean(x, axis=1, keepdims=True)
    # X X^H: the conjugate for complex data, as numpy.cov (a real result on the diagonal)
    out = (centred @ pnp.conj(centred).T) / (n - ddof)
    return pnp.squeeze(out) if get_aval(out).shape == (1, 1) else out


def corrcoef(x: Any, y: Any = None, rowvar: bool = True) -> Any:
    c = cov(x, y, rowvar)
    if get_aval(c).ndim == 0:
        return c / c
    d = pnp.sqrt(pnp.real(pnp.diagonal(c)))    # real variances, also for complex data
    return c / d[:, None] / d[None, :]


NUMPY = {name: globals()[name] for name in __all__ if name != "NUMPY"}
