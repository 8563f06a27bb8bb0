"""Floating-point math: roots, exponentials, logarithms, trigonometric and hyperbolic
functions, logistic, atan2 and pow.

Every unary one is a `defvectorized` primitive whose jvp multiplies the tangent
by its derivative; the table below states just (primitive, NumPy impl,
derivative), the derivative written with primitives (so it is itself
differentiable and batchable) and reusing the output `ans` where that is
cheaper (exp, tanh, logistic). All accept floating-point dtypes only: lax does
not promote, `plugax.numpy` converts integers first.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from plugax.extend import (Primitive, RuleSet, ShapedArray, defvectorized,
                           get_aval, scalar_like)

from . import lowering as L
from .arithmetic import add_p, div_p, mul_p, neg_p, square_p, sub_p
from .common import (defbroadcasting, diagonal_rules, float_dtype, inexact_dtype, is_inexact,
                     type_error, zeros_like)
from .logic import eq_p
from .selection import convert, select_n_p

__all__ = ["sqrt_p", "rsqrt_p", "cbrt_p", "exp_p", "exp2_p", "log_p", "log1p_p", "expm1_p",
           "sin_p", "cos_p", "tan_p", "asin_p", "acos_p", "atan_p", "atan2_p", "sinh_p",
           "cosh_p", "tanh_p", "asinh_p", "acosh_p", "atanh_p", "logistic_p", "pow_p",
           "RULES", "FLOAT_IMPLS"]

mul, add, sub, div, neg = mul_p.bind, add_p.bind, sub_p.bind, div_p.bind, neg_p.bind


def _logistic(x: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x)) without overflow: exp is only taken of -|x| (complex x: the
    formula as it stands, which has poles, as JAX's)."""
    if x.dtype.kind == "c":
        with np.errstate(all="ignore"):
            return (1 / (1 + np.exp(-x))).astype(x.dtype)
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype)


def _one_minus_square(x: Any) -> Any:
    return sub(scalar_like(x, 1), square_p.bind(x))


# (name, NumPy impl, derivative(ans, x)): the jvp is g * derivative.
_UNARY: list[tuple[str, Callable, Callable]] = [
    ("sqrt", np.sqrt, lambda ans, x: div(scalar_like(x, 0.5), ans)),
    ("rsqrt", lambda x: np.reciprocal(np.sqrt(x)),
     lambda ans, x: mul(scalar_like(x, -0.5), div(ans, x))),
    ("cbrt", np.cbrt, lambda ans, x: div(scalar_like(x, 1 / 3), square_p.bind(ans))),
    ("exp", np.exp, lambda ans, x: ans),
    ("exp2", np.exp2, lambda ans, x: mul(ans, scalar_like(x, np.log(2)))),
    ("log", np.log, lambda ans, x: div(scalar_like(x, 1), x)),
    ("log1p", np.log1p, lambda ans, x: div(scalar_like(x, 1), add(x, scalar_like(x, 1)))),
    ("expm1", np.expm1, lambda ans, x: add(ans, scalar_like(x, 1))),
    ("sin", np.sin, lambda ans, x: cos_p.bind(x)),
    ("cos", np.cos, lambda ans, x: neg(sin_p.bind(x))),
    ("tan", np.tan, lambda ans, x: add(scalar_like(x, 1), square_p.bind(ans))),
    ("asin", np.arcsin, lambda ans, x: rsqrt_p.bind(_one_minus_square(x))),
    ("acos", np.arccos, lambda ans, x: neg(rsqrt_p.bind(_one_minus_square(x)))),
    ("atan", np.arctan,
     lambda ans, x: div(scalar_like(x, 1), add(scalar_like(x, 1), square_p.bind(x)))),
    ("sinh", np.sinh, lambda ans, x: cosh_p.bind(x)),
    ("cosh", np.cosh, lambda ans, x: sinh_p.bind(x)),
    ("tanh", np.tanh, lambda ans, x: _one_minus_square(ans)),
    ("asinh", np.arcsinh,
     lambda ans, x: rsqrt_p.bind(add(square_p.bind(x), scalar_like(x, 1)))),
    # 1/sqrt(x^2 - 1) as JAX writes it (so x = -1 gives +inf, as there)
    ("acosh", np.arccosh,
     lambda ans, x: rsqrt_p.bind(sub(square_p.bind(x), scalar_like(x, 1)))),
    ("atanh", np.arctanh, lambda ans, x: div(scalar_like(x, 1), _one_minus_square(x))),
    ("logistic", _logistic, lambda ans, x: mul(ans, sub(scalar_like(x, 1), ans))),
]

