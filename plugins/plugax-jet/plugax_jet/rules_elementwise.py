"""Jet rules for the elementwise family's primitives (arithmetic, transcendental, logic).

Each entry maps a primitive *name* to a maker ``make(prim) -> rule``: plugin.py
looks the primitive up with `plugax.extend.get_primitive` when plugax-jet
loads and skips names no loaded plugin defines, so these rules follow a
primitive to whichever family defines it.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

import plugax.lax as lax
import plugax.numpy as pnp
from plugax.extend import Primitive

from . import taylor as T
from .generic import bilinear_rule, linear_rule, rule_from_jvp, unary_rule, zero_rule
from .trace import zero_series

__all__ = ["MAKERS"]


def _square(x, out):
    return T.mul(x, x)


def _div(prim: Primitive):
    def rule(ctx, primals, series):
        x, y = primals
        out = prim.bind(x, y)
        full = T.div([x, *series[0]], [y, *series[1]])
        return out, full[1:]
    return rule


def _rem(prim: Primitive):
    """rem(x, y) = x - q y with q = trunc(x / y) locally constant."""
    def rule(ctx, primals, series):
        x, y = primals
        out = prim.bind(x, y)
        q = lax.round((x - out) / y)
        return out, [sx - q * sy for sx, sy in zip(*series)]
    return rule


def _max_min(prim: Primitive, wins: Callable):
    """The series of the winning operand, halved at ties (as the jvp rule does)."""
    def rule(ctx, primals, series):
        x, y = primals
        out = prim.bind(x, y)
        x_wins, tie = wins(x, y), x == y
        return out, [pnp.where(tie, (sx + sy) / 2, pnp.where(x_wins, sx, sy))
                     for sx, sy in zip(*series)]
    return rule


def _abs(x, out):
    sign = lax.sign(x[0])
    return [out, *[t * sign for t in x[1:]]]


def _integer_pow(x, out, *, y):
    return [out, *T.integer_power(x, y, pnp.ones_like(x[0]))[1:]]


def _pow(prim: Primitive):
    """x ** y: a constant exponent (no series) uses the power recurrence, exact for
    negative x; a varying one goes through exp(y log x), as its jvp does."""
    def rule(ctx, primals, series):
        x, y = primals
        out = prim.bind(x, y)
        sx, sy = series
        if sx is zero_series:
            sx = [pnp.zeros_like(x)] * len(sy)
        if sy is zero_series:
            return out, T.power_const([x, *sx], y, out)[1:]
        u = T.mul(T.log([x, *sx], lax.log(x)), [y, *sy])
        return out, T.exp(u, out)[1:]
    rule.symbolic_zeros = True
    return rule


def _ode(g: Callable[[list], list]):
    """z' = g(z) x' (tan, tanh, logistic)."""
    return lambda x, out: T.ode(x, out, g)


def _one_plus_square(sign: int):
    """g(z) = 1 + sign z^2 (tan: +1, tanh: -1)."""
    def g(z):
        zz = T.mul(z, z)
        return [1 + sign * zz[0], *[sign * t for t in zz[1:]]]
    return g


def _logistic_g(z):
    zz = T.mul(z, z)
    return [a - b for a, b in zip(z, zz)]


def _inverse_trig(denominator: Callable[[list], list], sign: float = 1.0):
    """atan, asin, acos, asinh, acosh, atanh: z' = sign x' / d(x)."""
    def fn(x, out):
        if len(x) == 1:
            return [out]
        w = T.div(T.deriv(x), denominator(x)[:-1])
        return T.integrate([t * sign for t in w], out)
    return fn


def _one_minus_sq(x):
    xx = T.mul(x, x)
    return [1 - xx[0], *[-t for t in xx[1:]]]


def _one_plus_sq(x):
    xx = T.mul(x, x)
    return [1 + xx[0], *xx[1:]]


def _sqrt_of(poly: Callable[[list], list]):
    def d(x):
        p = poly(x)
        return T.sqrt(p, lax.sqrt(p[0]))
    return d


def _sq_minus_one(x):
    xx = T.mul(x, x)
    return [xx[0] - 1, *xx[1:]]


def _atan2(prim: Primitive):
    """atan2(y, x): z' = (x y' - y x') / (x^2 + y^2)."""
    def rule(ctx, primals, series):
        y, x = primals
        out = prim.bind(y, x)
        fy, fx = [y, *series[0]], [x, *series[1]]
        if len(fy) == 1:
            return out, []
        num = [a - b for a, b in zip(T.mul(fx[:-1], T.deriv(fy)), T.mul(fy[:-1], T.deriv(fx)))]
        den = [a + b for a, b in zip(T.mul(fx, fx), T.mul(fy, fy))]
        return out, T.integrate(T.div(num, den[:-1]), out)[1:]
    return rule


