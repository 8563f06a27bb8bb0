"""StableHLO lowering of dot_general.

`stablehlo.dot_general` orders its output exactly as lax does (batch dims, then
lhs free dims, then rhs free dims), so the dimension numbers carry over as they
are. What needs care is the element type, so jit computes what the impl does:

- operands are converted to the output dtype first (mixed operands, or a
  `preferred_element_type` that differs), as the impl converts them;
- float16/bfloat16 outputs accumulate in float32 (the impl computes in float32
  and rounds once): narrow operands feed a dot with a float32 result, which XLA
  supports natively, then the result is rounded;
- booleans (NumPy: any(a and b)) contract as int32 counts, then test != 0.

jaxlib is reached only through `ctx`, never imported here.
"""
from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["dot_general_lowering"]


def _is_narrow_float(dtype: np.dtype) -> bool:
    return dtype.name in ("float16", "bfloat16")


def _compute_dtype(out: np.dtype) -> np.dtype:
    """The dtype the contraction accumulates in, for an output of dtype `out`."""
    if out.kind == "b":
        return np.dtype(np.int32)
    return np.dtype(np.float32) if _is_narrow_float(out) else out


def _convert(ctx, x: Any, aval: Any, dtype: np.dtype) -> Any:
    from plugax.extend import ShapedArray
    if np.dtype(aval.dtype) == dtype:
        return x
    return ctx.hlo.convert(ctx.ir_type(ShapedArray(aval.shape, dtype)), x)


def dot_general_lowering(ctx, lhs, rhs, *, dimension_numbers, precision=None,
                         preferred_element_type=None):
    from plugax.extend import ShapedArray
    (lc, rc), (lb, rb) = dimension_numbers
    lhs_aval, rhs_aval = ctx.avals_in
    out = ctx.aval_out
    out_dtype = np.dtype(out.dtype)
    acc = _compute_dtype(out_dtype)
    # Operands already in the narrow output dtype stay narrow: a narrow x narrow -> f32
    # dot is exact in its products, as the impl's float32 computation is.
    operand_dtype = out_dtype if _is_narrow_float(out_dtype) and \
        lhs_aval.dtype == rhs_aval.dtype == out_dtype else acc
    lhs = _convert(ctx, lhs, lhs_aval, operand_dtype)
    rhs = _convert(ctx, rhs, rhs_aval, operand_dtype)
    dims = ctx.hlo.DotDimensionNumbers.get(
        lhs_batching_dimensions=list(lb), rhs_batching_dimensions=list(rb),
        lhs_contracting_dimensions=list(lc), rhs_contracting_dimensions=list(rc))
    acc_aval = ShapedArray(out.shape, acc)
    config = None if precision is None else ctx.ir.ArrayAttr.get(
        [ctx.hlo.PrecisionAttr.get(str(p)) for p in precision])   # XLA's precision_config
    result = ctx.hlo.dot_general(ctx.ir_type(acc_aval), lhs, rhs, dims, precision_config=config)
    if acc == out_dtype:
        return result
    if out_dtype.kind == "b":
        zero = ctx.constant(0, acc, out.shape)
        return ctx.hlo.compare(result, zero, ctx.hlo.ComparisonDirectionAttr.get("NE"),
                               compare_type=ctx.hlo.ComparisonTypeAttr.get("SIGNED"))
    return _convert(ctx, result, acc_aval, out_dtype)
