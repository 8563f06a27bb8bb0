"""CPU lowering of the factorisations to jaxlib's LAPACK kernels (the `lapack_*_ffi`
custom calls JAX itself emits), through `plugax.extend.custom_call`.

Each rule emits one custom call in JAX's form (column-major layouts, the input
aliased to the factor) and then the same post-processing JAX does, written with
plugax's own primitives and lowered inline: NaNs where LAPACK reports a failure
(`info`), the triangle a factor is defined on, 0-based pivots and the permutation
they encode. So jit gives what the eager impl gives, to rounding, in the factors'
defined entries. Other platforms: a LoweringRuleError naming the primitive.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from plugax.extend import LoweringRuleError, ShapedArray, custom_call, trace_to_jaxpr

from .ad import tril, triu

__all__ = ["LOWERING"]

_cc = custom_call


def _apply(ctx, fn: Callable, values: Sequence[Any], avals: Sequence[ShapedArray]) -> list:
    """Lower `fn` (written with plugax primitives) applied to MLIR `values` of `avals`."""
    closed = trace_to_jaxpr(lambda *xs: list(fn(*xs)), list(avals))
    return ctx.lower_jaxpr(closed, *values)


def _cpu_only(ctx, name: str) -> None:
    if ctx.platform != "cpu":
        raise LoweringRuleError(f"primitive '{name}' has a lowering for CPU (LAPACK) only; "
                                f"platform {ctx.platform!r} has none in plugax yet")


def _nan_unless(ok: Any, *xs: Any) -> list:
    """xs with every matrix (vector) of a failed batch element replaced by NaN."""
    import plugax.numpy as jnp
    out = []
    for x in xs:
        extra = x.ndim - ok.ndim
        out.append(jnp.where(ok.reshape(ok.shape + (1,) * extra), x, jnp.nan))
    return out


def _layouts(avals: Sequence[ShapedArray], matrices: Sequence[bool]) -> list:
    return [_cc.matrix_layout(a.ndim) if is_matrix else _cc.vector_layout(a.ndim)
            for a, is_matrix in zip(avals, matrices)]


def _call(ctx, fn_base: str, dtype: Any, operands: list, in_avals: list, in_matrix: list,
          out_avals: list, out_matrix: list, alias: dict, **flags: str) -> list:
    attrs = {k: _cc.char_attr(ctx, v) for k, v in flags.items()}
    return _cc.custom_call(ctx, _cc.lapack_target(fn_base, dtype), operands, out_avals,
                           attributes=attrs, operand_layouts=_layouts(in_avals, in_matrix),
                           result_layouts=_layouts(out_avals, out_matrix),
                           operand_output_aliases=alias,
                           num_batch_dims=in_avals[0].ndim - 2)


def _info(batch: tuple) -> ShapedArray:
    return ShapedArray(batch, np.int32)


def _cholesky_lowering(ctx, x):
    _cpu_only(ctx, "cholesky")
    (aval,) = ctx.avals_in
    factor, info = _call(ctx, "potrf_ffi", aval.dtype, [x], [aval], [True],
                         [aval, _info(aval.shape[:-2])], [True, False], {0: 0}, uplo="L")
    return _apply(ctx, lambda f, i: [tril(_nan_unless(i == 0, f)[0])], [factor, info],
                  [aval, _info(aval.shape[:-2])])


def _triangular_solve_lowering(ctx, a, b, *, left_side, lower, transpose_a, conjugate_a,
                               unit_diagonal):
    _cpu_only(ctx, "triangular_solve")
    a_aval, b_aval = ctx.avals_in
    trans = "C" if (transpose_a and conjugate_a) else "T" if transpose_a else "N"
    (out,) = _call(ctx, "trsm_ffi", a_aval.dtype, [a, b], [a_aval, b_aval], [True, True],
                   [b_aval], [True], {1: 0}, side="L" if left_side else "R",
                   uplo="L" if lower else "U", trans_x=trans,
                   diag="U" if unit_diagonal else "N")
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


def _lu_lowering(ctx, x):
    _cpu_only(ctx, "lu")
    (aval,) = ctx.avals_in
    *batch, m, n = aval.shape
    piv_aval = ShapedArray((*batch, min(m, n)), np.int32)
    lu, piv, info = _call(ctx, "getrf_ffi", aval.dtype, [x], [aval], [True],
                          [aval, piv_aval, _info(tuple(batch))], [True, False, False], {0: 0})

    lu, piv = _apply(ctx, lambda lu, piv, info: [_nan_unless(info >= 0, lu)[0], piv - 1],
                     [lu, piv, info], [aval, piv_aval, _info(tuple(batch))])
    return [lu, piv, _permutation_loop(ctx, piv, piv_aval, m)]


def _qr_lowering(ctx, x, *, full_matrices, pivoting=False, use_magma=None):
    _cpu_only(ctx, "qr")
    (aval,) = ctx.avals_in
    *batch, m, n = aval.shape
    k = min(m, n)
    tau_aval = ShapedArray((*batch, k), aval.dtype)
    a, tau = _call(ctx, "geqrf_ffi", aval.dtype, [x], [aval], [True], [aval, tau_aval],
                   [True, False], {0: 0})
    cols = m if full_matrices else k
    q_in_aval = ShapedArray((*batch, m, cols), aval.dtype)

    def q_input(a):
        import plugax.numpy as jnp
        if cols > n:
            return [jnp.concatenate([a, jnp.zeros((*batch, m, cols - n), a.dtype)], axis=-1)]
        return [a[..., :, :cols]]
    (q_in,) = _apply(ctx, q_input, [a], [aval])
    (q,) = _call(ctx, "orgqr_ffi", aval.dtype, [q_in, tau], [q_in_aval, tau_aval],
                 [True, False], [q_in_aval], [True], {0: 0})
    (r,) = _apply(ctx, lambda a: [triu(a[..., :cols, :])], [a], [aval])
    return [q, r]


def _eigh_lowering(ctx, x, *, lower=True, sort_eigenvalues=True, subset_by_index=None,
                   algorithm=None):
    _cpu_only(ctx, "eigh")
    (aval,) = ctx.avals_in
    v_aval, w_aval = ctx.avals_out
    info = _info(aval.shape[:-2])
    v, w, i = _call(ctx, "syevd_ffi", aval.dtype, [x], [aval], [True], [v_aval, w_aval, info],
                    [True, False, False], {0: 0}, mode="V", uplo="L" if lower else "U")
    return _apply(ctx, lambda v, w, i: _nan_unless(i == 0, v, w), [v, w, i],
                  [v_aval, w_aval, info])


def _svd_lowering(ctx, x, *, full_matrices, compute_uv, subset_by_index=None, algorithm=None):
    _cpu_only(ctx, "svd")
    (aval,) = ctx.avals_in
    *batch, m, n = aval.shape
    k = min(m, n)
    mode = "A" if (full_matrices or not compute_uv) else "S"
    s_aval = ctx.avals_out[0]
    u_aval = ShapedArray((*batch, m, m if mode == "A" else k), aval.dtype)
    vt_aval = ShapedArray((*batch, n if mode == "A" else k, n), aval.dtype)
    if not compute_uv:
        mode = "N"
    info = _info(tuple(batch))
    _, s, u, vt, i = _call(ctx, "gesdd_ffi", aval.dtype, [x], [aval], [True],
                           [aval, s_aval, u_aval, vt_aval, info],
                           [True, False, True, True, False], {0: 0}, mode=mode)
    if not compute_uv:
        return _apply(ctx, lambda s, i: _nan_unless(i == 0, s), [s, i], [s_aval, info])
    return _apply(ctx, lambda s, u, vt, i: _nan_unless(i == 0, s, u, vt), [s, u, vt, i],
                  [s_aval, u_aval, vt_aval, info])


def _by_name():
    from . import primitives as P
    return {P.cholesky_p: _cholesky_lowering, P.triangular_solve_p: _triangular_solve_lowering,
            P.lu_p: _lu_lowering, P.qr_p: _qr_lowering, P.eigh_p: _eigh_lowering,
            P.svd_p: _svd_lowering}


LOWERING = _by_name()
