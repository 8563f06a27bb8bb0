"""XLA's gather and scatter family, with JAX's dimension numbers and modes.

`gather` reads one window of static `slice_sizes` per index vector (the last
axis of `indices`); `scatter*` writes / combines `updates` windows the same way.
Both are what NumPy indexing with traced indices lowers to, so their rules are
the whole story of `x[i]` and `x.at[i]` under jit, grad and vmap:

- gather is linear in the operand; its transpose is scatter-add (repeated
  indices accumulate), and scatter-add's is gather.
- scatter (replace) is linear in (operand, updates) when indices are unique; for
  repeated indices its jvp masks out the updates that lose (JAX's trick), which
  turns it into scatter-add plus selects, all transposable.
- vmap adds a window axis (batched operand), a batch axis of the indices
  (batched indices), or an operand/indices batching axis (both).

Out-of-range windows follow `GatherScatterMode`: CLIP clamps the start; FILL_OR_DROP
fills (gather) or drops (scatter); PROMISE_IN_BOUNDS does what XLA does (gather
clamps, scatter drops).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from plugax.extend import (Primitive, RuleSet, ShapedArray, Zero, bdim_at_front, bind,
                           checked_impl, linear_jvp, shape_error)

from ._common import index_dtype_ok, lowering_of, zeros
from .dimension_numbers import (GatherDimensionNumbers, GatherScatterMode,
                                ScatterDimensionNumbers, _to_scatter_dnums, _tup,
                                default_fill_value, gather_dnums)

gather_p = Primitive("gather")
scatter_p = Primitive("scatter")
scatter_add_p = Primitive("scatter-add")
scatter_mul_p = Primitive("scatter-mul")
scatter_min_p = Primitive("scatter-min")
scatter_max_p = Primitive("scatter-max")


# --- shared: where each index vector's window starts -------------------------------------------
def _window_starts(shape, indices, index_map, op_batch, idx_batch, sizes):
    """(starts (N, R) clamped so each window fits, in_bounds (N,)) for the N index vectors."""
    batch_shape = indices.shape[:-1]
    n = int(np.prod(batch_shape, dtype=np.int64))
    starts = np.zeros((n, len(shape)), np.int64)
    vec = indices.reshape(n, indices.shape[-1]).astype(np.int64)
    starts[:, list(index_map)] = vec
    if op_batch:
        coords = np.indices(batch_shape).reshape(len(batch_shape), n)
        for od, sd in zip(op_batch, idx_batch):
            starts[:, od] = coords[sd]
    upper = np.asarray(shape, np.int64) - np.asarray(sizes, np.int64)
    ok = ((starts >= 0) & (starts <= upper)).all(axis=1)
    return np.clip(starts, 0, np.maximum(upper, 0)), ok


def _window_index(starts, sizes):
    """A NumPy advanced index reading the (N, *sizes) windows at `starts`."""
    r = len(sizes)
    out = []
    for d, z in enumerate(sizes):
        s = starts[:, d].reshape((-1,) + (1,) * r)
        out.append(s + np.arange(z).reshape((1,) * (d + 1) + (z,) + (1,) * (r - d - 1)))
    return tuple(out)


# --- gather ---------------------------------------------------------------------------------
def _gather_error(avals, problem, fix, params):
    return shape_error(gather_p, avals, problem, fix, **params)


def _gather_shape(operand, indices, dn, slice_sizes, params):
    avals = [operand, indices]
    if not index_dtype_ok(indices):
        raise _gather_error(avals, "needs integer indices", "convert the indices to int32",
                            params)
    if indices.ndim < 1 or indices.shape[-1] != len(dn.start_index_map):
        raise _gather_error(avals, "needs indices whose last axis (the index vector) has "
                            "len(start_index_map) entries", "add a trailing index axis",
                            params)
    r = operand.ndim
    if len(slice_sizes) != r or any(not 0 <= z <= n for z, n in zip(slice_sizes, operand.shape)):
        raise _gather_error(avals, "needs one slice size per operand axis, each between 0 and "
                            "the axis size", "fix slice_sizes", params)
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    if len(dropped) != len(dn.collapsed_slice_dims) + len(dn.operand_batching_dims) or \
            any(not 0 <= d < r or slice_sizes[d] != min(1, operand.shape[d]) for d in dropped) or \
            any(not 0 <= d < r for d in dn.start_index_map) or \
            set(dn.start_index_map) & set(dn.operand_batching_dims):
        raise _gather_error(avals, "needs distinct collapsed/batching operand axes of slice "
                            "size 1, and start_index_map inside the operand, apart from the "
                            "batching axes", "fix dimension_numbers", params)
    batch_shape = indices.shape[:-1]
    if len(dn.operand_batching_dims) != len(dn.start_indices_batching_dims) or any(
            not 0 <= s < len(batch_shape) or operand.shape[o] != batch_shape[s]
            for o, s in zip(dn.operand_batching_dims, dn.start_indices_batching_dims)):
        raise _gather_error(avals, "needs operand_batching_dims and start_indices_batching_dims"
                            " of equal sizes, pairwise", "fix dimension_numbers", params)
    window = [slice_sizes[d] for d in range(r) if d not in dropped]
    out_rank = len(batch_shape) + len(window)
    if len(dn.offset_dims) != len(window) or list(dn.offset_dims) != sorted(
            set(dn.offset_dims)) or any(not 0 <= d < out_rank for d in dn.offset_dims):
        raise _gather_error(avals, f"needs {len(window)} sorted offset_dims below the output "
                            f"rank {out_rank}", "fix dimension_numbers", params)
    out, it_w, it_b = [], iter(window), iter(batch_shape)
    for k in range(out_rank):
        out.append(next(it_w) if k in dn.offset_dims else next(it_b))
    return tuple(out)


def _gather_abstract_eval(ctx, operand, indices, *, dimension_numbers, slice_sizes,
                          indices_are_sorted, unique_indices, mode, fill_value):
    params = dict(dimension_numbers=dimension_numbers, slice_sizes=slice_sizes, mode=mode)
    shape = _gather_shape(operand, indices, dimension_numbers, slice_sizes, params)
    return ShapedArray(shape, operand.dtype, operand.weak_type)


def _gather_impl(x, idx, *, dimension_numbers, slice_sizes, indices_are_sorted,
                 unique_indices, mode, fill_value):
    dn = dimension_numbers
    starts, ok = _window_starts(x.shape, idx, dn.start_index_map, dn.operand_batching_dims,
                                dn.start_indices_batching_dims, slice_sizes)
    win = x[_window_index(starts, slice_sizes)] if x.size else np.zeros(
        (len(starts),) + tuple(slice_sizes), x.dtype)
    if mode is GatherScatterMode.FILL_OR_DROP and not ok.all():
        fill = default_fill_value(x.dtype) if fill_value is None else fill_value
        win = np.where(ok.reshape((-1,) + (1,) * x.ndim), win, np.asarray(fill, x.dtype))
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    window = tuple(z for d, z in enumerate(slice_sizes) if d not in dropped)
    nb = idx.ndim - 1
    win = win.reshape(idx.shape[:-1] + window)
    return np.moveaxis(win, range(nb, nb + len(window)), dn.offset_dims).astype(x.dtype)


def _gather_transpose(ctx, ct, x, idx, *, dimension_numbers, slice_sizes, indices_are_sorted,
                      unique_indices, mode, fill_value):
    if type(ct) is Zero:
        return [None, None]
    aval = x.aval
    ct_x = bind(scatter_add_p, zeros(aval.shape, aval.dtype), idx, ct,
                dimension_numbers=_to_scatter_dnums(dimension_numbers),
                indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                mode=mode)
    return [ct_x, None]


def _shift(dims, by=1):
    return tuple(d + by for d in dims)


def _gather_vmap(ctx, args, dims, *, dimension_numbers, slice_sizes, **params):
    (x, idx), (dx, di), dn = args, dims, dimension_numbers
    size = ctx.axis_size
    if di is None:      # the batch axis is one more window axis, put first in the output
        x = bdim_at_front(x, dx, size)
        new = GatherDimensionNumbers((0,) + _shift(dn.offset_dims),
                                     _shift(dn.collapsed_slice_dims), _shift(dn.start_index_map),
                                     _shift(dn.operand_batching_dims),
                                     dn.start_indices_batching_dims)
        return bind(gather_p, x, idx, dimension_numbers=new,
                    slice_sizes=(size,) + tuple(slice_sizes), **params), 0
    idx = bdim_at_front(idx, di, size)
    if dx is None:      # the batch axis is one more index batch axis, first in the output
        new = GatherDimensionNumbers(_shift(dn.offset_dims), dn.collapsed_slice_dims,
                                     dn.start_index_map, dn.operand_batching_dims,
                                     _shift(dn.start_indices_batching_dims))
        return bind(gather_p, x, idx, dimension_numbers=new, slice_sizes=slice_sizes,
                    **params), 0
    x = bdim_at_front(x, dx, size)   # both: a shared batching axis
    new = GatherDimensionNumbers(_shift(dn.offset_dims), _shift(dn.collapsed_slice_dims),
                                 _shift(dn.start_index_map),
                                 (0,) + _shift(dn.operand_batching_dims),
                                 (0,) + _shift(dn.start_indices_batching_dims))
    return bind(gather_p, x, idx, dimension_numbers=new, slice_sizes=(min(1, size),) + tuple(slice_sizes),
                **params), 0


def fill_param(fill_value: Any) -> Any:
    """A gather's `fill_value` param: a Python scalar, or None for the default."""
    if fill_value is None:
        return None
    value = np.asarray(fill_value)
    if value.ndim:
        raise ValueError("fill_value of a gather must be a scalar")
    value = value.item()
    # NaN is the default for floats; as None it also keeps params comparable (NaN != NaN)
    return None if isinstance(value, float) and value != value else value


