"""StableHLO lowerings of the shape family.

Most primitives map onto one StableHLO op with the same meaning (squeeze, rev,
slice, pad, iota; broadcast_in_dim, reshape and transpose are the
kernel's, lowered in plugax.structural). The ones that take
indices must agree with the impl on out-of-range indices, so they clamp
explicitly before the op, the way the impl does:

- dynamic_slice / dynamic_update_slice: each start into [0, size - window];
- gather / scatter*: in mode CLIP each index vector so its window fits; in mode
  FILL_OR_DROP a gather clamps and then selects the fill value where the vector
  was out of bounds, a scatter leaves the indices to XLA, which drops windows that
  do not fit (exactly the impl's semantics); PROMISE_IN_BOUNDS passes them through.

Clamping happens in the index's own dtype (so a huge unsigned index clamps to
the top rather than wrapping negative), then the index becomes int32 (int64 for
axes longer than int32 can count).

jaxlib is reached only through `ctx` (`ctx.hlo`, `ctx.ir`), never imported here.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .dimension_numbers import GatherScatterMode, _scatter_slice_sizes, default_fill_value

__all__ = ["LOWERINGS"]


def _i64(ctx, values: Sequence[int]) -> Any:
    return ctx.ir.DenseI64ArrayAttr.get([int(v) for v in values])


def _int_attr(ctx, value: int) -> Any:
    return ctx.ir.IntegerAttr.get(ctx.ir.IntegerType.get_signless(64), int(value))


# --- whole-array rearrangements ------------------------------------------------------------
def _squeeze(ctx, x, *, dimensions):
    return ctx.hlo.reshape(ctx.ir_type(ctx.aval_out), x)


def _rev(ctx, x, *, dimensions):
    return ctx.hlo.reverse(x, _i64(ctx, dimensions)) if dimensions else x


# --- windows -------------------------------------------------------------------------------
def _slice(ctx, x, *, start_indices, limit_indices, strides):
    strides = strides or (1,) * len(start_indices)
    return ctx.hlo.slice(x, _i64(ctx, start_indices), _i64(ctx, limit_indices),
                         _i64(ctx, strides))


def _pad(ctx, x, padding_value, *, padding_config):
    lo, hi, interior = zip(*padding_config) if padding_config else ((), (), ())
    return ctx.hlo.pad(x, padding_value, _i64(ctx, lo), _i64(ctx, hi), _i64(ctx, interior))


def _index_dtype(sizes: Sequence[int]) -> np.dtype:
    """int32 unless an index up to max(sizes) needs more."""
    return np.dtype(np.int32 if max(sizes, default=0) < 2 ** 31 else np.int64)


def clamp_index(ctx, index: Any, aval: Any, high: int, to_dtype: np.dtype) -> Any:
    """`index` (of type `aval`) clamped into [0, high], then converted to `to_dtype`."""
    dtype = np.dtype(aval.dtype)
    info = np.iinfo(dtype)
    shape = aval.shape
    if high < info.max:  # otherwise no index of this dtype exceeds `high`
        index = ctx.hlo.minimum(index, ctx.constant(high, dtype, shape))
    if dtype.kind == "i":
        index = ctx.hlo.maximum(index, ctx.constant(0, dtype, shape))
    if dtype != to_dtype:
        from plugax.extend import ShapedArray
        index = ctx.hlo.convert(ctx.ir_type(ShapedArray(shape, to_dtype)), index)
    return index


def _clamped_starts(ctx, starts: Sequence[Any], avals: Sequence[Any], shape: Sequence[int],
                    sizes: Sequence[int]) -> list:
    """Start indices clamped so the window of `sizes` fits, all of one int type."""
    to = _index_dtype(shape)
    return [clamp_index(ctx, s, a, n - z, to)
            for s, a, n, z in zip(starts, avals, shape, sizes)]


def _dynamic_slice(ctx, x, *starts, slice_sizes):
    shape = ctx.avals_in[0].shape
    starts = _clamped_starts(ctx, starts, ctx.avals_in[1:], shape, slice_sizes)
    return ctx.hlo.dynamic_slice(x, starts, _i64(ctx, slice_sizes))


def _dynamic_update_slice(ctx, x, update, *starts):
    shape, sizes = ctx.avals_in[0].shape, ctx.avals_in[1].shape
    starts = _clamped_starts(ctx, starts, ctx.avals_in[2:], shape, sizes)
    return ctx.hlo.dynamic_update_slice(x, update, starts)


# --- indexing ----------------------------------------------------------------------------
def _iota(ctx, *, dtype, shape, dimension):
    from plugax.extend import ShapedArray
    if np.dtype(dtype).kind == "b":   # XLA has no boolean iota: count, then test != 0
        counted = ctx.hlo.iota(ctx.ir_type(ShapedArray(shape, np.int32)),
                               _int_attr(ctx, dimension))
        return ctx.hlo.convert(ctx.ir_type(ctx.aval_out), counted)
    return ctx.hlo.iota(ctx.ir_type(ctx.aval_out), _int_attr(ctx, dimension))


def _bounded_indices(ctx, idx: Any, aval: Any, index_map: Sequence[int], shape: Sequence[int],
                     sizes: Sequence[int]) -> tuple[Any, Any]:
    """(index vectors clamped so every window fits, converted to int32/int64; a boolean
    per vector: whether it was in bounds). The clamp happens in the index's own dtype."""
    from plugax.extend import ShapedArray
    dtype, nd = np.dtype(aval.dtype), aval.ndim
    info = np.iinfo(dtype)
    uppers = np.array([shape[d] - sizes[d] for d in index_map], np.int64)
    hi = ctx.hlo.broadcast_in_dim(ctx.ir_type(ShapedArray(aval.shape, dtype)),
                                  ctx.constant(np.minimum(uppers, info.max).astype(dtype)),
                                  _i64(ctx, [nd - 1]))
    clamped = ctx.hlo.minimum(idx, hi)
    if dtype.kind == "i":
        clamped = ctx.hlo.maximum(clamped, ctx.constant(0, dtype, aval.shape))
    same = ctx.hlo.compare(idx, clamped, ctx.hlo.ComparisonDirectionAttr.get("EQ"))
    batch = aval.shape[:-1]
    ok = None
    for k in range(aval.shape[-1]):    # all components in bounds (K is small)
        part = ctx.hlo.slice(same, _i64(ctx, [0] * (nd - 1) + [k]),
                             _i64(ctx, list(batch) + [k + 1]), _i64(ctx, [1] * nd))
        part = ctx.hlo.reshape(ctx.ir_type(ShapedArray(batch, np.bool_)), part)
        ok = part if ok is None else ctx.hlo.and_(ok, part)
    to = _index_dtype(shape)
    if dtype != to:
        clamped = ctx.hlo.convert(ctx.ir_type(ShapedArray(aval.shape, to)), clamped)
    return clamped, ok


