"""The GPU lowerings that are not the CPU ones with another kernel: triangular solve and
SVD, as JAX 0.10 lowers them for CUDA (cuSOLVER) and ROCm (hipSOLVER).

- triangular_solve: JAX calls no solver kernel on GPUs but XLA's own
  `stablehlo.triangular_solve` (which XLA's GPU backend runs with cuBLAS trsm).
- svd: JAX picks the kernel by size. Jacobi (`gesvdj`, batched for matrices up to
  32 x 32) up to 1024 x 1024, where NVIDIA measured it fastest, and the QR-based
  `gesvd` beyond; an explicit `algorithm` (JAX's SvdAlgorithm or its name: "QR",
  "Jacobi", "polar") overrides that. gesvdj and gesvdp return V, not V^H, and have no
  thin mode for the batched kernel, so the rule transposes V and slices the thin
  factors out; gesvd works on column-major m >= n only, so a wide matrix is passed
  row-major (its transpose) with `transposed=True` and U and V^H swap places.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from plugax.extend import ShapedArray, custom_call as _cc

from .lowering import _apply, _call, _info, algorithm_name, svd_results

__all__ = ["triangular_solve_lowering", "svd_lowering"]


def triangular_solve_lowering(ctx, a, b, *, left_side, lower, transpose_a, conjugate_a,
                              unit_diagonal, prefix: str):
    """XLA's triangular solve, conjugating `a` first where the solve is with conj(a) but
    not its transpose (XLA's op has only NO_TRANSPOSE, TRANSPOSE and ADJOINT), as JAX."""
    if conjugate_a and not transpose_a:
        a = ctx.chlo.conj(a)
        conjugate_a = False
    transpose = ("ADJOINT" if conjugate_a else "TRANSPOSE") if transpose_a else "NO_TRANSPOSE"
    ir = ctx.ir
    return [ctx.hlo.triangular_solve(a, b, ir.BoolAttr.get(bool(left_side)),
                                     ir.BoolAttr.get(bool(lower)),
                                     ir.BoolAttr.get(bool(unit_diagonal)),
                                     ctx.hlo.TransposeAttr.get(transpose))]


_SVD_KERNELS = {"qr": "gesvd", "jacobi": "gesvdj", "polar": "gesvdp",
                "divide_and_conquer": "gesdd"}


def _svd_kernel(prefix: str, algorithm: Any, m: int, n: int) -> str:
    name = algorithm_name(algorithm) or "default"
    if name == "default":
        return "gesvdj" if m <= 1024 and n <= 1024 else "gesvd"
    if name == "divide_and_conquer" and prefix != "hip":
        raise NotImplementedError("Divide-and-conquer SVD (SvdAlgorithm.DIVIDE_AND_CONQUER) "
                                  "is only supported on AMD (ROCm) GPUs, not on NVIDIA CUDA.")
    if name not in _SVD_KERNELS:
        raise NotImplementedError(f"Unsupported SVD algorithm on GPU: {algorithm!r}")
    return _SVD_KERNELS[name]


def _adjoint(v: Any) -> Any:
    import plugax.numpy as jnp
    vt = jnp.swapaxes(v, -1, -2)
    return jnp.conj(vt) if np.dtype(vt.dtype).kind == "c" else vt


def _svd_with_v(ctx, x, kernel: str, full_matrices: bool, compute_uv: bool,
                prefix: str) -> list:
    """gesvdj / gesvdp: U and V always allocated (the kernels write them even when only
    s is wanted), full unless the thin form is both asked for and worth the unbatched
    kernel (m, n > 32 for Jacobi); then V^H and the thin slices."""
    (aval,) = ctx.avals_in
    *batch, m, n = aval.shape
    k = min(m, n)
    econ = not full_matrices and (kernel != "gesvdj" or (m > 32 and n > 32))
    u_aval = ShapedArray((*batch, m, k if econ else m), aval.dtype)
    v_aval = ShapedArray((*batch, n, k if econ else n), aval.dtype)
    info = _info(tuple(batch))
    _, s, u, v, i = _call(ctx, _cc.gpu_target(f"{prefix}solver_{kernel}_ffi"), [x], [aval],
                          [aval, ctx.avals_out[0], u_aval, v_aval, info], {0: 0},
                          compute_uv=bool(compute_uv), full_matrices=not econ)
    if not compute_uv:
        return svd_results(ctx, s, None, None, i, info, False)

    def factors(u, v):
        vt = _adjoint(v)
        if not full_matrices and not econ:
            u, vt = u[..., :, :k], vt[..., :k, :]
        return [u, vt]
    u, vt = _apply(ctx, factors, [u, v], [u_aval, v_aval])
    return svd_results(ctx, s, u, vt, i, info, True)


def _svd_gesvd(ctx, x, kernel: str, full_matrices: bool, compute_uv: bool,
               prefix: str) -> list:
    """gesvd (and ROCm's gesdd, same attributes): column-major for m >= n; a wide
    matrix goes in row-major, i.e. as its transpose, whose U and V^H are this one's V^H
    and U. Without vectors U and V^H are placeholders of shape (), as in JAX."""
    (aval,) = ctx.avals_in
    *batch, m, n = aval.shape
    transposed = kernel == "gesvd" and m < n
    if compute_uv:
        u_aval, vt_aval = ctx.avals_out[1:]
    else:
        u_aval = vt_aval = ShapedArray((), aval.dtype)
    info = _info(tuple(batch))
    outs = [aval, ctx.avals_out[0]] + ([vt_aval, u_aval] if transposed else [u_aval, vt_aval])
    _, s, u, vt, i = _call(ctx, _cc.gpu_target(f"{prefix}solver_{kernel}_ffi"), [x], [aval],
                           outs + [info], {0: 0}, column_major=not transposed,
                           compute_uv=bool(compute_uv), full_matrices=bool(full_matrices),
                           transposed=transposed)
    if transposed:
        u, vt = vt, u
    return svd_results(ctx, s, u, vt, i, info, compute_uv)


def svd_lowering(ctx, x, *, full_matrices, compute_uv, subset_by_index=None, algorithm=None,
                 prefix: str):
    *_, m, n = ctx.avals_in[0].shape
    kernel = _svd_kernel(prefix, algorithm, m, n)
    sub = _svd_with_v if kernel in ("gesvdj", "gesvdp") else _svd_gesvd
    return sub(ctx, x, kernel, bool(full_matrices), bool(compute_uv), prefix)