def gather(operand: Any, start_indices: Any, dimension_numbers: GatherDimensionNumbers,
           slice_sizes: Sequence[int], *, unique_indices: bool = False,
           indices_are_sorted: bool = False, mode: Any = None, fill_value: Any = None) -> Any:
    """lax.gather with JAX's parameters (`mode=None` is FILL_OR_DROP, as in JAX)."""
    return bind(gather_p, operand, start_indices,
                dimension_numbers=gather_dnums(dimension_numbers),
                slice_sizes=_tup(slice_sizes), indices_are_sorted=bool(indices_are_sorted),
                unique_indices=bool(unique_indices), mode=GatherScatterMode.from_any(mode),
                fill_value=fill_param(fill_value))


RULES = [
    RuleSet(primitive=gather_p, impl=checked_impl(_gather_impl, _gather_abstract_eval),
            abstract_eval=_gather_abstract_eval, jvp=linear_jvp(gather_p, [0]),
            batching=_gather_vmap, transpose=_gather_transpose, lowering=lowering_of(gather_p)),
]

LAX = {"GatherDimensionNumbers": GatherDimensionNumbers,
       "ScatterDimensionNumbers": ScatterDimensionNumbers,
       "GatherScatterMode": GatherScatterMode}

__all__ = ["gather", "gather_p", "scatter_p", "scatter_add_p", "scatter_mul_p", "scatter_min_p",
           "scatter_max_p", "GatherDimensionNumbers", "ScatterDimensionNumbers",
           "GatherScatterMode", "default_fill_value", "fill_param", "zeros"]
