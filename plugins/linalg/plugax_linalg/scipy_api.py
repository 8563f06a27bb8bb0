"""`plugax.scipy.linalg`: SciPy's factor-and-solve interface on the primitives.

Conventions are SciPy's (as jax.scipy.linalg keeps them): `lu` returns (p, l, u)
with a = p @ l @ u; `lu_factor` returns LAPACK's packed factors and 0-based
pivots; `cho_factor` returns (c, lower) with c the factor alone (the other
triangle zero, where SciPy leaves junk). `expm` is Higham's scaling and squaring
with a degree-13 Padé approximant, its squarings selected by masks so that it
traces (and jits) with no data-dependent control flow.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from plugax.extend import get_aval

from .ad import mT, mm, permutation_matrix, tril, triu
from .lax_api import cholesky as _cholesky, eigh as _eigh, inexact, lu as _lu, \
    triangular_solve
from .lowering import permutation_from_pivots
from .numpy_api import lu_solve_factored, solve

__all__ = ["SCIPY_LINALG"]


def _jnp():
    import plugax.numpy as jnp
    return jnp


_TRANS = {0: 0, "N": 0, 1: 1, "T": 1, 2: 2, "C": 2}


def _trans(trans: Any, where: str) -> int:
    if trans not in _TRANS:
        raise ValueError(f"plugax.scipy.linalg.{where}: trans must be 0/'N', 1/'T' or "
                         f"2/'C', got {trans!r}")
    return _TRANS[trans]


def solve_triangular(a: Any, b: Any, trans: Any = 0, lower: bool = False,
                     unit_diagonal: bool = False, overwrite_b: bool = False,
                     debug: Any = None, check_finite: bool = True) -> Any:
    """x with op(a) x = b for triangular a; b a vector or a matrix (or batches)."""
    t = _trans(trans, "solve_triangular")
    a, b = inexact(a), inexact(b)
    vector = get_aval(b).ndim == get_aval(a).ndim - 1
    b2 = b[..., None] if vector else b
    out = triangular_solve(a, b2, left_side=True, lower=lower, transpose_a=t > 0,
                           conjugate_a=t == 2, unit_diagonal=unit_diagonal)
    return out[..., 0] if vector else out


def cholesky(a: Any, lower: bool = False, overwrite_a: bool = False,
             check_finite: bool = True) -> Any:
    factor = _cholesky(a)
    return factor if lower else mT(factor)


def cho_factor(a: Any, lower: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> tuple[Any, bool]:
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower: tuple[Any, bool], b: Any, overwrite_b: bool = False,
              check_finite: bool = True) -> Any:
    """x with a x = b given cho_factor(a): two triangular solves."""
    c, lower = c_and_lower
    c, b = inexact(c), inexact(b)
    vector = get_aval(b).ndim == get_aval(c).ndim - 1
    b2 = b[..., None] if vector else b
    y = triangular_solve(c, b2, left_side=True, lower=lower, transpose_a=not lower)
    x = triangular_solve(c, y, left_side=True, lower=lower, transpose_a=lower)
    return x[..., 0] if vector else x


def lu(a: Any, permute_l: bool = False, overwrite_a: bool = False,
       check_finite: bool = True) -> tuple:
    """(p, l, u) with a = p @ l @ u (or (p @ l, u) with permute_l)."""
    a = inexact(a)
    lu_, _, perm = _lu(a)
    *batch, m, n = get_aval(a).shape
    k = min(m, n)
    l = tril(lu_[..., :, :k], -1) + np.eye(m, k, dtype=a.dtype)
    u = triu(lu_[..., :k, :])
    p = mT(permutation_matrix(perm, a.dtype))
    return (mm(p, l), u) if permute_l else (p, l, u)


def lu_factor(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> tuple[Any, Any]:
    lu_, pivots, _ = _lu(a)
    return lu_, pivots


def lu_solve(lu_and_piv: tuple[Any, Any], b: Any, trans: Any = 0, overwrite_b: bool = False,
             check_finite: bool = True) -> Any:
    """x with a x = b (trans 0) or a^T x = b (trans 1, 2) given lu_factor(a)."""
    t = _trans(trans, "lu_solve")
    lu_, pivots = lu_and_piv
    lu_, b = inexact(lu_), inexact(b)
    m = get_aval(lu_).shape[-1]
    perm = permutation_from_pivots(pivots, m)
    vector = get_aval(b).ndim == get_aval(lu_).ndim - 1
    b2 = b[..., None] if vector else b
    x = lu_solve_factored(lu_, perm, b2, trans=1 if t else 0)
    return x[..., 0] if vector else x


def eigh(a: Any, b: Any = None, lower: bool = True, eigvals_only: bool = False,
         overwrite_a: bool = False, overwrite_b: bool = False, turbo: bool = True,
         eigvals: Any = None, type: int = 1, check_finite: bool = True) -> Any:
    """(w, v) of a symmetric matrix (SciPy's order), or w with eigvals_only."""
    if b is not None:
        raise NotImplementedError("plugax.scipy.linalg.eigh: the generalized problem (b) is "
                                  "not supported")
    if eigvals is not None:
        raise NotImplementedError("plugax.scipy.linalg.eigh: eigvals (a subset) is not "
                                  "supported")
    v, w = _eigh(a, lower=lower)
    return w if eigvals_only else (w, v)


_PADE13 = (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
           129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
           40840800., 960960., 16380., 182., 1.)
_THETA13 = 5.371920351148152


def expm(A: Any, *, upper_triangular: bool = False, max_squarings: int = 16) -> Any:
    """exp(A) by scaling and squaring: A / 2^s has 1-norm <= theta_13, exp of it by the
    [13/13] Padé approximant (one solve), then s squarings, each applied only where
    needed (a mask), so s may depend on traced values."""
    jnp = _jnp()
    A = inexact(A)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"plugax.scipy.linalg.expm takes square matrices, got shape {A.shape}")
    n = A.shape[-1]
    norm1 = jnp.max(jnp.sum(jnp.abs(A), axis=-2), axis=-1)
    s = jnp.ceil(jnp.log2(jnp.maximum(norm1, 1e-30) / _THETA13))
    s = jnp.clip(s, 0, max_squarings)
    scale = (2.0 ** (-s)).astype(A.dtype)[..., None, None]
    a = A * scale
    eye = np.eye(n, dtype=A.dtype)
    b = _PADE13
    a2 = mm(a, a)
    a4 = mm(a2, a2)
    a6 = mm(a4, a2)
    u = mm(a, mm(a6, b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4
           + b[3] * a2 + b[1] * eye)
    v = mm(a6, b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 \
        + b[0] * eye
    r = solve(v - u, v + u)
    for i in range(max_squarings):
        r = jnp.where((i < s)[..., None, None], mm(r, r), r)
    return r


def block_diag(*arrs: Any) -> Any:
    """The block-diagonal matrix of the arguments (scalars and vectors are 1 x n blocks)."""
    jnp = _jnp()
    if not arrs:
        return jnp.zeros((1, 0))
    blocks = [jnp.asarray(a) for a in arrs]
    blocks = [b.reshape((1,) * (2 - b.ndim) + b.shape) if b.ndim < 2 else b for b in blocks]
    if any(b.ndim != 2 for b in blocks):
        raise ValueError(f"plugax.scipy.linalg.block_diag takes arrays of rank <= 2, got "
                         f"shapes {[tuple(b.shape) for b in blocks]}")
    dtype = np.result_type(*[b.dtype for b in blocks])
    widths = [b.shape[1] for b in blocks]
    total = sum(widths)
    rows, left = [], 0
    for b, w in zip(blocks, widths):
        parts = [jnp.zeros((b.shape[0], left), dtype), b.astype(dtype),
                 jnp.zeros((b.shape[0], total - left - w), dtype)]
        rows.append(jnp.concatenate(parts, axis=1))
        left += w
    return jnp.concatenate(rows, axis=0)


SCIPY_LINALG = {"solve_triangular": solve_triangular, "cholesky": cholesky,
                "cho_factor": cho_factor, "cho_solve": cho_solve, "lu": lu,
                "lu_factor": lu_factor, "lu_solve": lu_solve, "expm": expm, "eigh": eigh,
                "block_diag": block_diag, "solve": solve}
