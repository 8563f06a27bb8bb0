"""StableHLO lowerings of the shape family.

Most primitives map onto one StableHLO op with the same meaning (squeeze, rev,
slice, pad, iota; broadcast_in_dim, reshape and transpose are the
kernel's, lowered in plugax.structural). The ones that take
indices must agree with the impl on out-of-range indices, so they clamp
explicitly before the op, the way the impl does:

- dynamic_slice / dynamic_update_slice: each start into [0, size - window];
- gather / scatter-add: each index into [0, size - 1]. (XLA's gather would clamp
  too, but its scatter *drops* out-of-range updates, and the impl clamps.)

Clamping happens in the index's own dtype (so a huge unsigned index clamps to
the top rather than wrapping negative), then the index becomes int32 (int64 for
axes longer than int32 can count).

jaxlib is reached only through `ctx` (`ctx.hlo`, `ctx.ir`), never imported here.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

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


def _gather_layout(operand_ndim: int, indices_ndim: int, dn: Any) -> dict:
    """StableHLO dimension numbers for the simplified gather (see indexing.py).

    The output is batch + pre + index + post. StableHLO puts the operand's slice
    dims (pre and post: every axis but `axis` and the batch axes) at `offset_dims`
    and the index dims, batch ones included, in the remaining positions in order:
    exactly that layout, so no transpose is needed.
    """
    axis, m = dn.axis, dn.batch_dims
    k = indices_ndim - m
    pre, post = axis - m, operand_ndim - axis - 1
    offset = list(range(m, m + pre)) + list(range(m + pre + k, m + pre + k + post))
    return dict(offset=offset, batch=list(range(m)), axis=axis, index_vector_dim=indices_ndim)


def _clamped_indices(ctx, idx: Any, n: int) -> Any:
    return clamp_index(ctx, idx, ctx.avals_in[1], max(n - 1, 0), _index_dtype([n]))


def _gather(ctx, x, idx, *, dimension_numbers):
    operand, indices = ctx.avals_in[:2]
    out = ctx.aval_out
    n = operand.shape[dimension_numbers.axis]
    if n == 0 or out.size == 0:    # nothing to read (and a slice of 1 would not fit)
        return ctx.constant(np.zeros((), out.dtype), out.dtype, out.shape)
    lay = _gather_layout(operand.ndim, indices.ndim, dimension_numbers)
    dn = ctx.hlo.GatherDimensionNumbers.get(
        offset_dims=lay["offset"], collapsed_slice_dims=[lay["axis"]],
        operand_batching_dims=lay["batch"], start_indices_batching_dims=lay["batch"],
        start_index_map=[lay["axis"]], index_vector_dim=lay["index_vector_dim"])
    sizes = [1 if i < dimension_numbers.batch_dims or i == lay["axis"] else s
             for i, s in enumerate(operand.shape)]
    return ctx.hlo.gather(x, _clamped_indices(ctx, idx, n), dn, _i64(ctx, sizes),
                          indices_are_sorted=False)


def _scatter_add(ctx, x, idx, updates, *, dimension_numbers):
    operand, indices, upd = ctx.avals_in
    n = operand.shape[dimension_numbers.axis]
    if n == 0 or upd.size == 0:    # nothing to add
        return x
    lay = _gather_layout(operand.ndim, indices.ndim, dimension_numbers)
    dn = ctx.hlo.ScatterDimensionNumbers.get(
        update_window_dims=lay["offset"], inserted_window_dims=[lay["axis"]],
        input_batching_dims=lay["batch"], scatter_indices_batching_dims=lay["batch"],
        scattered_dims_to_operand_dims=[lay["axis"]], index_vector_dim=lay["index_vector_dim"])
    op = ctx.hlo.ScatterOp([ctx.ir_type(ctx.aval_out)], [x], _clamped_indices(ctx, idx, n),
                           [updates], dn, indices_are_sorted=False, unique_indices=False)
    scalar = ctx.ir.RankedTensorType.get((), ctx.element_type(operand.dtype))
    block = op.regions[0].blocks.append(scalar, scalar)
    # np.add.at on booleans is a logical or; XLA's add has no boolean form.
    add = ctx.hlo.or_ if np.dtype(operand.dtype).kind == "b" else ctx.hlo.add
    with ctx.ir.InsertionPoint(block):
        ctx.hlo.return_([add(*block.arguments)])
    return op.results[0]


LOWERINGS = {
    "squeeze": _squeeze, "rev": _rev, "slice": _slice, "pad": _pad,
    "dynamic_slice": _dynamic_slice,
    "dynamic_update_slice": _dynamic_update_slice, "iota": _iota, "gather": _gather,
    "scatter-add": _scatter_add,
}
