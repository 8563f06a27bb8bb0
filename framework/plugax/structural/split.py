"""concatenate and split: joining arrays along an axis, and cutting one apart.

The Jacobians need them: jacfwd pushes one stacked basis through a single vmap
(the function's primal is evaluated once, whatever the number of input
leaves) and cuts the result into one block per leaf; jacrev stacks the
cotangent bases the same way. Each is the other's transpose, so the pair needs
nothing outside the structural set.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..core.avals import ShapedArray, get_aval
from ..core.trace import Primitive, bind
from ..interpreters.ad_util import Zero, instantiate, is_undefined_primal
from ..loader.ruleset import RuleSet
from .broadcast import bdim_at_front
from .layout import moveaxis
from .rules import checked_impl, linear_jvp, shape_error

__all__ = ["concatenate_p", "split_p", "concatenate", "split", "RULES"]

concatenate_p = Primitive("concatenate")
split_p = Primitive("split", multiple_results=True)


# --- concatenate[dimension] ---------------------------------------------------------------
def _concatenate_abstract_eval(ctx, *avals: ShapedArray, dimension) -> ShapedArray:
    first = avals[0] if avals else None
    if first is None or not 0 <= dimension < first.ndim:
        raise shape_error(concatenate_p, avals, "needs at least one operand and a valid axis",
                          "pass operands of rank > dimension", dimension=dimension)
    others = lambda a: a.shape[:dimension] + a.shape[dimension + 1:]
    if any(a.ndim != first.ndim or others(a) != others(first) or a.dtype != first.dtype
           for a in avals):
        raise shape_error(concatenate_p, avals, "needs operands of one dtype whose shapes agree "
                          "except along `dimension`", "reshape or convert the operands",
                          dimension=dimension)
    shape = list(first.shape)
    shape[dimension] = sum(a.shape[dimension] for a in avals)
    return ShapedArray(tuple(shape), first.dtype, all(a.weak_type for a in avals))


def _concatenate_impl(*xs, dimension):
    return np.concatenate(xs, dimension)


def _concatenate_transpose(ctx, ct, *args, dimension):
    """Each operand's cotangent is its own piece of the output's: a split."""
    sizes = [(x.aval if is_undefined_primal(x) else get_aval(x)).shape[dimension] for x in args]
    if type(ct) is Zero:
        return [Zero(x.aval) if is_undefined_primal(x) else None for x in args]
    pieces = split(ct, sizes, dimension)
    return [p if is_undefined_primal(x) else None for x, p in zip(args, pieces)]


def _concatenate_batching(ctx, args, dims, *, dimension):
    moved = [bdim_at_front(x, d, ctx.axis_size) for x, d in zip(args, dims)]
    return bind(concatenate_p, *moved, dimension=dimension + 1), 0


def concatenate(operands: Sequence[Any], dimension: int) -> Any:
    """lax.concatenate: join operands along `dimension`."""
    return bind(concatenate_p, *operands, dimension=int(dimension))


# --- split[sizes, axis] ---------------------------------------------------------------------
def _split_abstract_eval(ctx, aval: ShapedArray, *, sizes, axis) -> list[ShapedArray]:
    if not 0 <= axis < aval.ndim or any(s < 0 for s in sizes) or \
            sum(sizes) != aval.shape[axis]:
        raise shape_error(split_p, [aval], "needs a valid axis and non-negative sizes that "
                          "add up to the operand's extent along it",
                          "pass sizes summing to operand.shape[axis]", sizes=sizes, axis=axis)
    return [ShapedArray(aval.shape[:axis] + (s,) + aval.shape[axis + 1:], aval.dtype,
                        aval.weak_type) for s in sizes]


def _split_impl(x, *, sizes, axis):
    return np.split(x, np.cumsum(sizes)[:-1], axis)


def _split_jvp(ctx, primals, tangents, *, sizes, axis):
    outs = bind(split_p, primals[0], sizes=sizes, axis=axis)
    if type(tangents[0]) is Zero:
        return outs, [Zero.from_value(o) for o in outs]
    return outs, bind(split_p, tangents[0], sizes=sizes, axis=axis)


def _split_transpose(ctx, cts, x, *, sizes, axis):
    if not is_undefined_primal(x):
        return [None]
    if all(type(c) is Zero for c in cts):
        return [Zero(x.aval)]
    return [concatenate([instantiate(c) for c in cts], axis)]


def _split_batching(ctx, args, dims, *, sizes, axis):
    x = moveaxis(args[0], dims[0], 0)
    outs = bind(split_p, x, sizes=sizes, axis=axis + 1)
    return outs, [0] * len(outs)


def split(operand: Any, sizes: Sequence[int], axis: int = 0) -> list:
    """lax.split: cut `operand` along `axis` into pieces of the given sizes."""
    return bind(split_p, operand, sizes=tuple(int(s) for s in sizes), axis=int(axis))


# --- lowering ------------------------------------------------------------------------------
def _i64(ctx, values: Sequence[int]) -> Any:
    return ctx.ir.DenseI64ArrayAttr.get([int(v) for v in values])


def _concatenate_lowering(ctx, *xs, dimension):
    return ctx.hlo.concatenate(list(xs), ctx.ir.IntegerAttr.get(
        ctx.ir.IntegerType.get_signless(64), int(dimension)))


def _split_lowering(ctx, x, *, sizes, axis):
    shape = ctx.avals_in[0].shape
    outs, start = [], 0
    for size in sizes:
        lo = [start if i == axis else 0 for i in range(len(shape))]
        hi = [start + size if i == axis else n for i, n in enumerate(shape)]
        outs.append(ctx.hlo.slice(x, _i64(ctx, lo), _i64(ctx, hi), _i64(ctx, [1] * len(shape))))
        start += size
    return outs


RULES = [
    RuleSet(concatenate_p,
            impl=checked_impl(_concatenate_impl, _concatenate_abstract_eval),
            abstract_eval=_concatenate_abstract_eval, jvp=linear_jvp(concatenate_p),
            batching=_concatenate_batching, transpose=_concatenate_transpose,
            lowering={"default": _concatenate_lowering}),
    RuleSet(split_p,
            impl=checked_impl(_split_impl, _split_abstract_eval),
            abstract_eval=_split_abstract_eval, jvp=_split_jvp,
            batching=_split_batching, transpose=_split_transpose,
            lowering={"default": _split_lowering}),
]
