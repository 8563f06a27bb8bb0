"""plugax.numpy's unique family and histograms, built on sort and searchsorted.

unique sorts (rows, for an `axis`), marks where a sorted value differs from the
one before it, and gathers the marked positions. The number of unique values
is data-dependent, so as in JAX it needs either a concrete array (eager code,
or a primal under grad) or a static `size=`: then the first `size` unique values
come back, padded with `fill_value` (default: the smallest unique value), and
the function works under jit and vmap.
"""
from __future__ import annotations

import builtins
import operator
from typing import Any, NamedTuple

import numpy as np

from plugax.extend import (ConcretizationTypeError, Tracer, default_int_dtype, get_aval,
                           promote_dtypes)

from .numpy_api import asarray, canonical_axis, searchsorted
from .sort import sort as lax_sort

__all__ = ["NUMPY", "unique", "unique_values", "unique_counts", "unique_inverse",
           "unique_all", "histogram", "histogram_bin_edges", "histogramdd", "histogram2d"]

UNIQUE_SIZE_HINT = ("To make jnp.unique() compatible with JIT and other transforms, you can "
                    "specify a concrete value for the size argument, which will determine the "
                    "output size.")


class _UniqueAllResult(NamedTuple):
    values: Any
    indices: Any
    inverse_indices: Any
    counts: Any


class _UniqueCountsResult(NamedTuple):
    values: Any
    counts: Any


class _UniqueInverseResult(NamedTuple):
    values: Any
    inverse_indices: Any


def _concrete(x: Any) -> np.ndarray | None:
    """x's value if it is known now (an Array, or a tracer carrying a primal), else None."""
    if not isinstance(x, Tracer):
        return np.asarray(x)
    value = x.to_concrete_value()
    return None if value is None else np.asarray(value)


def _sorted_rows(rows: Any, equal_nan: bool) -> tuple[Any, Any, Any]:
    """(sorted rows, first-of-a-run mask, permutation) of a 2-D (n, m) array, rows compared
    lexicographically, column 0 primary; NaNs are equal to each other if `equal_nan`."""
    import plugax.lax as lax
    import plugax.numpy as pnp
    n, m = get_aval(rows).shape
    iota = lax.broadcasted_iota(default_int_dtype(), (n,), 0)
    cols = [rows[:, j] for j in range(m)]
    *_, perm = lax_sort((*cols, iota), dimension=0, num_keys=m)
    aux = pnp.take(rows, perm, axis=0)
    differs = aux[1:] != aux[:-1]
    if equal_nan and get_aval(rows).dtype.kind == "f":
        differs = differs & ~(pnp.isnan(aux[1:]) & pnp.isnan(aux[:-1]))
    mask = pnp.concatenate([pnp.ones((1,), bool), pnp.any(differs, axis=1)])
    return aux, mask, perm


def _first_positions(mask: Any, count: int) -> Any:
    """Positions of the first `count` True entries of a 1-D mask, padded with 0 (what
    JAX's nonzero(size=) pads with): sort the positions, the unmarked ones as n."""
    import plugax.lax as lax
    import plugax.numpy as pnp
    n = get_aval(mask).shape[0]
    iota = lax.broadcasted_iota(default_int_dtype(), (n,), 0)
    pos = lax_sort(pnp.where(mask, iota, n))
    if count > n:
        pos = pnp.concatenate([pos, pnp.full((count - n,), n, default_int_dtype())])
    pos = pos[:count]
    return pnp.where(pos < n, pos, 0), pos


def unique(ar: Any, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: int | None = None, *, equal_nan: bool = True,
           size: int | None = None, fill_value: Any = None, sorted: bool = True) -> Any:
    """numpy.unique with JAX's `size=`/`fill_value=` for use under jit (see the module)."""
    import plugax.numpy as pnp
    arr = asarray(ar)
    if size is None:
        if _concrete(arr) is None:
            raise ConcretizationTypeError(
                f"Abstract tracer value encountered where concrete value is expected: the "
                f"first argument of jnp.unique() is traced ({get_aval(arr).str_short()}), and "
                f"the number of unique values depends on its values. The error arose for the "
                f"first argument of jnp.unique(). {UNIQUE_SIZE_HINT}")
    else:
        try:
            size = operator.index(size)
        except TypeError:
            raise ConcretizationTypeError(f"The error arose for the size argument of "
                                          f"jnp.unique(): it must be a static int, got "
                                          f"{size!r}. {UNIQUE_SIZE_HINT}") from None
    shape = get_aval(arr).shape
    if axis is None:
        arr, axis_int = pnp.ravel(arr), 0
    else:
        axis_int = canonical_axis("unique", axis, len(shape))
    moved = pnp.moveaxis(arr, axis_int, 0)
    n, rest = get_aval(moved).shape[0], get_aval(moved).shape[1:]
    if n == 0 and size and fill_value is None:
        raise ValueError("jnp.unique: for zero-sized input with nonzero size argument, "
                         "fill_value must be specified")
    width = int(np.prod(rest, dtype=np.int64))
    int_dtype = default_int_dtype()
    if n == 0 or width == 0:
        return _unique_empty(moved, axis_int, shape if axis is None else None, size,
                             fill_value, (return_index, return_inverse, return_counts))
    aux, mask, perm = _sorted_rows(pnp.reshape(moved, (n, width)), equal_nan)
    aux = pnp.reshape(aux, (n, *rest))
    total = pnp.sum(mask, dtype=int_dtype)
    count = int(_concrete(total)) if size is None else size
    ind, raw = _first_positions(mask, count + 1)    # raw[j + 1]: where run j ends
    ind = ind[:count]
    result = pnp.take(aux, ind, axis=0)
    if size is not None and fill_value is not None:
        valid = pnp.arange(size) < total
        valid = pnp.reshape(valid, (size,) + (1,) * len(rest))
        result = pnp.where(valid, result, pnp.asarray(fill_value).astype(result.dtype))
    out: list = [pnp.moveaxis(result, 0, axis_int)]
    if return_index:
        out.append(pnp.take(perm, ind))
    if return_inverse:
        rank = pnp.cumsum(mask.astype(int_dtype)) - 1       # each sorted row's unique index
        _, inverse = lax_sort((perm, rank), num_keys=1)     # back to the input's order
        out.append(pnp.reshape(inverse, shape) if axis is None else inverse)
    if return_counts:
        out.append(raw[1:] - raw[:-1])              # 0 for padding: n - n
    return out[0] if len(out) == 1 else tuple(out)


