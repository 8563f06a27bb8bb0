"""`stablehlo.custom_call` to jaxlib's own kernels (LAPACK on CPU, cuSOLVER/cuBLAS on
NVIDIA GPUs), for lowering rules.

A plugin never imports jaxlib, yet a factorisation is only as fast as the kernel it
calls, and XLA has no Cholesky or LU op of its own on CPU: JAX calls the LAPACK
routines that jaxlib ships as typed-FFI handlers (`lapack_spotrf_ffi`, ...). This
module registers those handlers with the CPU client once, on first use (so
`import plugax` stays free of jaxlib), and builds the custom call in the form JAX
emits: an empty string `backend_config` with the handler's attributes in a
`mhlo.backend_config` dictionary (API version 1 with that dictionary is how XLA
reads typed-FFI attributes), column-major matrix layouts, and the factored input
aliased to its output as LAPACK overwrites it in place.

The GPU kernels (`cusolver_potrf_ffi`, `cu_lu_pivots_to_permutation`, ...) are not in
jaxlib itself but in its CUDA kernel package (jax-cuda13-plugin / jax-cuda12-plugin,
at jaxlib's version): `gpu_target` hands them to XLA for the CUDA platform on first
use, which reach the GPU client through the handler runtime/client.py registers. A
module can name them on any machine (lowering for CUDA needs no GPU: see
`Jitted.lower(lowering_platforms=...)`); only compiling it needs the kernels.
"""
from __future__ import annotations

import threading
from typing import Any, Mapping, Sequence

import numpy as np

__all__ = ["lapack_target", "gpu_target", "cusolver_version", "custom_call", "matrix_layout",
           "vector_layout", "char_attr", "attribute"]

_lock = threading.Lock()
_registered = False
_gpu_found: int | None = None   # GPU kernels registered, once known
_hybrid_error: list = []        # why the hybrid (host LAPACK) kernels could not start
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


def _register_gpu() -> int:
    """Hand jaxlib's GPU solver and linear-algebra kernels to XLA (CUDA and ROCm), and
    set up the hybrid (host LAPACK) eig kernels, once; returns how many were found (0
    where no GPU kernel package is installed: lowering still works, compiling fails)."""
    global _gpu_found
    with _lock:
        if _gpu_found is not None:
            return _gpu_found
        from jaxlib import gpu_linalg, gpu_solver, xla_client
        found = 0
        for module in (gpu_solver, gpu_linalg):
            for platform, targets in module.registrations().items():
                for name, capsule, api_version in targets:
                    xla_client.register_custom_call_target(name, capsule, platform=platform,
                                                           api_version=api_version)
                    found += 1
        try:   # jaxlib >= 0.5; the hybrid eig kernels take LAPACK from SciPy, as JAX's do
            getattr(gpu_solver, "initialize_hybrid_kernels", lambda: None)()
        except Exception as err:  # only the hybrid kernels are lost: gpu_target says so
            _hybrid_error.append(err)
        _gpu_found = found
        return found


def gpu_target(name: str) -> str:
    """`name`, a jaxlib GPU kernel ("cusolver_potrf_ffi", "cu_lu_pivots_to_permutation"),
    once the GPU kernels are registered. Raises LoweringRuleError when this process
    runs on a GPU but jaxlib's kernel package is missing: XLA would otherwise fail at
    compile time with a bare "no registered implementation" for the custom call."""
    from .checks import LoweringRuleError
    if _register_gpu() == 0 and _on_gpu():
        from jaxlib import version
        raise LoweringRuleError(
            f"custom call {name!r} needs jaxlib's GPU kernels, which are not installed: "
            f"pip install jax-cuda13-plugin=={version.__version__} (or jax-cuda12-plugin)")
    if "hybrid" in name and _hybrid_error:
        raise LoweringRuleError(f"custom call {name!r} runs LAPACK on the host, which jaxlib "
                                f"takes from SciPy (pip install scipy): {_hybrid_error[0]}")
    return name


def _on_gpu() -> bool:
    from ..runtime.client import backend, backend_started
    return backend_started() and backend().platform in ("gpu", "cuda", "rocm")


def cusolver_version() -> int | None:
    """The cuSOLVER version jaxlib's CUDA kernels load (11701 = 11.7.1), or None where
    they or a GPU are absent: JAX chooses eig's GPU kernel by it, and so does plugax."""
    from jaxlib.plugin_support import import_from_plugin
    versions = import_from_plugin("cuda", "_versions")
    try:
        return int(versions.cusolver_get_version()) if versions is not None else None
    except Exception:  # the package without a driver or device: as if absent
        return None


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


def attribute(ctx: Any, value: Any) -> Any:
    """A typed-FFI attribute from a Python value, typed as JAX's `ffi_lowering` types it
    (bool -> i1, a NumPy integer scalar keeps its width and signedness: np.uint8 -> ui8,
    np.int32 -> i32; str -> string), so a rule written with JAX's keyword values
    (`lower=True, algorithm=np.uint8(0)`) emits the attributes JAX emits."""
    ir = ctx.ir
    if isinstance(value, (bool, np.bool_)):
        return ir.BoolAttr.get(bool(value))
    if isinstance(value, np.integer):
        bits = value.dtype.itemsize * 8
        kind = ir.IntegerType.get_unsigned(bits) if value.dtype.kind == "u" \
            else ir.IntegerType.get_signless(bits)
        return ir.IntegerAttr.get(kind, int(value))
    if isinstance(value, str):
        return ir.StringAttr.get(value)
    raise TypeError(f"no typed-FFI attribute for {value!r} ({type(value).__name__}); use a "
                    f"bool, a NumPy integer scalar or a str")


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
