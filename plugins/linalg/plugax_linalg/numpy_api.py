"""`plugax.numpy.linalg`: NumPy's linear algebra on the factorisation primitives.

Everything is a composition of the six primitives with matmuls, masks and
reductions, so every function is differentiable (to any order) and batched
like NumPy: leading dimensions are a batch, broadcast between operands.
`solve`, `inv`, `det` and `slogdet` go through `lu`; the permutation is applied
as a row gather. Results use NumPy's
namedtuples' field names (`EighResult`, `SVDResult`, `QRResult`,
`SlogdetResult`), as jax.numpy.linalg does.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from plugax.extend import get_aval

from .ad import diag_part, inverse_permutation, mT, mm, take_rows
from .lax_api import cholesky as _cholesky, eigh as _eigh, inexact, lu, qr as _qr, \
    svd as _svd, triangular_solve

__all__ = ["NUMPY_LINALG", "solve", "inv", "det", "slogdet", "lu_solve_factored"]


class EighResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


class SVDResult(NamedTuple):
    U: Any
    S: Any
    Vh: Any


class QRResult(NamedTuple):
    Q: Any
    R: Any


class SlogdetResult(NamedTuple):
    sign: Any
    logabsdet: Any


def _jnp():
    import plugax.numpy as jnp
    return jnp


def _square(name: str, a: Any) -> None:
    shape = get_aval(a).shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(f"plugax.numpy.linalg.{name} takes square matrices (a batch of them: "
                         f"shape [..., n, n]), got an array of shape {shape}")


def _eps(x: Any) -> float:
    return float(np.finfo(get_aval(x).dtype).eps)


def lu_solve_factored(lu_: Any, perm: Any, b: Any, trans: int = 0) -> Any:
    """Solve a x = b (trans=0) or a^T x = b (trans=1) for matrices b, given
    a[..., perm, :] = L U (the batch dims of lu_/perm and b already equal)."""
    if trans == 0:
        y = triangular_solve(lu_, take_rows(b, perm), left_side=True, lower=True,
                             unit_diagonal=True)
        return triangular_solve(lu_, y, left_side=True, lower=False)
    y = triangular_solve(lu_, b, left_side=True, lower=False, transpose_a=True)
    y = triangular_solve(lu_, y, left_side=True, lower=True, transpose_a=True,
                         unit_diagonal=True)
    return take_rows(y, inverse_permutation(perm))


def solve(a: Any, b: Any) -> Any:
    """x with a @ x = b. As in NumPy 2 (and JAX), a 1-D b is a vector; otherwise b is a
    (batch of) matrices whose batch dims broadcast against a's."""
    jnp = _jnp()
    a, b = inexact(a), inexact(b)
    _square("solve", a)
    dtype = np.promote_types(a.dtype, b.dtype)
    a, b = a.astype(dtype), b.astype(dtype)
    vector = b.ndim == 1
    if vector:
        b = b[:, None]
    if b.shape[-2] != a.shape[-1]:
        raise ValueError(f"plugax.numpy.linalg.solve: a of shape {a.shape} and b of shape "
                         f"{b.shape[:-1] if vector else b.shape} do not match (b needs "
                         f"{a.shape[-1]} rows)")
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = jnp.broadcast_to(a, batch + a.shape[-2:])
    b = jnp.broadcast_to(b, batch + b.shape[-2:])
    lu_, _, perm = lu(a)
    x = lu_solve_factored(lu_, perm, b)
    return x[..., 0] if vector else x


def inv(a: Any) -> Any:
    a = inexact(a)
    _square("inv", a)
    n = a.shape[-1]
    return solve(a, _jnp().broadcast_to(np.eye(n, dtype=a.dtype), a.shape))


def _lu_parity(pivots: Any, diag: Any) -> Any:
    """(-1)^(row swaps + negative pivots) as +-1 of diag's dtype."""
    jnp = _jnp()
    k = pivots.shape[-1]
    swaps = jnp.sum(pivots != np.arange(k, dtype=np.int32), axis=-1)
    negative = jnp.sum(diag < 0, axis=-1)
    odd = (swaps + negative) % 2
    return (1 - 2 * odd).astype(diag.dtype)


def slogdet(a: Any, *, method: Any = None) -> SlogdetResult:
    """(sign, log|det|) from the LU factors; sign 0 and log|det| -inf when singular."""
    jnp = _jnp()
    a = inexact(a)
    _square("slogdet", a)
    lu_, pivots, _ = lu(a)
    diag = diag_part(lu_)
    singular = jnp.any(diag == 0, axis=-1)
    sign = jnp.where(singular, jnp.zeros((), diag.dtype), _lu_parity(pivots, diag))
    logabs = jnp.sum(jnp.log(jnp.abs(diag)), axis=-1)
    return SlogdetResult(sign, jnp.where(singular, -jnp.inf, logabs))


