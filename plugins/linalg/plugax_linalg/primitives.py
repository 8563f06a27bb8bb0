"""The factorisation primitives: cholesky, triangular_solve, lu, qr, eigh, svd.

Names, parameters and output order are JAX's (`jax.lax.linalg`), so jaxprs read
the same. Every primitive acts on the last two dimensions and is natively
batched over the leading ones: the batching rule only moves the vmapped axis to
the front. The eager impls use `numpy.linalg` alone (SciPy is not a dependency);
the few things it lacks (a triangular solve, LU with pivots) are written here
with NumPy. Failures follow JAX, not NumPy: a matrix that is not positive
definite gives a Cholesky factor of NaNs rather than an exception, because
under `jit` there is no way to raise one.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from plugax.extend import Primitive, ShapedArray, ShapeError, bdim_at_front

__all__ = ["cholesky_p", "triangular_solve_p", "lu_p", "qr_p", "eigh_p", "svd_p"]

cholesky_p = Primitive("cholesky")
triangular_solve_p = Primitive("triangular_solve")
lu_p = Primitive("lu", multiple_results=True)
qr_p = Primitive("qr", multiple_results=True)
eigh_p = Primitive("eigh", multiple_results=True)
svd_p = Primitive("svd", multiple_results=True)

# Complex matrices would reach LAPACK fine, but plugax's elementwise family has no
# complex arithmetic yet (the wrappers symmetrise, the jvps multiply), so they are refused
# up front rather than half supported.
_INEXACT = tuple(np.dtype(d) for d in ("float32", "float64"))


# --- abstract evaluation ---------------------------------------------------------------
def check_matrix(name: str, aval: ShapedArray, square: bool = True) -> None:
    """The checks every primitive makes of its matrix operand, with errors that name the
    primitive, the operand's type and the fix."""
    if aval.ndim < 2:
        raise ShapeError(f"primitive '{name}' takes a matrix or a batch of matrices (rank "
                         f">= 2), got {aval.str_short()}")
    if square and aval.shape[-1] != aval.shape[-2]:
        raise ShapeError(f"primitive '{name}' takes square matrices, got {aval.str_short()} "
                         f"(last two dimensions {aval.shape[-2]} x {aval.shape[-1]})")
    if np.dtype(aval.dtype) not in _INEXACT:
        raise TypeError(f"primitive '{name}' takes float32 or float64 matrices (complex "
                        f"ones are not supported yet), got {aval.str_short()}; convert "
                        f"integers first, e.g. x.astype(jnp.float32)")


def _real(dtype: Any) -> np.dtype:
    return np.finfo(np.dtype(dtype)).dtype


def _cholesky_abstract_eval(ctx, x: ShapedArray) -> ShapedArray:
    check_matrix("cholesky", x)
    return ShapedArray(x.shape, x.dtype)


def _triangular_solve_abstract_eval(ctx, a: ShapedArray, b: ShapedArray, *, left_side: bool,
                                    **_: Any) -> ShapedArray:
    check_matrix("triangular_solve", a)
    m = a.shape[-1]
    if b.ndim != a.ndim or b.shape[:-2] != a.shape[:-2] or a.dtype != b.dtype \
            or (b.shape[-2] if left_side else b.shape[-1]) != m:
        raise ShapeError(f"primitive 'triangular_solve' with left_side={left_side} needs a of "
                         f"shape [..., m, m] and b of shape [..., m, n] (left_side=True) or "
                         f"[..., n, m] (left_side=False), with equal batch dimensions and "
                         f"dtypes; got a: {a.str_short()}, b: {b.str_short()}")
    return ShapedArray(b.shape, b.dtype)


def _lu_abstract_eval(ctx, x: ShapedArray) -> list[ShapedArray]:
    check_matrix("lu", x, square=False)
    *batch, m, n = x.shape
    return [ShapedArray(x.shape, x.dtype), ShapedArray((*batch, min(m, n)), np.int32),
            ShapedArray((*batch, m), np.int32)]


