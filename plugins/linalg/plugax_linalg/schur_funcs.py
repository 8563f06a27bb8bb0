"""Matrix functions through the Schur form, as jax.scipy.linalg: `rsf2csf`, `sqrtm`,
`funm`.

Each reduces to an upper triangular T (the complex Schur form), computes f(T), and
returns Z f(T) Z^H. On a triangular matrix both recurrences (the square root's and
Parlett's for a general f) fill f(T) one superdiagonal at a time, and every entry
of superdiagonal d needs only entries of lower diagonals: so a whole diagonal is
one matmul and a division (n steps of vectorised work, not n^2/2 scalar updates).
For diagonal d of F filled up to d - 1:
  (F @ F)[i, i+d]          = sum_{i<k<i+d} F[i,k] F[k,i+d]              (sqrtm)
  (T @ F - F @ T)[i, i+d]  = T[i,i+d](F[i+d,i+d] - F[i,i]) + sum (...)   (Parlett)
because the terms with k = i or k = i + d involve the still-zero entry F[i, i+d].
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from plugax.extend import COMPLEX_OF_REAL, get_aval

from .ad import mm
from .schur import scipy_schur

__all__ = ["SCIPY_LINALG_SCHUR_FUNCS", "rsf2csf", "sqrtm", "funm"]


def _jnp():
    import plugax.numpy as jnp
    return jnp


def _complex(x: Any) -> Any:
    dtype = np.dtype(get_aval(x).dtype)
    return x if dtype.kind == "c" else x.astype(COMPLEX_OF_REAL[dtype])


def _place(f: Any, values: Any, d: int) -> Any:
    """f with superdiagonal d set to `values` (it was zero)."""
    return f + _jnp().diag(values, d)


def rsf2csf(T: Any, Z: Any, check_finite: bool = True) -> tuple[Any, Any]:
    """The complex Schur form (triangular) from a real one (T quasi-triangular, Z), by a
    unitary rotation of each 2x2 block, bottom to top, as SciPy's rsf2csf. The blocks
    are found from the values (|T[m, m-1]| above eps times its diagonal neighbours);
    a rotation is applied through masks, so this traces with no value-dependent
    control flow."""
    jnp = _jnp()
    T, Z = jnp.asarray(T), jnp.asarray(Z)
    if get_aval(T).ndim != 2 or get_aval(T).shape[0] != get_aval(T).shape[1]:
        raise ValueError("Input 'T' must be square.")
    if get_aval(Z).ndim != 2 or get_aval(Z).shape[0] != get_aval(Z).shape[1]:
        raise ValueError("Input 'Z' must be square.")
    if get_aval(T).shape != get_aval(Z).shape:
        raise ValueError(f"Input array shapes must match: Z: {get_aval(Z).shape} vs. T: "
                         f"{get_aval(T).shape}")
    from plugax.extend import promote_dtypes
    T, Z = promote_dtypes("rsf2csf", T, Z, category="inexact")
    T, Z = _complex(T), _complex(Z)
    n = get_aval(T).shape[0]
    eps = float(np.finfo(get_aval(T).dtype).eps)
    cols = np.arange(n)
    for m in range(n - 1, 0, -1):
        a, b, c, d = T[m - 1, m - 1], T[m - 1, m], T[m, m - 1], T[m, m]
        mu = (a - d) / 2 + jnp.sqrt((a - d) ** 2 / 4 + b * c)   # an eigenvalue minus d
        r = jnp.sqrt(jnp.abs(mu) ** 2 + jnp.abs(c) ** 2)
        block = jnp.abs(c) > eps * (jnp.abs(a) + jnp.abs(d))
        safe = jnp.where(block, r, 1).astype(get_aval(T).dtype)
        cs, sn = mu / safe, c / safe
        g = jnp.stack([jnp.stack([jnp.conj(cs), sn]), jnp.stack([-sn, cs])])
        rows = T[m - 1:m + 1]
        new_rows = jnp.where(cols >= m - 1, mm(g, rows), rows)
        t2 = jnp.concatenate([T[:m - 1], new_rows, T[m + 1:]], axis=0)
        gh = jnp.conj(g.T)
        tcols = t2[:, m - 1:m + 1]
        new_cols = jnp.where((cols < m + 1)[:, None], mm(tcols, gh), tcols)
        t2 = jnp.concatenate([t2[:, :m - 1], new_cols, t2[:, m + 1:]], axis=1)
        z2 = jnp.concatenate([Z[:, :m - 1], mm(Z[:, m - 1:m + 1], gh), Z[:, m + 1:]], axis=1)
        T, Z = jnp.where(block, t2, T), jnp.where(block, z2, Z)
        T = jnp.where((cols[:, None] == m) & (cols[None, :] == m - 1), 0, T)
    return T, Z


def _sqrtm_triu(t: Any) -> Any:
    jnp = _jnp()
    n = get_aval(t).shape[-1]
    diag = jnp.sqrt(jnp.diagonal(t))
    r = jnp.diag(diag)
    for d in range(1, n):
        s = jnp.diagonal(mm(r, r), offset=d)
        r = _place(r, (jnp.diagonal(t, offset=d) - s) / (diag[:-d] + diag[d:]), d)
    return r


def sqrtm(A: Any, blocksize: int = 1) -> Any:
    """The principal square root of A (complex), through its complex Schur form."""
    jnp = _jnp()
    if blocksize > 1:
        raise NotImplementedError("Blocked version is not implemented yet.")
    T, Z = scipy_schur(A, output="complex")
    return mm(mm(Z, _sqrtm_triu(T)), jnp.conj(Z.T))


def funm(A: Any, func: Callable[[Any], Any], disp: bool = True) -> Any:
    """f(A) for a function f applied elementwise to the eigenvalues (func takes and
    returns a vector), by Parlett's recurrence on the complex Schur form; with
    disp=False also the error estimate JAX and SciPy give (from the smallest
    distance between two eigenvalues)."""
    jnp = _jnp()
    A = jnp.asarray(A)
    if get_aval(A).ndim != 2 or get_aval(A).shape[0] != get_aval(A).shape[1]:
        raise ValueError("expected square array_like input")
    T, Z = scipy_schur(A)
    T, Z = rsf2csf(T, Z)
    n = get_aval(T).shape[0]
    tdiag = jnp.diagonal(T)
    F = jnp.diag(jnp.asarray(func(tdiag)).astype(get_aval(T).dtype))
    minden = jnp.abs(T[0, 0])
    for d in range(1, n):
        s = jnp.diagonal(mm(T, F) - mm(F, T), offset=d)
        den = tdiag[d:] - tdiag[:-d]
        F = _place(F, jnp.where(den != 0, s / jnp.where(den != 0, den, 1), s), d)
        minden = jnp.minimum(minden, jnp.min(jnp.abs(den)))
    F = mm(mm(Z, F), jnp.conj(Z.T))
    if disp:
        return F
    tol = float(np.finfo(np.dtype(get_aval(T).dtype).char.lower()).eps)
    minden = jnp.where(minden == 0.0, tol, minden)
    upper = jnp.max(jnp.sum(jnp.abs(jnp.triu(T, 1)), axis=0))           # its 1-norm
    err = jnp.where(jnp.any(jnp.isinf(F)), np.inf,
                    jnp.minimum(1, jnp.maximum(tol, (tol / minden) * upper)))
    return F, err


SCIPY_LINALG_SCHUR_FUNCS = {"rsf2csf": rsf2csf, "sqrtm": sqrtm, "funm": funm}
