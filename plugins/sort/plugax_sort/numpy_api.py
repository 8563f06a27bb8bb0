"""Front ends built on lax.sort and lax.top_k: lax.approx_max_k/approx_min_k and
plugax.numpy's sort, argsort, lexsort, partition/argpartition, searchsorted, digitize.

Each is a composition of primitives (sort plus other families' gathers and
elementwise ops), so jvp, vmap and jit come from those primitives' rules; the
orders are JAX's: the float total order of lax.sort, stable ties, and for a
descending stable sort equal elements keep their original order.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from plugax.extend import Array, Tracer, default_int_dtype, get_aval, promote_dtypes

from .sort import sort as lax_sort, sort_key_val
from .topk import top_k

__all__ = ["LAX", "NUMPY", "approx_max_k", "approx_min_k", "sort", "argsort", "lexsort",
           "partition", "argpartition", "searchsorted", "digitize"]


def asarray(a: Any) -> Any:
    """`a` as an Array or tracer (those pass through untouched: no conversion per call)."""
    if type(a) is Array or isinstance(a, Tracer):
        return a
    import plugax.numpy as pnp
    return pnp.asarray(a)


def canonical_axis(name: str, axis: Any, ndim: int) -> int:
    """A NumPy axis argument (negatives allowed) as a non-negative int; errors say who."""
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{name}: axis must be an int, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for an array of rank {ndim}")
    return int(axis) % ndim


def _no_kind_order(name: str, kind: Any, order: Any) -> None:
    if kind is not None:
        raise TypeError(f"'kind' argument to {name} is not supported. Use stable=True or "
                        f"stable=False to specify sort stability.")
    if order is not None:
        raise TypeError(f"'order' argument to {name} is not supported.")


def _flat_or(a: Any, axis: Any, name: str) -> tuple[Any, int]:
    import plugax.numpy as pnp
    arr = asarray(a)
    if axis is None:
        return pnp.ravel(arr), 0
    if get_aval(arr).ndim == 0:
        raise ValueError(f"{name}: cannot sort a rank-0 array along axis {axis}; pass "
                         f"axis=None or an array of rank >= 1")
    return arr, canonical_axis(name, axis, get_aval(arr).ndim)


def _iota(dtype: Any, shape: tuple, dimension: int) -> Any:
    import plugax.lax as lax
    return lax.broadcasted_iota(dtype, shape, dimension)


# --- descending order, lax.approx_max_k / approx_min_k ------------------------------------
def _descending_with_indices(x: Any, axis: int, index_dtype: Any) -> tuple[Any, Any]:
    """(values, indices) sorted largest first along `axis`, equal values in their original
    order: a stable ascending sort of the reversed array, reversed back."""
    import plugax.lax as lax
    shape = get_aval(x).shape
    iota = lax.rev(_iota(index_dtype, shape, axis), (axis,))
    vals, idx = sort_key_val(lax.rev(x, (axis,)), iota, dimension=axis, is_stable=True)
    return lax.rev(vals, (axis,)), lax.rev(idx, (axis,))


def _approx_k(name: str, operand: Any, k: int, reduction_dimension: int, largest: bool,
              aggregate_to_topk: bool) -> tuple[Any, Any]:
    x = asarray(operand)
    aval = get_aval(x)
    axis = canonical_axis(name, reduction_dimension, aval.ndim)
    if not 0 <= int(k) <= aval.shape[axis]:
        raise ValueError(f"{name}: k must be in [0, {aval.shape[axis]}] (the size of the "
                         f"reduction dimension of {aval.str_short()}), got k={k}")
    if not aggregate_to_topk:
        raise NotImplementedError(f"{name}: aggregate_to_topk=False (a TPU partial "
                                  f"reduction) is not supported; the result is exact")
    if largest:
        return top_k(x, int(k), axis=axis)
    vals, idx = sort_key_val(x, _iota(np.int32, aval.shape, axis), dimension=axis)
    return _take_first(vals, int(k), axis), _take_first(idx, int(k), axis)


def approx_max_k(operand: Any, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True) -> tuple[Any, Any]:
    """lax.approx_max_k, computed exactly (as JAX does on CPU): top_k along
    `reduction_dimension`; `recall_target` only matters on TPU."""
    return _approx_k("approx_max_k", operand, k, reduction_dimension, True, aggregate_to_topk)


def approx_min_k(operand: Any, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True) -> tuple[Any, Any]:
    """lax.approx_min_k, computed exactly: the k smallest along `reduction_dimension`,
    smallest first, equal values lowest index first, NaNs last."""
    return _approx_k("approx_min_k", operand, k, reduction_dimension, False,
                     aggregate_to_topk)


def _take_first(x: Any, k: int, axis: int) -> Any:
    import plugax.lax as lax
    shape = get_aval(x).shape
    limit = list(shape)
    limit[axis] = k
    return lax.slice(x, [0] * len(shape), limit)


# --- plugax.numpy ----------------------------------------------------------------------------
def sort(a: Any, axis: int | None = -1, *, kind: None = None, order: None = None,
         stable: bool = True, descending: bool = False) -> Any:
    """numpy.sort in JAX's order (NaNs last, -0.0 == 0.0); `axis=None` sorts the
    flattened array; `descending` reverses the ascending sort."""
    import plugax.lax as lax
    _no_kind_order("sort", kind, order)
    arr, axis = _flat_or(a, axis, "sort")
    out = lax_sort(arr, dimension=axis, is_stable=stable)
    return lax.rev(out, (axis,)) if descending else out


def argsort(a: Any, axis: int | None = -1, *, kind: None = None, order: None = None,
            stable: bool = True, descending: bool = False, dtype: Any = None) -> Any:
    """numpy.argsort: indices that sort `a` (default integer dtype). A stable descending
    argsort keeps equal elements in their original order, as JAX defines it."""
    import plugax.lax as lax
    _no_kind_order("argsort", kind, order)
    arr, axis = _flat_or(a, axis, "argsort")
    idx_dtype = np.dtype(dtype) if dtype is not None else default_int_dtype()
    shape = get_aval(arr).shape
    if descending:
        if stable:
            return _descending_with_indices(arr, axis, idx_dtype)[1]
        _, idx = sort_key_val(arr, _iota(idx_dtype, shape, axis), dimension=axis,
                              is_stable=False)
        return lax.rev(idx, (axis,))
    _, idx = sort_key_val(arr, _iota(idx_dtype, shape, axis), dimension=axis,
                          is_stable=stable)
    return idx


def lexsort(keys: Any, axis: int = -1) -> Any:
    """numpy.lexsort: indices sorting by several keys, the *last* key primary."""
    keys = [asarray(k) for k in keys] if not hasattr(keys, "shape") else \
        [asarray(keys)[i] for i in range(get_aval(asarray(keys)).shape[0])]
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    shapes = {get_aval(k).shape for k in keys}
    if len(shapes) != 1:
        raise ValueError(f"all keys need to be the same shape, got shapes "
                         f"{[get_aval(k).shape for k in keys]}")
    shape = shapes.pop()
    if not shape:
        raise TypeError("lexsort: keys of rank 0 have no axis to sort along")
    axis = canonical_axis("lexsort", axis, len(shape))
    iota = _iota(default_int_dtype(), shape, axis)
    return lax_sort((*keys[::-1], iota), dimension=axis, num_keys=len(keys))[-1]


def _partition_setup(name: str, a: Any, kth: int, axis: int) -> tuple[Any, int, int]:
    import plugax.numpy as pnp
    arr = asarray(a)
    aval = get_aval(arr)
    if aval.dtype.kind == "c":
        raise NotImplementedError(f"jnp.{name} for complex dtype is not implemented.")
    axis = canonical_axis(name, axis, aval.ndim)
    n = aval.shape[axis]
    if isinstance(kth, bool) or not isinstance(kth, (int, np.integer)):
        raise TypeError(f"{name}: kth must be a static int (JAX takes no array of kth), "
                        f"got {kth!r}")
    if not -n <= kth < n:
        raise ValueError(f"{name}: kth={kth} is out of bounds for axis {axis} of size {n}")
    return pnp.moveaxis(arr, axis, -1), int(kth) % n, axis


def _smallest(x: Any, k: int) -> tuple[Any, Any]:
    """top_k of the negated last axis: the k smallest, largest of them last (JAX's trick,
    shifted by one for unsigned integers, where 0 negates to itself)."""
    if get_aval(x).dtype.kind == "u":
        vals, idx = top_k(-(x + 1), k)
        return -vals - 1, idx
    vals, idx = top_k(-x, k)
    return -vals, idx


def partition(a: Any, kth: int, axis: int = -1) -> Any:
    """numpy.partition as JAX computes it: the kth+1 smallest values (ascending, so the
    kth smallest lands at kth), then the others, largest first. Two top_k calls, so a
    NaN with the sign bit set counts as smallest, as in JAX."""
    import plugax.lax as lax
    import plugax.numpy as pnp
    x, kth, axis = _partition_setup("partition", a, kth, axis)
    n = get_aval(x).shape[-1]
    bottom, _ = _smallest(x, kth + 1)
    top, _ = top_k(x, n - kth - 1)
    return pnp.moveaxis(lax.concatenate([bottom, top], get_aval(x).ndim - 1), -1, axis)


def argpartition(a: Any, kth: int, axis: int = -1) -> Any:
    """numpy.argpartition as JAX computes it: the indices of the kth+1 smallest values,
    then those of the others in index order (a top_k over a 0/1 proxy)."""
    import plugax.lax as lax
    import plugax.numpy as pnp
    x, kth, axis = _partition_setup("argpartition", a, kth, axis)
    n = get_aval(x).shape[-1]
    _, bottom = _smallest(x, kth + 1)
    proxy = pnp.put_along_axis(pnp.ones(get_aval(x).shape, np.float32), bottom, 0.0, axis=-1,
                               inplace=False)
    _, top = top_k(proxy, n - kth - 1)
    return pnp.moveaxis(lax.concatenate([bottom, top], get_aval(x).ndim - 1), -1, axis)


# --- searchsorted / digitize ---------------------------------------------------------------
def _less(x: Any, y: Any, or_equal: bool) -> Any:
    """x < y (or <=) in lax.sort's total order: NaN above everything, NaNs equal."""
    import plugax.numpy as pnp
    base = (x <= y) if or_equal else (x < y)
    if get_aval(x).dtype.kind != "f" and get_aval(x).dtype.name != "bfloat16":
        return base
    if or_equal:
        return base | pnp.isnan(y)
    return base | (~pnp.isnan(x) & pnp.isnan(y))


