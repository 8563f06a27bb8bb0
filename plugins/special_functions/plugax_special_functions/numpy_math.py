"""The eager impls: special functions in float64 NumPy, rounded once to the operand's dtype.

Why float64 for every dtype: XLA evaluates these functions with polynomial or
rational approximations accurate to a few units in the last place of the dtype
it computes in. A float64 value rounded once to float32 is within that
distance of what `jit` computes, so eager and jitted results agree to float
tolerance without re-creating each of XLA's float32 kernels bit for bit; and in
float64 the algorithms below are as accurate as XLA's (Cephes-derived) ones.
No SciPy: `import plugax` must not pay for it, and plugax does not depend on it.

Edge values follow XLA, not SciPy (what `jit` and JAX return): lgamma is +inf
at its poles and at -inf; digamma is NaN at its poles 0, -1, -2, ... and at
-inf; zeta(s, q) is +inf at s == 1 and at q a non-positive integer, NaN for
s < 1 and for q < 0 with s not an integer.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Callable

import numpy as np

__all__ = ["erf", "erfc", "erf_inv", "lgamma", "digamma", "zeta", "polygamma", "bessel_i1e",
           "bessel_i0e", "bessel_ie", "rounded", "EULER_MACLAURIN"]


def rounded(fn: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    """`fn` computed in float64 and rounded to the first operand's dtype."""
    def impl(*xs: np.ndarray) -> np.ndarray:
        dtype = np.asarray(xs[0]).dtype
        with np.errstate(all="ignore"):
            out = fn(*(np.asarray(x, np.float64) for x in xs))
        return np.asarray(out).astype(dtype)
    impl.__name__ = fn.__name__
    return impl


def _lgamma1(x: float) -> float:
    try:
        return math.lgamma(x)
    except ValueError:    # a pole: 0, -1, -2, ...
        return math.inf


_erf = np.frompyfunc(math.erf, 1, 1)
_erfc = np.frompyfunc(math.erfc, 1, 1)
_lgamma = np.frompyfunc(_lgamma1, 1, 1)


def erf(x: np.ndarray) -> np.ndarray:
    return np.asarray(_erf(x), np.float64)


def erfc(x: np.ndarray) -> np.ndarray:
    return np.asarray(_erfc(x), np.float64)


def lgamma(x: np.ndarray) -> np.ndarray:
    return np.asarray(_lgamma(x), np.float64)


def erf_inv(x: np.ndarray) -> np.ndarray:
    """Winitzki's closed-form guess (relative error 2e-3), then Halley steps.

    For |x| >= 1/2 the steps solve erfc(y) = 1 - |x| instead of erf(y) = |x|:
    1 - |x| is exact there, and erfc keeps its relative precision where erf
    rounds to 1. Halley's step for erf and erfc is the same, y -= f / (f' + y f),
    because f'' = -2 y f'; three steps bring 2e-3 below float64 rounding.
    """
    a = np.abs(x)
    rest = 1.0 - a                          # exact for a >= 1/2
    log_term = np.log(rest * (1.0 + a))
    c = 2.0 / (math.pi * 0.147) + log_term / 2
    y = np.sqrt(np.sqrt(c * c - log_term / 0.147) - c)
    tail = a >= 0.5
    for _ in range(4):
        d = 2.0 / math.sqrt(math.pi) * np.exp(-y * y)
        f = np.where(tail, rest - erfc(y), erf(y) - a)   # f' = d for both forms
        y = y - f / (d + y * f)
    y = np.where(a == 1.0, np.inf, y)
    y = np.where(a > 1.0, np.nan, y)
    return np.copysign(y, x)


def _poles(x: np.ndarray) -> np.ndarray:
    return (x <= 0) & (x == np.floor(x))


# psi(y) ~ log y - 1/(2y) - sum_k B_2k / (2k y^2k) for y >= 10; B_2k / (2k):
_PSI_ASYMPTOTIC = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)


def digamma(x: np.ndarray) -> np.ndarray:
    """psi(x): reflection below 1/2, the recurrence up to 10, then the asymptotic series.

    pi / tan(pi x) is taken at x - round(x), where tan is exact to rounding (tan
    has period pi), so the reflection keeps its precision far from 0.
    """
    reflect = x < 0.5
    y = np.where(reflect, 1.0 - x, x)
    acc = np.zeros_like(y)
    for _ in range(10):
        small = y < 10.0
        acc = acc - np.where(small, 1.0 / y, 0.0)
        y = np.where(small, y + 1.0, y)
    inv2 = 1.0 / (y * y)
    series = np.zeros_like(y)
    for c in reversed(_PSI_ASYMPTOTIC):
        series = (series + c) * inv2
    out = acc + np.log(y) - 0.5 / y - series
    out = np.where(reflect, out - math.pi / np.tan(math.pi * (x - np.round(x))), out)
    out = np.where(x == np.inf, np.inf, out)
    return np.where(_poles(x) | (x == -np.inf), np.nan, out)