# how each lowers: the StableHLO op of that name, a CHLO op where StableHLO has none
_LOWERING = {
    "sqrt": L.unary("sqrt"), "rsqrt": L.unary("rsqrt"), "cbrt": L.unary("cbrt"),
    "exp": L.unary("exponential"), "exp2": L.exp2, "log": L.unary("log"),
    "log1p": L.unary("log_plus_one"), "expm1": L.unary("exponential_minus_one"),
    "sin": L.unary("sine"), "cos": L.unary("cosine"), "tan": L.unary("tan", "chlo"),
    "asin": L.unary("asin", "chlo"), "acos": L.unary("acos", "chlo"),
    "atan": L.unary("atan", "chlo"), "sinh": L.unary("sinh", "chlo"),
    "cosh": L.unary("cosh", "chlo"), "tanh": L.unary("tanh"),
    "asinh": L.unary("asinh", "chlo"), "acosh": L.unary("acosh", "chlo"),
    "atanh": L.unary("atanh", "chlo"), "logistic": L.unary("logistic"),
}

_PRIMS = {name: Primitive(name) for name, _, _ in _UNARY}
(sqrt_p, rsqrt_p, cbrt_p, exp_p, exp2_p, log_p, log1p_p, expm1_p, sin_p, cos_p, tan_p, asin_p,
 acos_p, atan_p, sinh_p, cosh_p, tanh_p, asinh_p, acosh_p, atanh_p, logistic_p) = _PRIMS.values()


# the unary functions lax defines for floats only (every other one also takes complex)
_REAL_ONLY = {"cbrt"}


def _unary_rules(prim: Primitive, impl: Callable, derivative: Callable) -> RuleSet:
    dtype_rule = float_dtype(prim) if prim.name in _REAL_ONLY else inexact_dtype(prim)
    return defvectorized(prim, impl, dtype_rule=dtype_rule,
                         **diagonal_rules(prim, lambda g, ans, x: mul(g, derivative(ans, x))),
                         lowering=_LOWERING[prim.name])


UNARY = [_unary_rules(_PRIMS[name], impl, d) for name, impl, d in _UNARY]
# The NumPy function each unary impl rule above applies: plugax.numpy's eager fast
# path runs it in place of the rule while the impl table still holds that rule.
FLOAT_IMPLS = {_PRIMS[name]: impl for name, impl, _ in _UNARY}


# --- atan2(x, y): the angle of the point (y, x) ------------------------------------
atan2_p = Primitive("atan2")


def _atan2_scale(x: Any, y: Any) -> Any:
    """d atan2(x, y) = (y dx - x dy) / (x^2 + y^2)."""
    return add(square_p.bind(x), square_p.bind(y))


def _atan2_impl(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """np.arctan2; for complex operands (which it lacks) XLA's definition,
    -i log((y + i x) / sqrt(x^2 + y^2)), which is what stablehlo.atan2 computes."""
    if x.dtype.kind != "c":
        return np.arctan2(x, y)
    with np.errstate(all="ignore"):
        return (-1j * np.log((y + 1j * x) / np.sqrt(x * x + y * y))).astype(x.dtype)


ATAN2 = defbroadcasting(
    atan2_p, _atan2_impl, dtype_rule=inexact_dtype(atan2_p), lowering=L.binary("atan2"),
    **diagonal_rules(atan2_p, lambda g, ans, x, y: mul(g, div(y, _atan2_scale(x, y))),
                     lambda g, ans, x, y: mul(g, div(neg(x), _atan2_scale(x, y)))))


# --- pow(x, y): x floating, y of x's dtype or an integer dtype -----------------------
pow_p = Primitive("pow")


def _pow_impl(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.power(x, y.astype(x.dtype, copy=False))


def _pow_dtype(x: ShapedArray, y: ShapedArray) -> np.dtype:
    if not is_inexact(x.dtype) or (y.dtype != x.dtype and y.dtype.kind not in "iu"):
        raise type_error(pow_p, (x, y), "needs a floating-point or complex base and an "
                         "exponent of the "
                         "base's dtype or of an integer dtype",
                         "convert the operands, or use plugax.numpy.power, which promotes")
    return x.dtype


def _pow_dx(g, ans, x, y):
    """y * x**(y-1), as JAX: taken as 0 where an *integer* y is 0; a float y == 0 at
    x == 0 gives 0 * inf = NaN there, as in JAX."""
    integer = get_aval(y).dtype.kind in "iu"
    yf = convert(y, get_aval(x).dtype)
    slope = mul(yf, pow_p.bind(x, sub(yf, scalar_like(yf, 1))))
    if not integer:
        return mul(g, slope)
    y_zero = eq_p.bind(yf, scalar_like(yf, 0))
    return mul(g, select_n_p.bind(y_zero, slope, zeros_like(slope)))


def _pow_dy(g, ans, x, y):
    """log(x) * x**y, taken as 0 where x == 0 (the limit from x > 0 when y > 0)."""
    x_zero = eq_p.bind(x, scalar_like(x, 0))
    safe_x = select_n_p.bind(x_zero, x, add(zeros_like(x), scalar_like(x, 1)))
    return mul(g, mul(ans, log_p.bind(safe_x)))


POW = defbroadcasting(pow_p, _pow_impl, dtype_rule=_pow_dtype, lowering=L.pow_,
                      **diagonal_rules(pow_p, _pow_dx, _pow_dy))

RULES = [*UNARY, ATAN2, POW]
