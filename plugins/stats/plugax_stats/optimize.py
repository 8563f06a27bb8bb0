"""plugax.scipy.optimize.minimize: BFGS with a strong-Wolfe line search, as jax.scipy.optimize.

Everything runs inside `lax.while_loop`s with fixed-shape state (the BFGS loop, the
line search's bracketing loop, and its zoom loop), so `minimize` can be jitted and
vmapped; a branch the algorithm does not take is computed and discarded with
`where`, the price of a loop body without data-dependent control flow.
The algorithm and its counters follow JAX's (Nocedal & Wright, algorithms 3.5 and
3.6, with SciPy's cubic/quadratic interpolation safeguards), so `nit`, `nfev`,
`njev` and `status` mean what they mean there:
status 0 converged, 1 maxiter reached, 2 + line-search status when a line search
failed (3: it hit its iteration limit, 4: its zoom could not bracket further).
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, NamedTuple

import numpy as np

import plugax
import plugax.lax as lax
import plugax.numpy as jnp

__all__ = ["OptimizeResults", "minimize", "NAMES"]


class OptimizeResults(NamedTuple):
    """What `minimize` returns (JAX's fields)."""
    x: Any
    success: Any
    status: Any
    fun: Any
    jac: Any
    hess_inv: Any
    nfev: Any
    njev: Any
    nit: Any


def _pick(cond: Any, old: dict, new: dict) -> dict:
    """`old` with the entries of `new` taken where `cond` holds."""
    return {**old, **{k: jnp.where(cond, v, old[k]) for k, v in new.items()}}


def _int(v: int) -> Any:
    return jnp.asarray(v, dtype=jnp.int32)


def _cubic_min(a, fa, fpa, b, fb, c, fc):
    """Minimiser of the cubic through (a, fa) with slope fpa, (b, fb) and (c, fc)."""
    db, dc = b - a, c - a
    denom = (db * dc) ** 2 * (db - dc)
    rb, rc = fb - fa - fpa * db, fc - fa - fpa * dc
    big_a = (dc ** 2 * rb - db ** 2 * rc) / denom
    big_b = (-dc ** 3 * rb + db ** 3 * rc) / denom
    return a + (-big_b + jnp.sqrt(big_b * big_b - 3.0 * big_a * fpa)) / (3.0 * big_a)


def _quad_min(a, fa, fpa, b, fb):
    """Minimiser of the parabola through (a, fa) with slope fpa and (b, fb)."""
    db = b - a
    curv = (fb - fa - fpa * db) / (db * db)
    return a - fpa / (2.0 * curv)


def _zoom(phi, wolfe1, wolfe2, lo: tuple, hi: tuple, g0: Any, skip: Any) -> dict:
    """Algorithm 3.6: shrink [a_lo, a_hi], which brackets a step satisfying the strong
    Wolfe conditions, until a trial step does. `skip` makes it a no-op (both zooms run
    in every line-search iteration; at most one of them matters)."""
    a_lo, f_lo, d_lo = lo
    a_hi, f_hi, d_hi = hi
    dtype = a_lo.dtype
    threshold = 1e-10 if np.dtype(dtype).itemsize == 8 else 1e-5
    state = dict(done=jnp.asarray(False), failed=jnp.asarray(False), j=_int(0),
                 a_lo=a_lo, phi_lo=f_lo, dphi_lo=d_lo, a_hi=a_hi, phi_hi=f_hi, dphi_hi=d_hi,
                 a_rec=(a_lo + a_hi) / 2, phi_rec=(f_lo + f_hi) / 2,
                 a_star=jnp.asarray(1.0, dtype), phi_star=f_lo, dphi_star=d_lo, g_star=g0,
                 nfev=_int(0), ngev=_int(0))

    def body(s: dict) -> dict:
        width = s["a_hi"] - s["a_lo"]
        left, right = jnp.minimum(s["a_hi"], s["a_lo"]), jnp.maximum(s["a_hi"], s["a_lo"])
        s = {**s, "failed": s["failed"] | (width <= threshold)}
        cubic = _cubic_min(s["a_lo"], s["phi_lo"], s["dphi_lo"], s["a_hi"], s["phi_hi"],
                           s["a_rec"], s["phi_rec"])
        use_cubic = (s["j"] > 0) & (cubic > left + 0.2 * width) & (cubic < right - 0.2 * width)
        quad = _quad_min(s["a_lo"], s["phi_lo"], s["dphi_lo"], s["a_hi"], s["phi_hi"])
        use_quad = ~use_cubic & (quad > left + 0.1 * width) & (quad < right - 0.1 * width)
        a_j = jnp.where(use_cubic, cubic,
                        jnp.where(use_quad, quad, (s["a_lo"] + s["a_hi"]) / 2))
        f_j, d_j, g_j = phi(a_j)
        s = {**s, "nfev": s["nfev"] + 1, "ngev": s["ngev"] + 1}
        to_hi = wolfe1(a_j, f_j) | (f_j >= s["phi_lo"])
        found = wolfe2(d_j) & ~to_hi
        lo_to_hi = (d_j * (s["a_hi"] - s["a_lo"]) >= 0) & ~to_hi & ~found
        to_lo = ~to_hi & ~found
        s = _pick(to_hi, s, dict(a_hi=a_j, phi_hi=f_j, dphi_hi=d_j, a_rec=s["a_hi"],
                                 phi_rec=s["phi_hi"]))
        s = _pick(found, s, dict(a_star=a_j, phi_star=f_j, dphi_star=d_j, g_star=g_j))
        s = {**s, "done": s["done"] | found}
        s = _pick(lo_to_hi, s, dict(a_hi=s["a_lo"], phi_hi=s["phi_lo"], dphi_hi=s["dphi_lo"],
                                    a_rec=s["a_hi"], phi_rec=s["phi_hi"]))
        s = _pick(to_lo & ~lo_to_hi, s, dict(a_rec=s["a_lo"], phi_rec=s["phi_lo"]))
        s = _pick(to_lo, s, dict(a_lo=a_j, phi_lo=f_j, dphi_lo=d_j))
        j = s["j"] + 1
        return {**s, "j": j, "failed": s["failed"] | (j >= 30)}

    return lax.while_loop(lambda s: ~s["done"] & ~skip & ~s["failed"], body, state)


def line_search(f: Callable, xk: Any, pk: Any, old_fval: Any, old_old_fval: Any, gfk: Any,
                c1: float = 1e-4, c2: float = 0.9, maxiter: int = 20) -> dict:
    """Algorithm 3.5: a step along `pk` from `xk` satisfying the strong Wolfe conditions
    (sufficient decrease c1, curvature c2). Returns a dict with a_k, f_k, g_k, nfev,
    ngev, failed and status (0 ok, 1 zoom failed, 3 maxiter)."""
    dtype = pk.dtype

    def phi(t: Any) -> tuple:
        value, grad = plugax.value_and_grad(f)(xk + t * pk)
        return value, jnp.dot(grad, pk), grad

    phi0, dphi0 = old_fval, jnp.dot(gfk, pk)
    guess = 1.01 * 2 * (phi0 - old_old_fval) / dphi0
    start = jnp.where(guess > 1, 1.0, guess).astype(dtype)

    def wolfe1(a: Any, f_a: Any) -> Any:        # sufficient decrease fails
        return f_a > phi0 + c1 * a * dphi0

    def wolfe2(d_a: Any) -> Any:                # strong curvature holds
        return jnp.abs(d_a) <= -c2 * dphi0

    zero = jnp.asarray(0.0, dtype)
    state = dict(done=jnp.asarray(False), failed=jnp.asarray(False), i=_int(1), a_prev=zero,
                 phi_prev=phi0, dphi_prev=dphi0, nfev=_int(0), ngev=_int(0), a_star=zero,
                 phi_star=phi0, dphi_star=dphi0, g_star=gfk)
    keys = ("a_star", "phi_star", "dphi_star", "g_star")

    def body(s: dict) -> dict:
        a_i = jnp.where(s["i"] == 1, start, s["a_prev"] * 2.0)
        f_i, d_i, g_i = phi(a_i)
        s = {**s, "nfev": s["nfev"] + 1, "ngev": s["ngev"] + 1}
        zoom_up = wolfe1(a_i, f_i) | ((f_i >= s["phi_prev"]) & (s["i"] > 1))
        accept = wolfe2(d_i) & ~zoom_up
        zoom_down = (d_i >= 0) & ~zoom_up & ~accept
        prev = (s["a_prev"], s["phi_prev"], s["dphi_prev"])
        here = (a_i, f_i, d_i)
        z1 = _zoom(phi, wolfe1, wolfe2, prev, here, gfk, ~zoom_up)
        z2 = _zoom(phi, wolfe1, wolfe2, here, prev, gfk, ~zoom_down)
        s = {**s, "nfev": s["nfev"] + z1["nfev"] + z2["nfev"],
             "ngev": s["ngev"] + z1["ngev"] + z2["ngev"]}
        s = _pick(zoom_up, s, {k: z1[k] for k in keys})
        s = _pick(accept, s, dict(a_star=a_i, phi_star=f_i, dphi_star=d_i, g_star=g_i))
        s = _pick(zoom_down, s, {k: z2[k] for k in keys})
        failed = s["failed"] | (zoom_up & z1["failed"]) | (zoom_down & z2["failed"])
        return {**s, "done": s["done"] | zoom_up | accept | zoom_down, "failed": failed,
                "i": s["i"] + 1, "a_prev": a_i, "phi_prev": f_i, "dphi_prev": d_i}

    s = lax.while_loop(lambda s: ~s["done"] & (s["i"] <= maxiter) & ~s["failed"], body, state)
    status = jnp.where(s["failed"], 1, jnp.where(s["i"] > maxiter, 3, 0))
    a_k = s["a_star"]
    if np.dtype(dtype).itemsize != 8:   # single precision: never a step too small to move x
        a_k = jnp.where(jnp.abs(a_k) < 1e-8, jnp.sign(a_k) * 1e-8, a_k)
    return dict(failed=s["failed"] | ~s["done"], nfev=s["nfev"], ngev=s["ngev"], a_k=a_k,
                f_k=s["phi_star"], g_k=s["g_star"], status=status)


def _bfgs(fun: Callable, x0: Any, maxiter: int | None = None, norm: Any = np.inf,
          gtol: float = 1e-5, line_search_maxiter: int = 10) -> dict:
    if maxiter is None:
        maxiter = int(np.size(x0)) * 200
    d = x0.shape[0]
    f0, g0 = plugax.value_and_grad(fun)(x0)
    state = dict(converged=jnp.linalg.norm(g0, ord=norm) < gtol, failed=jnp.asarray(False),
                 k=_int(0), nfev=_int(1), ngev=_int(1), x=x0, f=f0, g=g0,
                 H=jnp.eye(d, dtype=x0.dtype), f_prev=f0 + jnp.linalg.norm(g0) / 2,
                 ls_status=_int(0))

    def body(s: dict) -> dict:
        p = -jnp.dot(s["H"], s["g"])
        ls = line_search(fun, s["x"], p, s["f"], s["f_prev"], s["g"],
                         maxiter=line_search_maxiter)
        step = ls["a_k"] * p
        y = ls["g_k"] - s["g"]
        rho = 1.0 / jnp.dot(y, step)
        w = jnp.eye(d, dtype=rho.dtype) - rho * jnp.outer(step, y)
        # H <- (I - rho s y^T) H (I - rho y s^T) + rho s s^T
        h_new = w @ s["H"] @ w.T + rho * jnp.outer(step, step)
        return dict(converged=jnp.linalg.norm(ls["g_k"], ord=norm) < gtol,
                    failed=ls["failed"], k=s["k"] + 1, nfev=s["nfev"] + ls["nfev"],
                    ngev=s["ngev"] + ls["ngev"], x=s["x"] + step, f=ls["f_k"], g=ls["g_k"],
                    H=jnp.where(jnp.isfinite(rho), h_new, s["H"]), f_prev=s["f"],
                    ls_status=ls["status"].astype(jnp.int32))

    s = lax.while_loop(lambda s: ~s["converged"] & ~s["failed"] & (s["k"] < maxiter),
                       body, state)
    s["status"] = jnp.where(s["converged"], 0, jnp.where(
        s["k"] == maxiter, 1, jnp.where(s["failed"], 2 + s["ls_status"], -1)))
    return s


def minimize(fun: Callable, x0: Any, args: tuple = (), *, method: str,
             tol: float | None = None, options: Mapping[str, Any] | None = None
             ) -> OptimizeResults:
    """Minimise the scalar `fun(x, *args)` over the vector `x` from `x0`.

    Only method="BFGS" (any case), as in JAX; `options` are BFGS's: maxiter (default
    200 * x0.size), norm (of the gradient in the stopping test, default inf), gtol
    (default 1e-5) and line_search_maxiter (default 10). `tol` is accepted and unused,
    as in JAX.
    """
    options = dict(options or {})
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to plugax.scipy.optimize.minimize must be a tuple, "
                        f"got {args}")
    if method.lower() != "bfgs":
        raise ValueError(f"Method {method} not recognized (plugax supports 'BFGS', as JAX)")
    unknown = set(options) - {"maxiter", "norm", "gtol", "line_search_maxiter"}
    if unknown:
        raise TypeError(f"minimize(method='BFGS') got unknown options {sorted(unknown)}; "
                        f"BFGS takes maxiter, norm, gtol, line_search_maxiter")
    x0 = jnp.asarray(x0)
    if x0.ndim != 1:
        raise ValueError(f"minimize: x0 must be one-dimensional (as in JAX); got shape "
                         f"{x0.shape}. Flatten the parameters, e.g. with "
                         f"plugax.flatten_util.ravel_pytree")
    s = _bfgs(lambda x: fun(x, *args), x0, **options)
    return OptimizeResults(x=s["x"], success=s["converged"] & ~s["failed"], status=s["status"],
                           fun=s["f"], jac=s["g"], hess_inv=s["H"], nfev=s["nfev"],
                           njev=s["ngev"], nit=s["k"])


NAMES = {"minimize": minimize, "OptimizeResults": OptimizeResults}
