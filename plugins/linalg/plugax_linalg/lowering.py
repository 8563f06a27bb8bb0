"""Lowering of the factorisations to jaxlib's kernels, the custom calls JAX itself emits:
LAPACK (`lapack_*_ffi`) on CPU, cuSOLVER and jaxlib's CUDA kernels (`cusolver_*_ffi`,
`cu_lu_pivots_to_permutation`) on NVIDIA GPUs, hipSOLVER (`hipsolver_*`) on AMD ones.

Each rule takes JAX's `prefix` for the platform ("cpu", "cu", "hip"; platforms.py
binds it), emits the custom call in JAX's form (column-major layouts, the input
aliased to the factor, the kernel's attributes) and then the same post-processing
JAX does, written with plugax's own primitives and lowered inline: NaNs where the
kernel reports a failure (`info`), the triangle a factor is defined on, 0-based
pivots and the permutation they encode. So jit gives what the eager impl gives, to
rounding, in the factors' defined entries. Where CPU and GPU share a rule only the
kernel's name and attributes differ; what GPUs do otherwise (triangular solve, SVD)
is in gpu.py.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from plugax.extend import ShapedArray, custom_call, trace_to_jaxpr

from .ad import tril, triu

__all__ = ["permutation_from_pivots", "algorithm_name"]

_cc = custom_call


def _apply(ctx, fn: Callable, values: Sequence[Any], avals: Sequence[ShapedArray]) -> list:
    """Lower `fn` (written with plugax primitives) applied to MLIR `values` of `avals`."""
    closed = trace_to_jaxpr(lambda *xs: list(fn(*xs)), list(avals))
    return ctx.lower_jaxpr(closed, *values)


def _nan_unless(ok: Any, *xs: Any) -> list:
    """xs with every matrix (vector) of a failed batch element replaced by NaN."""
    import plugax.numpy as jnp
    out = []
    for x in xs:
        extra = x.ndim - ok.ndim
        out.append(jnp.where(ok.reshape(ok.shape + (1,) * extra), x, jnp.nan))
    return out


def _char(c: str) -> np.uint8:
    """A LAPACK character flag ('L', 'N', ...): the ui8 attribute jaxlib's handlers take."""
    return np.uint8(ord(c))


def algorithm_name(algorithm: Any) -> str | None:
    """An algorithm choice as a lower-case name: None, a string ("jacobi"), or one of
    JAX's enums (SvdAlgorithm.JACOBI, whose value is "Jacobi"), which plugax accepts
    without importing JAX."""
    if algorithm is None:
        return None
    return str(getattr(algorithm, "value", algorithm)).lower()


def _kernel(prefix: str, routine: str, dtype: Any) -> str:
    """The custom-call target of LAPACK-named `routine` ("potrf"): jaxlib's LAPACK handler
    for `dtype` on CPU ("lapack_spotrf_ffi"); on GPUs the solver's, one handler for every
    dtype ("cusolver_potrf_ffi")."""
    if prefix == "cpu":
        return _cc.lapack_target(f"{routine}_ffi", dtype)
    return _cc.gpu_target(f"{prefix}solver_{routine}_ffi")


def _call(ctx, target: str, operands: list, in_avals: list, out_avals: list,
          alias: dict | None = None, *, column_major: bool = True, non_batch_dims: int = 2,
          **attrs: Any) -> list:
    """Emit the custom call to `target` with JAX's layouts: column-major (as LAPACK and
    cuSOLVER read matrices) for the arrays of the operands' full rank, row-major for the
    rest (vectors, per-batch info). `attrs` are the kernel's, Python values typed as JAX
    types them (`custom_call.attribute`: a bool, np.uint8(ord("L")), a str)."""
    rank = max(a.ndim for a in in_avals)

    def layout(a: ShapedArray) -> tuple:
        return _cc.matrix_layout(a.ndim) if column_major and a.ndim == rank \
            else _cc.vector_layout(a.ndim)
    return _cc.custom_call(ctx, target, operands, out_avals,
                           attributes={k: _cc.attribute(ctx, v) for k, v in attrs.items()},
                           operand_layouts=[layout(a) for a in in_avals],
                           result_layouts=[layout(a) for a in out_avals],
                           operand_output_aliases=alias, num_batch_dims=rank - non_batch_dims)


def _info(batch: tuple) -> ShapedArray:
    return ShapedArray(batch, np.int32)


def _cholesky_lowering(ctx, x, *, prefix: str):
    (aval,) = ctx.avals_in
    info = _info(aval.shape[:-2])
    flags = dict(uplo=_char("L")) if prefix == "cpu" else dict(lower=True)
    factor, ok = _call(ctx, _kernel(prefix, "potrf", aval.dtype), [x], [aval], [aval, info],
                       {0: 0}, **flags)
    return _apply(ctx, lambda f, i: [tril(_nan_unless(i == 0, f)[0])], [factor, ok],
                  [aval, info])


