"""plugax.numpy's order statistics: quantile, percentile, median and their nan-versions.

All reduce to one computation: move the reduced axes to the end (flattened into
one), sort, and read the sorted values at positions q * (n - 1). `n` is the
axis length, or, for the nan-versions, the count of non-NaN values, which differs
per row: NaNs sort last, so the first `count` sorted values are the valid ones.
The interpolation methods are NumPy's (linear, lower, higher, midpoint, nearest),
computed as JAX computes them, so the gradient flows to the one or two order
statistics each result interpolates (what `grad(median)` gives in JAX).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from plugax.extend import default_float_dtype, get_aval, issubdtype_inexact, promote_dtypes

from .numpy_api import asarray
from .sort import sort as lax_sort

__all__ = ["NUMPY", "quantile", "percentile", "median", "nanquantile", "nanpercentile",
           "nanmedian"]

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")


def _axes(name: str, axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for ax in axes:
        if isinstance(ax, bool) or not isinstance(ax, (int, np.integer)):
            raise TypeError(f"{name}: axis must be None, an int or a tuple of ints, "
                            f"got {axis!r}")
        if not -ndim <= ax < ndim:
            raise ValueError(f"{name}: axis {ax} is out of bounds for an array of rank {ndim}")
        out.append(int(ax) % ndim)
    if len(set(out)) != len(out):
        raise ValueError("repeated axis")
    return tuple(out)


def _quantile(name: str, a: Any, q: Any, axis: Any, method: str, keepdims: bool,
              skip_nans: bool, out: Any = None, overwrite_input: bool = False,
              weights: Any = None) -> Any:
    import plugax.numpy as pnp
    import plugax.lax as lax
    if out is not None:
        raise NotImplementedError(f"plugax.numpy.{name}: the `out` argument is not supported "
                                  f"(arrays are immutable); use the return value")
    if method not in _METHODS:
        raise ValueError(f"{name}: method can only be one of {', '.join(map(repr, _METHODS))}; "
                         f"got {method!r}")
    if weights is not None and method != "inverted_cdf":
        raise NotImplementedError(f"{method} doesn't support weights. Only method "
                                  f"'inverted_cdf' supports weights.")
    x, q = asarray(a), asarray(q)
    if get_aval(x).dtype.kind == "c":
        raise ValueError("quantile does not support complex input, as the operation is "
                         "poorly defined.")
    x, q = promote_dtypes(name, x, q, category="inexact")   # JAX: promote_dtypes_inexact
    dtype = get_aval(x).dtype
    q_shape = get_aval(q).shape
    if len(q_shape) > 1:
        raise ValueError(f"q must be have rank <= 1, got shape {q_shape}")
    shape = get_aval(x).shape
    axes = _axes(name, axis, len(shape))
    kept = [d for d in range(len(shape)) if d not in axes]
    batch = tuple(shape[d] for d in kept)
    n = int(np.prod([shape[d] for d in axes], dtype=np.int64))
    if n == 0:
        raise ValueError(f"{name}: cannot take a quantile over zero elements (operand "
                         f"{get_aval(x).str_short()}, axis={axis})")
    rows = pnp.reshape(pnp.transpose(x, (*kept, *axes)), (*batch, n))
    nans = pnp.isnan(rows)
    qs = pnp.reshape(q, (-1,))                                  # (m,)
    if method == "inverted_cdf":
        w = _weights(name, weights, x, axis, axes)
        w = pnp.reshape(pnp.transpose(w, (*kept, *axes)), (*batch, n))
        res = _inverted_cdf(rows, w, qs, skip_nans)
    else:
        res = _interpolated(rows, qs, method, skip_nans)
    if not skip_nans:
        res = pnp.where(pnp.any(nans, axis=-1, keepdims=True), np.nan, res)
    # (*batch, m) -> q_shape + batch (+ the reduced axes as ones)
    res = pnp.moveaxis(res, -1, 0)
    out_batch = tuple(1 if d in axes else shape[d] for d in range(len(shape))) if keepdims \
        else batch
    res = pnp.reshape(res, (*q_shape, *out_batch))
    # a strong result, as JAX's (a Python-scalar q must not make it weakly typed)
    return lax.convert_element_type(res, dtype) if get_aval(res).weak_type else res


def _weights(name: str, weights: Any, x: Any, axis: Any, axes: tuple) -> Any:
    """The weights as an array of x's shape and dtype (ones when not given)."""
    import plugax.numpy as pnp
    import plugax.lax as lax
    shape = get_aval(x).shape
    if weights is None:
        return pnp.ones(shape, get_aval(x).dtype)
    w = asarray(weights)
    if get_aval(w).dtype.kind == "c":
        raise ValueError("Weights cannot be complex types.")
    w = w.astype(get_aval(x).dtype)
    if get_aval(w).shape != shape:
        if axis is None:
            raise ValueError("Weights shape must match 'a' shape when axis is None.")
        want = tuple(shape[a] for a in axes)
        if get_aval(w).shape != want:
            raise ValueError(f"Weights shape {get_aval(w).shape} must match reduction axes "
                             f"{want}")
        w = lax.broadcast_in_dim(w, shape, tuple(axes))
    return w


