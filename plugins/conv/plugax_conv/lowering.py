"""StableHLO lowering of conv_general_dilated: one `stablehlo.convolution`.

The params map one to one onto the op's attributes (XLA's Conv is what the
primitive models). As for dot_general, narrow floats accumulate in float32
(the impl's arithmetic) and booleans count in int32 then test != 0, so jit
computes what eager does. jaxlib is reached only through `ctx`.
"""
from __future__ import annotations

import numpy as np

__all__ = ["conv_lowering", "precision_config"]


def precision_config(ctx, precision) -> object | None:
    """XLA's precision_config attribute: an ArrayAttr of two PrecisionAttr, or None."""
    if precision is None:
        return None
    return ctx.ir.ArrayAttr.get([ctx.hlo.PrecisionAttr.get(str(p)) for p in precision])


def _accumulator(out: np.dtype) -> np.dtype:
    if out.kind == "b":
        return np.dtype(np.int32)
    return np.dtype(np.float32) if out.name in ("float16", "bfloat16") else out


def conv_lowering(ctx, lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                  dimension_numbers, feature_group_count, batch_group_count, precision=None,
                  preferred_element_type=None):
    from plugax.extend import ShapedArray
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    lhs_aval, rhs_aval = ctx.avals_in
    out = ctx.aval_out
    out_dtype = np.dtype(out.dtype)
    acc = _accumulator(out_dtype)
    if np.dtype(lhs_aval.dtype) != acc:
        lhs = ctx.hlo.convert(ctx.ir_type(ShapedArray(lhs_aval.shape, acc)), lhs)
        rhs = ctx.hlo.convert(ctx.ir_type(ShapedArray(rhs_aval.shape, acc)), rhs)
    dnums = ctx.hlo.ConvDimensionNumbers.get(
        input_batch_dimension=lhs_spec[0], input_feature_dimension=lhs_spec[1],
        input_spatial_dimensions=list(lhs_spec[2:]),
        kernel_output_feature_dimension=rhs_spec[0],
        kernel_input_feature_dimension=rhs_spec[1],
        kernel_spatial_dimensions=list(rhs_spec[2:]),
        output_batch_dimension=out_spec[0], output_feature_dimension=out_spec[1],
        output_spatial_dimensions=list(out_spec[2:]))
    ir, i64 = ctx.ir, ctx.ir.IntegerType.get_signless(64)
    nsp = len(window_strides)
    pads = np.asarray(padding, np.int64).reshape(nsp, 2)
    acc_aval = ShapedArray(out.shape, acc)
    result = ctx.hlo.convolution(
        ctx.ir_type(acc_aval), lhs, rhs, dimension_numbers=dnums,
        feature_group_count=ir.IntegerAttr.get(i64, int(feature_group_count)),
        batch_group_count=ir.IntegerAttr.get(i64, int(batch_group_count)),
        window_strides=ir.DenseI64ArrayAttr.get([int(s) for s in window_strides]),
        padding=ir.DenseIntElementsAttr.get(pads, type=ir.RankedTensorType.get([nsp, 2], i64)),
        lhs_dilation=ir.DenseI64ArrayAttr.get([int(d) for d in lhs_dilation]),
        rhs_dilation=ir.DenseI64ArrayAttr.get([int(d) for d in rhs_dilation]),
        window_reversal=ir.DenseBoolArrayAttr.get([False] * nsp),
        precision_config=precision_config(ctx, precision))
    if acc == out_dtype:
        return result
    if out_dtype.kind == "b":
        zero = ctx.constant(0, acc, out.shape)
        return ctx.hlo.compare(result, zero, ctx.hlo.ComparisonDirectionAttr.get("NE"),
                               compare_type=ctx.hlo.ComparisonTypeAttr.get("SIGNED"))
    return ctx.hlo.convert(ctx.ir_type(out), result)