def _triangular_solve_lowering(ctx, a, b, *, left_side, lower, transpose_a, conjugate_a,
                               unit_diagonal, prefix: str = "cpu"):
    a_aval, b_aval = ctx.avals_in
    trans = "C" if (transpose_a and conjugate_a) else "T" if transpose_a else "N"
    (out,) = _call(ctx, _kernel(prefix, "trsm", a_aval.dtype), [a, b], [a_aval, b_aval],
                   [b_aval], {1: 0}, side=_char("L" if left_side else "R"),
                   uplo=_char("L" if lower else "U"), trans_x=_char(trans),
                   diag=_char("U" if unit_diagonal else "N"))
    return [out]


def permutation_from_pivots(pivots: Any, m: int) -> Any:
    """The permutation that applying the row swaps `pivots` (i <-> pivots[i], in order)
    makes of range(m), with one-hot masks: no gather or dynamic index is needed, so it
    runs on the elementwise primitives alone (unrolled: k steps of O(m) work; the
    lowering runs the same step in a while loop instead, see `_swap_step`)."""
    import plugax.numpy as jnp
    perm = jnp.broadcast_to(np.arange(m, dtype=np.int32), pivots.shape[:-1] + (m,))
    for i in range(pivots.shape[-1]):
        perm = _swap_step(np.int32(i), pivots, perm)
    return perm


def _swap_step(i: Any, pivots: Any, perm: Any) -> Any:
    """perm with entries i and pivots[..., i] swapped, by masks (i may be traced)."""
    import plugax.numpy as jnp
    k, m = pivots.shape[-1], perm.shape[-1]
    p = jnp.sum(jnp.where(np.arange(k, dtype=np.int32) == i, pivots, 0), axis=-1,
                keepdims=True)
    at_i = np.arange(m, dtype=np.int32) == i
    at_p = np.arange(m, dtype=np.int32) == p
    value_i = jnp.sum(jnp.where(at_i, perm, 0), axis=-1, keepdims=True)
    value_p = jnp.sum(jnp.where(at_p, perm, 0), axis=-1, keepdims=True)
    return jnp.where(at_i, value_p, jnp.where(at_p, value_i, perm)).astype(np.int32)


def _permutation_loop(ctx, pivots: Any, piv_aval: ShapedArray, m: int) -> Any:
    """permutation_from_pivots as one stablehlo.while over the batch's B * k swaps, each
    O(1) with dynamic slices of the flattened arrays (as JAX's lowering does): an
    unrolled loop takes XLA seconds to compile at k = 256, and masks cost O(m) a swap."""
    hlo, ir = ctx.hlo, ctx.ir
    *batch, k = piv_aval.shape
    nb = int(np.prod(batch, dtype=np.int64))
    i32 = lambda shape: ctx.ir_type(ShapedArray(shape, np.int32))  # noqa: E731
    const = lambda v: ctx.constant(v, np.int32)  # noqa: E731
    perm0 = ctx.constant(np.tile(np.arange(m, dtype=np.int32), nb))
    if nb * k == 0:     # nothing to swap (and a slice of an empty array is invalid)
        return hlo.reshape(i32((*batch, m)), perm0)
    flat_piv = hlo.reshape(i32((nb * k,)), pivots)
    types = [i32(()), i32((nb * k,)), i32((nb * m,))]
    loop = hlo.WhileOp(types, [const(0), flat_piv, perm0])
    before = loop.regions[0].blocks.append(*types)
    with ir.InsertionPoint(before):
        hlo.return_([hlo.compare(before.arguments[0], const(nb * k),
                                 hlo.ComparisonDirectionAttr.get("LT"),
                                 compare_type=hlo.ComparisonTypeAttr.get("SIGNED"))])
    body = loop.regions[1].blocks.append(*types)
    with ir.InsertionPoint(body):
        t, piv, perm = body.arguments
        b = hlo.divide(t, const(k))
        base = hlo.multiply(b, const(m))
        i = hlo.add(base, hlo.subtract(t, hlo.multiply(b, const(k))))
        p = hlo.add(base, hlo.reshape(i32(()), hlo.dynamic_slice(piv, [t], [1])))
        value_i = hlo.dynamic_slice(perm, [i], [1])
        value_p = hlo.dynamic_slice(perm, [p], [1])
        perm = hlo.dynamic_update_slice(perm, value_p, [i])
        perm = hlo.dynamic_update_slice(perm, value_i, [p])
        hlo.return_([hlo.add(t, const(1)), piv, perm])
    return hlo.reshape(i32((*batch, m)), loop.results[2])


def _permutation_kernel(ctx, prefix: str, pivots: Any, piv_aval: ShapedArray, m: int) -> Any:
    """The permutation from 0-based pivots on a GPU: jaxlib's kernel, as JAX calls it
    (row-major, one row of pivots per batch element; the size comes from the result)."""
    *batch, _ = piv_aval.shape
    (perm,) = _call(ctx, _cc.gpu_target(f"{prefix}_lu_pivots_to_permutation"), [pivots],
                    [piv_aval], [ShapedArray((*batch, m), np.int32)], column_major=False,
                    non_batch_dims=1)
    return perm


