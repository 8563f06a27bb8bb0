"""jaxlib's MLIR bindings, loaded on first use, and the aval -> MLIR type mapping.

`import plugax` must not import jaxlib, so nothing here runs until the first
lowering. `dialects()` returns a small namespace (`ir`, `hlo` for StableHLO,
`chlo`, `func`) that lowering rules reach through their context (`ctx.hlo`),
so plugins never import jaxlib themselves.
"""
from __future__ import annotations

import types
from typing import Any

import numpy as np

from .. import dtypes

__all__ = ["dialects", "make_context", "ir_type", "element_type", "dense_attr"]

_dialects: types.SimpleNamespace | None = None


def dialects() -> types.SimpleNamespace:
    global _dialects
    if _dialects is None:
        from jaxlib.mlir import ir
        from jaxlib.mlir.dialects import chlo, func, stablehlo
        _dialects = types.SimpleNamespace(ir=ir, hlo=stablehlo, chlo=chlo, func=func)
    return _dialects


_registry = None


def make_context() -> Any:
    """A fresh MLIR context with the dialects we emit loaded (one per lowering, so
    constants interned while lowering are freed with it). Loading only `func`,
    StableHLO and CHLO, rather than every registered dialect, keeps this ~1 ms."""
    global _registry
    from jaxlib.mlir import ir
    from jaxlib.mlir._mlir_libs import _chlo, _jax_mlir_ext, _stablehlo
    if _registry is None:
        _registry = ir.DialectRegistry()
        _jax_mlir_ext.register_dialects(_registry)
    context = ir.Context()
    context.append_dialect_registry(_registry)
    context.dialects["func"]
    _stablehlo.register_dialect(context)
    _chlo.register_dialect(context)
    return context


def element_type(dtype: np.dtype) -> Any:
    """The MLIR element type of a NumPy dtype (call inside an active context)."""
    ir = dialects().ir
    dtype = np.dtype(dtype)
    if dtype == dtypes.bool_ or dtype == dtypes.float0:
        return ir.IntegerType.get_signless(1)
    if dtype == dtypes.bfloat16:
        return ir.BF16Type.get()
    kind, bits = dtype.kind, dtype.itemsize * 8
    if kind == "i":
        return ir.IntegerType.get_signless(bits)
    if kind == "u":
        return ir.IntegerType.get_unsigned(bits)
    if kind == "f":
        return {16: ir.F16Type, 32: ir.F32Type, 64: ir.F64Type}[bits].get()
    if kind == "c":
        return ir.ComplexType.get({64: ir.F32Type, 128: ir.F64Type}[bits].get())
    raise TypeError(f"plugax cannot lower values of dtype {dtype}")


def ir_type(aval: Any) -> Any:
    """`tensor<...>` for an aval (anything with `shape` and `dtype`)."""
    return dialects().ir.RankedTensorType.get(tuple(aval.shape), element_type(aval.dtype))


def dense_attr(value: np.ndarray) -> Any:
    """A DenseElementsAttr holding `value` (bool and bfloat16 need re-packing for MLIR)."""
    ir = dialects().ir
    value = np.asarray(value)
    if value.dtype == dtypes.float0:
        value = np.zeros(value.shape, np.bool_)
    if value.dtype == dtypes.bool_:
        # The bindings bit-pack a NumPy bool buffer themselves; a pre-packed uint8
        # buffer would be read as one byte per element (a wrong splat for <= 8 elements).
        return ir.DenseElementsAttr.get(np.ascontiguousarray(value),
                                        type=element_type(value.dtype), shape=value.shape)
    if value.dtype == dtypes.bfloat16:
        return ir.DenseElementsAttr.get(np.ascontiguousarray(value).view(np.uint16),
                                        type=element_type(value.dtype), shape=value.shape)
    return ir.DenseElementsAttr.get(np.ascontiguousarray(value), type=element_type(value.dtype),
                                    shape=value.shape)