def _sin_or_cos(which: int, hyperbolic: bool = False):
    """sin and cos (sinh and cosh) need each other's series; `out` is one of the two."""
    def fn(x, out):
        if which == 0:
            s0, c0 = out, (lax.cosh(x[0]) if hyperbolic else lax.cos(x[0]))
        else:
            s0, c0 = (lax.sinh(x[0]) if hyperbolic else lax.sin(x[0])), out
        pair = T.sinh_cosh(x, s0, c0) if hyperbolic else T.sin_cos(x, s0, c0)
        return pair[which]
    return fn


def _clamp(prim: Primitive):
    """The series of whichever of lo, x, hi the result is (ties to x, then lo)."""
    def rule(ctx, primals, series):
        lo, x, hi = primals
        out = prim.bind(lo, x, hi)
        at_x = pnp.logical_and(x >= lo, x <= hi)
        at_lo = pnp.logical_and(lo > x, lo <= hi)
        return out, [pnp.where(at_x, sx, pnp.where(at_lo, sl, sh)) * pnp.ones_like(out)
                     for sl, sx, sh in zip(*series)]
    return rule


def _convert(prim: Primitive):
    """Linear between floating types; to an integer or bool type: no series."""
    linear = linear_rule(prim)

    def rule(ctx, primals, series, *, new_dtype, **params):
        if lax_float(new_dtype):
            return linear(ctx, primals, series, new_dtype=new_dtype, **params)
        return prim.bind(*primals, new_dtype=new_dtype, **params), zero_series
    return rule


def lax_float(dtype: Any) -> bool:
    dtype = np.dtype(dtype)
    return dtype.kind in "fc" or dtype.name == "bfloat16"


def _unary(fn):
    return lambda prim: unary_rule(prim, fn)


LN2 = math.log(2.0)

MAKERS: dict[str, Callable[[Primitive], Callable]] = {
    # linear: the operation applies to every term
    **{name: linear_rule for name in ("add", "sub", "neg", "select_n", "add_any")},
    # piecewise constant: no series
    **{name: zero_rule for name in ("sign", "floor", "ceil", "round", "is_finite", "eq", "ne",
                                    "lt", "le", "gt", "ge", "and", "or", "xor", "not")},
    "mul": bilinear_rule,
    "div": _div,
    "rem": _rem,
    "max": lambda p: _max_min(p, lambda x, y: x > y),
    "min": lambda p: _max_min(p, lambda x, y: x < y),
    "abs": _unary(_abs),
    "square": _unary(_square),
    "integer_pow": _unary(_integer_pow),
    "pow": _pow,
    "sqrt": _unary(lambda x, out: T.sqrt(x, out)),
    "rsqrt": _unary(lambda x, out: T.power_const(x, -0.5, out)),
    "cbrt": _unary(lambda x, out: T.power_const(x, 1.0 / 3.0, out)),
    "exp": _unary(lambda x, out: T.exp(x, out)),
    "exp2": _unary(lambda x, out: T.exp(T.scale(x, LN2), out)),
    "expm1": _unary(lambda x, out: T.exp(x, lax.exp(x[0]), out)),
    "log": _unary(lambda x, out: T.log(x, out)),
    "log1p": _unary(lambda x, out: T.log(T.shift(x, 1.0), out)),
    "sin": _unary(_sin_or_cos(0)),
    "cos": _unary(_sin_or_cos(1)),
    "sinh": _unary(_sin_or_cos(0, hyperbolic=True)),
    "cosh": _unary(_sin_or_cos(1, hyperbolic=True)),
    "tan": _unary(_ode(_one_plus_square(+1))),
    "tanh": _unary(_ode(_one_plus_square(-1))),
    "logistic": _unary(_ode(_logistic_g)),
    "atan": _unary(_inverse_trig(_one_plus_sq)),
    "asin": _unary(_inverse_trig(_sqrt_of(_one_minus_sq))),
    "acos": _unary(_inverse_trig(_sqrt_of(_one_minus_sq), -1.0)),
    "asinh": _unary(_inverse_trig(_sqrt_of(_one_plus_sq))),
    "acosh": _unary(_inverse_trig(_sqrt_of(_sq_minus_one))),
    "atanh": _unary(_inverse_trig(_one_minus_sq)),
    "atan2": _atan2,
    "clamp": _clamp,
    "convert_element_type": _convert,
    # special functions (plugax-special), when installed: from their jvp rules
    **{name: rule_from_jvp for name in ("erf", "erfc", "erf_inv", "lgamma", "digamma")},
}
