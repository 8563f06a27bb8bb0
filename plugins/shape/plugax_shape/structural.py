"""Primitives that rearrange the whole operand: broadcast_in_dim, reshape, transpose,
squeeze, rev.

The kernel's vmap machinery moves batch axes with `transpose` and materialises
unbatched values with `broadcast_in_dim`, so these two must exist before any
other primitive can be batched; their rules use nothing outside this module
(except `reduce_sum`, needed only to transpose `broadcast_in_dim`).
"""
from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, Sequence

import numpy as np

from plugax.extend import Primitive, ShapedArray, bind, get_aval, moveaxis

from ._common import canonical_axes, defshape, shape_error, unary_transpose

broadcast_in_dim_p = Primitive("broadcast_in_dim")
reshape_p = Primitive("reshape")
transpose_p = Primitive("transpose")
squeeze_p = Primitive("squeeze")
rev_p = Primitive("rev")


# --- broadcast_in_dim ----------------------------------------------------------------
def _broadcast_in_dim_shape(aval: ShapedArray, *, shape, broadcast_dimensions) -> tuple:
    """Operand dim i becomes output dim bd[i]; it must be 1 or equal that output dim."""
    bd, err = broadcast_dimensions, None
    if len(bd) != aval.ndim:
        err = (f"needs one broadcast dimension per operand dimension ({aval.ndim})",
               "pass broadcast_dimensions of length operand.ndim")
    elif any(not 0 <= d < len(shape) for d in bd) or list(bd) != sorted(set(bd)):
        err = ("needs strictly increasing broadcast_dimensions within the output rank",
               "list, for each operand dimension in order, its output dimension")
    elif any(s < 0 for s in shape):
        err = ("got a negative output size", "use non-negative sizes")
    elif any(aval.shape[i] not in (1, shape[d]) for i, d in enumerate(bd)):
        err = ("can only broadcast operand dimensions of size 1 or equal to the output "
               "dimension", "reshape the operand, or choose matching broadcast_dimensions")
    if err:
        raise shape_error(broadcast_in_dim_p, [aval], *err, shape=shape,
                          broadcast_dimensions=bd)
    return tuple(shape)


def _broadcast_in_dim_impl(x, *, shape, broadcast_dimensions):
    x = np.asarray(x)
    if x.flags.c_contiguous and x.size and x.itemsize:
        # a read-only view with zero strides on the new and stretched dims, built
        # directly: np.broadcast_to costs several times more for small arrays
        strides = [0] * len(shape)
        for i, d in enumerate(broadcast_dimensions):
            if x.shape[i] != 1:
                strides[d] = x.strides[i]
        try:
            out = np.ndarray(shape, x.dtype, x, 0, strides)
        except (TypeError, ValueError):   # a dtype without a buffer format
            out = None
        if out is not None:
            out.flags.writeable = False
            return out
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = x.shape[i]
    return np.broadcast_to(x.reshape(expanded), shape)


@unary_transpose
def _broadcast_in_dim_transpose(ct, aval, *, shape, broadcast_dimensions):
    """Sum over the new dims and the size-1 dims that were stretched, then restore the 1s."""
    import plugax.lax as lax
    summed, restore = _unbroadcast_plan(aval.shape, shape, broadcast_dimensions)
    if not summed:
        return ct
    out = lax.reduce_sum(ct, summed)
    return reshape(out, aval.shape) if restore else out


@lru_cache(maxsize=1024)
def _unbroadcast_plan(operand_shape: tuple, shape: tuple, bd: tuple) -> tuple[tuple, bool]:
    """(dims to sum, whether a reshape must restore stretched 1s): index arithmetic that
    every backward pass repeats for each broadcast bias, so computed once per form.
    Only summed stretched 1s need restoring; the usual bias broadcast has none."""
    summed = tuple(d for d in range(len(shape)) if d not in bd) + tuple(
        d for i, d in enumerate(bd) if operand_shape[i] == 1 and shape[d] != 1)
    kept = tuple(n for d, n in enumerate(shape) if d not in summed)
    return tuple(sorted(summed)), kept != operand_shape


def _broadcast_in_dim_vmap(ctx, args, dims, *, shape, broadcast_dimensions):
    x = moveaxis(args[0], dims[0], 0)
    bd = (0,) + tuple(d + 1 for d in broadcast_dimensions)
    return broadcast_in_dim(x, (ctx.axis_size,) + tuple(shape), bd), 0


def broadcast_in_dim(operand: Any, shape: Sequence[int],
                     broadcast_dimensions: Sequence[int]) -> Any:
    """lax.broadcast_in_dim: operand dim i lands at output dim broadcast_dimensions[i]."""
    return bind(broadcast_in_dim_p, operand, shape=tuple(map(int, shape)),
                broadcast_dimensions=tuple(map(int, broadcast_dimensions)))


# --- reshape ---------------------------------------------------------------------------
def _reshape_shape(aval: ShapedArray, *, new_sizes, dimensions) -> tuple:
    if dimensions is not None and sorted(dimensions) != list(range(aval.ndim)):
        raise shape_error(reshape_p, [aval], "needs `dimensions` to be a permutation of the "
                          "operand's axes", "pass dimensions=None or a permutation",
                          new_sizes=new_sizes, dimensions=dimensions)
    if any(s < 0 for s in new_sizes) or math.prod(new_sizes) != aval.size:
        raise shape_error(reshape_p, [aval], f"cannot change the size {aval.size} to "
                          f"{math.prod(new_sizes)}", "choose new_sizes with the same product",
                          new_sizes=new_sizes, dimensions=dimensions)
    return tuple(new_sizes)


def _reshape_impl(x, *, new_sizes, dimensions):
    return np.reshape(x if dimensions is None else np.transpose(x, dimensions), new_sizes)


