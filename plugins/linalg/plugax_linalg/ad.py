"""Differentiation rules of the factorisations, as JAX defines them (jax.lax.linalg).

Each jvp recomputes the factorisation of the primal and expresses the tangent with
matmuls and triangular solves, so reverse mode needs only the transpose of
`triangular_solve` in its right-hand side (and of the dots and masks): the rules
are written with the front ends, so partial evaluation splits them like any user
code. References: cholesky (Murray, arXiv:1602.07527), lu (de Hoog, Anderssen and
Lukas), qr (j-towns.github.io/papers/qr-derivative.pdf), eigh and svd (the
classic perturbation formulas, with JAX's guards against equal eigenvalues).
These rules are for real matrices (the primitives take float32 and float64 only).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from plugax.extend import Zero, get_aval, is_undefined_primal

from .primitives import cholesky_p, eigh_p, lu_p, qr_p, svd_p, triangular_solve_p

__all__ = ["JVP", "TRANSPOSE", "mT", "mm", "tril", "triu", "eye_like", "diag_part"]


def _np():
    import plugax.numpy as jnp
    return jnp


def mT(x: Any) -> Any:
    """The matrix transpose of the last two dimensions."""
    return _np().swapaxes(x, -1, -2)


def mm(a: Any, b: Any) -> Any:
    return _np().matmul(a, b)


def _mask(x: Any, k: int, lower: bool) -> np.ndarray:
    m, n = get_aval(x).shape[-2:]
    t = np.tri(m, n, k, dtype=bool)
    return t if lower else ~np.tri(m, n, k - 1, dtype=bool)


def tril(x: Any, k: int = 0) -> Any:
    """x with the entries above diagonal k zeroed (a constant mask: linear in x)."""
    jnp = _np()
    return jnp.where(_mask(x, k, True), x, jnp.zeros((), get_aval(x).dtype))


def triu(x: Any, k: int = 0) -> Any:
    jnp = _np()
    return jnp.where(_mask(x, k, False), x, jnp.zeros((), get_aval(x).dtype))


def eye_like(n: int, dtype: Any) -> np.ndarray:
    return np.eye(n, dtype=dtype)


def diag_part(x: Any) -> Any:
    """The diagonal of the last two (square) dimensions, as a mask and a sum."""
    n = get_aval(x).shape[-1]
    return _np().sum(x * eye_like(n, get_aval(x).dtype), axis=-1)


def _real_only(name: str, x: Any) -> None:
    if np.issubdtype(get_aval(x).dtype, np.complexfloating):
        raise NotImplementedError(f"plugax differentiates '{name}' of real matrices only, got "
                                  f"{get_aval(x).str_short()}")


def _tsolve(a, b, **params):
    return triangular_solve_p.bind(a, b, **params)


_TS = dict(conjugate_a=False, unit_diagonal=False)


def _cholesky_jvp(ctx, primals, tangents):
    (x,), (dx,) = primals, tangents
    L = cholesky_p.bind(x)
    if type(dx) is Zero:
        return L, Zero(get_aval(L))
    _real_only("cholesky", x)
    tmp = _tsolve(L, dx, left_side=False, lower=True, transpose_a=True, **_TS)
    inner = _tsolve(L, tmp, left_side=True, lower=True, transpose_a=False, **_TS)
    n = get_aval(x).shape[-1]
    phi = tril(inner) * (1 - 0.5 * eye_like(n, get_aval(x).dtype))
    return L, mm(L, phi)


def _triangular_solve_jvp(ctx, primals, tangents, *, left_side, lower, transpose_a,
                          conjugate_a, unit_diagonal):
    a, b = primals
    da, db = tangents
    params = dict(left_side=left_side, lower=lower, transpose_a=transpose_a,
                  conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
    ans = triangular_solve_p.bind(a, b, **params)
    out = None
    if type(db) is not Zero:
        out = triangular_solve_p.bind(a, db, **params)
    if type(da) is not Zero:
        _real_only("triangular_solve", a)
        k = 1 if unit_diagonal else 0
        g = -(tril(da, -k) if lower else triu(da, k))
        g = mT(g) if transpose_a else g
        m, n = get_aval(b).shape[-2:]
        inv = lambda rhs: triangular_solve_p.bind(a, rhs, **params)  # noqa: E731
        if left_side:   # d(A^-1 B) = -A^-1 dA X, in the cheaper order
            term = inv(mm(g, ans)) if m > n else mm(inv(g), ans)
        else:
            term = inv(mm(ans, g)) if m < n else mm(ans, inv(g))
        out = term if out is None else out + term
    return ans, (Zero(get_aval(ans)) if out is None else out)


def _triangular_solve_transpose(ctx, ct, a, b, *, left_side, lower, transpose_a, conjugate_a,
                                unit_diagonal):
    """Linear in b only: the cotangent of b solves with op(a) transposed."""
    if is_undefined_primal(a):
        raise ValueError("primitive 'triangular_solve' is linear in b only; transpose was "
                         "asked for the triangular matrix a")
    if type(ct) is Zero:
        return [None, Zero(b.aval)]
    return [None, triangular_solve_p.bind(a, ct, left_side=left_side, lower=lower,
                                          transpose_a=not transpose_a, conjugate_a=conjugate_a,
                                          unit_diagonal=unit_diagonal)]


def permutation_matrix(perm: Any, dtype: Any) -> Any:
    """P with P[..., i, j] = (perm[..., i] == j), so that P @ x = x[..., perm, :]:
    a row gather written as a comparison and a matmul, exact and differentiable in x."""
    m = get_aval(perm).shape[-1]
    return (perm[..., :, None] == np.arange(m, dtype=np.int32)).astype(dtype)


def take_rows(x: Any, perm: Any) -> Any:
    """x[..., perm, :] with perm batched like x: one row gather (the shape family's
    lax.gather, PROMISE_IN_BOUNDS: a permutation is in bounds), O(n k) where the
    one-hot product is O(n^2 k)."""
    import plugax.lax as lax
    *batch, n, k = get_aval(x).shape
    nb = len(batch)
    dims = lax.GatherDimensionNumbers(
        offset_dims=(nb + 1,), collapsed_slice_dims=(nb,), start_index_map=(nb,),
        operand_batching_dims=tuple(range(nb)), start_indices_batching_dims=tuple(range(nb)))
    return lax.gather(x, perm[..., None], dims, (1,) * nb + (1, k),
                      mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS)


def inverse_permutation(perm: Any) -> Any:
    """inv with inv[perm[i]] = i, by a one-hot sum (O(n^2) integer work, no scatter)."""
    jnp = _np()
    n = get_aval(perm).shape[-1]
    onehot = (perm[..., :, None] == np.arange(n, dtype=np.int32)).astype(np.int32)
    return jnp.sum(onehot * np.arange(n, dtype=np.int32)[:, None], axis=-2).astype(np.int32)


def _lu_jvp(ctx, primals, tangents):
    (a,), (da,) = primals, tangents
    lu, pivots, perm = lu_p.bind(a)
    zeros = [Zero(get_aval(pivots)), Zero(get_aval(perm))]
    if type(da) is Zero:
        return [lu, pivots, perm], [Zero(get_aval(lu))] + zeros
    _real_only("lu", a)
    jnp = _np()
    aval = get_aval(a)
    *batch, m, n = aval.shape
    k = min(m, n)
    dtype = aval.dtype
    x = take_rows(da, perm)
    l = tril(lu[..., :, :k], -1)
    if m > k:
        l = jnp.concatenate([l, jnp.zeros((*batch, m, m - k), dtype)], axis=-1)
    l = l + eye_like(m, dtype)
    u = triu(lu[..., :k, :])
    if n > k:
        pad = np.zeros((n - k, n), dtype)
        pad[:, k:] = np.eye(n - k, dtype=dtype)
        u = jnp.concatenate([u, jnp.broadcast_to(pad, (*batch, n - k, n))], axis=-2)
    la = _tsolve(l, x, left_side=True, lower=True, transpose_a=False, conjugate_a=False,
                 unit_diagonal=True)
    lau = _tsolve(u, la, left_side=False, lower=False, transpose_a=False, **_TS)
    l_dot = mm(l, tril(lau, -1))
    u_dot = mm(triu(lau), u)
    return [lu, pivots, perm], [l_dot + u_dot] + zeros


def _qr_jvp(ctx, primals, tangents, *, full_matrices, pivoting=False, use_magma=None):
    (x,), (dx,) = primals, tangents
    q, r = qr_p.bind(x, full_matrices=False, pivoting=pivoting, use_magma=use_magma)
    *_, m, n = get_aval(x).shape
    if m < n or (full_matrices and m != n):
        raise NotImplementedError(f"plugax, like JAX, differentiates qr only of matrices with "
                                  f"m >= n (and full_matrices=False unless square); got "
                                  f"{get_aval(x).str_short()}, full_matrices={full_matrices}")
    if type(dx) is Zero:
        return [q, r], [Zero(get_aval(q)), Zero(get_aval(r))]
    _real_only("qr", x)
    dx_rinv = _tsolve(r, dx, left_side=False, lower=False, transpose_a=False, **_TS)
    qt_dx_rinv = mm(mT(q), dx_rinv)
    low = tril(qt_dx_rinv, -1)
    do = low - mT(low)
    dq = mm(q, do - qt_dx_rinv) + dx_rinv
    dr = mm(qt_dx_rinv - do, r)
    return [q, r], [dq, dr]


def _eigh_jvp(ctx, primals, tangents, **params):
    (a,), (da,) = primals, tangents
    v, w = eigh_p.bind(a, **params)
    if type(da) is Zero:
        return [v, w], [Zero(get_aval(v)), Zero(get_aval(w))]
    _real_only("eigh", a)
    n = get_aval(a).shape[-1]
    eye = eye_like(n, get_aval(a).dtype)
    fmat = 1 / (eye + w[..., None, :] - w[..., :, None]) - eye
    vt_da_v = mm(mm(mT(v), da), v)
    return [v, w], [mm(v, fmat * vt_da_v), diag_part(vt_da_v)]


def _svd_jvp(ctx, primals, tangents, *, full_matrices, compute_uv, subset_by_index=None,
             algorithm=None):
    (a,), (da,) = primals, tangents
    s, u, vt = svd_p.bind(a, full_matrices=False, compute_uv=True,
                          subset_by_index=subset_by_index, algorithm=algorithm)
    if compute_uv and full_matrices:
        raise NotImplementedError("plugax, like JAX, does not differentiate svd with "
                                  "full_matrices=True; pass full_matrices=False")
    primal_out = [s, u, vt] if compute_uv else [s]
    if type(da) is Zero:
        return primal_out, [Zero(get_aval(o)) for o in primal_out]
    _real_only("svd", a)
    ut, v = mT(u), mT(vt)
    ds_mat = mm(mm(ut, da), v)
    ds = diag_part(ds_mat)
    if not compute_uv:
        return [s], [ds]
    k = get_aval(s).shape[-1]
    dtype = get_aval(a).dtype
    s_row = s[..., None, :]
    s_col = s[..., :, None]
    eye = eye_like(k, dtype)
    f = 1 / ((s_row + s_col) * (s_row - s_col) + eye) - eye
    dss = s_row * ds_mat
    sds = s_col * ds_mat
    s_zero = (s == 0).astype(dtype)
    s_inv = 1 / (s + s_zero) - s_zero
    du_dv_diag = 0.5 * (ds_mat - mT(ds_mat)) * (s_inv[..., None, :] * eye)
    du = mm(u, f * (dss + mT(dss)) + du_dv_diag)
    dv = mm(v, f * (sds + mT(sds)))
    m, n = get_aval(a).shape[-2:]
    if m > n:
        dav = mm(da, v)
        du = du + (dav - mm(u, mm(ut, dav))) / s_row
    if n > m:
        dahu = mm(mT(da), u)
        dv = dv + (dahu - mm(v, mm(vt, dahu))) / s_row
    return [s, u, vt], [ds, du, mT(dv)]


JVP = {cholesky_p: _cholesky_jvp, triangular_solve_p: _triangular_solve_jvp, lu_p: _lu_jvp,
       qr_p: _qr_jvp, eigh_p: _eigh_jvp, svd_p: _svd_jvp}
TRANSPOSE = {triangular_solve_p: _triangular_solve_transpose}
