"""The special functions XLA has CHLO ops for: erf, erfc, erf_inv, lgamma, digamma,
polygamma, zeta, bessel_i1e.

Each is elementwise on floating-point operands, so `plugax.extend`'s helpers
build most of each RuleSet (`defvectorized` for one operand, `defbroadcasting`
for two: shape and weak-type rules, vmap). What is particular to each is its
NumPy impl (numpy_math: float64, rounded), its derivative — written with
primitives, so derivatives are differentiable and batchable in turn (`hessian`
of lgamma works because its jvp binds digamma, whose jvp binds polygamma) — and
its lowering, the CHLO op of the same name, which XLA expands into the
polynomial approximations JAX's programs compile to.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

import plugax.lax as lax
from plugax.extend import (Primitive, RuleSet, defbroadcasting, defjvp, defvectorized,
                           is_float, same_dtypes, scalar_like)

from . import numpy_math as nm

__all__ = ["erf_p", "erfc_p", "erf_inv_p", "lgamma_p", "digamma_p", "polygamma_p", "zeta_p",
           "bessel_i1e_p", "bessel_i0e_p", "RULES", "floats", "const", "full"]

erf_p, erfc_p, erf_inv_p = Primitive("erf"), Primitive("erfc"), Primitive("erf_inv")
lgamma_p, digamma_p, polygamma_p = Primitive("lgamma"), Primitive("digamma"), Primitive("polygamma")
zeta_p, bessel_i1e_p = Primitive("zeta"), Primitive("bessel_i1e")
# bessel_i0e's rules are in expanded.py (a decomposition); its object is declared here
# because i1e's derivative binds it, and i0e's binds i1e: one import direction.
bessel_i0e_p = Primitive("bessel_i0e")


def floats(prim: Primitive) -> Callable:
    """dtype rule: one floating-point dtype for every operand (lax does not promote)."""
    return same_dtypes(prim, is_float, "a floating-point dtype")


def const(x: Any, value: float) -> Any:
    """A strong rank-0 constant of x's dtype (lax ops broadcast it)."""
    return scalar_like(x, value, weak_type=False)


def full(x: Any, value: float) -> Any:
    """An array of x's shape and dtype filled with value."""
    return lax.broadcast_in_dim(const(x, value), np.shape(x), ())


_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


def _erf_derivative(x: Any) -> Any:
    """d erf(x) = 2/sqrt(pi) * exp(-x^2)."""
    return lax.mul(const(x, _TWO_OVER_SQRT_PI), lax.exp(lax.neg(lax.square(x))))


def bessel_i1e_derivative(ans: Any, x: Any) -> Any:
    """d i1e(x) = i0e(x) - i1e(x) (sign(x) + 1/x); 1/2 at x = 0 (where 1/x is not
    finite, a safe x stands in so that the unused branch has no NaN for grad)."""
    eps = float(np.finfo(np.dtype(x.dtype)).eps)
    not_tiny = lax.gt(lax.abs(x), const(x, eps))
    safe = lax.select(not_tiny, x, full(x, eps))
    d = lax.sub(bessel_i0e_p.bind(safe),
                lax.mul(ans, lax.add(lax.sign(safe), lax.div(const(x, 1.0), safe))))
    return lax.select(not_tiny, d, full(x, 0.5))


# (primitive, NumPy float64 function, derivative(ans, x), CHLO op): jvp = tangent * derivative
_UNARY: list[tuple[Primitive, Callable, Callable, str]] = [
    (erf_p, nm.erf, lambda ans, x: _erf_derivative(x), "erf"),
    (erfc_p, nm.erfc, lambda ans, x: lax.neg(_erf_derivative(x)), "erfc"),
    # erf_inv(erf(y)) = y: the derivative is 1 / erf'(ans) = sqrt(pi)/2 * exp(ans^2)
    (erf_inv_p, nm.erf_inv,
     lambda ans, x: lax.mul(const(x, 1 / _TWO_OVER_SQRT_PI), lax.exp(lax.square(ans))),
     "erf_inv"),
    (lgamma_p, nm.lgamma, lambda ans, x: digamma_p.bind(x), "lgamma"),
    (digamma_p, nm.digamma, lambda ans, x: polygamma_p.bind(const(x, 1.0), x), "digamma"),
    (bessel_i1e_p, nm.bessel_i1e, bessel_i1e_derivative, "bessel_i1e"),
]


def chlo(op: str) -> dict:
    """Lowering (for jit): the CHLO op `op`, reached through the rule context (no
    jaxlib import here). "default" serves every platform: XLA expands CHLO itself."""
    def lower(ctx, *operands, **params):
        return getattr(ctx.chlo, op)(*ctx.broadcast_scalars(*operands))
    lower.__name__ = f"lower_{op}"
    return {"default": lower}


def _unary(prim: Primitive, fn: Callable, derivative: Callable, op: str) -> RuleSet:
    return defvectorized(prim, nm.rounded(fn), dtype_rule=floats(prim), lowering=chlo(op),
                         jvp=defjvp(prim, lambda g, ans, x: lax.mul(g, derivative(ans, x))))


def _polygamma_dx(g: Any, ans: Any, m: Any, x: Any) -> Any:
    """d/dx polygamma(m, x) = polygamma(m + 1, x)."""
    return lax.mul(g, polygamma_p.bind(lax.add(m, const(m, 1.0)), x))


def _polygamma_dm(g: Any, ans: Any, m: Any, x: Any) -> Any:
    raise ValueError("polygamma: the gradient with respect to the order m is not supported "
                     "(as in JAX); m is a whole number")


def _zeta_ds(g: Any, ans: Any, s: Any, q: Any) -> Any:
    raise ValueError("lax.zeta: the gradient with respect to s is not supported (as in JAX's "
                     "lax.zeta); plugax.scipy.special.zeta differentiates in both arguments")


def _zeta_dq(g: Any, ans: Any, s: Any, q: Any) -> Any:
    """d/dq zeta(s, q) = -s zeta(s + 1, q) (each term (k + q)^-s differentiated)."""
    return lax.mul(g, lax.neg(lax.mul(s, zeta_p.bind(lax.add(s, const(s, 1.0)), q))))


def _broadcast_term(term: Any, ans: Any) -> Any:
    """A rank-0 operand's contribution, broadcast to the output's shape."""
    if np.shape(term) != np.shape(ans):
        return lax.broadcast_in_dim(term, np.shape(ans), ())
    return term


# polygamma(m, x) and zeta(s, q): the order m and the exponent s are not differentiated
# here (JAX raises for both; scipy.special.zeta gives the derivative in s itself).
POLYGAMMA = defbroadcasting(polygamma_p, nm.rounded(nm.polygamma),
                            dtype_rule=floats(polygamma_p),
                            jvp=defjvp(polygamma_p, _polygamma_dm, _polygamma_dx,
                                       fix_term=_broadcast_term),
                            lowering=chlo("polygamma"))
ZETA = defbroadcasting(zeta_p, nm.rounded(nm.zeta), dtype_rule=floats(zeta_p),
                       jvp=defjvp(zeta_p, _zeta_ds, _zeta_dq, fix_term=_broadcast_term),
                       lowering=chlo("zeta"))

RULES = [*(_unary(*row) for row in _UNARY), POLYGAMMA, ZETA]
