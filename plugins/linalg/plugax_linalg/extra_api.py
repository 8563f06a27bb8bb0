"""The rest of jax.numpy.linalg's and jax.scipy.linalg's names that need no new kernel:
array-API spellings (`vector_norm`, `matrix_norm`, `svdvals`, `matrix_transpose`,
`vecdot`, ...), compositions (`cond`, `multi_dot`, `tensorsolve`, `tensorinv`,
`polar`, `expm_frechet`, `solve_sylvester`) and SciPy's special-matrix constructors
(`toeplitz`, `hankel`, `circulant`, ...). Each is built on the primitives or on
NumPy-level front ends, so it differentiates and jits like the rest.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from plugax.extend import get_aval

from .ad import mT, mm
from .lax_api import inexact, svd as _svd
from .numpy_api import SVDResult, det, inv, norm, qr as _np_qr, solve

__all__ = ["NUMPY_LINALG_EXTRA", "SCIPY_LINALG_EXTRA"]


def _jnp():
    import plugax.numpy as jnp
    return jnp


# --- numpy.linalg -------------------------------------------------------------------------
def svdvals(x: Any) -> Any:
    return _svd(x, compute_uv=False)


def matrix_transpose(x: Any) -> Any:
    if get_aval(x).ndim < 2:
        raise ValueError(f"plugax.numpy.linalg.matrix_transpose needs rank >= 2, got shape "
                         f"{get_aval(x).shape}")
    return mT(x)


def _vector_norm_axes(x: Any, axis: Sequence[int], keepdims: bool, ord: Any) -> Any:
    jnp = _jnp()
    axis = tuple(a % x.ndim for a in axis)
    rest = [d for d in range(x.ndim) if d not in axis]
    moved = jnp.transpose(x, rest + list(axis))
    flat = moved.reshape(tuple(x.shape[d] for d in rest) + (-1,))
    out = norm(flat, ord, axis=-1)
    if keepdims:
        out = jnp.expand_dims(out, axis)
    return out


def vector_norm(x: Any, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Any:
    x = inexact(x)
    if axis is None:
        out = norm(x.reshape(-1), ord)
        return out.reshape((1,) * x.ndim) if keepdims else out
    if isinstance(axis, int) or len(axis) == 1:
        return norm(x, ord, axis=axis, keepdims=keepdims)
    return _vector_norm_axes(x, axis, keepdims, ord)


def matrix_norm(x: Any, keepdims: bool = False, ord: Any = "fro") -> Any:
    return norm(x, ord, axis=(-2, -1), keepdims=keepdims)


def cond(x: Any, p: Any = None) -> Any:
    """The condition number: s_max / s_min for p None or 2 (-2: the inverse), else
    norm(x, p) * norm(inv(x), p)."""
    jnp = _jnp()
    x = inexact(x)
    if p in (None, 2, -2):
        s = svdvals(x)
        r = s[..., 0] / s[..., -1]
        return 1 / r if p == -2 else r
    return norm(x, p, axis=(-2, -1)) * norm(inv(x), p, axis=(-2, -1)) + jnp.zeros((), x.dtype)


def multi_dot(arrays: Sequence[Any], *, precision: Any = None) -> Any:
    """The product of the matrices (1-D first and last operands are vectors), left to
    right: the value is the same in any order; JAX picks the cheapest order."""
    jnp = _jnp()
    if len(arrays) < 2:
        raise ValueError("plugax.numpy.linalg.multi_dot needs at least two arrays")
    out = arrays[0]
    for a in arrays[1:]:
        out = jnp.matmul(out, a)
    return out


def tensorinv(a: Any, ind: int = 2) -> Any:
    a = inexact(a)
    front, back = a.shape[:ind], a.shape[ind:]
    n = math.prod(front)
    if n != math.prod(back):
        raise ValueError(f"plugax.numpy.linalg.tensorinv: prod(a.shape[:ind]) must equal "
                         f"prod(a.shape[ind:]), got shape {a.shape} with ind={ind}")
    return inv(a.reshape(n, n)).reshape(back + front)


def tensorsolve(a: Any, b: Any, axes: Any = None) -> Any:
    jnp = _jnp()
    a, b = inexact(a), inexact(b)
    if axes is not None:
        axes = [d % a.ndim for d in axes]
        a = jnp.transpose(a, [d for d in range(a.ndim) if d not in axes] + axes)
    n = math.prod(b.shape)
    out_shape = a.shape[b.ndim:]
    return solve(a.reshape(n, -1), b.reshape(n)).reshape(out_shape)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1, precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    return _jnp().sum(x1 * x2, axis=axis)


def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """The cross product of 3-vectors along `axis` (the array API: size 3 only)."""
    jnp = _jnp()
    x1, x2 = jnp.moveaxis(jnp.asarray(x1), axis, -1), jnp.moveaxis(jnp.asarray(x2), axis, -1)
    if x1.shape[-1] != 3 or x2.shape[-1] != 3:
        raise ValueError(f"plugax.numpy.linalg.cross needs vectors of size 3 along axis "
                         f"{axis}, got shapes {x1.shape} and {x2.shape}")
    a0, a1, a2 = (x1[..., i] for i in range(3))
    b0, b1, b2 = (x2[..., i] for i in range(3))
    out = jnp.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return jnp.moveaxis(out, -1, axis)


def diagonal(x: Any, /, *, offset: int = 0) -> Any:
    """The diagonal `offset` of the last two dimensions, as a mask and a sum (no gather)."""
    jnp = _jnp()
    x = jnp.asarray(x)
    m, n = x.shape[-2:]
    mask = np.eye(m, n, offset, dtype=bool)
    picked = jnp.where(mask, x, jnp.zeros((), x.dtype))
    if offset >= 0:
        length = max(0, min(m, n - offset))
        return jnp.sum(picked, axis=-1)[..., :length]
    length = max(0, min(n, m + offset))
    return jnp.sum(picked, axis=-2)[..., :length]


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    out = _jnp().sum(diagonal(x, offset=offset), axis=-1)
    return out if dtype is None else out.astype(dtype)


def outer(x1: Any, x2: Any, /) -> Any:
    jnp = _jnp()
    x1, x2 = jnp.asarray(x1), jnp.asarray(x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"plugax.numpy.linalg.outer takes 1-D arrays, got shapes {x1.shape} "
                         f"and {x2.shape}")
    return x1[:, None] * x2[None, :]


def _matmul(x1: Any, x2: Any, /, *, precision: Any = None,
            preferred_element_type: Any = None) -> Any:
    return _jnp().matmul(x1, x2)


def _tensordot(x1: Any, x2: Any, /, *, axes: Any = 2, precision: Any = None,
               preferred_element_type: Any = None) -> Any:
    return _jnp().tensordot(x1, x2, axes)


NUMPY_LINALG_EXTRA = {
    "svdvals": svdvals, "matrix_transpose": matrix_transpose, "vector_norm": vector_norm,
    "matrix_norm": matrix_norm, "cond": cond, "multi_dot": multi_dot, "tensorinv": tensorinv,
    "tensorsolve": tensorsolve, "vecdot": vecdot, "cross": cross, "diagonal": diagonal,
    "trace": trace, "outer": outer, "matmul": _matmul, "tensordot": _tensordot}


# --- scipy.linalg -------------------------------------------------------------------------
def _scipy_svd(a: Any, full_matrices: bool = True, compute_uv: bool = True,
               overwrite_a: bool = False, check_finite: bool = True,
               lapack_driver: str = "gesdd") -> Any:
    if not compute_uv:
        return svdvals(a)
    return SVDResult(*_svd(a, full_matrices=full_matrices))


def _scipy_qr(a: Any, overwrite_a: bool = False, lwork: Any = None, mode: str = "full",
              pivoting: bool = False, check_finite: bool = True) -> Any:
    if pivoting:
        raise NotImplementedError("plugax.scipy.linalg.qr: pivoting=True is not supported")
    if mode not in ("full", "economic", "r"):
        raise ValueError(f"plugax.scipy.linalg.qr: mode must be 'full', 'economic' or 'r', "
                         f"got {mode!r}")
    q, r = _np_qr(a, "reduced" if mode == "economic" else "complete")
    return (r,) if mode == "r" else (q, r)


def _scipy_det(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    return det(a)


def _scipy_inv(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    return inv(a)


def polar(a: Any, side: str = "right", *, method: str = "svd", eps: Any = None,
          max_iterations: Any = None) -> tuple[Any, Any]:
    """(u, p) with a = u p (side 'right') or p u ('left'), u unitary, p positive
    semi-definite, from the SVD."""
    if side not in ("right", "left"):
        raise ValueError(f"plugax.scipy.linalg.polar: side must be 'right' or 'left', got "
                         f"{side!r}")
    u, s, vh = _svd(a, full_matrices=False)
    unitary = mm(u, vh)
    if side == "right":
        return unitary, mm(mT(vh) * s[..., None, :], vh)
    return unitary, mm(u * s[..., None, :], mT(u))


def expm_frechet(A: Any, E: Any, *, method: Any = None, compute_expm: bool = True) -> Any:
    """(expm(A), L(A, E)) with L the Fréchet derivative of expm at A in direction E: the
    blocks of expm([[A, E], [0, A]]) (Higham's block form; the same values as JAX)."""
    from .scipy_api import expm
    jnp = _jnp()
    A, E = inexact(A), inexact(E)
    n = A.shape[-1]
    zeros = jnp.zeros(A.shape, A.dtype)
    big = jnp.concatenate([jnp.concatenate([A, E], axis=-1),
                           jnp.concatenate([zeros, A], axis=-1)], axis=-2)
    out = expm(big)
    frechet = out[..., :n, n:]
    return (out[..., :n, :n], frechet) if compute_expm else frechet


def solve_sylvester(a: Any, b: Any, c: Any, *, method: str = "schur", tol: float = 1e-8) -> Any:
    """x with a x + x b = c, as one dense solve of the Kronecker form (I (x) a + b^T (x) I)
    vec(x) = vec(c): O((mn)^3), for the small systems it is used on (JAX: Bartels-Stewart)."""
    jnp = _jnp()
    a, b, c = inexact(a), inexact(b), inexact(c)
    m, n = c.shape
    big = jnp.reshape(np.eye(n, dtype=a.dtype)[:, None, :, None] * a[None, :, None, :]
                      + mT(b)[:, None, :, None] * np.eye(m, dtype=a.dtype)[None, :, None, :],
                      (m * n, m * n))
    return mT(solve(big, mT(c).reshape(m * n)).reshape(n, m))


def toeplitz(c: Any, r: Any = None) -> Any:
    """T[i, j] = c[i - j] for i >= j, r[j - i] otherwise (r defaults to c)."""
    jnp = _jnp()
    c = jnp.asarray(c)
    r = c if r is None else jnp.asarray(r)
    m, n = c.shape[-1], r.shape[-1]
    vals = jnp.concatenate([c, r[..., 1:]], axis=-1)
    diff = np.arange(m)[:, None] - np.arange(n)[None, :]
    return _pick(vals, np.where(diff >= 0, diff, m - 1 - diff))


def _pick(vals: Any, idx: np.ndarray) -> Any:
    """vals[..., idx] for a constant index array, as a one-hot matmul (no gather)."""
    jnp = _jnp()
    onehot = (idx[..., None] == np.arange(vals.shape[-1])).astype(
        np.result_type(get_aval(vals).dtype, np.float32) if not
        np.issubdtype(get_aval(vals).dtype, np.inexact) else get_aval(vals).dtype)
    out = jnp.sum(onehot * vals[..., None, None, :], axis=-1)
    return out.astype(get_aval(vals).dtype)


def hankel(c: Any, r: Any = None) -> Any:
    """H[i, j] = c[i + j] for i + j < len(c), else r[i + j - len(c) + 1]."""
    jnp = _jnp()
    c = jnp.asarray(c)
    r = jnp.zeros_like(c) if r is None else jnp.asarray(r)
    m, n = c.shape[-1], r.shape[-1]
    vals = jnp.concatenate([c, r[..., 1:]], axis=-1)
    return _pick(vals, np.arange(m)[:, None] + np.arange(n)[None, :])


def circulant(c: Any) -> Any:
    c = _jnp().asarray(c)
    n = c.shape[-1]
    return _pick(c, (np.arange(n)[:, None] - np.arange(n)[None, :]) % n)


def hilbert(n: int) -> Any:
    i = np.arange(n)
    return _jnp().asarray(1.0 / (i[:, None] + i[None, :] + 1))


def companion(a: Any) -> Any:
    jnp = _jnp()
    a = inexact(a)
    n = a.shape[-1]
    if n < 2:
        raise ValueError("plugax.scipy.linalg.companion needs at least two coefficients")
    first = -a[..., 1:] / a[..., :1]
    below = np.eye(n - 2, n - 1, dtype=a.dtype)
    return jnp.concatenate([first[..., None, :], jnp.broadcast_to(
        below, first.shape[:-1] + below.shape)], axis=-2)


def fiedler(a: Any) -> Any:
    a = _jnp().asarray(a)
    return _jnp().abs(a[..., :, None] - a[..., None, :])


def leslie(f: Any, s: Any) -> Any:
    jnp = _jnp()
    f, s = jnp.asarray(f), jnp.asarray(s)
    n = f.shape[-1]
    dtype = np.result_type(f.dtype, s.dtype)
    below = jnp.where(np.eye(n - 1, n, dtype=bool), s.astype(dtype)[..., :, None],
                      jnp.zeros((), dtype))
    return jnp.concatenate([f.astype(dtype)[..., None, :], below], axis=-2)


SCIPY_LINALG_EXTRA = {
    "svd": _scipy_svd, "qr": _scipy_qr, "det": _scipy_det, "inv": _scipy_inv, "polar": polar,
    "expm_frechet": expm_frechet, "solve_sylvester": solve_sylvester, "toeplitz": toeplitz,
    "hankel": hankel, "circulant": circulant, "hilbert": hilbert, "companion": companion,
    "fiedler": fiedler, "leslie": leslie}
