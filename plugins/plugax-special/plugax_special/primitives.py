"""The primitives: erf, erfc, erf_inv, lgamma, digamma, polygamma.

Each is elementwise on floating-point operands, so the helpers of
`plugax.extend` build most of the RuleSet: `defvectorized` (unary: shape rule,
weak-type rule, vmap) and `defbroadcasting` (polygamma's two operands). What
is particular to each is its NumPy/SciPy impl and its derivative, written with
primitives via `plugax.lax` so that derivatives are themselves differentiable
and batchable (`hessian` of `lgamma` works because its jvp binds `digamma`,
whose jvp binds `polygamma`). Lowerings (for jit) are the CHLO ops of the
same names, which XLA expands into polynomial approximations.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

import plugax.lax as lax
from plugax.extend import (Primitive, RuleSet, defbroadcasting, defjvp, defvectorized,
                           is_float, same_dtypes, scalar_like)

__all__ = ["erf_p", "erfc_p", "erf_inv_p", "lgamma_p", "digamma_p", "polygamma_p", "RULES"]

erf_p, erfc_p, erf_inv_p = Primitive("erf"), Primitive("erfc"), Primitive("erf_inv")
lgamma_p, digamma_p, polygamma_p = Primitive("lgamma"), Primitive("digamma"), Primitive("polygamma")


def _floats(prim: Primitive) -> Callable:
    return same_dtypes(prim, is_float, "a floating-point dtype")


def _scipy(name: str) -> Callable:
    """Run the SciPy ufunc `scipy.special.<name>` in at least float32 (it has no
    float16/bfloat16 loops), cast back. SciPy is imported on first use: importing
    it costs ~150 ms, which `import plugax` (which loads every plugin) must not pay.
    Where SciPy's value at a pole differs from XLA's (what jit and JAX compute), XLA's
    is used, so eager and jit agree: see _AT_POLES."""
    def impl(*xs: np.ndarray) -> np.ndarray:
        import scipy.special
        fn = getattr(scipy.special, name)
        dtype = xs[0].dtype
        wide = np.float32 if dtype.itemsize < 4 else dtype
        with np.errstate(all="ignore"):
            xs = [np.asarray(x, wide) for x in xs]
            out = np.asarray(fn(*xs))
            fix = _AT_POLES.get(name)
            return np.asarray(fix(out, *xs) if fix else out).astype(dtype)
    impl.__name__ = name
    return impl


def _poles(x: np.ndarray) -> np.ndarray:
    """Where x is a non-positive integer (signed zeros included)."""
    return (x <= 0) & (x == np.floor(x))


# XLA: lgamma(-inf) = +inf (SciPy: -inf); digamma is NaN at its poles 0, -1, ...
# (SciPy: -inf at +0, +inf at -0, NaN elsewhere); polygamma(m >= 1, +inf) is NaN
# (SciPy: 0), which is what grad of digamma at +inf gives in JAX.
_AT_POLES = {
    "gammaln": lambda out, x: np.where(x == -np.inf, np.inf, out),
    "digamma": lambda out, x: np.where(_poles(x), np.nan, out),
    "polygamma": lambda out, m, x: np.where((x == np.inf) & (m >= 1), np.nan, out),
}



_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


def _erf_derivative(x: Any) -> Any:
    """d erf(x) = 2/sqrt(pi) * exp(-x^2)."""
    return lax.mul(scalar_like(x, _TWO_OVER_SQRT_PI, weak_type=False),
                   lax.exp(lax.neg(lax.square(x))))


# (primitive, impl, derivative(ans, x), CHLO op): the jvp is tangent * derivative.
_UNARY: list[tuple[Primitive, Callable, Callable, str]] = [
    (erf_p, "erf", lambda ans, x: _erf_derivative(x), "erf"),
    (erfc_p, "erfc", lambda ans, x: lax.neg(_erf_derivative(x)), "erfc"),
    # erf_inv(erf(y)) = y: the derivative is 1 / erf'(ans) = sqrt(pi)/2 * exp(ans^2)
    (erf_inv_p, "erfinv",
     lambda ans, x: lax.mul(scalar_like(x, 1 / _TWO_OVER_SQRT_PI, weak_type=False),
                            lax.exp(lax.square(ans))),
     "erf_inv"),
    (lgamma_p, "gammaln", lambda ans, x: digamma_p.bind(x), "lgamma"),
    (digamma_p, "digamma",
     lambda ans, x: polygamma_p.bind(scalar_like(x, 1.0, weak_type=False), x), "digamma"),
]


def _chlo(op: str) -> dict:
    """Lowering (for jit): the CHLO op `op`, reached through the rule context (no jaxlib import).

    "default" serves every platform; XLA expands CHLO's special functions itself.
    """
    def lower(ctx, *operands, **params):
        return getattr(ctx.chlo, op)(*ctx.broadcast_scalars(*operands))
    lower.__name__ = f"lower_{op}"
    return {"default": lower}


def _unary(prim: Primitive, impl: Callable, derivative: Callable, op: str) -> RuleSet:
    return defvectorized(prim, _scipy(impl), dtype_rule=_floats(prim), lowering=_chlo(op),
                         jvp=defjvp(prim, lambda g, ans, x: lax.mul(g, derivative(ans, x))))


def _polygamma_dx(g: Any, ans: Any, m: Any, x: Any) -> Any:
    """d/dx polygamma(m, x) = polygamma(m + 1, x)."""
    return lax.mul(g, polygamma_p.bind(lax.add(m, scalar_like(m, 1.0, weak_type=False)), x))


# polygamma(m, x): m is an order (a whole number), not differentiable, as in JAX.
POLYGAMMA = defbroadcasting(polygamma_p, _scipy("polygamma"), dtype_rule=_floats(polygamma_p),
                            jvp=defjvp(polygamma_p, None, _polygamma_dx),
                            lowering=_chlo("polygamma"))

RULES = [*(_unary(*row) for row in _UNARY), POLYGAMMA]
