"""broadcast_in_dim and reduce_sum: a transpose pair.

Broadcasting copies a value along new (or size-1) axes; the cotangent of a copy
is the sum of the copies' cotangents, so the transpose of broadcast_in_dim is a
reduce_sum, and the transpose of reduce_sum broadcasts the cotangent back.
vmap needs both: broadcast_in_dim to give an unbatched value a batch axis,
reduce_sum to sum a cotangent over the batch when its input was unbatched.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Sequence

import numpy as np

from ..core.avals import ShapedArray, get_aval
from ..core.memory import check_fits
from ..core.trace import Primitive, bind
from ..loader.ruleset import RuleSet
from . import lowering as L
from .layout import moveaxis, reshape
from ..interpreters.vjp_tape.rules import linear_vjp
from .rules import (axes_removing_batching, checked_impl, linear_jvp, shape_error,
                    unary_transpose)

__all__ = ["broadcast_in_dim_p", "reduce_sum_p", "broadcast_in_dim", "reduce_sum", "RULES"]

broadcast_in_dim_p = Primitive("broadcast_in_dim")
reduce_sum_p = Primitive("reduce_sum")


# --- broadcast_in_dim[shape, broadcast_dimensions] -----------------------------------------
def _broadcast_in_dim_abstract_eval(ctx, aval: ShapedArray, *, shape,
                                    broadcast_dimensions) -> ShapedArray:
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
    return ShapedArray(tuple(shape), aval.dtype, aval.weak_type)


def user_reduction_axes(name: str, aval: ShapedArray, axes: Any) -> tuple[int, ...]:
    """The axes a user gave a reduction, checked against the operand the user passed
    and made non-negative. Checking here, in the front end, names the user's operand
    and axes; the primitive's own check would, under vmap, name the batched operand
    and shifted axes. Non-integers are a TypeError; out of range or repeated axes a
    ValueError, as in JAX."""
    ndim = aval.ndim
    axes = (axes,) if isinstance(axes, (int, np.integer)) else tuple(axes)
    if any(not isinstance(a, (int, np.integer)) or isinstance(a, bool) for a in axes):
        raise TypeError(f"{name}: axes must be integers, got {axes}")
    out = tuple(int(a) + ndim if -ndim <= int(a) < 0 else int(a) for a in axes)
    if any(not 0 <= a < ndim for a in out) or len(set(out)) != len(out):
        raise ValueError(f"{name}: reduction axes {axes} are out of bounds or repeated for an "
                         f"operand {aval.str_short()} (rank {ndim}): each axis must be in "
                         f"[-{ndim}, {ndim}), at most once")
    return out


def _broadcast_in_dim_impl(x, *, shape, broadcast_dimensions):
    x = np.asarray(x)
    check_fits("broadcast_in_dim", shape, x.dtype)
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
    summed, restore = _unbroadcast_plan(aval.shape, shape, broadcast_dimensions)
    if not summed:
        return ct
    out = reduce_sum(ct, summed)
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


def _broadcast_in_dim_batching(ctx, args, dims, *, shape, broadcast_dimensions):
    x = moveaxis(args[0], dims[0], 0)
    bd = (0,) + tuple(d + 1 for d in broadcast_dimensions)
    return broadcast_in_dim(x, (ctx.axis_size,) + tuple(shape), bd), 0


def broadcast_in_dim(operand: Any, shape: Sequence[int],
                     broadcast_dimensions: Sequence[int]) -> Any:
    """lax.broadcast_in_dim: operand dim i lands at output dim broadcast_dimensions[i]."""
    return bind(broadcast_in_dim_p, operand, shape=tuple(map(int, shape)),
                broadcast_dimensions=tuple(map(int, broadcast_dimensions)))


# --- reduce_sum[axes] ------------------------------------------------------------------------
def _is_number(dtype: np.dtype) -> bool:
    return dtype.kind in "iufc" or dtype.name == "bfloat16"


def _reduce_sum_abstract_eval(ctx, aval: ShapedArray, *, axes) -> ShapedArray:
    if (any(not isinstance(a, (int, np.integer)) or not 0 <= a < aval.ndim for a in axes)
            or len(set(axes)) != len(axes)):
        raise shape_error(reduce_sum_p, [aval], f"needs distinct axes in [0, {aval.ndim})",
                          "pass axes within the operand's rank (the lax front ends also "
                          "accept negative axes)", axes=axes)
    if not _is_number(aval.dtype):
        raise shape_error(reduce_sum_p, [aval], f"does not accept dtype {aval.dtype.name} "
                          f"(it needs a number dtype)", "convert with "
                          "plugax.lax.convert_element_type, or use plugax.numpy, which "
                          "converts", axes=axes)
    shape = tuple(d for i, d in enumerate(aval.shape) if i not in axes)
    return ShapedArray(shape, aval.dtype, aval.weak_type)


def _reduce_sum_impl(ctx, x, *, axes):
    if not _is_number(x.dtype):   # eager binds that skip abstract_eval: the kernel turns
        raise TypeError(reduce_sum_p)   # this failure into abstract_eval's ShapeError
    return np.add.reduce(x, axes, x.dtype)


def _reduce_sum_transpose(ctx, ct, x, *, axes):
    """Broadcast the cotangent back over the reduced axes."""
    aval = x.aval
    kept = tuple(i for i in range(aval.ndim) if i not in axes)
    return [broadcast_in_dim(ct, aval.shape, kept)]


def reduce_sum(operand: Any, axes: Sequence[int]) -> Any:
    """lax.reduce_sum: the sum over `axes` (negative axes count from the end)."""
    # checked against the user's operand (under vmap the primitive sees shifted axes)
    out = user_reduction_axes("lax.reduce_sum", get_aval(operand), axes)
    return bind(reduce_sum_p, operand, axes=out)


# --- batch axes: what vmap and every batching rule do with the two primitives above ---
def broadcast_batched(x: Any, axis_size: int, dst: int) -> Any:
    """Materialise an unbatched value with a batch axis of `axis_size` at `dst`."""
    aval = get_aval(x)
    shape = list(aval.shape)
    dst = dst % (len(shape) + 1)  # negative: counted from the end of the batched shape
    shape.insert(dst, axis_size)
    dims = tuple(i for i in range(len(shape)) if i != dst)
    return broadcast_in_dim(x, tuple(shape), dims)


def move_batch_axis(axis_size: int, src: int | None, dst: int, x: Any) -> Any:
    """`x` batched at `src` (None: unbatched) with its batch axis at `dst`: the move every
    batching rule makes, here beside the two primitives it needs."""
    if src is None:
        return broadcast_batched(x, axis_size, dst)
    return moveaxis(x, src, dst)


def bdim_at_front(x: Any, bdim: int | None, axis_size: int) -> Any:
    return move_batch_axis(axis_size, bdim, 0, x)


RULES = [
    RuleSet(broadcast_in_dim_p,
            impl=checked_impl(_broadcast_in_dim_impl, _broadcast_in_dim_abstract_eval),
            abstract_eval=_broadcast_in_dim_abstract_eval, jvp=linear_jvp(broadcast_in_dim_p),
            vjp=linear_vjp(broadcast_in_dim_p),
            transpose=_broadcast_in_dim_transpose, batching=_broadcast_in_dim_batching,
            lowering={"default": L.broadcast_in_dim}),
    RuleSet(reduce_sum_p, impl=_reduce_sum_impl, abstract_eval=_reduce_sum_abstract_eval,
            jvp=linear_jvp(reduce_sum_p), vjp=linear_vjp(reduce_sum_p),
            transpose=_reduce_sum_transpose,
            batching=axes_removing_batching(reduce_sum_p, "axes"), lowering={"default": L.reduce_sum}),
]
