"""Schur decomposition: primitive `schur` (jax.lax.linalg.schur) and
`plugax.scipy.linalg.schur` on it.

a = Z T Z^H with Z unitary and T upper triangular (complex input), or, for real
input, quasi upper triangular (the real Schur form: 1x1 blocks for real
eigenvalues, 2x2 blocks for complex-conjugate pairs). Under jit on CPU this is
LAPACK's gees (jaxlib's `lapack_?gees_ffi`), as JAX emits it. NumPy has no Schur
routine, so the eager impl is a QR algorithm written here: explicitly shifted QR
steps (Wilkinson shifts for complex matrices, Francis' double shift for real ones)
on the trailing active block, deflating from the bottom, with exceptional shifts
when a step stalls. A Schur form is not unique (the order of the eigenvalues on
the diagonal, the phases of Z's columns), so eager and jit may give different,
equally valid factors. No derivative rule, as in JAX.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from plugax.extend import Primitive, ShapedArray, ShapeError, bdim_at_front, bind

from .lowering import _apply, _call, _char, _info, _kernel, _nan_unless

__all__ = ["schur_p", "RULES", "LAX_LINALG", "SCIPY_LINALG", "schur_impl_one"]

schur_p = Primitive("schur", multiple_results=True)
_ACCEPTED = tuple(np.dtype(d) for d in ("float32", "float64", "complex64", "complex128"))
_MAX_STEPS = 60   # per eigenvalue, as LAPACK's bound (then NaN, like info > 0)


def _abstract_eval(ctx, a: ShapedArray, *, compute_schur_vectors: bool = True,
                   **_: Any) -> list[ShapedArray]:
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"primitive 'schur' takes square matrices (shape [..., n, n]), got "
                         f"{a.str_short()}")
    if np.dtype(a.dtype) not in _ACCEPTED:
        raise TypeError(f"primitive 'schur' takes float32, float64, complex64 or complex128 "
                        f"matrices, got {a.str_short()}")
    out = ShapedArray(a.shape, a.dtype)
    return [out, out] if compute_schur_vectors else [out]


def _rotate(t: np.ndarray, z: np.ndarray, q: np.ndarray, k: int) -> None:
    """T <- Q^H T Q and Z <- Z Q for Q acting on rows/columns k .. k + len(q) - 1."""
    s = slice(k, k + q.shape[0])
    t[s, :] = q.conj().T @ t[s, :]
    t[:, s] = t[:, s] @ q
    z[:, s] = z[:, s] @ q


def _standardise(t: np.ndarray, z: np.ndarray, k: int) -> None:
    """Split a real 2x2 diagonal block with real eigenvalues into two 1x1 blocks."""
    a, b, c, d = t[k, k], t[k, k + 1], t[k + 1, k], t[k + 1, k + 1]
    disc = (a - d) ** 2 + 4 * b * c
    if c == 0 or disc < 0:
        return
    lam = (a + d) / 2 + np.copysign(np.sqrt(disc) / 2, a - d)
    v = np.array([lam - d, c]) if abs(lam - d) + abs(c) > abs(b) + abs(lam - a) \
        else np.array([b, lam - a])
    v = v / np.linalg.norm(v)
    _rotate(t, z, np.array([[v[0], -v[1]], [v[1], v[0]]]), k)
    t[k + 1, k] = 0.0


def schur_impl_one(a: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(T, Z) of one matrix in float64/complex128 work, or None if it did not converge."""
    real = np.isrealobj(a)
    t = np.array(a, dtype=np.float64 if real else np.complex128, copy=True)
    n = t.shape[0]
    z = np.eye(n, dtype=t.dtype)
    tol = np.finfo(np.float64).eps * max(np.linalg.norm(t), np.finfo(np.float64).tiny)
    hi, steps = n - 1, 0
    while hi >= 1:
        if np.linalg.norm(t[hi, :hi]) <= tol:                   # a 1x1 block deflates
            t[hi, :hi] = 0
            hi, steps = hi - 1, 0
            continue
        if real and (hi == 1 or (np.linalg.norm(t[hi - 1, :hi - 1]) <= tol
                                 and np.linalg.norm(t[hi, :hi - 1]) <= tol)):
            t[hi - 1:hi + 1, :hi - 1] = 0                       # a 2x2 block deflates
            _standardise(t, z, hi - 1)
            hi, steps = hi - 2, 0
            continue
        steps += 1
        if steps > _MAX_STEPS:
            return None
        m = hi + 1
        block = t[:m, :m]
        if real:
            if steps % 11 == 10:            # exceptional shift: break a cycle
                s, p = 1.5 * abs(t[hi, hi - 1]) + t[hi, hi], t[hi, hi] ** 2
            else:
                w = t[hi - 1:m, hi - 1:m]
                s, p = w[0, 0] + w[1, 1], w[0, 0] * w[1, 1] - w[0, 1] * w[1, 0]
            q, _ = np.linalg.qr(block @ block - s * block + p * np.eye(m))
        else:
            w = t[hi - 1:m, hi - 1:m]
            tr, det = w[0, 0] + w[1, 1], w[0, 0] * w[1, 1] - w[0, 1] * w[1, 0]
            root = np.sqrt(tr * tr / 4 - det)
            mus = (tr / 2 + root, tr / 2 - root)
            mu = min(mus, key=lambda x: abs(x - w[1, 1]))     # Wilkinson's shift
            if steps % 11 == 10:
                mu = w[1, 1] + abs(t[hi, hi - 1]) * (1 + 1j)
            q, _ = np.linalg.qr(block - mu * np.eye(m))
        qq = np.eye(n, dtype=t.dtype)
        qq[:m, :m] = q
        _rotate(t, z, qq, 0)
    if real:
        t[np.tril_indices(n, -2)] = 0
    else:
        t[np.tril_indices(n, -1)] = 0
    return t, z