@unary_transpose
def _reshape_transpose(ct, aval, *, new_sizes, dimensions):
    if dimensions is None:
        return reshape(ct, aval.shape)
    permuted = reshape(ct, tuple(aval.shape[d] for d in dimensions))
    return transpose(permuted, tuple(np.argsort(dimensions)))


def _reshape_vmap(ctx, args, dims, *, new_sizes, dimensions):
    x = moveaxis(args[0], dims[0], 0)
    perm = None if dimensions is None else (0,) + tuple(d + 1 for d in dimensions)
    return bind(reshape_p, x, new_sizes=(ctx.axis_size,) + new_sizes, dimensions=perm), 0


def reshape(operand: Any, new_sizes: Sequence[int],
            dimensions: Sequence[int] | None = None) -> Any:
    """lax.reshape; `dimensions` (optional) transposes the operand first."""
    return bind(reshape_p, operand, new_sizes=tuple(int(s) for s in new_sizes),
                dimensions=None if dimensions is None else tuple(int(d) for d in dimensions))


# --- transpose -------------------------------------------------------------------------
def _transpose_shape(aval: ShapedArray, *, permutation) -> tuple:
    if sorted(permutation) != list(range(aval.ndim)):
        raise shape_error(transpose_p, [aval], "needs a permutation of the operand's axes",
                          f"pass a permutation of {tuple(range(aval.ndim))}",
                          permutation=permutation)
    return tuple(aval.shape[p] for p in permutation)


@unary_transpose
def _transpose_transpose(ct, aval, *, permutation):
    return transpose(ct, tuple(int(i) for i in np.argsort(permutation)))


def _transpose_vmap(ctx, args, dims, *, permutation):
    d = dims[0]
    perm = (d,) + tuple(p + (p >= d) for p in permutation)
    return transpose(args[0], perm), 0


def transpose(operand: Any, permutation: Sequence[int]) -> Any:
    """lax.transpose: output axis i is operand axis permutation[i]."""
    return bind(transpose_p, operand, permutation=tuple(int(p) for p in permutation))


# --- squeeze ---------------------------------------------------------------------------
def _squeeze_shape(aval: ShapedArray, *, dimensions) -> tuple:
    if any(not 0 <= d < aval.ndim or aval.shape[d] != 1 for d in dimensions):
        raise shape_error(squeeze_p, [aval], "can only remove axes of size 1",
                          "pass only axes whose size is 1", dimensions=dimensions)
    return tuple(s for i, s in enumerate(aval.shape) if i not in dimensions)


@unary_transpose
def _squeeze_transpose(ct, aval, *, dimensions):
    return reshape(ct, aval.shape)


def _squeeze_vmap(ctx, args, dims, *, dimensions):
    d = dims[0]
    out = bind(squeeze_p, args[0], dimensions=tuple(a + (a >= d) for a in dimensions))
    return out, d - sum(a < d for a in dimensions)


def squeeze(array: Any, dimensions: Sequence[int]) -> Any:
    """lax.squeeze: remove the given size-1 axes (negative axes count from the end)."""
    ndim = get_aval(array).ndim
    return bind(squeeze_p, array, dimensions=tuple(sorted(canonical_axes(dimensions, ndim))))


# --- rev -------------------------------------------------------------------------------
def _rev_shape(aval: ShapedArray, *, dimensions) -> tuple:
    if any(not 0 <= d < aval.ndim for d in dimensions) or len(set(dimensions)) != len(dimensions):
        raise shape_error(rev_p, [aval], "needs distinct axes of the operand",
                          "pass axes in range(operand.ndim)", dimensions=dimensions)
    return aval.shape


@unary_transpose
def _rev_transpose(ct, aval, *, dimensions):
    return rev(ct, dimensions)


def _rev_vmap(ctx, args, dims, *, dimensions):
    d = dims[0]
    return rev(args[0], tuple(a + (a >= d) for a in dimensions)), d


def rev(operand: Any, dimensions: Sequence[int]) -> Any:
    """lax.rev: reverse the order of elements along `dimensions`."""
    return bind(rev_p, operand, dimensions=tuple(int(d) for d in dimensions))


def expand_dims(array: Any, dimensions: Sequence[int]) -> Any:
    """lax.expand_dims: a front end over broadcast_in_dim, as in JAX (no primitive)."""
    shape = list(get_aval(array).shape)
    ndim_out = len(shape) + len(tuple(dimensions))
    new = canonical_axes(dimensions, ndim_out, "dimension")
    kept = tuple(i for i in range(ndim_out) if i not in new)
    for i in sorted(new):
        shape.insert(i, 1)
    return broadcast_in_dim(array, shape, kept)


RULES = [
    defshape(broadcast_in_dim_p, _broadcast_in_dim_impl, _broadcast_in_dim_shape,
             transpose=_broadcast_in_dim_transpose, batching=_broadcast_in_dim_vmap),
    defshape(reshape_p, _reshape_impl, _reshape_shape,
             transpose=_reshape_transpose, batching=_reshape_vmap),
    defshape(transpose_p, lambda x, *, permutation: np.transpose(x, permutation),
             _transpose_shape, transpose=_transpose_transpose, batching=_transpose_vmap),
    defshape(squeeze_p, lambda x, *, dimensions: np.squeeze(x, axis=dimensions),
             _squeeze_shape, transpose=_squeeze_transpose, batching=_squeeze_vmap),
    defshape(rev_p, lambda x, *, dimensions: np.flip(x, axis=dimensions), _rev_shape,
             transpose=_rev_transpose, batching=_rev_vmap),
]

LAX = {"broadcast_in_dim": broadcast_in_dim, "reshape": reshape, "transpose": transpose,
       "squeeze": squeeze, "rev": rev, "expand_dims": expand_dims}
