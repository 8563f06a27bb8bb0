"""reshape and transpose: rearranging an array without changing its elements.

Each is the other's transpose (and its own), so the pair needs nothing outside
this module. `moveaxis`, the batch-axis move every vmap rule makes, is one
`transpose`.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from ..core.avals import ShapedArray, get_aval
from ..core.trace import Primitive, bind
from ..loader.ruleset import RuleSet
from . import lowering as L
from ..interpreters.vjp_tape.rules import linear_vjp
from .rules import checked_impl, linear_jvp, shape_error, unary_transpose

__all__ = ["reshape_p", "transpose_p", "reshape", "transpose", "moveaxis", "RULES"]

reshape_p = Primitive("reshape")
transpose_p = Primitive("transpose")


# --- reshape[new_sizes, dimensions] ----------------------------------------------------
def _reshape_abstract_eval(ctx, aval: ShapedArray, *, new_sizes, dimensions) -> ShapedArray:
    if dimensions is not None and sorted(dimensions) != list(range(aval.ndim)):
        raise shape_error(reshape_p, [aval], "needs `dimensions` to be a permutation of the "
                          "operand's axes", "pass dimensions=None or a permutation",
                          new_sizes=new_sizes, dimensions=dimensions)
    if any(s < 0 for s in new_sizes) or math.prod(new_sizes) != aval.size:
        raise shape_error(reshape_p, [aval], f"cannot change the size {aval.size} to "
                          f"{math.prod(new_sizes)}", "choose new_sizes with the same product",
                          new_sizes=new_sizes, dimensions=dimensions)
    return ShapedArray(tuple(new_sizes), aval.dtype, aval.weak_type)


def _reshape_impl(x, *, new_sizes, dimensions):
    return np.reshape(x if dimensions is None else np.transpose(x, dimensions), new_sizes)


@unary_transpose
def _reshape_transpose(ct, aval, *, new_sizes, dimensions):
    if dimensions is None:
        return reshape(ct, aval.shape)
    permuted = reshape(ct, tuple(aval.shape[d] for d in dimensions))
    return transpose(permuted, tuple(np.argsort(dimensions)))


def _reshape_batching(ctx, args, dims, *, new_sizes, dimensions):
    x = moveaxis(args[0], dims[0], 0)
    perm = None if dimensions is None else (0,) + tuple(d + 1 for d in dimensions)
    return bind(reshape_p, x, new_sizes=(ctx.axis_size,) + new_sizes, dimensions=perm), 0


def reshape(operand: Any, new_sizes: Sequence[int],
            dimensions: Sequence[int] | None = None) -> Any:
    """lax.reshape; `dimensions` (optional) transposes the operand first."""
    return bind(reshape_p, operand, new_sizes=tuple(int(s) for s in new_sizes),
                dimensions=None if dimensions is None else tuple(int(d) for d in dimensions))


# --- transpose[permutation] --------------------------------------------------------------
def _transpose_abstract_eval(ctx, aval: ShapedArray, *, permutation) -> ShapedArray:
    if sorted(permutation) != list(range(aval.ndim)):
        raise shape_error(transpose_p, [aval], "needs a permutation of the operand's axes",
                          f"pass a permutation of {tuple(range(aval.ndim))}",
                          permutation=permutation)
    return ShapedArray(tuple(aval.shape[p] for p in permutation), aval.dtype, aval.weak_type)


@unary_transpose
def _transpose_transpose(ct, aval, *, permutation):
    return transpose(ct, tuple(int(i) for i in np.argsort(permutation)))


def _transpose_batching(ctx, args, dims, *, permutation):
    d = dims[0]
    perm = (d,) + tuple(p + (p >= d) for p in permutation)
    return transpose(args[0], perm), 0


def transpose(operand: Any, permutation: Sequence[int]) -> Any:
    """lax.transpose: output axis i is operand axis permutation[i]."""
    return bind(transpose_p, operand, permutation=tuple(int(p) for p in permutation))


def moveaxis(x: Any, src: int, dst: int) -> Any:
    """`x` with axis `src` moved to position `dst` (negative axes count from the end);
    no equation when it is already there."""
    ndim = get_aval(x).ndim
    src, dst = src % ndim, dst % ndim
    if src == dst:
        return x
    perm = [i for i in range(ndim) if i != src]
    perm.insert(dst, src)
    return transpose(x, tuple(perm))


RULES = [
    RuleSet(reshape_p, impl=checked_impl(_reshape_impl, _reshape_abstract_eval),
            abstract_eval=_reshape_abstract_eval, jvp=linear_jvp(reshape_p), vjp=linear_vjp(reshape_p),
            transpose=_reshape_transpose, batching=_reshape_batching,
            lowering={"default": L.reshape}),
    RuleSet(transpose_p,
            impl=checked_impl(lambda x, *, permutation: np.transpose(x, permutation),
                              _transpose_abstract_eval),
            abstract_eval=_transpose_abstract_eval, jvp=linear_jvp(transpose_p), vjp=linear_vjp(transpose_p),
            transpose=_transpose_transpose, batching=_transpose_batching,
            lowering={"default": L.transpose}),
]