def _det_from_lu(a: Any) -> Any:
    """The product of U's diagonal times the permutation's sign (a product, not
    exp(logdet), so that a singular matrix has det exactly 0)."""
    jnp = _jnp()
    lu_, pivots, _ = lu(a)
    diag = diag_part(lu_)
    k = pivots.shape[-1]
    swaps = jnp.sum(pivots != np.arange(k, dtype=np.int32), axis=-1)
    sign = (1 - 2 * (swaps % 2)).astype(diag.dtype)
    return sign * jnp.prod(diag, axis=-1)


def cofactor_solve(a: Any, b: Any) -> tuple[Any, Any]:
    """(det(a), adj(a) @ b), well defined for singular a (adj(a) = det(a) inv(a) when a
    is invertible): det's derivative, tr(adj(a) da), at every matrix.

    With a[perm] = L U, adj(a) b = det(a) U^-1 L^-1 P b. U's last diagonal entry is the
    only one that can vanish at rank n-1; replacing it by 1 / (det(a) / u_nn), and
    scaling all but the last row of L^-1 P b by det(a), gives the same product without
    dividing by zero. At rank < n-1 the adjugate is zero, detected as a non-finite
    solve with the modified U (the approach of JAX's _cofactor_solve)."""
    jnp = _jnp()
    n = a.shape[-1]
    if n == 1:
        return a[..., 0, 0], b
    lu_, pivots, perm = lu(a)
    batch = np.broadcast_shapes(lu_.shape[:-2], b.shape[:-2])
    x = jnp.broadcast_to(b, batch + b.shape[-2:])
    lu_ = jnp.broadcast_to(lu_, batch + lu_.shape[-2:])
    perm = jnp.broadcast_to(perm, batch + (n,))
    pivots = jnp.broadcast_to(pivots, batch + (n,))
    swaps = jnp.sum(pivots != np.arange(n, dtype=np.int32), axis=-1)
    sign = (1 - 2 * (swaps % 2)).astype(lu_.dtype)
    partial = jnp.cumprod(diag_part(lu_), axis=-1) * sign[..., None]
    corner = np.zeros((n, n), bool)
    corner[-1, -1] = True
    head = partial[..., -2]
    nonzero = head != 0     # 1 / 0 = inf, as in JAX, without NumPy's warning
    inv_head = jnp.where(nonzero, 1 / jnp.where(nonzero, head, jnp.ones((), head.dtype)),
                         jnp.full((), np.inf, head.dtype))
    lu_ = jnp.where(corner, inv_head[..., None, None], lu_)
    probe = triangular_solve(lu_, jnp.ones(batch + (n,), lu_.dtype), left_side=True,
                             lower=False)
    bad = jnp.any(jnp.isnan(probe) | jnp.isinf(probe), axis=-1)[..., None, None]
    zero = jnp.zeros((), x.dtype)
    x = jnp.where(bad, zero, x)
    x = triangular_solve(lu_, take_rows(x, perm), left_side=True, lower=True,
                         unit_diagonal=True)
    x = jnp.concatenate([x[..., :-1, :] * partial[..., -1, None, None], x[..., -1:, :]],
                        axis=-2)
    x = triangular_solve(lu_, x, left_side=True, lower=False)
    return partial[..., -1], jnp.where(bad, zero, x)


_det = None


def _det_fn():
    """det as a custom_jvp function (built on first use: plugax.custom_jvp is a kernel
    name installed before plugins' front ends run)."""
    global _det
    if _det is None:
        import plugax

        @plugax.custom_jvp
        def det_(a):
            return _det_from_lu(a)

        @det_.defjvp
        def det_jvp(primals, tangents):
            (x,), (g,) = primals, tangents
            y, z = cofactor_solve(x, g)
            return y, _jnp().sum(diag_part(z), axis=-1)
        _det = det_
    return _det


def det(a: Any) -> Any:
    """The determinant, with JAX's derivative tr(adj(a) da): finite (the cofactor
    matrix) at singular matrices too, where differentiating through LU divides by 0."""
    a = inexact(a)
    _square("det", a)
    return _det_fn()(a)