def _bernoulli_even(count: int) -> list[float]:
    """B_2 / 2!, B_4 / 4!, ...: the Euler-Maclaurin coefficients, from exact Bernoulli
    numbers (the Akiyama-Tanigawa recurrence in fractions)."""
    n_max = 2 * count
    b, row = [], [Fraction(0)] * (n_max + 1)
    for m in range(n_max + 1):
        row[m] = Fraction(1, m + 1)
        for j in range(m, 0, -1):
            row[j - 1] = j * (row[j - 1] - row[j])
        b.append(row[0])
    return [float(b[2 * j] / math.factorial(2 * j)) for j in range(1, count + 1)]


EULER_MACLAURIN = _bernoulli_even(12)   # B_2j / (2j)!, j = 1 .. 12
_EM = EULER_MACLAURIN


def zeta(s: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The Hurwitz zeta function sum_k (k + q)^-s, by Euler-Maclaurin summation.

    The first terms are summed until q + n >= 10 + min(s, 90) (so the correction
    series, whose ratio is about (s + 2j) / (2 pi (q + n)), converges), then
    zeta = S + a^(1-s)/(s-1) + a^-s/2 + sum_j B_2j/(2j)! (s)_(2j-1) a^(-s-2j+1).
    """
    s, q = np.broadcast_arrays(s, q)
    target = 10.0 + np.minimum(np.where(np.isfinite(s), s, 0.0), 90.0)
    valid_q = np.where(np.isfinite(q), q, 1.0)
    total = np.zeros(s.shape)
    a = valid_q.copy()
    steps = int(np.max(np.ceil(target - a), initial=0))
    for _ in range(min(steps, 100_000)):
        low = a < target
        if not low.any():
            break
        total = total + np.where(low, np.power(np.where(low, a, 1.0), -s), 0.0)
        a = np.where(low, a + 1.0, a)
    out = total + a ** (1.0 - s) / (s - 1.0) + 0.5 * a ** -s
    rising, power = s.copy(), a ** (-s - 1.0)
    for j, c in enumerate(_EM):
        term = c * rising * power
        out = out + term
        rising = rising * (s + 2 * j + 1) * (s + 2 * j + 2)
        power = power / (a * a)
    q_pole = (q <= 0) & (q == np.floor(q))
    out = np.where(q == np.inf, 0.0, out)
    out = np.where((q < 0) & ~q_pole & (s != np.floor(s)), np.nan, out)
    out = np.where(q_pole | (s == 1.0), np.inf, out)
    return np.where((s < 1.0) | np.isnan(s) | np.isnan(q), np.nan, out)


def polygamma(m: np.ndarray, x: np.ndarray) -> np.ndarray:
    """psi^(m)(x) = (-1)^(m+1) m! zeta(m + 1, x) for m = 1, 2, ...; digamma for m = 0;
    NaN for an order that is negative or not a whole number."""
    m, x = np.broadcast_arrays(m, x)
    whole = (m >= 0) & (m == np.floor(m))
    mm = np.where(whole, m, 1.0)
    sign = np.where(np.mod(mm, 2.0) == 0.0, -1.0, 1.0)
    factorial = np.exp(lgamma(mm + 1.0))
    out = sign * factorial * zeta(mm + 1.0, x)
    out = np.where(m == 0, digamma(x), out)
    return np.where(whole, out, np.nan)


def bessel_ie(order: int, x: Any, xp: Any = np) -> Any:
    """exp(-|x|) I_order(x): the power series (positive terms) for |x| <= 20,
    Hankel's asymptotic series beyond (its smallest term, near k = 2|x|, is below
    exp(-40)); I_1 is odd, I_0 even. `xp` is NumPy (the eager impl, in float64) or
    plugax.numpy (bessel_i0e's decomposition: the same program, compiled)."""
    np = xp   # noqa: F811 -- the same code for both namespaces
    a = np.abs(x)
    small = np.minimum(a, 20.0)
    half = small / 2
    term = half ** order / math.factorial(order)
    series = term
    for k in range(1, 80):
        term = term * half * half / (k * (k + order))
        series = series + term
    series = series * np.exp(-small)
    big = np.maximum(a, 20.0)
    mu, term, hankel = 4.0 * order * order, np.ones_like(big), np.ones_like(big)
    for k in range(1, 40):
        term = -term * (mu - (2 * k - 1) ** 2) / (k * 8.0 * big)
        hankel = hankel + term
    hankel = hankel / np.sqrt(2 * math.pi * big)
    out = np.where(a <= 20.0, series, np.where(a == np.inf, 0.0, hankel))
    return np.copysign(out, x) if order % 2 else out


def bessel_i1e(x: np.ndarray) -> np.ndarray:
    return bessel_ie(1, x)


def bessel_i0e(x: np.ndarray) -> np.ndarray:
    return bessel_ie(0, x)