def _qr_abstract_eval(ctx, x: ShapedArray, *, full_matrices: bool, pivoting: bool = False,
                      use_magma: Any = None) -> list[ShapedArray]:
    check_matrix("qr", x, square=False)
    if pivoting:
        raise NotImplementedError("primitive 'qr': pivoting=True is not supported by plugax")
    *batch, m, n = x.shape
    k = m if full_matrices else min(m, n)
    return [ShapedArray((*batch, m, k), x.dtype), ShapedArray((*batch, k, n), x.dtype)]


def _eigh_abstract_eval(ctx, x: ShapedArray, *, lower: bool = True,
                        sort_eigenvalues: bool = True, subset_by_index: Any = None,
                        algorithm: Any = None) -> list[ShapedArray]:
    check_matrix("eigh", x)
    if subset_by_index not in (None, (0, x.shape[-1])):
        raise NotImplementedError("primitive 'eigh': subset_by_index is not supported by plugax")
    return [ShapedArray(x.shape, x.dtype), ShapedArray(x.shape[:-1], _real(x.dtype))]


def _svd_abstract_eval(ctx, x: ShapedArray, *, full_matrices: bool, compute_uv: bool,
                       subset_by_index: Any = None, algorithm: Any = None) -> list[ShapedArray]:
    check_matrix("svd", x, square=False)
    *batch, m, n = x.shape
    k = min(m, n)
    if subset_by_index not in (None, (0, k)):
        raise NotImplementedError("primitive 'svd': subset_by_index is not supported by plugax")
    s = ShapedArray((*batch, k), _real(x.dtype))
    if not compute_uv:
        return [s]
    ku, kv = (m, n) if full_matrices else (k, k)
    return [s, ShapedArray((*batch, m, ku), x.dtype), ShapedArray((*batch, kv, n), x.dtype)]


# --- evaluation (NumPy) ------------------------------------------------------------------
def _cholesky_impl(ctx, x: np.ndarray) -> np.ndarray:
    """np.linalg.cholesky, with NaN factors (as LAPACK under jit gives) for the matrices
    of a batch that are not positive definite instead of an exception for all."""
    try:
        return np.linalg.cholesky(x)
    except np.linalg.LinAlgError:
        flat = x.reshape(int(np.prod(x.shape[:-2], dtype=np.int64)), *x.shape[-2:])
        out = np.empty_like(flat)
        for i, m in enumerate(flat):
            try:
                out[i] = np.linalg.cholesky(m)
            except np.linalg.LinAlgError:   # NaNs on and below the diagonal, as under jit
                out[i] = np.tril(np.full(m.shape, np.nan, m.dtype))
        return out.reshape(x.shape)


def triangle(a: np.ndarray, lower: bool, unit_diagonal: bool = False) -> np.ndarray:
    """The lower (or upper) triangle of `a`, its diagonal replaced by ones if asked:
    the matrix a triangular solve reads (the other entries are ignored, as in LAPACK)."""
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        t = t.copy()
        idx = np.arange(a.shape[-1])
        t[..., idx, idx] = 1
    return t


def _triangular_solve_impl(ctx, a, b, *, left_side, lower, transpose_a, conjugate_a,
                           unit_diagonal):
    """Solve op(a) x = b (left_side) or x op(a) = b by substitution, as LAPACK's trsm:
    O(n^2) per right-hand side, one vectorised step per row for a whole batch, and a
    zero on the diagonal gives infinities or NaNs rather than an exception.

    Every case is brought to a forward substitution with a lower-triangular matrix:
    a right-side solve is the left-side solve of the transposes, and an upper
    triangle is a lower one with both index orders reversed."""
    t = triangle(a, lower, unit_diagonal)
    if conjugate_a:
        t = np.conj(t)
    is_lower = lower != bool(transpose_a)
    if transpose_a:
        t = np.swapaxes(t, -1, -2)
    rhs = b if left_side else np.swapaxes(b, -1, -2)
    if not left_side:
        t, is_lower = np.swapaxes(t, -1, -2), not is_lower
    if not is_lower:
        t, rhs = t[..., ::-1, ::-1], rhs[..., ::-1, :]
    x = np.zeros(rhs.shape, np.result_type(t, rhs))
    with np.errstate(all="ignore"):
        for i in range(t.shape[-1]):
            partial = rhs[..., i, :] - np.einsum("...j,...jk->...k", t[..., i, :i], x[..., :i, :])
            x[..., i, :] = partial / t[..., i, i, None]
    if not is_lower:
        x = x[..., ::-1, :]
    out = x if left_side else np.swapaxes(x, -1, -2)
    return np.ascontiguousarray(out, dtype=b.dtype)


