"""`stablehlo.custom_call` to jaxlib's own kernels (LAPACK on CPU), for lowering rules.

A plugin never imports jaxlib, yet a factorisation is only as fast as the kernel it
calls, and XLA has no Cholesky or LU op of its own on CPU: JAX calls the LAPACK
routines that jaxlib ships as typed-FFI handlers (`lapack_spotrf_ffi`, ...). This
module registers those handlers with the CPU client once, on first use (so
`import plugax` stays free of jaxlib), and builds the custom call in the form JAX
emits: an empty string `backend_config` with the handler's attributes in a
`mhlo.backend_config` dictionary (API version 1 with that dictionary is how XLA
reads typed-FFI attributes), column-major matrix layouts, and the factored input
aliased to its output as LAPACK overwrites it in place.
"""
from __future__ import annotations

import threading
from typing import Any, Mapping, Sequence

import numpy as np

__all__ = ["lapack_target", "custom_call", "matrix_layout", "vector_layout", "char_attr"]

_lock = threading.Lock()
_registered = False
_PREFIX = {np.dtype(np.float32): "s", np.dtype(np.float64): "d",
           np.dtype(np.complex64): "c", np.dtype(np.complex128): "z"}


def _register_lapack() -> None:
    """Hand every LAPACK FFI handler jaxlib exports to the CPU client, once (XLA refuses
    a custom call whose target it does not know only at compile time, with an unhelpful
    message, so this runs before the first such call is emitted)."""
    global _registered
    with _lock:
        if _registered:
            return
        from jaxlib import lapack, xla_client
        for platform, targets in lapack.registrations().items():
            for name, capsule, api_version in targets:
                xla_client.register_custom_call_target(name, capsule, platform=platform,
                                                       api_version=api_version)
        _registered = True


def lapack_target(fn_base: str, dtype: Any) -> str:
    """The registered name of LAPACK routine `fn_base` ("potrf_ffi") for `dtype`
    ("lapack_spotrf_ffi" for float32); raises NotImplementedError for other dtypes."""
    dtype = np.dtype(dtype)
    if dtype not in _PREFIX:
        raise NotImplementedError(f"LAPACK has no {fn_base} for dtype {dtype}; supported: "
                                  f"float32, float64, complex64, complex128")
    _register_lapack()
    from jaxlib import lapack
    if hasattr(lapack, "prepare_lapack_call"):
        return lapack.prepare_lapack_call(fn_base, dtype)
    return f"lapack_{_PREFIX[dtype]}{fn_base}"


def matrix_layout(ndim: int) -> tuple[int, ...]:
    """Minor-to-major layout of a batch of column-major (Fortran) matrices, as LAPACK
    reads them: rows fastest, then columns, then the batch dims from last to first."""
    return (ndim - 2, ndim - 1) + tuple(range(ndim - 3, -1, -1))


def vector_layout(ndim: int) -> tuple[int, ...]:
    """Row-major (the default) layout: for batches of vectors and per-batch scalars."""
    return tuple(range(ndim - 1, -1, -1))


def char_attr(ctx: Any, c: str) -> Any:
    """A LAPACK character flag ('L', 'N', ...) as the ui8 attribute the handlers take."""
    return ctx.ir.IntegerAttr.get(ctx.ir.IntegerType.get_unsigned(8), ord(c))


def custom_call(ctx: Any, target: str, operands: Sequence[Any], result_avals: Sequence[Any], *,
                attributes: Mapping[str, Any] | None = None,
                operand_layouts: Sequence[Sequence[int]] | None = None,
                result_layouts: Sequence[Sequence[int]] | None = None,
                operand_output_aliases: Mapping[int, int] | None = None,
                num_batch_dims: int | None = None) -> list:
    """Emit `stablehlo.custom_call @target(operands)` with results of `result_avals`;
    returns the result values. `attributes` (name -> MLIR attribute) are the typed-FFI
    handler's attributes; `operand_output_aliases` maps an operand index to the result
    it is overwritten into."""
    ir, hlo = ctx.ir, ctx.hlo
    types = [ctx.ir_type(a) for a in result_avals]

    def layouts(ls: Sequence[Sequence[int]]) -> Any:
        return ir.ArrayAttr.get([ir.DenseIntElementsAttr.get(
            np.asarray(list(l), dtype=np.int64), type=ir.IndexType.get(),
            shape=[len(l)]) for l in ls])

    attrs = dict(call_target_name=ir.StringAttr.get(target),
                 has_side_effect=ir.BoolAttr.get(False),
                 backend_config=ir.StringAttr.get(""),
                 api_version=ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 1),
                 called_computations=ir.ArrayAttr.get([]))
    if operand_output_aliases:
        attrs["output_operand_aliases"] = ir.ArrayAttr.get([
            hlo.OutputOperandAlias.get(output_tuple_indices=[out] if len(types) > 1 else [],
                                       operand_index=op, operand_tuple_indices=[])
            for op, out in operand_output_aliases.items()])
    if operand_layouts is not None:
        attrs["operand_layouts"] = layouts(operand_layouts)
    if result_layouts is not None:
        attrs["result_layouts"] = layouts(result_layouts)
    op = hlo.CustomCallOp.build_generic(results=types, operands=list(operands),
                                        attributes=attrs)
    op.operation.attributes["mhlo.backend_config"] = ir.DictAttr.get(dict(attributes or {}))
    if num_batch_dims is not None:
        op.operation.attributes["mhlo.frontend_attributes"] = ir.DictAttr.get(
            {"num_batch_dims": ir.StringAttr.get(str(num_batch_dims))})
    return list(op.results)
