"""StableHLO lowerings of the window primitives.

reduce_window_{sum,max,min} are one `stablehlo.reduce_window` with an add /
maximum / minimum body starting from the identity. select_and_gather_add is a
variadic reduce_window over (operand, tangent) pairs whose body keeps the pair
with the larger (smaller) operand, so the tangent travels with its element
(JAX packs the pair into one wider word instead; the result is the same).
select_and_scatter_add is `stablehlo.select_and_scatter` (>= or <= select, add
scatter), XLA's own max-pool gradient. jaxlib is reached only through `ctx`.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = ["reduce_window_lowering", "select_and_gather_add_lowering",
           "select_and_scatter_add_lowering"]


def _i64s(ctx, values) -> Any:
    return ctx.ir.DenseI64ArrayAttr.get([int(v) for v in values])


def _padding(ctx, padding) -> Any:
    pads = np.asarray(padding, np.int64).reshape(-1, 2)
    return ctx.ir.DenseIntElementsAttr.get(pads, shape=[pads.shape[0], 2])


def _scalar(ctx, dtype) -> Any:
    return ctx.ir.RankedTensorType.get((), ctx.element_type(dtype))


def _compare_type(dtype: np.dtype) -> str:
    return "FLOAT" if dtype.kind == "f" else "SIGNED" if dtype.kind == "i" else "UNSIGNED"


def _combine(ctx, kind: str) -> Callable:
    return {"sum": ctx.hlo.add, "max": ctx.hlo.maximum, "min": ctx.hlo.minimum}[kind]


def _reduce_window(ctx, n_results, operands, inits, dtypes, body, *, window_dimensions,
                   window_strides, padding, base_dilation, window_dilation) -> list:
    op = ctx.hlo.ReduceWindowOp([ctx.ir_type(ctx.aval_out)] * n_results, list(operands),
                                list(inits), _i64s(ctx, window_dimensions),
                                window_strides=_i64s(ctx, window_strides),
                                base_dilations=_i64s(ctx, base_dilation),
                                window_dilations=_i64s(ctx, window_dilation),
                                padding=_padding(ctx, padding))
    types = [_scalar(ctx, d) for d in dtypes]
    block = op.regions[0].blocks.append(*types, *types)
    with ctx.ir.InsertionPoint(block):
        ctx.hlo.return_(list(body(*block.arguments)))
    return list(op.results)


def reduce_window_lowering(kind: str, identity: Callable) -> Callable:
    def lowering(ctx, x, **params):
        dtype = np.dtype(ctx.avals_in[0].dtype)
        init = ctx.constant(identity(kind, dtype), dtype)
        return _reduce_window(ctx, 1, [x], [init], [dtype],
                              lambda a, b: [_combine(ctx, kind)(a, b)], **params)
    return lowering


def _chooser(ctx, select: str, dtype: np.dtype) -> Callable:
    direction = ctx.hlo.ComparisonDirectionAttr.get("GE" if select == "max" else "LE")
    ctype = ctx.hlo.ComparisonTypeAttr.get(_compare_type(dtype))
    return lambda a, b: ctx.hlo.compare(a, b, direction, compare_type=ctype)


def select_and_gather_add_lowering(identity: Callable) -> Callable:
    def lowering(ctx, t, x, *, select_prim, **params):
        dtype = np.dtype(ctx.avals_in[1].dtype)
        inits = [ctx.constant(identity(select_prim, dtype), dtype), ctx.constant(0, dtype)]
        pick = _chooser(ctx, select_prim, dtype)

        def body(ax, at, bx, bt):
            first = pick(ax, bx)
            return [ctx.hlo.select(first, ax, bx), ctx.hlo.select(first, at, bt)]
        _, gathered = _reduce_window(ctx, 2, [x, t], inits, [dtype, dtype], body, **params)
        return gathered
    return lowering


def select_and_scatter_add_lowering(identity: Callable) -> Callable:
    def lowering(ctx, source, x, *, select_prim, window_dimensions, window_strides, padding):
        dtype = np.dtype(ctx.avals_in[1].dtype)
        op = ctx.hlo.SelectAndScatterOp(ctx.ir_type(ctx.aval_out), x, source,
                                        ctx.constant(0, dtype),
                                        window_dimensions=_i64s(ctx, window_dimensions),
                                        window_strides=_i64s(ctx, window_strides),
                                        padding=_padding(ctx, padding))
        scalar = _scalar(ctx, dtype)
        select = op.select.blocks.append(scalar, scalar)
        with ctx.ir.InsertionPoint(select):
            ctx.hlo.return_([_chooser(ctx, select_prim, dtype)(*select.arguments)])
        scatter = op.scatter.blocks.append(scalar, scalar)
        with ctx.ir.InsertionPoint(scatter):
            ctx.hlo.return_([ctx.hlo.add(*scatter.arguments)])
        return op.result
    return lowering