def cholesky(a: Any, *, upper: bool = False, symmetrize_input: bool = True) -> Any:
    _square("cholesky", inexact(a))
    factor = _cholesky(a, symmetrize_input=symmetrize_input)
    return mT(factor) if upper else factor


def eigh(a: Any, UPLO: str | None = None, symmetrize_input: bool = True) -> EighResult:
    a = inexact(a)
    _square("eigh", a)
    if UPLO not in (None, "L", "U"):
        raise ValueError(f"plugax.numpy.linalg.eigh: UPLO must be 'L' or 'U', got {UPLO!r}")
    v, w = _eigh(a, lower=UPLO != "U", symmetrize_input=symmetrize_input)
    return EighResult(w, v)


def eigvalsh(a: Any, UPLO: str | None = "L", *, symmetrize_input: bool = True) -> Any:
    return eigh(a, UPLO, symmetrize_input).eigenvalues


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True,
        hermitian: bool = False) -> Any:
    a = inexact(a)
    if a.ndim < 2:
        raise ValueError(f"plugax.numpy.linalg.svd takes a matrix (or a batch), got an array "
                         f"of shape {a.shape}")
    if not compute_uv:
        return _svd(a, full_matrices=full_matrices, compute_uv=False)
    return SVDResult(*_svd(a, full_matrices=full_matrices))


