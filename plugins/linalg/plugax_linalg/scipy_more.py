"""More of jax.scipy.linalg without new primitives: SciPy's special matrices
(`hadamard`, `helmert`, `pascal`, `invpascal`, `invhilbert`, `dft`), the matrices
built from coefficients (`fiedler_companion`, `convolution_matrix`), `qr_multiply`
and `eigh_tridiagonal`.

The special matrices depend only on static sizes, so they are NumPy constants
computed exactly (pascal and invhilbert with Python integers: SciPy's exact values
in the requested dtype, where JAX computes them through gammaln and is off in the
last digits). The others are compositions of the front ends and trace, jit and
differentiate like them. `eigh_tridiagonal` forms the dense tridiagonal matrix and
uses `eigh` (O(n^3) where JAX bisects with Sturm sequences; the same eigenvalues,
and orthonormal eigenvectors where JAX runs inverse iteration).
"""
from __future__ import annotations

import math
import operator
from typing import Any, Callable

import numpy as np

from plugax.extend import get_aval, promote_dtypes

from .ad import mm, triu
from .lax_api import eigh as _eigh, inexact, qr as _qr

__all__ = ["SCIPY_LINALG_MORE"]


def _jnp():
    import plugax.numpy as jnp
    return jnp


def _size(n: Any, name: str) -> int:
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"plugax.scipy.linalg.{name}: n must be a non-negative integer, got "
                         f"{n}")
    return n


def _float(values: np.ndarray) -> Any:
    """A constant in the default float dtype (float32, float64 under x64), as JAX."""
    jnp = _jnp()
    return jnp.asarray(values, dtype=jnp.zeros(()).dtype)


def hadamard(n: int, dtype: Any = int) -> Any:
    """The Sylvester Hadamard matrix of order n (a power of 2)."""
    n = operator.index(n)
    if n < 1 or n & (n - 1):
        raise ValueError(f"plugax.scipy.linalg.hadamard: n must be a positive integer and a "
                         f"power of 2, got {n}")
    h = np.ones((1, 1), np.int64)
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return _jnp().asarray(h, dtype=dtype)


def helmert(n: int, full: bool = False) -> Any:
    """The (n-1) x n Helmert matrix (n x n with `full`): orthonormal rows, the first
    row of the full matrix constant."""
    n = _size(n, "helmert")
    h = np.tril(np.ones((n, n)), -1) - np.diag(np.arange(n))
    d = np.arange(n) * np.arange(1, n + 1)
    h[0] = 1
    d[0] = n
    h = h / np.sqrt(d)[:, None]
    return _float(h if full else h[1:])


def _binomials(n: int) -> list[list[int]]:
    return [[math.comb(i, j) for j in range(n)] for i in range(n)]


def pascal(n: int, kind: str | None = None) -> Any:
    """The n x n Pascal matrix: 'symmetric' (default) C(i+j, i), 'lower' C(i, j),
    'upper' its transpose."""
    n = _size(n, "pascal")
    kind = "symmetric" if kind is None else kind
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"plugax.scipy.linalg.pascal: kind must be 'symmetric', 'lower' or "
                         f"'upper', got {kind!r}")
    if kind == "symmetric":
        p = [[math.comb(i + j, i) for j in range(n)] for i in range(n)]
    else:
        p = _binomials(n)
    p = np.array(p, dtype=np.float64).reshape(n, n)
    return _float(p.T if kind == "upper" else p)


def invpascal(n: int, kind: str | None = None) -> Any:
    """The inverse of pascal(n, kind), exactly (integers)."""
    n = _size(n, "invpascal")
    kind = "symmetric" if kind is None else kind
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"plugax.scipy.linalg.invpascal: kind must be 'symmetric', 'lower' "
                         f"or 'upper', got {kind!r}")
    low = [[(-1) ** (i - j) * math.comb(i, j) for j in range(n)] for i in range(n)]
    if kind == "symmetric":      # inv(L L^T) = inv(L)^T inv(L)
        inv = [[sum(low[k][i] * low[k][j] for k in range(n)) for j in range(n)]
               for i in range(n)]
    else:
        inv = low
    p = np.array(inv, dtype=np.float64).reshape(n, n)
    return _float(p.T if kind == "upper" else p)