def _gather(ctx, x, idx, *, dimension_numbers, slice_sizes, indices_are_sorted,
            unique_indices, mode, fill_value):
    operand, indices = ctx.avals_in[:2]
    out, dn = ctx.aval_out, dimension_numbers
    if out.size == 0:
        return ctx.constant(np.zeros((), out.dtype), out.dtype, out.shape)
    ok = None
    if mode is not GatherScatterMode.PROMISE_IN_BOUNDS and dn.start_index_map:
        idx, ok = _bounded_indices(ctx, idx, indices, dn.start_index_map, operand.shape,
                                   slice_sizes)
    hdn = ctx.hlo.GatherDimensionNumbers.get(
        offset_dims=list(dn.offset_dims), collapsed_slice_dims=list(dn.collapsed_slice_dims),
        operand_batching_dims=list(dn.operand_batching_dims),
        start_indices_batching_dims=list(dn.start_indices_batching_dims),
        start_index_map=list(dn.start_index_map), index_vector_dim=indices.ndim - 1)
    res = ctx.hlo.gather(x, idx, hdn, _i64(ctx, slice_sizes),
                         indices_are_sorted=bool(indices_are_sorted))
    if mode is GatherScatterMode.FILL_OR_DROP and ok is not None:
        fill = default_fill_value(out.dtype) if fill_value is None else fill_value
        batch_pos = [d for d in range(out.ndim) if d not in dn.offset_dims]
        mask = ctx.broadcast_in_dim(ok, np.bool_, out.shape, batch_pos)
        res = ctx.hlo.select(mask, res, ctx.constant(np.asarray(fill, out.dtype), out.dtype,
                                                     out.shape))
    return res


def _combiner(ctx, name: str, dtype: np.dtype):
    boolean = dtype.kind == "b"
    return {"scatter": None,
            "scatter-add": ctx.hlo.or_ if boolean else ctx.hlo.add,
            "scatter-mul": ctx.hlo.and_ if boolean else ctx.hlo.multiply,
            "scatter-min": ctx.hlo.and_ if boolean else ctx.hlo.minimum,
            "scatter-max": ctx.hlo.or_ if boolean else ctx.hlo.maximum}[name]


def _scatter_for(name: str):
    def lower(ctx, x, idx, updates, *, dimension_numbers, indices_are_sorted, unique_indices,
              mode, **_):
        operand, indices, upd = ctx.avals_in
        dn = dimension_numbers
        if upd.size == 0 or operand.size == 0:
            return x
        if mode is GatherScatterMode.CLIP and dn.scatter_dims_to_operand_dims:
            idx, _ = _bounded_indices(ctx, idx, indices, dn.scatter_dims_to_operand_dims,
                                      operand.shape,
                                      _scatter_slice_sizes(operand.shape, upd.shape, dn))
        hdn = ctx.hlo.ScatterDimensionNumbers.get(
            update_window_dims=list(dn.update_window_dims),
            inserted_window_dims=list(dn.inserted_window_dims),
            input_batching_dims=list(dn.operand_batching_dims),
            scatter_indices_batching_dims=list(dn.scatter_indices_batching_dims),
            scattered_dims_to_operand_dims=list(dn.scatter_dims_to_operand_dims),
            index_vector_dim=indices.ndim - 1)
        op = ctx.hlo.ScatterOp([ctx.ir_type(ctx.aval_out)], [x], idx, [updates], hdn,
                               indices_are_sorted=bool(indices_are_sorted),
                               unique_indices=bool(unique_indices))
        scalar = ctx.ir.RankedTensorType.get((), ctx.element_type(operand.dtype))
        block = op.regions[0].blocks.append(scalar, scalar)
        combine = _combiner(ctx, name, np.dtype(operand.dtype))
        with ctx.ir.InsertionPoint(block):
            old, new = block.arguments
            ctx.hlo.return_([new if combine is None else combine(old, new)])
        return op.results[0]
    return lower


LOWERINGS = {
    "squeeze": _squeeze, "rev": _rev, "slice": _slice, "pad": _pad,
    "dynamic_slice": _dynamic_slice,
    "dynamic_update_slice": _dynamic_update_slice, "iota": _iota, "gather": _gather,
    **{name: _scatter_for(name) for name in ("scatter", "scatter-add", "scatter-mul",
                                             "scatter-min", "scatter-max")},
}
