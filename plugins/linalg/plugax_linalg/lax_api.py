"""`plugax.lax.linalg`: the primitives with JAX's wrappers (jax.lax.linalg).

The wrappers do what JAX's do around each primitive: symmetrise the input of
cholesky and eigh (the primitives read one triangle; symmetrising makes the
derivative of a symmetric-matrix function symmetric too), accept a vector
right-hand side for triangular_solve, and order svd's results (u, s, vh).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from plugax.extend import bind, get_aval, to_inexact_dtype

from .ad import mT
from .primitives import check_matrix, cholesky_p, eigh_p, lu_p, qr_p, svd_p, triangular_solve_p

__all__ = ["LAX_LINALG", "inexact", "cholesky", "triangular_solve", "lu", "qr", "eigh", "svd"]


def inexact(x: Any) -> Any:
    """x as an array of a float or complex dtype (integers and bools become the default
    float, as jnp.linalg promotes them)."""
    import plugax.numpy as jnp
    x = jnp.asarray(x)
    if not np.issubdtype(get_aval(x).dtype, np.inexact):
        x = x.astype(to_inexact_dtype(get_aval(x).dtype))
    return x


def symmetrize(x: Any) -> Any:
    return (x + mT(x)) / 2


def cholesky(x: Any, *, symmetrize_input: bool = True) -> Any:
    """The lower Cholesky factor of each (symmetric positive-definite) matrix; NaNs where
    a matrix is not positive definite."""
    x = inexact(x)
    check_matrix("cholesky", get_aval(x))   # before symmetrising: name the primitive
    return bind(cholesky_p, symmetrize(x) if symmetrize_input else x)


def triangular_solve(a: Any, b: Any, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False) -> Any:
    """Solve op(a) x = b (left_side) or x op(a) = b for triangular `a`; a `b` of one rank
    less than `a` is a vector (or a batch of them)."""
    a, b = inexact(a), inexact(b)
    conjugate_a = bool(conjugate_a) and np.issubdtype(get_aval(a).dtype, np.complexfloating)
    singleton = get_aval(b).ndim == get_aval(a).ndim - 1
    if singleton:
        b = b[..., None] if left_side else b[..., None, :]
    out = bind(triangular_solve_p, a, b, left_side=bool(left_side), lower=bool(lower),
               transpose_a=bool(transpose_a), conjugate_a=conjugate_a,
               unit_diagonal=bool(unit_diagonal))
    if singleton:
        out = out[..., 0] if left_side else out[..., 0, :]
    return out


def lu(x: Any) -> tuple[Any, Any, Any]:
    """(lu, pivots, permutation): x[..., permutation, :] = L @ U with L unit lower
    triangular (below lu's diagonal) and U upper (on and above it); pivots are LAPACK's
    0-based row swaps."""
    return tuple(bind(lu_p, inexact(x)))


def qr(x: Any, *, pivoting: bool = False, full_matrices: bool = True,
       use_magma: Any = None) -> tuple[Any, Any]:
    if pivoting:
        raise NotImplementedError("plugax.lax.linalg.qr: pivoting=True is not supported")
    return tuple(bind(qr_p, inexact(x), full_matrices=bool(full_matrices), pivoting=False,
                      use_magma=use_magma))


def eigh(x: Any, *, lower: bool = True, symmetrize_input: bool = True,
         sort_eigenvalues: bool = True, subset_by_index: Any = None) -> tuple[Any, Any]:
    """(v, w): eigenvectors (columns) and ascending eigenvalues of symmetric matrices."""
    x = inexact(x)
    check_matrix("eigh", get_aval(x))
    v, w = bind(eigh_p, symmetrize(x) if symmetrize_input else x, lower=bool(lower),
                sort_eigenvalues=bool(sort_eigenvalues), subset_by_index=subset_by_index,
                algorithm=None)
    return v, w


def svd(x: Any, *, full_matrices: bool = True, compute_uv: bool = True,
        subset_by_index: Any = None, algorithm: Any = None) -> Any:
    """(u, s, vh) with descending singular values s, or s alone if not compute_uv."""
    out = bind(svd_p, inexact(x), full_matrices=bool(full_matrices),
               compute_uv=bool(compute_uv), subset_by_index=subset_by_index,
               algorithm=algorithm)
    if not compute_uv:
        return out[0]
    s, u, vt = out
    return u, s, vt


def lu_pivots_to_permutation(pivots: Any, permutation_size: int) -> Any:
    """The permutation that LAPACK-style row swaps `pivots` make of range(size)."""
    from .lowering import permutation_from_pivots
    import plugax.numpy as jnp
    pivots = jnp.asarray(pivots).astype(np.int32)
    if permutation_size < pivots.shape[-1]:
        raise ValueError(f"lu_pivots_to_permutation: permutation_size {permutation_size} is "
                         f"smaller than the {pivots.shape[-1]} pivots")
    return permutation_from_pivots(pivots, int(permutation_size))


LAX_LINALG = {"lu_pivots_to_permutation": lu_pivots_to_permutation, "cholesky": cholesky, "triangular_solve": triangular_solve, "lu": lu, "qr": qr,
              "eigh": eigh, "svd": svd}
