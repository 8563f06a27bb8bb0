"""Truncated Taylor-series arithmetic, the vocabulary of the jet rules.

A *full series* here is a list ``[x_0, x_1, ..., x_K]`` of Taylor coefficients
(x_0 is the primal). Everything is written with array operators and
`plugax.numpy`, never NumPy, so the rules built on it trace under `jit`, `vmap`
and `jvp` like any other plugax code.

Most elementary functions satisfy a first-order ODE along the curve x(t):
exp' = exp x', log' = x'/x, tan' = (1 + tan^2) x'. Matching coefficients of
t^(k-1) in ``z' = g(z) x'`` gives z_k from z_0..z_(k-1), which is how the
rules below get every order from one formula instead of a table per order.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import plugax.numpy as pnp

__all__ = ["mul", "div", "deriv", "integrate", "ode", "exp", "log", "sqrt", "power_const",
           "integer_power", "sin_cos", "sinh_cosh", "scale", "shift"]

Series = list


def mul(x: Sequence[Any], y: Sequence[Any], op: Callable = lambda a, b: a * b) -> Series:
    """Cauchy product: z_k = sum_i op(x_i, y_(k-i)); `op` any bilinear map (dot_general)."""
    out = []
    for k in range(len(x)):
        term = op(x[0], y[k])
        for i in range(1, k + 1):
            term = term + op(x[i], y[k - i])
        out.append(term)
    return out


def div(x: Sequence[Any], y: Sequence[Any]) -> Series:
    """z = x / y, from z * y = x: z_k = (x_k - sum_(i>=1) y_i z_(k-i)) / y_0."""
    out: Series = []
    for k in range(len(x)):
        acc = x[k]
        for i in range(1, k + 1):
            acc = acc - y[i] * out[k - i]
        out.append(acc / y[0])
    return out


def deriv(x: Sequence[Any]) -> Series:
    """The series of dx/dt (one term shorter): k x_k at t^(k-1)."""
    return [x[k] * k for k in range(1, len(x))]


def integrate(w: Sequence[Any], z0: Any) -> Series:
    """The series z with z(0) = z0 and dz/dt = w: z_k = w_(k-1) / k."""
    return [z0, *[w[k - 1] / k for k in range(1, len(w) + 1)]]


def ode(x: Sequence[Any], z0: Any, g: Callable[[Series], Series]) -> Series:
    """z with z' = g(z) x' and z(0) = z0, where g maps a full series to one.

    g(z) up to t^m needs z only up to t^m, so z is extended one coefficient at a
    time: k z_k = sum_(j=1..k) j x_j g(z)_(k-j).
    """
    z: Series = [z0]
    for k in range(1, len(x)):
        gz = g(z)
        acc = x[1] * gz[k - 1]
        for j in range(2, k + 1):
            acc = acc + x[j] * gz[k - j] * j
        z.append(acc / k)
    return z


def exp(x: Sequence[Any], e0: Any, z0: Any = None) -> Series:
    """exp along x, e0 = exp(x_0); z0 replaces the primal (expm1's, exp2's value)."""
    z = ode(x, e0, lambda zs: zs)
    return [e0 if z0 is None else z0, *z[1:]]


def log(x: Sequence[Any], z0: Any) -> Series:
    """log along x: z' = x'/x (z0 = log(x_0), or log1p's value for x = 1 + u)."""
    return integrate(div(deriv(x), x[:-1]), z0) if len(x) > 1 else [z0]


def sqrt(x: Sequence[Any], z0: Any) -> Series:
    """z^2 = x: z_k = (x_k - sum_(i=1..k-1) z_i z_(k-i)) / (2 z_0)."""
    z: Series = [z0]
    for k in range(1, len(x)):
        acc = x[k]
        for i in range(1, k):
            acc = acc - z[i] * z[k - i]
        z.append(acc / (z0 * 2))
    return z


def power_const(x: Sequence[Any], a: Any, z0: Any) -> Series:
    """z = x^a for a constant exponent a (scalar or array): x z' = a z x' gives
    k x_0 z_k = sum_(j=1..k) (a j - (k - j)) x_j z_(k-j)."""
    z: Series = [z0]
    for k in range(1, len(x)):
        acc = x[1] * z[k - 1] * (a - (k - 1))
        for j in range(2, k + 1):
            acc = acc + x[j] * z[k - j] * (a * j - (k - j))
        z.append(acc / (x[0] * k))
    return z


def integer_power(x: Sequence[Any], n: int, one: Any) -> Series:
    """x^n by repeated squaring of series: exact at x_0 = 0, unlike the recurrence."""
    if n < 0:
        return div([one, *[pnp.zeros_like(x[0])] * (len(x) - 1)], integer_power(x, -n, one))
    result: Series | None = None
    base = list(x)
    while n:
        if n & 1:
            result = base if result is None else mul(result, base)
        n >>= 1
        if n:
            base = mul(base, base)
    return result if result is not None else [one, *[pnp.zeros_like(x[0])] * (len(x) - 1)]


def sin_cos(x: Sequence[Any], s0: Any, c0: Any, sign: int = -1) -> tuple[Series, Series]:
    """sin and cos along x together (sign=+1: sinh and cosh): s' = c x', c' = sign s x'."""
    s, c = [s0], [c0]
    for k in range(1, len(x)):
        sk = x[1] * c[k - 1]
        ck = x[1] * s[k - 1]
        for j in range(2, k + 1):
            sk = sk + x[j] * c[k - j] * j
            ck = ck + x[j] * s[k - j] * j
        s.append(sk / k)
        c.append(ck * (sign / k))
    return s, c


def sinh_cosh(x: Sequence[Any], s0: Any, c0: Any) -> tuple[Series, Series]:
    return sin_cos(x, s0, c0, sign=+1)


def scale(x: Sequence[Any], factor: Any) -> Series:
    return [t * factor for t in x]


def shift(x: Sequence[Any], c: Any) -> Series:
    """x + c (a constant): only the primal moves."""
    return [x[0] + c, *x[1:]]
