"""StableHLO lowerings of the structural primitives.

Each is one StableHLO op with the same meaning, except convert_element_type to
bool (``x != 0``, as NumPy's astype; a bare convert would keep the low bit) and
reduce_sum (a `stablehlo.reduce` whose body adds, started from zero, so empty
axes give 0 as NumPy's sum does).

jaxlib is reached only through `ctx` (`ctx.hlo`, `ctx.ir`), never imported here:
`import plugax` must not load it.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

__all__ = ["broadcast_in_dim", "reshape", "transpose", "reduce_sum", "add_any",
           "convert_element_type"]


def _i64(ctx, values: Sequence[int]) -> Any:
    return ctx.ir.DenseI64ArrayAttr.get([int(v) for v in values])


def broadcast_in_dim(ctx, x, *, shape, broadcast_dimensions):
    return ctx.broadcast_in_dim(x, ctx.aval_out.dtype, shape, broadcast_dimensions)


def reshape(ctx, x, *, new_sizes, dimensions):
    if dimensions is not None:
        x = ctx.hlo.transpose(x, _i64(ctx, dimensions))
    return ctx.hlo.reshape(ctx.ir_type(ctx.aval_out), x)


def transpose(ctx, x, *, permutation):
    return ctx.hlo.transpose(x, _i64(ctx, permutation))


def add_any(ctx, x, y):
    return ctx.hlo.add(x, y)


def reduce_sum(ctx, x, *, axes):
    dtype = ctx.avals_in[0].dtype
    op = ctx.hlo.ReduceOp([ctx.ir_type(ctx.aval_out)], [x], [ctx.constant(0, dtype)],
                          _i64(ctx, axes))
    scalar = ctx.ir.RankedTensorType.get((), ctx.element_type(dtype))
    block = op.regions[0].blocks.append(scalar, scalar)
    with ctx.ir.InsertionPoint(block):
        ctx.hlo.return_([ctx.hlo.add(*block.arguments)])
    return op.results[0]


def _compare_type(ctx, dtype: np.dtype) -> Any:
    kind = "SIGNED" if dtype.kind == "i" else "UNSIGNED" if dtype.kind in "ub" else "FLOAT"
    return ctx.hlo.ComparisonTypeAttr.get(kind)


def convert_element_type(ctx, x, *, new_dtype, weak_type):
    old, new = ctx.avals_in[0].dtype, np.dtype(new_dtype)
    if old == new:
        return x
    if old.kind == "c" and new.kind != "c":
        # complex -> real is the real part, then a real conversion (StableHLO's convert
        # leaves complex -> real undefined); complex -> bool compares the whole value
        if new != np.bool_:
            x, old = ctx.hlo.real(x), np.dtype(np.float32 if old.itemsize == 8 else np.float64)
            if old == new:
                return x
            return ctx.hlo.convert(ctx.ir_type(ctx.aval_out), x)
    if new == np.bool_:
        zero = ctx.constant(np.zeros((), old), old, ctx.avals_in[0].shape)
        return ctx.hlo.compare(x, zero, ctx.hlo.ComparisonDirectionAttr.get("NE"),
                               compare_type=_compare_type(ctx, np.dtype(old)))
    return ctx.hlo.convert(ctx.ir_type(ctx.aval_out), x)
