"""Lowering cond, while and scan to StableHLO's structured control flow.

- `cond` is `stablehlo.case`, one region per branch. The index is clamped first,
  as the impl does (`case` would run the last branch for any out-of-range index,
  negative ones included).
- `while` is `stablehlo.while` over the carries; the consts are used from the
  enclosing scope, which StableHLO regions allow.
- `scan` is a `stablehlo.while` whose state is an int32 counter, the carries and
  the stacked outputs: each trip reads slice `i` of every scanned operand with
  `dynamic_slice` and writes the outputs with `dynamic_update_slice` (for
  `reverse=True`, slice ``length - 1 - i``).

Nothing here imports jaxlib: the dialects come through the rule's `ctx`.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from plugax.extend import ShapedArray

from .common import split

__all__ = ["lower_cond", "lower_while", "lower_scan"]

_INDEX = ShapedArray((), np.int32)


def lower_cond(ctx, index, *operands, branches):
    hlo, ir = ctx.hlo, ctx.ir
    index = hlo.clamp(ctx.constant(0, np.int32), index, ctx.constant(len(branches) - 1,
                                                                       np.int32))
    case = hlo.CaseOp([ctx.ir_type(a) for a in ctx.avals_out], index, len(branches))
    for region, branch in zip(case.regions, branches):
        with ir.InsertionPoint(region.blocks.append()):
            hlo.return_(ctx.lower_jaxpr(branch, *operands))
    return list(case.results)


def _loop(ctx, init: list, types: list, cond_fn, body_fn) -> list:
    """A stablehlo.while over `init`; `cond_fn(state) -> pred`, `body_fn(state) -> state`."""
    hlo, ir = ctx.hlo, ctx.ir
    loop = hlo.WhileOp(types, init)
    before = loop.regions[0].blocks.append(*types)
    with ir.InsertionPoint(before):
        hlo.return_([cond_fn(list(before.arguments))])
    body = loop.regions[1].blocks.append(*types)
    with ir.InsertionPoint(body):
        hlo.return_(body_fn(list(body.arguments)))
    return list(loop.results)


def lower_while(ctx, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cconsts, bconsts, init = split(args, cond_nconsts, body_nconsts)
    types = [ctx.ir_type(a) for a in ctx.avals_out]
    return _loop(ctx, init, types,
                 lambda carry: ctx.lower_jaxpr(cond_jaxpr, *cconsts, *carry)[0],
                 lambda carry: ctx.lower_jaxpr(body_jaxpr, *bconsts, *carry))


def lower_scan(ctx, *args, jaxpr, length, reverse, num_consts, num_carry, **_):
    hlo = ctx.hlo
    consts, init, xs = split(args, num_consts, num_carry)
    x_avals = ctx.avals_in[num_consts + num_carry:]
    ys_avals = ctx.avals_out[num_carry:]
    ys0 = [ctx.broadcast_in_dim(ctx.constant(0, a.dtype), a.dtype, a.shape, ())
           for a in ys_avals]
    if length == 0:  # no trip: slicing an empty axis would not even type-check
        return [*init, *ys0]
    types = [ctx.ir_type(_INDEX), *[ctx.ir_type(a) for a in ctx.avals_out]]

    def cond_fn(state):
        return _compare(ctx, state[0], ctx.constant(length, np.int32), "LT")

    def body_fn(state):
        i, carry, ys = state[0], state[1:1 + num_carry], state[1 + num_carry:]
        at = hlo.subtract(ctx.constant(length - 1, np.int32), i) if reverse else i
        slices = [_read_slice(ctx, x, a, at) for x, a in zip(xs, x_avals)]
        outs = ctx.lower_jaxpr(jaxpr, *consts, *carry, *slices)
        ys = [_write_slice(ctx, buf, y, a, at)
              for buf, y, a in zip(ys, outs[num_carry:], ys_avals)]
        return [hlo.add(i, ctx.constant(1, np.int32)), *outs[:num_carry], *ys]

    return _loop(ctx, [ctx.constant(0, np.int32), *init, *ys0], types, cond_fn, body_fn)[1:]


def _compare(ctx, x: Any, y: Any, direction: str) -> Any:
    hlo = ctx.hlo
    return hlo.compare(x, y, hlo.ComparisonDirectionAttr.get(direction),
                       compare_type=hlo.ComparisonTypeAttr.get("SIGNED"))


def _starts(ctx, at: Any, ndim: int) -> list:
    return [at, *[ctx.constant(0, np.int32) for _ in range(ndim - 1)]]


def _read_slice(ctx, x: Any, aval: ShapedArray, at: Any) -> Any:
    """Row `at` of stacked `x`, without its leading axis."""
    row = ctx.hlo.dynamic_slice(x, _starts(ctx, at, aval.ndim), [1, *aval.shape[1:]])
    return ctx.hlo.reshape(ctx.ir_type(ShapedArray(aval.shape[1:], aval.dtype)), row)


def _write_slice(ctx, buf: Any, y: Any, aval: ShapedArray, at: Any) -> Any:
    """`buf` with row `at` replaced by `y`."""
    row = ctx.hlo.reshape(ctx.ir_type(ShapedArray((1, *aval.shape[1:]), aval.dtype)), y)
    return ctx.hlo.dynamic_update_slice(buf, row, _starts(ctx, at, aval.ndim))