def invhilbert(n: int) -> Any:
    """The inverse of the n x n Hilbert matrix, from its closed form (exact integers)."""
    n = _size(n, "invhilbert")
    out = np.empty((n, n), dtype=np.float64)
    for i in range(n):
        for j in range(n):
            s = i + j
            out[i, j] = ((-1) ** s * (s + 1) * math.comb(n + i, n - j - 1)
                         * math.comb(n + j, n - i - 1) * math.comb(s, i) ** 2)
    return _float(out)


def dft(n: int, scale: str | None = None, *, dtype: Any = None) -> Any:
    """The n x n discrete Fourier transform matrix exp(-2 pi i j k / n), scaled by
    1/sqrt(n) ('sqrtn') or 1/n ('n'); complex64 (complex128 under x64) by default."""
    n = _size(n, "dft")
    if scale not in (None, "sqrtn", "n"):
        raise ValueError(f"plugax.scipy.linalg.dft: scale must be None, 'sqrtn' or 'n', got "
                         f"{scale!r}")
    jk = np.outer(np.arange(n), np.arange(n)) % max(n, 1)   # exact phases for large n
    m = np.exp(-2j * np.pi * jk / max(n, 1))
    if scale == "sqrtn":
        m = m / math.sqrt(n)
    elif scale == "n":
        m = m / n
    jnp = _jnp()
    if dtype is None:
        dtype = (jnp.zeros(()) * 1j).dtype
    return jnp.asarray(m, dtype=dtype)


def fiedler_companion(a: Any) -> Any:
    """Fiedler's pentadiagonal companion matrix of the polynomial a (highest power
    first): its eigenvalues are the roots of a."""
    jnp = _jnp()
    (a,) = promote_dtypes("fiedler_companion", a, category="inexact")
    a = jnp.atleast_1d(a)
    if get_aval(a).ndim != 1 or get_aval(a).shape[0] == 0:
        raise ValueError(f"plugax.scipy.linalg.fiedler_companion takes a non-empty 1-d array "
                         f"of coefficients, got shape {get_aval(a).shape}")
    n = get_aval(a).shape[0] - 1
    dtype = get_aval(a).dtype
    if n == 0:
        return jnp.zeros((0, 0), dtype)
    a = a / a[0]
    if n == 1:
        return -a[1:].reshape(1, 1)
    # c[0,0] = -a1, c[1,0] = 1; for even i: c[i,i+1] = -a[i+2], c[i,i+2] = 1,
    # c[i,i-1] = -a[i+1] (i >= 2); for odd i >= 3: c[i,i-2] = 1 (static positions)
    c = jnp.zeros((n, n), dtype)
    c = c.at[0, 0].set(-a[1]).at[1, 0].set(1)
    for i in range(0, n, 2):
        if i + 1 < n:
            c = c.at[i, i + 1].set(-a[i + 2])
        if i + 2 < n:
            c = c.at[i, i + 2].set(1)
        if i >= 2:
            c = c.at[i, i - 1].set(-a[i + 1])
    for i in range(3, n, 2):
        c = c.at[i, i - 2].set(1)
    return c


def convolution_matrix(a: Any, n: int, mode: str = "full") -> Any:
    """The Toeplitz matrix A with A @ v == convolve(a, v, mode) for v of length n."""
    from .extra_api import toeplitz
    jnp = _jnp()
    n = operator.index(n)
    if n <= 0:
        raise ValueError(f"n must be a positive integer; got {n}.")
    a = jnp.asarray(a)
    if get_aval(a).ndim != 1:
        raise ValueError(f"plugax.scipy.linalg.convolution_matrix takes a 1-d array a, got "
                         f"shape {get_aval(a).shape}")
    m = get_aval(a).shape[0]
    if m < 1:
        raise ValueError(f"len(a) must be at least 1; got shape {get_aval(a).shape}.")
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"mode must be one of 'full', 'valid', 'same'; got {mode!r}.")
    zeros = jnp.zeros((n - 1,), get_aval(a).dtype)
    az = jnp.concatenate([a, zeros])
    raz = jnp.concatenate([a[::-1], zeros])
    length = m + n - 1
    if mode == "same":
        trim = min(n, m) - 1
        tb, te = trim // 2, trim - trim // 2
    elif mode == "valid":
        tb = te = min(n, m) - 1
    else:
        tb = te = 0
    return toeplitz(az[tb:length - te], raz[length - n - tb:length - tb])


