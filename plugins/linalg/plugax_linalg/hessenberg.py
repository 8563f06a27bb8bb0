"""Hessenberg reduction: primitive `hessenberg` (JAX's jax.lax.linalg.hessenberg) and
`plugax.scipy.linalg.hessenberg` on it.

The primitive returns LAPACK gehrd's packed form: the upper Hessenberg matrix on and
above the first subdiagonal, the Householder vectors below it, and their n-1
scalars tau. The eager impl is gehrd's algorithm in NumPy, with dlarfg's sign
convention (beta = -sign(alpha) * norm), so eager and jit (jaxlib's
`lapack_?gehrd_ffi`) agree to rounding, not merely up to signs. As in JAX there is
no derivative rule (a jvp raises MissingRuleError naming the primitive).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from plugax.extend import Primitive, ShapedArray, ShapeError, bdim_at_front, bind, get_aval

from .lowering import _apply, _call, _info, _kernel, _nan_unless

__all__ = ["hessenberg_p", "RULES", "LAX_LINALG", "SCIPY_LINALG"]

hessenberg_p = Primitive("hessenberg", multiple_results=True)
_REAL = (np.dtype(np.float32), np.dtype(np.float64))


def _abstract_eval(ctx, a: ShapedArray) -> list[ShapedArray]:
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"primitive 'hessenberg' takes square matrices (shape [..., n, n]), "
                         f"got {a.str_short()}")
    if np.dtype(a.dtype) not in _REAL:
        raise TypeError(f"primitive 'hessenberg' takes float32 or float64 matrices, got "
                        f"{a.str_short()}")
    n = a.shape[-1]
    return [ShapedArray(a.shape, a.dtype), ShapedArray(a.shape[:-2] + (max(n - 1, 0),),
                                                       a.dtype)]


def _reduce(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """gehd2 on one matrix (float64 work): Householder reflectors H_j = I - tau v v^T,
    v = [1, x], zeroing column j below the subdiagonal, applied from both sides."""
    a = np.array(a, dtype=np.float64, copy=True)
    n = a.shape[0]
    taus = np.zeros(max(n - 1, 0))
    for j in range(n - 2):
        alpha, x = a[j + 1, j], a[j + 2:, j]
        xnorm = np.linalg.norm(x)
        if xnorm == 0.0:
            continue                                   # H_j = I, tau = 0
        beta = -np.copysign(np.hypot(alpha, xnorm), alpha)
        tau = (beta - alpha) / beta
        v = np.concatenate([[1.0], x / (alpha - beta)])
        a[j + 1, j], a[j + 2:, j] = beta, v[1:]
        block = a[j + 1:, j + 1:]
        block -= tau * np.outer(v, v @ block)           # from the left
        right = a[:, j + 1:]
        right -= tau * np.outer(right @ v, v)           # from the right
        taus[j] = tau
    return a, taus


def _impl(ctx, a: np.ndarray) -> list[np.ndarray]:
    *batch, n, _ = a.shape
    flat = a.reshape(-1, n, n)
    outs = [_reduce(m) for m in flat]
    h = np.stack([o[0] for o in outs]) if outs else np.zeros(flat.shape)
    t = np.stack([o[1] for o in outs]) if outs else np.zeros((0, max(n - 1, 0)))
    return [h.reshape(a.shape).astype(a.dtype),
            t.reshape(*batch, max(n - 1, 0)).astype(a.dtype)]


def _batching(ctx, args, dims, **params):
    out = bind(hessenberg_p, bdim_at_front(args[0], dims[0], ctx.axis_size), **params)
    return out, [0, 0]


def _lowering(ctx, a, *, prefix: str = "cpu"):
    (aval,) = ctx.avals_in
    h_aval, t_aval = ctx.avals_out
    n = aval.shape[-1]
    info = _info(aval.shape[:-2])
    h, t, i = _call(ctx, _kernel(prefix, "gehrd", aval.dtype), [a], [aval],
                    [h_aval, t_aval, info], {0: 0}, low=np.int32(1), high=np.int32(n))
    return _apply(ctx, lambda h, t, i: _nan_unless(i == 0, h, t), [h, t, i],
                  [h_aval, t_aval, info])


def lax_hessenberg(a: Any) -> tuple[Any, Any]:
    """(packed, taus) of gehrd: as jax.lax.linalg.hessenberg."""
    from .lax_api import inexact
    return tuple(bind(hessenberg_p, inexact(a)))


def scipy_hessenberg(a: Any, *, calc_q: bool = False, overwrite_a: bool = False,
                     check_finite: bool = True) -> Any:
    """H (upper Hessenberg) with a = Q H Q^T, and Q if calc_q, as SciPy's."""
    import plugax.numpy as jnp
    from .ad import mT, mm, triu
    from .lax_api import inexact
    a = inexact(a)
    n = get_aval(a).shape[-1]
    if n == 0:
        return (jnp.zeros_like(a), jnp.zeros_like(a)) if calc_q else jnp.zeros_like(a)
    packed, taus = lax_hessenberg(a)
    h = triu(packed, -1)
    if not calc_q:
        return h
    # Q = H_0 H_1 ... H_{n-2}, H_j = I - tau_j u_j u_j^T with u_j = e_{j+1} + (the
    # stored vector below the subdiagonal of column j)
    rows = np.arange(n)
    q = jnp.broadcast_to(np.eye(n, dtype=get_aval(a).dtype), get_aval(a).shape)
    for j in range(n - 2):
        u = jnp.where(rows == j + 1, 1, jnp.where(rows > j + 1, packed[..., :, j], 0))
        qu = mm(q, u[..., :, None])
        q = q - taus[..., j, None, None] * mm(qu, mT(u[..., :, None]))
    return h, q


RULES = dict(impl=_impl, abstract_eval=_abstract_eval, batching=_batching, lowering=_lowering)
LAX_LINALG = {"hessenberg": lax_hessenberg}
SCIPY_LINALG = {"hessenberg": scipy_hessenberg}