def _unique_empty(moved: Any, axis: int, flat_shape: tuple | None, size: int | None,
                  fill_value: Any, wanted: tuple) -> Any:
    """JAX's results for no rows (all empty) or rows of no elements (all equal: one
    unique row, every row its inverse)."""
    import plugax.numpy as pnp
    n, rest = get_aval(moved).shape[0], get_aval(moved).shape[1:]
    int_dtype = default_int_dtype()
    if n and size is not None:
        raise NotImplementedError("plugax.numpy.unique: size= with rows of zero elements "
                                  "is not supported")
    if n:
        values, index = moved[:1], pnp.zeros((1,), int_dtype)
        inverse, counts = pnp.zeros((n,), int_dtype), pnp.full((1,), n, int_dtype)
    else:
        values = moved if size is None else pnp.full((size, *rest), fill_value, moved.dtype)
        index = inverse = counts = pnp.zeros((0,), int_dtype)
    if flat_shape is not None:
        inverse = pnp.reshape(inverse, flat_shape)
    out = [pnp.moveaxis(values, 0, axis)]
    out += [r for r, want in zip((index, inverse, counts), wanted) if want]
    return out[0] if len(out) == 1 else tuple(out)


def unique_values(x: Any, /, *, size: int | None = None, fill_value: Any = None) -> Any:
    """Array API unique_values: unique(x, equal_nan=False)."""
    return unique(x, equal_nan=False, size=size, fill_value=fill_value)


def unique_counts(x: Any, /, *, size: int | None = None,
                  fill_value: Any = None) -> _UniqueCountsResult:
    """Array API unique_counts: (values, counts)."""
    return _UniqueCountsResult(*unique(x, return_counts=True, equal_nan=False, size=size,
                                       fill_value=fill_value))


def unique_inverse(x: Any, /, *, size: int | None = None,
                   fill_value: Any = None) -> _UniqueInverseResult:
    """Array API unique_inverse: (values, inverse_indices of x's shape)."""
    return _UniqueInverseResult(*unique(x, return_inverse=True, equal_nan=False, size=size,
                                        fill_value=fill_value))


def unique_all(x: Any, /, *, size: int | None = None,
               fill_value: Any = None) -> _UniqueAllResult:
    """Array API unique_all: (values, indices, inverse_indices, counts)."""
    return _UniqueAllResult(*unique(x, return_index=True, return_inverse=True,
                                    return_counts=True, equal_nan=False, size=size,
                                    fill_value=fill_value))


# --- histograms ----------------------------------------------------------------------------
def _inexact(a: Any) -> Any:
    (a,) = promote_dtypes("histogram", asarray(a), category="inexact")
    return a


def histogram_bin_edges(a: Any, bins: Any = 10, range: Any = None, weights: Any = None) -> Any:
    """numpy.histogram_bin_edges: `bins` edges as given, or `bins + 1` equal steps over
    `range` (default: the data's min to max; a zero-width range widens by 0.5 each way)."""
    import plugax.numpy as pnp
    if isinstance(bins, str):
        raise NotImplementedError("string values for `bins` not implemented.")
    arr = _inexact(a)
    dtype = get_aval(arr).dtype
    if np.ndim(bins) == 1:
        return pnp.asarray(bins).astype(dtype)
    try:
        nbins = operator.index(bins if not hasattr(bins, "shape") else _concrete(bins).item())
    except (TypeError, AttributeError):
        raise ConcretizationTypeError(f"bins argument of histogram_bin_edges must be a static "
                                      f"int or a 1-D array of edges, got {bins!r}") from None
    if range is None:
        lo, hi = pnp.min(arr), pnp.max(arr)
    else:
        if np.shape(range) != (2,):
            raise ValueError(f"`range` must be either None or a sequence of scalars, got "
                             f"{range}")
        lo, hi = pnp.asarray(range[0]).astype(dtype), pnp.asarray(range[1]).astype(dtype)
    flat = hi == lo
    lo, hi = pnp.where(flat, lo - 0.5, lo), pnp.where(flat, hi + 0.5, hi)
    return pnp.linspace(lo, hi, nbins + 1, dtype=dtype)