def _inverted_cdf(rows: Any, w: Any, qs: Any, skip_nans: bool) -> Any:
    """The first sorted value whose cumulative weight reaches q * total. NaN data weigh
    nothing; a row with a negative or NaN weight gives NaN (JAX's answer; NumPy raises),
    as does a row with no valid data."""
    import plugax.numpy as pnp
    srt, sw = lax_sort((rows, w), dimension=get_aval(rows).ndim - 1)
    bad_weight = (sw < 0) | pnp.isnan(sw)
    cum = pnp.cumsum(pnp.where(bad_weight | pnp.isnan(srt), 0, sw), axis=-1)
    target = qs * cum[..., -1:]                                         # (*batch, m)
    idx = pnp.sum(pnp.expand_dims(cum, -2) < pnp.expand_dims(target, -1), axis=-1)
    n = get_aval(rows).shape[-1]
    top = pnp.sum(~pnp.isnan(rows), axis=-1, keepdims=True) - 1 if skip_nans else n - 1
    idx = pnp.clip(idx, 0, top).astype(np.int32)
    res = pnp.take_along_axis(srt, idx, axis=-1)
    force = pnp.any(bad_weight, axis=-1, keepdims=True)
    if skip_nans:
        force = force | pnp.all(pnp.isnan(rows), axis=-1, keepdims=True)
    return pnp.where(force, np.nan, res)


def _interpolated(rows: Any, qs: Any, method: str, skip_nans: bool) -> Any:
    """The sorted values at q * (n - 1), interpolated by `method` (NumPy's five)."""
    import plugax.numpy as pnp
    import plugax.lax as lax
    dtype = get_aval(rows).dtype
    batch, n = get_aval(rows).shape[:-1], get_aval(rows).shape[-1]
    nans = pnp.isnan(rows)
    srt = lax_sort(rows, dimension=len(batch))
    if skip_nans:
        count = pnp.sum(~nans, axis=-1, keepdims=True).astype(dtype)   # (*batch, 1)
        pos = qs * (count - 1)                                          # (*batch, m)
        top = count - 1
    else:
        pos = pnp.broadcast_to(qs * (n - 1), (*batch, get_aval(qs).shape[0]))
        top = n - 1
    low_f, high_f = lax.floor(pos), lax.ceil(pos)
    high_w = pos - low_f
    low_w = 1 - high_w
    low_i = pnp.clip(low_f, 0, top).astype(np.int32)
    high_i = pnp.clip(high_f, 0, top).astype(np.int32)
    low_v = pnp.take_along_axis(srt, low_i, axis=-1)
    high_v = pnp.take_along_axis(srt, high_i, axis=-1)
    if method == "linear":
        res = low_v * low_w + high_v * high_w
    elif method == "lower":
        res = low_v
    elif method == "higher":
        res = high_v
    elif method == "nearest":
        res = pnp.where(high_w <= 0.5, low_v, high_v)
    else:
        res = (low_v + high_v) * 0.5
    return res


def quantile(a: Any, q: Any, axis: Any = None, out: None = None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False, *, weights: Any = None) -> Any:
    """numpy.quantile (q in [0, 1], a scalar or 1-D; the q axis comes first)."""
    return _quantile("quantile", a, q, axis, method, keepdims, False, out, overwrite_input,
                     weights)


def nanquantile(a: Any, q: Any, axis: Any = None, out: None = None,
                overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
                *, weights: Any = None) -> Any:
    """numpy.nanquantile: quantile ignoring NaNs (NaN where a row is all NaN)."""
    return _quantile("nanquantile", a, q, axis, method, keepdims, True, out, overwrite_input,
                     weights)


def _percent(q: Any) -> Any:
    import plugax.numpy as pnp
    q = asarray(q)
    if not issubdtype_inexact(get_aval(q).dtype):
        q = q.astype(default_float_dtype())
    return pnp.true_divide(q, 100.0)


def percentile(a: Any, q: Any, axis: Any = None, out: None = None,
               overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
               *, weights: Any = None) -> Any:
    """numpy.percentile: quantile with q in [0, 100]."""
    return _quantile("percentile", a, _percent(q), axis, method, keepdims, False, out,
                     overwrite_input, weights)


def nanpercentile(a: Any, q: Any, axis: Any = None, out: None = None,
                  overwrite_input: bool = False, method: str = "linear",
                  keepdims: bool = False, *, weights: Any = None) -> Any:
    """numpy.nanpercentile: nanquantile with q in [0, 100]."""
    return _quantile("nanpercentile", a, _percent(q), axis, method, keepdims, True, out,
                     overwrite_input, weights)


def median(a: Any, axis: Any = None, out: None = None, overwrite_input: bool = False,
           keepdims: bool = False) -> Any:
    """numpy.median: the middle value, or the mean of the two middle ones."""
    return _quantile("median", a, 0.5, axis, "midpoint", keepdims, False, out)


def nanmedian(a: Any, axis: Any = None, out: None = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Any:
    """numpy.nanmedian: median ignoring NaNs."""
    return _quantile("nanmedian", a, 0.5, axis, "midpoint", keepdims, True, out)


NUMPY = {f.__name__: f for f in (quantile, percentile, median, nanquantile, nanpercentile,
                                 nanmedian)}