def _impl(ctx, a: np.ndarray, *, compute_schur_vectors: bool = True, **_: Any) -> list:
    *batch, n, _ = a.shape
    flat = a.reshape(-1, n, n)
    ts, zs = np.empty(flat.shape, a.dtype), np.empty(flat.shape, a.dtype)
    for i, m in enumerate(flat):
        res = schur_impl_one(m) if np.isfinite(m).all() else None
        if res is None:
            ts[i], zs[i] = np.nan, np.nan
        else:
            ts[i], zs[i] = res
    out = [ts.reshape(a.shape)]
    return out + [zs.reshape(a.shape)] if compute_schur_vectors else out


def _batching(ctx, args, dims, **params):
    out = bind(schur_p, bdim_at_front(args[0], dims[0], ctx.axis_size), **params)
    return out, [0] * len(out)


def _lowering(ctx, a, *, compute_schur_vectors: bool = True, sort_eig_vals: bool = False,
              select_callable: Any = None, prefix: str = "cpu"):
    if sort_eig_vals:
        raise NotImplementedError("The sort feature of LAPACK's gees routine is not "
                                  "implemented.")
    (aval,) = ctx.avals_in
    real = np.dtype(aval.dtype).kind == "f"
    w_aval = ShapedArray(aval.shape[:-1], aval.dtype)
    info = _info(aval.shape[:-2])
    outs = [aval, aval] + [w_aval] * (2 if real else 1) + [info, info]
    res = _call(ctx, _kernel(prefix, "gees", aval.dtype), [a], [aval], outs, {0: 0},
                mode=_char("V" if compute_schur_vectors else "N"), sort=_char("N"))
    t, z, ok = res[0], res[1], res[-1]
    fixed = _apply(ctx, lambda t, z, i: _nan_unless(i == 0, t, z), [t, z, ok],
                   [aval, aval, info])
    return fixed if compute_schur_vectors else fixed[:1]


def lax_schur(x: Any, *, compute_schur_vectors: bool = True, sort_eig_vals: bool = False,
              select_callable: Any = None) -> Any:
    """(T, Z) with x = Z T Z^H, as jax.lax.linalg.schur (T alone without vectors)."""
    from .lax_api import inexact
    out = bind(schur_p, inexact(x), compute_schur_vectors=bool(compute_schur_vectors),
               sort_eig_vals=bool(sort_eig_vals), select_callable=None)
    return tuple(out) if compute_schur_vectors else out[0]


def scipy_schur(a: Any, output: str = "real") -> tuple[Any, Any]:
    """(T, Z) as scipy.linalg.schur: the real Schur form of a real matrix, or with
    output='complex' the (triangular) complex one."""
    from plugax.extend import COMPLEX_OF_REAL, get_aval
    from .lax_api import inexact
    if output not in ("real", "complex"):
        raise ValueError(f"Expected 'output' to be either 'real' or 'complex', got "
                         f"output={output!r}.")
    a = inexact(a)
    dtype = np.dtype(get_aval(a).dtype)
    if output == "complex" and dtype.kind == "f":
        a = a.astype(COMPLEX_OF_REAL[dtype])
    return lax_schur(a)


RULES = dict(impl=_impl, abstract_eval=_abstract_eval, batching=_batching, lowering=_lowering)
LAX_LINALG = {"schur": lax_schur}
SCIPY_LINALG = {"schur": scipy_schur}
