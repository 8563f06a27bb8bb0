"""Integer-array indexing: iota, gather and scatter-add.

`gather` here is a simplified XLA gather: it takes elements along one `axis`
(like `numpy.take`), optionally with `batch_dims` leading axes shared by
operand and indices (like `numpy.take_along_axis` on those axes). That is
enough for `x[idx]`, `take`, `take_along_axis`, and -- crucially -- it is closed
under vmap: batching both operand and indices just adds a batch dim.
`scatter-add` is its transpose. Indices are clamped into range, as XLA does.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from plugax.extend import (Primitive, RuleSet, ShapedArray, Zero, bdim_at_front, bind,
                           canonicalize_dtype,
                           checked_impl, first_weak, is_undefined_primal, linear_jvp, moveaxis,
                           shape_error)

from ._common import index_dtype_ok, lowering_of, zeros

iota_p = Primitive("iota")
gather_p = Primitive("gather")
scatter_add_p = Primitive("scatter-add")


@dataclass(frozen=True)
class GatherDimensionNumbers:
    """Which operand axis is indexed, and how many leading axes are shared batch axes.

    out.shape == operand.shape[:axis] + indices.shape[batch_dims:] + operand.shape[axis+1:]
    and out[b, pre, i, post] == operand[b, pre, indices[b, i], post].
    """

    axis: int
    batch_dims: int = 0

    def __str__(self) -> str:
        return f"{type(self).__name__}(axis={self.axis}, batch_dims={self.batch_dims})"


class ScatterDimensionNumbers(GatherDimensionNumbers):
    """The same layout, read backwards: updates have the shape a gather would return."""


# --- iota ------------------------------------------------------------------------------
def _iota_abstract_eval(ctx, *, dtype, shape, dimension):
    if not 0 <= dimension < len(shape) or any(s < 0 for s in shape):
        raise shape_error(iota_p, [], "needs 0 <= dimension < len(shape) and sizes >= 0",
                          "fix shape or dimension", dtype=dtype, shape=shape,
                          dimension=dimension)
    return ShapedArray(shape, dtype, False)


def _iota_impl(*, dtype, shape, dimension):
    along = np.arange(shape[dimension], dtype=dtype)
    return np.broadcast_to(np.expand_dims(along, [i for i in range(len(shape))
                                                  if i != dimension]), shape)


def iota(dtype: Any, size: int) -> Any:
    """lax.iota: 0, 1, ..., size-1."""
    return broadcasted_iota(dtype, (size,), 0)


def broadcasted_iota(dtype: Any, shape: tuple, dimension: int) -> Any:
    """lax.broadcasted_iota: the index along `dimension` at each position of `shape`."""
    return bind(iota_p, dtype=canonicalize_dtype(dtype), shape=tuple(int(s) for s in shape),
                dimension=int(dimension))


# --- gather --------------------------------------------------------------------------------
def _gather_out_shape(prim, operand, indices, dn, extra=()):
    axis, m = dn.axis, dn.batch_dims
    avals = [operand, indices, *extra]
    if not m <= axis < operand.ndim or indices.ndim < m or \
            indices.shape[:m] != operand.shape[:m]:
        raise shape_error(prim, avals, "needs batch_dims <= axis < operand.ndim and the "
                          "leading batch_dims axes of operand and indices to agree",
                          "move shared axes to the front of both", dimension_numbers=dn)
    if not index_dtype_ok(indices):
        raise shape_error(prim, avals, "needs integer indices", "convert the indices to "
                          "int32", dimension_numbers=dn)
    if operand.shape[axis] == 0 and indices.size:
        raise shape_error(prim, avals, "cannot index an axis of size 0",
                          "index a non-empty axis", dimension_numbers=dn)
    return operand.shape[:axis] + indices.shape[m:] + operand.shape[axis + 1:]


def _gather_abstract_eval(ctx, operand, indices, *, dimension_numbers):
    shape = _gather_out_shape(gather_p, operand, indices, dimension_numbers)
    return ShapedArray(shape, operand.dtype, operand.weak_type)


def _flat_layout(x_shape, idx, dn):
    """Flatten to (batch, axis, rest...) + (batch, n_indices) so one fancy index does it."""
    axis, m = dn.axis, dn.batch_dims
    n = x_shape[axis]
    batch, ishape = x_shape[:m], idx.shape[m:]
    nb, ni = int(np.prod(batch)), int(np.prod(ishape))
    flat_idx = np.clip(idx, 0, max(n - 1, 0)).reshape((nb, ni))
    rest = x_shape[m:axis] + x_shape[axis + 1:]
    # Gathered layout is batch + ishape + rest; the output wants batch + pre + ishape + post.
    k, pre = len(ishape), axis - m
    perm = (tuple(range(m)) + tuple(range(m + k, m + k + pre)) + tuple(range(m, m + k))
            + tuple(range(m + k + pre, m + k + len(rest))))
    return np.arange(nb)[:, None], flat_idx, batch + ishape + rest, perm


def _gather_impl(x, idx, *, dimension_numbers):
    dn = dimension_numbers
    rows, flat_idx, gathered_shape, perm = _flat_layout(x.shape, idx, dn)
    moved = np.moveaxis(x, dn.axis, dn.batch_dims)
    flat = moved.reshape((rows.shape[0], x.shape[dn.axis]) + moved.shape[dn.batch_dims + 1:])
    return np.transpose(flat[rows, flat_idx].reshape(gathered_shape), perm)


def _gather_transpose(ctx, ct, x, idx, *, dimension_numbers):
    dn = ScatterDimensionNumbers(dimension_numbers.axis, dimension_numbers.batch_dims)
    ct_x = bind(scatter_add_p, zeros(x.aval.shape, x.aval.dtype), idx, ct, dimension_numbers=dn)
    return [ct_x, None]


def _gather_vmap(ctx, args, dims, *, dimension_numbers):
    (x, idx), (dx, di), dn = args, dims, dimension_numbers
    if di is None and dn.batch_dims == 0:      # the batch axis is one more operand axis
        return gather(moveaxis(x, dx, 0), idx, axis=dn.axis + 1), 0
    if dx is None and dn.batch_dims == 0:      # the batch axis is one more index axis
        return gather(x, idx, axis=dn.axis), dn.axis + di
    x, idx = bdim_at_front(x, dx, ctx.axis_size), bdim_at_front(idx, di, ctx.axis_size)
    return gather(x, idx, axis=dn.axis + 1, batch_dims=dn.batch_dims + 1), 0


def gather(operand: Any, indices: Any, axis: int, batch_dims: int = 0) -> Any:
    """Take `operand` elements along `axis` at `indices` (clamped); see GatherDimensionNumbers."""
    return bind(gather_p, operand, indices,
                dimension_numbers=GatherDimensionNumbers(int(axis), int(batch_dims)))


# --- scatter-add ---------------------------------------------------------------------------
def _scatter_add_abstract_eval(ctx, operand, indices, updates, *, dimension_numbers):
    expected = _gather_out_shape(scatter_add_p, operand, indices, dimension_numbers, [updates])
    if updates.shape != expected or updates.dtype != operand.dtype:
        raise shape_error(scatter_add_p, [operand, indices, updates], "needs updates of the "
                          f"operand's dtype and of shape {expected} (what gather returns)",
                          "reshape or convert the updates", dimension_numbers=dimension_numbers)
    return ShapedArray(operand.shape, operand.dtype, operand.weak_type)


def _scatter_add_impl(x, idx, updates, *, dimension_numbers):
    dn = dimension_numbers
    rows, flat_idx, gathered_shape, perm = _flat_layout(x.shape, idx, dn)
    moved = np.moveaxis(x, dn.axis, dn.batch_dims)
    flat = moved.reshape((rows.shape[0], x.shape[dn.axis]) + moved.shape[dn.batch_dims + 1:])
    flat = flat.copy()
    upd = np.transpose(updates, np.argsort(perm)).reshape(flat_idx.shape + flat.shape[2:])
    np.add.at(flat, (rows, flat_idx), upd)
    return np.moveaxis(flat.reshape(moved.shape), dn.batch_dims, dn.axis)


def _scatter_add_transpose(ctx, ct, x, idx, updates, *, dimension_numbers):
    dn = GatherDimensionNumbers(dimension_numbers.axis, dimension_numbers.batch_dims)
    ct_x = ct if is_undefined_primal(x) else None
    ct_u = bind(gather_p, ct, idx, dimension_numbers=dn) if is_undefined_primal(updates) else None
    return [ct_x, None, ct_u]


def _scatter_add_vmap(ctx, args, dims, *, dimension_numbers):
    (x, idx, upd), (dx, di, du), dn = args, dims, dimension_numbers
    size = ctx.axis_size
    x, upd = bdim_at_front(x, dx, size), bdim_at_front(upd, du, size)
    if di is None and dn.batch_dims == 0:
        return scatter_add(x, idx, upd, axis=dn.axis + 1), 0
    idx = bdim_at_front(idx, di, size)
    return scatter_add(x, idx, upd, axis=dn.axis + 1, batch_dims=dn.batch_dims + 1), 0


def scatter_add(operand: Any, indices: Any, updates: Any, axis: int,
                batch_dims: int = 0) -> Any:
    """Add `updates` into `operand` at `indices` along `axis`; repeated indices accumulate."""
    return bind(scatter_add_p, operand, indices, updates,
                dimension_numbers=ScatterDimensionNumbers(int(axis), int(batch_dims)))


def _no_tangent(ctx, primals, tangents, **params):
    out = iota_p.bind(**params)
    return out, Zero.from_value(out)


RULES = [
    # iota has no operands, so no transformation ever reaches a jvp or vmap rule of it;
    # the jvp rule only documents that its output has no tangent.
    RuleSet(primitive=iota_p, impl=checked_impl(_iota_impl, _iota_abstract_eval),
            abstract_eval=_iota_abstract_eval, jvp=_no_tangent, lowering=lowering_of(iota_p)),
    RuleSet(primitive=gather_p, impl=checked_impl(_gather_impl, _gather_abstract_eval),
            abstract_eval=_gather_abstract_eval,
            jvp=linear_jvp(gather_p, [0]), batching=_gather_vmap, transpose=_gather_transpose, lowering=lowering_of(gather_p)),
    RuleSet(primitive=scatter_add_p,
            impl=checked_impl(_scatter_add_impl, _scatter_add_abstract_eval),
            abstract_eval=_scatter_add_abstract_eval, jvp=linear_jvp(scatter_add_p, [0, 2]),
            batching=_scatter_add_vmap, transpose=_scatter_add_transpose, lowering=lowering_of(scatter_add_p)),
]

LAX = {"iota": iota, "broadcasted_iota": broadcasted_iota, "gather": gather,
       "scatter_add": scatter_add}