def _lu_impl(ctx, x: np.ndarray) -> list[np.ndarray]:
    """LU with partial pivoting as LAPACK's getrf does it (the largest |entry| of the
    column is the pivot, the first on ties), vectorised over the batch: one Python
    step per column. A zero pivot leaves its column unscaled, as getrf does."""
    *batch, m, n = x.shape
    k = min(m, n)
    nb = int(np.prod(batch, dtype=np.int64))
    a = np.array(x.reshape(nb, m, n), copy=True)
    rows = np.arange(nb)
    pivots = np.zeros((nb, k), np.int32)
    perm = np.tile(np.arange(m, dtype=np.int32), (nb, 1))
    for j in range(k):
        p = j + np.argmax(np.abs(a[:, j:, j]), axis=1)
        pivots[:, j] = p
        a[rows, j], a[rows, p] = a[rows, p].copy(), a[rows, j].copy()
        perm[rows, j], perm[rows, p] = perm[rows, p].copy(), perm[rows, j].copy()
        pivot = a[:, j, j]
        safe = np.where(pivot == 0, 1, pivot)
        a[:, j + 1:, j] /= safe[:, None]
        a[:, j + 1:, j + 1:] -= a[:, j + 1:, j, None] * a[:, j, None, j + 1:]
    return [a.reshape(x.shape), pivots.reshape(*batch, k), perm.reshape(*batch, m)]


def _qr_impl(ctx, x, *, full_matrices, pivoting=False, use_magma=None):
    q, r = np.linalg.qr(x, mode="complete" if full_matrices else "reduced")
    return [q.astype(x.dtype, copy=False), r.astype(x.dtype, copy=False)]


def _eigh_impl(ctx, x, *, lower=True, sort_eigenvalues=True, subset_by_index=None,
               algorithm=None):
    w, v = np.linalg.eigh(x, UPLO="L" if lower else "U")
    return [v.astype(x.dtype, copy=False), w.astype(_real(x.dtype), copy=False)]


def _svd_impl(ctx, x, *, full_matrices, compute_uv, subset_by_index=None, algorithm=None):
    real = _real(x.dtype)
    if not compute_uv:
        return [np.linalg.svd(x, compute_uv=False).astype(real, copy=False)]
    u, s, vt = np.linalg.svd(x, full_matrices=full_matrices)
    return [s.astype(real, copy=False), u.astype(x.dtype, copy=False),
            vt.astype(x.dtype, copy=False)]


# --- batching: the primitives are batched over leading dims already ------------------------
def _front(prim: Primitive):
    def batching(ctx, args, dims, **params):
        size = ctx.axis_size
        args = [bdim_at_front(x, d, size) for x, d in zip(args, dims)]
        out = prim.bind(*args, **params)
        return (out, [0] * len(out)) if prim.multiple_results else (out, 0)
    batching.__doc__ = f"vmap of {prim.name}: the mapped axis becomes a leading batch dim"
    return batching


ABSTRACT_EVAL = {cholesky_p: _cholesky_abstract_eval,
                 triangular_solve_p: _triangular_solve_abstract_eval,
                 lu_p: _lu_abstract_eval, qr_p: _qr_abstract_eval, eigh_p: _eigh_abstract_eval,
                 svd_p: _svd_abstract_eval}
IMPL = {cholesky_p: _cholesky_impl, triangular_solve_p: _triangular_solve_impl, lu_p: _lu_impl,
        qr_p: _qr_impl, eigh_p: _eigh_impl, svd_p: _svd_impl}
BATCHING = {p: _front(p) for p in IMPL}