def qr_multiply(a: Any, c: Any, mode: str = "right", pivoting: bool = False,
                conjugate: bool = False, overwrite_a: bool = False,
                overwrite_c: bool = False) -> tuple:
    """(Q @ c, R) for mode 'left' or (c @ Q, R) for 'right', with the economic
    factors of a = Q R (Q conjugated with `conjugate`), as SciPy's qr_multiply."""
    jnp = _jnp()
    if pivoting:
        raise NotImplementedError("plugax.scipy.linalg.qr_multiply: pivoting=True is not "
                                  "supported")
    if mode not in ("left", "right"):
        raise ValueError(f"qr_multiply: mode must be 'left' or 'right', got {mode!r}")
    a, c = inexact(a), inexact(c)
    q, r = _qr(a, full_matrices=False)
    if conjugate:
        q = jnp.conj(q)
    *_, m, n = get_aval(a).shape
    k = min(m, n)
    onedim = get_aval(c).ndim == 1
    want = k if mode == "left" else m
    got = get_aval(c).shape[0 if onedim else (-2 if mode == "left" else -1)]
    if got != want:
        raise ValueError(f"qr_multiply: for mode={mode!r} and a of shape "
                         f"{get_aval(a).shape}, c must have {want} "
                         f"{'rows' if mode == 'left' else 'columns'}, got shape "
                         f"{get_aval(c).shape}")
    if onedim:
        c = c[:, None] if mode == "left" else c[None, :]
    out = mm(q, c) if mode == "left" else mm(c, q)
    if onedim:
        out = out.ravel()
    return out, triu(r)


def eigh_tridiagonal(d: Any, e: Any, *, eigvals_only: bool = False, select: str = "a",
                     select_range: tuple[float, float] | None = None, tol: float | None = None,
                     key: Any = None) -> Any:
    """Eigenvalues (ascending) and, unless eigvals_only, orthonormal eigenvectors of the
    real symmetric tridiagonal matrix with diagonal d and off-diagonal e; select 'i'
    keeps the eigenvalues select_range[0] <= i <= select_range[1]."""
    jnp = _jnp()
    d, e = jnp.asarray(d), jnp.asarray(e)
    if get_aval(d).dtype != get_aval(e).dtype:
        raise TypeError("diagonal and off-diagonal values must have same dtype, got "
                        f"{get_aval(d).dtype} and {get_aval(e).dtype}")
    if np.dtype(get_aval(d).dtype) not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise TypeError(f"Only float32 and float64 inputs are supported as inputs to "
                        f"plugax.scipy.linalg.eigh_tridiagonal, got {get_aval(d).dtype}")
    n = get_aval(d).shape[-1]
    if get_aval(d).ndim != 1 or get_aval(e).shape != (max(n - 1, 0),):
        raise ValueError(f"eigh_tridiagonal takes d of shape (n,) and e of shape (n-1,), got "
                         f"{get_aval(d).shape} and {get_aval(e).shape}")
    if select == "a":
        lo, hi = 0, n - 1
    elif select == "i":
        if select_range is None:
            raise ValueError("for select='i', select_range must be specified.")
        lo, hi = (operator.index(i) for i in select_range)
        if lo > hi:
            raise ValueError("Got empty index range in select_range.")
    elif select == "v":
        raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented")
    else:
        raise ValueError("'select must have a value in {'a', 'i', 'v'}.")
    if n <= 1:
        w, v = d, jnp.eye(n, dtype=get_aval(d).dtype)
    else:
        t = jnp.diag(d) + jnp.diag(e, 1) + jnp.diag(e, -1)
        v, w = _eigh(t)
    w, v = w[lo:hi + 1], v[:, lo:hi + 1]
    return w if eigvals_only else (w, v)


SCIPY_LINALG_MORE: dict[str, Callable] = {
    "hadamard": hadamard, "helmert": helmert, "pascal": pascal, "invpascal": invpascal,
    "invhilbert": invhilbert, "dft": dft, "fiedler_companion": fiedler_companion,
    "convolution_matrix": convolution_matrix, "qr_multiply": qr_multiply,
    "eigh_tridiagonal": eigh_tridiagonal}