def histogram(a: Any, bins: Any = 10, range: Any = None, weights: Any = None,
              density: bool | None = None) -> tuple[Any, Any]:
    """numpy.histogram: (counts or weight sums per bin, edges); the last bin is closed.
    Values outside the edges are dropped. `density` divides by bin width and total."""
    import plugax.numpy as pnp
    if weights is None:
        arr = _inexact(a)
        w = pnp.ones_like(arr)
    else:
        if np.shape(a) != np.shape(weights):
            raise ValueError("weights should have the same shape as a.")
        arr, w = promote_dtypes("histogram", asarray(a), asarray(weights), category="inexact")
    edges = histogram_bin_edges(arr, bins, range)
    nedges = get_aval(edges).shape[0]
    idx = searchsorted(edges, arr, side="right")
    idx = pnp.where(arr == edges[-1], nedges - 1, idx)
    counts = pnp.zeros((nedges,), get_aval(w).dtype).at[pnp.ravel(idx)].add(pnp.ravel(w))[1:]
    if density:
        counts = counts / (edges[1:] - edges[:-1]) / pnp.sum(counts)
    return counts, edges


def histogramdd(sample: Any, bins: Any = 10, range: Any = None, weights: Any = None,
                density: bool | None = None) -> tuple[Any, list]:
    """numpy.histogramdd of `sample` (N points, D coordinates): counts (the default
    integer type; the weights' dtype with `weights`) and the D arrays of edges."""
    import math
    import plugax.numpy as pnp
    if weights is None:
        pts = _inexact(sample)
    else:
        if np.shape(weights) != np.shape(sample)[:1]:
            raise ValueError("should have one weight for each sample.")
        pts, weights = promote_dtypes("histogramdd", asarray(sample), asarray(weights),
                                      category="inexact")
    n, d = get_aval(pts).shape
    if range is not None and (len(range) != d or any(r is not None and np.shape(r)[0] != 2
                                                     for r in range)):
        raise ValueError(f"For sample.shape={(n, d)}, range must be a sequence of {d} pairs "
                         f"or Nones; got range={range}")
    try:
        per_dim = list(bins)
    except TypeError:
        per_dim = d * [bins]
    else:
        if len(per_dim) != d:
            raise ValueError("should be a bin for each dimension.")
    flat, edges, sizes = None, [], []
    for i in builtins.range(d):      # `range` is an argument here, as in NumPy
        col = pts[:, i]
        e = histogram_bin_edges(col, per_dim[i], None if range is None else range[i])
        idx = searchsorted(e, col, side="right")
        nb = get_aval(e).shape[0] + 1           # with an underflow and an overflow bin
        idx = pnp.clip(pnp.where(col == e[-1], idx - 1, idx), 0, nb - 1)
        flat = idx if flat is None else flat * nb + idx
        edges.append(e)
        sizes.append(nb)
    dtype = default_int_dtype() if weights is None else get_aval(weights).dtype
    w = pnp.ones((n,), dtype) if weights is None else weights
    hist = pnp.zeros((math.prod(sizes),), dtype).at[flat].add(w)
    hist = pnp.reshape(hist, tuple(sizes))[(slice(1, -1),) * d]
    if density:
        hist = hist.astype(get_aval(pts).dtype)
        hist = hist / pnp.sum(hist)
        for i, e in enumerate(edges):
            width = e[1:] - e[:-1]
            hist = hist / pnp.reshape(width, (1,) * i + (-1,) + (1,) * (d - i - 1))
    return hist, edges


def histogram2d(x: Any, y: Any, bins: Any = 10, range: Any = None, weights: Any = None,
                density: bool | None = None) -> tuple[Any, Any, Any]:
    """numpy.histogram2d: histogramdd of the points (x[i], y[i]); `bins` an int, a pair,
    or one array of edges for both coordinates."""
    import plugax.numpy as pnp
    try:
        count = len(bins)
    except TypeError:
        count = 1
    if count not in (1, 2):
        bins = [asarray(bins), asarray(bins)]
    pts = pnp.stack([pnp.ravel(asarray(x)), pnp.ravel(asarray(y))], axis=1)
    hist, edges = histogramdd(pts, bins, range, weights, density)
    return hist, edges[0], edges[1]

NUMPY = {f.__name__: f for f in (unique, unique_values, unique_counts, unique_inverse,
                                 unique_all, histogram, histogram_bin_edges, histogramdd,
                                 histogram2d)}