def qr(a: Any, mode: str = "reduced") -> Any:
    if mode not in ("reduced", "complete", "r", "raw"):
        raise ValueError(f"plugax.numpy.linalg.qr: mode must be 'reduced', 'complete' or 'r', "
                         f"got {mode!r}")
    if mode == "raw":
        raise NotImplementedError("plugax.numpy.linalg.qr: mode='raw' is not supported")
    q, r = _qr(a, full_matrices=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


def lstsq(a: Any, b: Any, rcond: float | None = None, *,
          numpy_resid: bool = False) -> tuple[Any, Any, Any, Any]:
    """(x, residuals, rank, s) minimising |a x - b|, through the SVD (as JAX: singular
    values below rcond * s_max count as zero; residuals are |b - a x|^2 per column)."""
    jnp = _jnp()
    a, b = inexact(a), inexact(b)
    if a.ndim != 2 or b.ndim not in (1, 2) or b.shape[0] != a.shape[0]:
        raise ValueError(f"plugax.numpy.linalg.lstsq takes a of shape (m, n) and b of shape "
                         f"(m,) or (m, k); got {a.shape} and {b.shape}")
    vector = b.ndim == 1
    b2 = b[:, None] if vector else b
    m, n = a.shape
    u, s, vt = _svd(a, full_matrices=False)
    if rcond is None:
        rcond = _eps(a) * max(m, n)
    mask = s >= jnp.array(rcond, s.dtype) * s[0] if s.shape[0] else s > 0
    safe = jnp.where(mask, s, jnp.ones((), s.dtype))
    s_inv = jnp.where(mask, 1 / safe, jnp.zeros((), s.dtype))[:, None]
    x = mm(mT(vt), s_inv * mm(mT(u), b2))
    rank = jnp.sum(mask).astype(np.int32)
    if numpy_resid and (int(rank) < n or m <= n):   # NumPy's convention needs rank's value
        resid = jnp.zeros((0,), b.dtype)
    else:
        resid = jnp.sum((b2 - mm(a, x)) ** 2, axis=0)
    if vector:
        x = x[:, 0]
    return x, resid, rank, s


def pinv(a: Any, rtol: Any = None, hermitian: bool = False) -> Any:
    """The Moore-Penrose pseudo-inverse through the SVD; singular values at or below
    rtol * s_max (default 10 * max(m, n) * eps) are treated as zero."""
    jnp = _jnp()
    a = inexact(a)
    m, n = a.shape[-2:]
    u, s, vt = _svd(a, full_matrices=False)
    if rtol is None:
        rtol = 10 * max(m, n) * _eps(a)
    cutoff = jnp.asarray(rtol, s.dtype)[..., None] * jnp.max(s, axis=-1, keepdims=True)
    big = s > cutoff
    s_inv = jnp.where(big, 1 / jnp.where(big, s, jnp.ones((), s.dtype)),
                      jnp.zeros((), s.dtype))
    return mm(mT(vt) * s_inv[..., None, :], mT(u))


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    """Vector norms (ord None/2, 1, inf, -inf, 0, any p) and matrix norms (None/'fro',
    'nuc', 1, -1, 2, -2, inf, -inf), chosen as NumPy chooses them."""
    jnp = _jnp()
    x = inexact(x)
    if axis is None:
        if ord is None:
            out = jnp.sqrt(jnp.sum(_abs_sq(jnp, x)))
            return out.reshape((1,) * x.ndim) if keepdims else out
        axis = tuple(range(x.ndim))
    axis = (axis,) if isinstance(axis, int) else tuple(axis)
    axis = tuple(a % x.ndim for a in axis)
    if len(axis) == 1:
        return _vector_norm(jnp, x, ord, axis[0], keepdims)
    if len(axis) != 2:
        raise ValueError(f"plugax.numpy.linalg.norm: axis must name 1 or 2 dimensions, got "
                         f"{axis}")
    return _matrix_norm(jnp, x, ord, axis, keepdims)


def _abs_sq(jnp, x):
    """|x|^2 elementwise, real: x * conj(x) for complex x (x * x would be complex)."""
    return jnp.real(x * jnp.conj(x)) if x.dtype.kind == "c" else x * x


def _vector_norm(jnp, x, ord, axis, keepdims):
    a = jnp.abs(x)
    if ord is None or ord == 2:
        return jnp.sqrt(jnp.sum(_abs_sq(jnp, x), axis=axis, keepdims=keepdims))
    if ord == np.inf:
        return jnp.max(a, axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return jnp.min(a, axis=axis, keepdims=keepdims)
    if ord == 0:
        return jnp.sum((x != 0).astype(x.dtype), axis=axis, keepdims=keepdims)
    if ord == 1:
        return jnp.sum(a, axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"plugax.numpy.linalg.norm: invalid norm order {ord!r} for vectors")
    return jnp.sum(a ** ord, axis=axis, keepdims=keepdims) ** (1.0 / ord)


def _matrix_norm(jnp, x, ord, axis, keepdims):
    row, col = axis
    if ord in (None, "fro", "f"):
        out = jnp.sqrt(jnp.sum(_abs_sq(jnp, x), axis=axis))
    elif ord in (1, -1):
        sums = jnp.sum(jnp.abs(x), axis=row)
        out = (jnp.max if ord == 1 else jnp.min)(sums, axis=col - (col > row))
    elif ord in (np.inf, -np.inf):
        sums = jnp.sum(jnp.abs(x), axis=col)
        out = (jnp.max if ord == np.inf else jnp.min)(sums, axis=row - (row > col))
    elif ord in (2, -2, "nuc"):
        moved = jnp.moveaxis(x, axis, (-2, -1))
        s = _svd(moved, compute_uv=False)
        out = jnp.sum(s, axis=-1) if ord == "nuc" else \
            (jnp.max if ord == 2 else jnp.min)(s, axis=-1)
    else:
        raise ValueError(f"plugax.numpy.linalg.norm: invalid norm order {ord!r} for matrices")
    if keepdims:
        out = jnp.expand_dims(out, tuple(sorted(axis)))
    return out


def matrix_power(a: Any, n: int) -> Any:
    """a @ a @ ... (n factors) by repeated squaring; n < 0 inverts first."""
    a = inexact(a)
    _square("matrix_power", a)
    if int(n) != n:
        raise TypeError(f"plugax.numpy.linalg.matrix_power: exponent must be an integer, "
                        f"got {n!r}")
    n = int(n)
    if n == 0:
        return _jnp().broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape)
    if n < 0:
        a, n = inv(a), -n
    result = None
    while n:
        if n & 1:
            result = a if result is None else mm(result, a)
        n >>= 1
        if n:
            a = mm(a, a)
    return result


def matrix_rank(M: Any, rtol: Any = None, *, tol: Any = None) -> Any:
    """The number of singular values above rtol * s_max (default max(m, n) * eps)."""
    jnp = _jnp()
    M = inexact(M)
    if M.ndim < 2:
        return jnp.any(M != 0).astype(np.int32)
    s = _svd(M, compute_uv=False)
    if tol is not None:
        threshold = jnp.asarray(tol, s.dtype)[..., None]
    else:
        if rtol is None:
            rtol = max(M.shape[-2:]) * _eps(M)
        threshold = jnp.asarray(rtol, s.dtype)[..., None] * jnp.max(s, axis=-1, keepdims=True)
    return jnp.sum(s > threshold, axis=-1).astype(np.int32)


NUMPY_LINALG = {"solve": solve, "inv": inv, "det": det, "slogdet": slogdet,
                "cholesky": cholesky, "eigh": eigh, "eigvalsh": eigvalsh, "svd": svd, "qr": qr,
                "lstsq": lstsq, "pinv": pinv, "norm": norm, "matrix_power": matrix_power,
                "matrix_rank": matrix_rank}