def _lu_lowering(ctx, x, *, prefix: str):
    (aval,) = ctx.avals_in
    *batch, m, n = aval.shape
    piv_aval = ShapedArray((*batch, min(m, n)), np.int32)
    info = _info(tuple(batch))
    lu, piv, ok = _call(ctx, _kernel(prefix, "getrf", aval.dtype), [x], [aval],
                        [aval, piv_aval, info], {0: 0})
    lu, piv = _apply(ctx, lambda lu, piv, i: [_nan_unless(i >= 0, lu)[0], piv - 1],
                     [lu, piv, ok], [aval, piv_aval, info])
    if prefix == "cpu":
        return [lu, piv, _permutation_loop(ctx, piv, piv_aval, m)]
    return [lu, piv, _permutation_kernel(ctx, prefix, piv, piv_aval, m)]


def _qr_lowering(ctx, x, *, full_matrices, pivoting=False, use_magma=None, prefix: str):
    (aval,) = ctx.avals_in
    *batch, m, n = aval.shape
    k = min(m, n)
    tau_aval = ShapedArray((*batch, k), aval.dtype)
    a, tau = _call(ctx, _kernel(prefix, "geqrf", aval.dtype), [x], [aval], [aval, tau_aval],
                   {0: 0})
    cols = m if full_matrices else k
    q_in_aval = ShapedArray((*batch, m, cols), aval.dtype)

    def q_input(a):
        import plugax.numpy as jnp
        if cols > n:
            return [jnp.concatenate([a, jnp.zeros((*batch, m, cols - n), a.dtype)], axis=-1)]
        return [a[..., :, :cols]]
    (q_in,) = _apply(ctx, q_input, [a], [aval])
    (q,) = _call(ctx, _kernel(prefix, "orgqr", aval.dtype), [q_in, tau], [q_in_aval, tau_aval],
                 [q_in_aval], {0: 0})
    (r,) = _apply(ctx, lambda a: [triu(a[..., :cols, :])], [a], [aval])
    return [q, r]


def _eigh_flags(prefix: str, lower: bool, algorithm: Any) -> dict:
    """syevd's attributes: LAPACK's job and triangle characters on CPU; on GPUs the
    triangle and JAX's algorithm code (0: the kernel chooses, Jacobi for small
    matrices; 1: QR; 2: Jacobi)."""
    if prefix == "cpu":
        return dict(mode=_char("V"), uplo=_char("L" if lower else "U"))
    name = algorithm_name(algorithm)
    if name == "qdwh":
        raise NotImplementedError("QDWH implementation is only supported on TPU")
    codes = {None: 0, "qr": 1, "jacobi": 2}
    if name not in codes:
        raise NotImplementedError(f"eigh: unknown algorithm {algorithm!r} (qr, jacobi)")
    return dict(lower=bool(lower), algorithm=np.uint8(codes[name]))


def _eigh_lowering(ctx, x, *, lower=True, sort_eigenvalues=True, subset_by_index=None,
                   algorithm=None, prefix: str):
    (aval,) = ctx.avals_in
    v_aval, w_aval = ctx.avals_out
    info = _info(aval.shape[:-2])
    v, w, i = _call(ctx, _kernel(prefix, "syevd", aval.dtype), [x], [aval],
                    [v_aval, w_aval, info], {0: 0}, **_eigh_flags(prefix, lower, algorithm))
    return _apply(ctx, lambda v, w, i: _nan_unless(i == 0, v, w), [v, w, i],
                  [v_aval, w_aval, info])


def svd_results(ctx, s: Any, u: Any, vt: Any, info: Any, info_aval: ShapedArray,
                compute_uv: bool) -> list:
    """[s] or [s, u, vt] with NaNs for the batch elements whose `info` is not 0 (CPU and
    GPU share this end of the SVD)."""
    s_aval = ctx.avals_out[0]
    if not compute_uv:
        return _apply(ctx, lambda s, i: _nan_unless(i == 0, s), [s, info], [s_aval, info_aval])
    return _apply(ctx, lambda s, u, vt, i: _nan_unless(i == 0, s, u, vt), [s, u, vt, info],
                  [*ctx.avals_out, info_aval])


def _svd_lowering(ctx, x, *, full_matrices, compute_uv, subset_by_index=None, algorithm=None,
                  prefix: str = "cpu"):
    (aval,) = ctx.avals_in
    *batch, m, n = aval.shape
    k = min(m, n)
    mode = "N" if not compute_uv else "A" if full_matrices else "S"
    s_aval = ctx.avals_out[0]
    # U and V^H are declared even for "N" (gesdd leaves them alone), in JAX's shapes
    u_aval = ShapedArray((*batch, m, m if full_matrices else k), aval.dtype)
    vt_aval = ShapedArray((*batch, n if full_matrices else k, n), aval.dtype)
    info = _info(tuple(batch))
    _, s, u, vt, i = _call(ctx, _kernel(prefix, "gesdd", aval.dtype), [x], [aval],
                           [aval, s_aval, u_aval, vt_aval, info], {0: 0}, mode=_char(mode))
    return svd_results(ctx, s, u, vt, i, info, compute_uv)
