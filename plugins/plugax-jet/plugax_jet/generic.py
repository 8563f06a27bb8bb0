"""Rule makers shared by the families: each takes a primitive and returns its jet rule.

A jet rule is ``rule(ctx, primals_in, series_in, **params) -> (primal_out,
series_out)``: `series_in[i]` is the list of the K Taylor coefficients of
operand i (zeros instantiated), `series_out` a list of K terms or
`zero_series`. A rule whose maker sets ``rule.symbolic_zeros = True`` gets
`zero_series` for operands that carry none (pow uses it to tell a constant
exponent from a varying one).
"""
from __future__ import annotations

from typing import Any, Callable

import plugax
from plugax.extend import Primitive, get_aval

from . import taylor
from .trace import zero_series

__all__ = ["zero_rule", "linear_rule", "bilinear_rule", "unary_rule", "rule_from_jvp",
           "is_float"]

Rule = Callable[..., tuple]


def is_float(x: Any) -> bool:
    dtype = get_aval(x).dtype
    return dtype.kind in "fc" or dtype.name == "bfloat16"


def zero_rule(prim: Primitive) -> Rule:
    """Piecewise-constant results (comparisons, sign, floor, argmax): no series."""
    def rule(ctx, primals, series, **params):
        out = prim.bind(*primals, **params)
        return out, ([zero_series] * len(out) if prim.multiple_results else zero_series)
    return rule


def linear_rule(prim: Primitive) -> Rule:
    """Linear in its floating operands, given the others (indices, predicates): the
    operation applies to each term, the non-floating operands keep their primal.
    Covers add, sub, neg, every structural op, reduce_sum, cumsum, select_n, gather."""
    def rule(ctx, primals, series, **params):
        out = prim.bind(*primals, **params)
        keep = [not is_float(p) for p in primals]
        terms = [prim.bind(*[p if k else s[i] for p, s, k in zip(primals, series, keep)],
                           **params)
                 for i in range(len(series[0]))]
        if prim.multiple_results:
            return out, [list(ts) for ts in zip(*terms)] if terms else [[] for _ in out]
        return out, terms
    return rule


def bilinear_rule(prim: Primitive) -> Rule:
    """Bilinear in two operands (mul, dot_general): the Cauchy product of the series."""
    def rule(ctx, primals, series, **params):
        x, y = primals
        op = lambda a, b: prim.bind(a, b, **params)   # noqa: E731
        full = taylor.mul([x, *series[0]], [y, *series[1]], op)
        return full[0], full[1:]
    return rule


def unary_rule(prim: Primitive, fn: Callable[[list, Any], list]) -> Rule:
    """One operand; `fn(full_series_in, primal_out, **params) -> full_series_out`."""
    def rule(ctx, primals, series, **params):
        out = prim.bind(*primals, **params)
        full = fn([primals[0], *series[0]], out, **params)
        return out, full[1:]
    return rule


def rule_from_jvp(prim: Primitive) -> Rule:
    """A jet rule from the primitive's jvp rule alone, for primitives whose Taylor
    recurrence is not worth writing (reduce_prod, cummax, special functions).

    Along the input curve x(t) = sum_k x_k t^k, the k-th coefficient of
    f(x(t)) is the k-th derivative in t at 0 over k!, got by k nested jvps of
    the scalar function t -> f(x(t)): exact, but 2^k work, so only where a
    closed form is missing. Non-floating operands stay at their primal.
    """
    def rule(ctx, primals, series, **params):
        out = prim.bind(*primals, **params)
        order = len(series[0])
        dtype = next(get_aval(p).dtype for p in primals if is_float(p))

        def along(t):
            xs = []
            for p, s in zip(primals, series):
                if not is_float(p):
                    xs.append(p)
                    continue
                x, power = p, t
                for term in s:
                    x = x + term * power
                    power = power * t
                xs.append(x)
            return prim.bind(*xs, **params)

        terms, f, factorial = [], along, 1.0
        for k in range(1, order + 1):
            f = _derivative(f)
            factorial *= k
            terms.append(f(_zero(dtype)) / factorial)
        if prim.multiple_results:
            return out, [list(ts) for ts in zip(*terms)]
        return out, terms
    return rule


def _derivative(f: Callable) -> Callable:
    def df(t):
        return plugax.jvp(f, (t,), (_one_like(t),))[1]
    return df


def _zero(dtype: Any) -> Any:
    return plugax.numpy.zeros((), dtype)


def _one_like(t: Any) -> Any:
    return plugax.numpy.ones_like(t)