def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None, *,
                 method: str = "scan") -> Any:
    """numpy.searchsorted on a sorted 1-D `a` (int32 positions of v's elements). Every
    `method` gives the same result: 'scan'/'scan_unrolled'/'sort' run an unrolled binary
    search (ceil(log2(n + 1)) gathers), 'compare_all' counts with an n-by-m comparison."""
    import plugax.numpy as pnp
    import plugax.lax as lax
    if side not in ("left", "right"):
        raise ValueError(f"{side!r} is an invalid value for keyword 'side'. Expected one of "
                         f"['left', 'right'].")
    if method not in ("scan", "scan_unrolled", "sort", "compare_all"):
        raise ValueError(f"{method!r} is an invalid value for keyword 'method'. Expected one "
                         f"of ['sort', 'scan', 'scan_unrolled', 'compare_all'].")
    arr, query = asarray(a), asarray(v)
    if get_aval(arr).ndim != 1:
        raise ValueError(f"a should be 1-dimensional, got an array of shape "
                         f"{get_aval(arr).shape}")
    if sorter is not None:
        arr = pnp.take(arr, asarray(sorter))
    arr, query = promote_dtypes("searchsorted", arr, query)
    n = get_aval(arr).shape[0]
    shape = get_aval(query).shape
    right = side == "right"
    if n == 0:
        return pnp.zeros(shape, np.int32)
    if method == "compare_all":
        # count of a[i] < v (left) or a[i] <= v (right)
        hits = _less(pnp.expand_dims(arr, tuple(range(1, len(shape) + 1))), query, right)
        return pnp.sum(hits, axis=0, dtype=np.int32)
    lo = pnp.zeros(shape, np.int32)
    hi = pnp.full(shape, n, np.int32)
    for _ in range(int(math.ceil(math.log2(n + 1)))):
        mid = lax.div(lo + hi, np.int32(2))
        probe = pnp.take(arr, pnp.minimum(mid, n - 1))
        active = lo < hi
        below = _less(probe, query, right)     # the answer lies right of mid
        lo, hi = (pnp.where(active & below, mid + 1, lo),
                  pnp.where(active & ~below, mid, hi))
    return lo


def digitize(x: Any, bins: Any, right: bool = False, *, method: str | None = None) -> Any:
    """numpy.digitize: the bin of each element of `x`, for increasing or decreasing bins."""
    import plugax.numpy as pnp
    xs, edges = asarray(x), asarray(bins)
    if get_aval(edges).ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins of shape "
                         f"{get_aval(edges).shape}")
    n = get_aval(edges).shape[0]
    if n == 0:
        return pnp.zeros(get_aval(xs).shape, np.int32)
    side = "left" if right else "right"
    kw = {} if method is None else {"method": method}
    increasing = searchsorted(edges, xs, side=side, **kw)
    decreasing = n - searchsorted(edges[::-1], xs, side=side, **kw)
    return pnp.where(edges[-1] >= edges[0], increasing, decreasing)


LAX = {"approx_max_k": approx_max_k, "approx_min_k": approx_min_k}
NUMPY = {f.__name__: f for f in (sort, argsort, lexsort, partition, argpartition, searchsorted,
                                 digitize)}
