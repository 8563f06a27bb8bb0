"""plugax.scipy.special, first part: the functions built on the family's primitives.

SciPy's semantics, as JAX gives them: integer and bool operands become the
default float dtype (weak Python scalars take the other operand's), operands
broadcast, and edge values are JAX's (what `jit` computes). Everything here is
written with primitives — the family's and other families' through
`plugax.lax`/`plugax.numpy` — so jit, vmap and grad need no rules of their own.
The elementwise family owns expit, logit, xlogy, xlog1py, entr, rel_entr, kl_div.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

import plugax
import plugax.lax as lax
import plugax.numpy as pnp
from plugax.extend import promote_args

from .numpy_math import EULER_MACLAURIN as _EM_COEFFS

from .expanded import igamma_p, igammac_p, regularized_incomplete_beta_p, bessel_i0e_p
from .primitives import (bessel_i1e_p, digamma_p, erf_inv_p, erf_p, erfc_p, lgamma_p,
                         polygamma_p, zeta_p)

__all__ = ["SCIPY"]


def floats(name: str, *args: Any) -> list:
    """The operands at their common inexact dtype, broadcast (rank-0 ones kept)."""
    return promote_args(name, *args, category="inexact")


def erf(x: Any) -> Any:
    """2/sqrt(pi) * integral of exp(-t^2) from 0 to x."""
    return erf_p.bind(*floats("erf", x))


def erfc(x: Any) -> Any:
    """1 - erf(x), without the cancellation for large x."""
    return erfc_p.bind(*floats("erfc", x))


def erfinv(x: Any) -> Any:
    """The inverse of erf on [-1, 1]."""
    return erf_inv_p.bind(*floats("erfinv", x))


def gammaln(x: Any) -> Any:
    """log |Gamma(x)|."""
    return lgamma_p.bind(*floats("gammaln", x))


def digamma(x: Any) -> Any:
    """psi(x) = d/dx log Gamma(x)."""
    return digamma_p.bind(*floats("digamma", x))


def polygamma(n: Any, x: Any) -> Any:
    """The n-th derivative of digamma (n a whole number; not differentiable in n)."""
    return polygamma_p.bind(*floats("polygamma", n, x))


def zeta(x: Any, q: Any = None) -> Any:
    """The Hurwitz zeta function sum_k (k + q)^-x; Riemann's (q = 1) when q is None
    (SciPy's; JAX raises for q=None). Differentiable in both arguments (as JAX's)."""
    return _zeta(*floats("zeta", x, 1 if q is None else q))


@plugax.custom_jvp
def _zeta(x: Any, q: Any) -> Any:
    return zeta_p.bind(x, q)


def _zeta_euler_maclaurin(x: Any, q: Any, shift: int = 16, terms: int = 10) -> Any:
    """zeta(x, q) by Euler-Maclaurin with a fixed shift, written with differentiable
    operations: its derivative in x is the derivative of zeta in x (for q > 0 and x up
    to about 2 pi (q + shift), where the correction series converges)."""
    total = pnp.zeros_like(x * q)
    for k in range(shift):
        total = total + pnp.exp(-x * pnp.log(q + k))
    a = q + shift
    log_a = pnp.log(a)
    out = total + pnp.exp((1.0 - x) * log_a) / (x - 1.0) + 0.5 * pnp.exp(-x * log_a)
    rising = x
    for j, c in enumerate(_EM_COEFFS[:terms]):
        out = out + c * rising * pnp.exp((-x - 2 * j - 1) * log_a)
        rising = rising * (x + 2 * j + 1) * (x + 2 * j + 2)
    return out


@_zeta.defjvp
def _zeta_jvp(primals: tuple, tangents: tuple) -> tuple:
    """d/dq = -x zeta(x + 1, q); d/dx through the Euler-Maclaurin form (JAX: a series)."""
    (x, q), (tx, tq) = primals, tangents
    out = _zeta(x, q)
    safe = pnp.where(q > 0, q, 1.0)
    _, dx = plugax.jvp(lambda s: _zeta_euler_maclaurin(s, safe), (x,), (tx,))
    dx = pnp.where(q > 0, dx, np.nan)
    return out, dx - tq * x * _zeta(x + 1.0, q)


def gammainc(a: Any, x: Any) -> Any:
    """The regularized lower incomplete gamma function P(a, x)."""
    return igamma_p.bind(*floats("gammainc", a, x))


def gammaincc(a: Any, x: Any) -> Any:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return igammac_p.bind(*floats("gammaincc", a, x))


def betainc(a: Any, b: Any, x: Any) -> Any:
    """The regularized incomplete beta function I_x(a, b) (differentiable in x only)."""
    return regularized_incomplete_beta_p.bind(*floats("betainc", a, b, x))


def betaln(a: Any, b: Any) -> Any:
    """log |B(a, b)| = log|Gamma(a)| + log|Gamma(b)| - log|Gamma(a + b)|."""
    a, b = floats("betaln", a, b)
    return lgamma_p.bind(a) + lgamma_p.bind(b) - lgamma_p.bind(a + b)


def gammasgn(x: Any) -> Any:
    """The sign of Gamma(x): 1 for x > 0, alternating between the poles below 0, where
    it is NaN (as JAX: SciPy gives 0 at the poles since 1.15 is not followed)."""
    (x,) = floats("gammasgn", x)
    floor = pnp.floor(x)
    sign = pnp.where(pnp.fmod(floor, 2.0) == 0.0, 1.0, -1.0)
    out = pnp.where(x > 0, 1.0, pnp.where(x == floor, np.nan, sign))
    return pnp.where(x == 0, pnp.copysign(pnp.ones_like(x), x), out)


def gamma(x: Any) -> Any:
    """Gamma(x) = gammasgn(x) * exp(gammaln(x))."""
    (x,) = floats("gamma", x)
    return gammasgn(x) * pnp.exp(lgamma_p.bind(x))


def beta(a: Any, b: Any) -> Any:
    """B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b), as sign * exp(betaln)."""
    a, b = floats("beta", a, b)
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * pnp.exp(betaln(a, b))


def loggamma(x: Any) -> Any:
    """The principal branch of log Gamma on reals: gammaln for x >= 0, NaN below
    (where log Gamma is complex)."""
    (x,) = floats("loggamma", x)
    return pnp.where(x < 0, np.nan, lgamma_p.bind(x))


def factorial(n: Any, exact: bool = False) -> Any:
    """n! = Gamma(n + 1) (0 for n < 0, as SciPy); `exact=True` is not supported (JAX
    neither: it would need arbitrary-precision integers)."""
    if exact:
        raise NotImplementedError("plugax.scipy.special.factorial: exact=True is not "
                                  "supported (as in JAX); use exact=False")
    (n,) = floats("factorial", n)
    return pnp.where(n < 0, 0.0, pnp.exp(lgamma_p.bind(n + 1.0)))


def comb(N: Any, k: Any, *, repetition: bool = False) -> Any:
    """N choose k as a float, exp(gammaln(N+1) - gammaln(k+1) - gammaln(N-k+1)); 0 outside
    0 <= k <= N. With repetition, (N + k - 1) choose k."""
    N, k = floats("comb", N, k)
    if repetition:
        return pnp.where((k == 0) & (N >= 0), 1.0, comb(N + k - 1.0, k))
    inside = (k <= N) & (N >= 0) & (k >= 0)
    N, k = pnp.where(inside, N, 0.0), pnp.where(inside, k, 0.0)   # finite grads outside
    out = pnp.exp(lgamma_p.bind(N + 1.0) - lgamma_p.bind(k + 1.0) - lgamma_p.bind(N - k + 1.0))
    return pnp.where(inside, out, 0.0)


def poch(z: Any, m: Any) -> Any:
    """The rising factorial (z)_m = Gamma(z + m) / Gamma(z)."""
    z, m = floats("poch", z, m)
    sign = gammasgn(z + m) * gammasgn(z)
    out = sign * pnp.exp(lgamma_p.bind(z + m) - lgamma_p.bind(z))
    return pnp.where(m == 0, 1.0, out)


def multigammaln(a: Any, d: int) -> Any:
    """log of the multivariate gamma function of dimension d:
    d(d-1)/4 log(pi) + sum_j gammaln(a - j/2), j = 0 .. d-1."""
    d = int(d)
    if d < 1:
        raise ValueError(f"plugax.scipy.special.multigammaln: d must be a positive integer, "
                         f"got {d}")
    (a,) = floats("multigammaln", a)
    out = d * (d - 1) / 4 * math.log(math.pi)
    for j in range(d):
        out = out + lgamma_p.bind(a - j / 2)
    return out


def i0e(x: Any) -> Any:
    """exp(-|x|) I_0(x), the scaled modified Bessel function of order 0."""
    return bessel_i0e_p.bind(*floats("i0e", x))


def i1e(x: Any) -> Any:
    """exp(-|x|) I_1(x), the scaled modified Bessel function of order 1."""
    return bessel_i1e_p.bind(*floats("i1e", x))


def i0(x: Any) -> Any:
    """I_0(x) = exp(|x|) i0e(x)."""
    (x,) = floats("i0", x)
    return pnp.exp(pnp.abs(x)) * bessel_i0e_p.bind(x)


def i1(x: Any) -> Any:
    """I_1(x) = exp(|x|) i1e(x)."""
    (x,) = floats("i1", x)
    return pnp.exp(pnp.abs(x)) * bessel_i1e_p.bind(x)


_SQRT_HALF = math.sqrt(0.5)


def ndtr(x: Any) -> Any:
    """The standard normal CDF, erfc(-x / sqrt 2) / 2 (accurate in both tails)."""
    (x,) = floats("ndtr", x)
    return 0.5 * erfc_p.bind(-x * _SQRT_HALF)


def ndtri(p: Any) -> Any:
    """The inverse of ndtr: Abramowitz & Stegun 26.2.23 as a first guess, then three
    Halley steps on ndtr(y) = p, written for the nearer tail (ndtr or its complement,
    whose relative precision erfc keeps), so small p keeps its digits."""
    (p,) = floats("ndtri", p)
    upper = p > 0.5
    q = pnp.where(upper, 1.0 - p, p)               # the tail probability, <= 1/2
    safe_q = pnp.where((q > 0) & (q <= 0.5), q, 0.5)
    t = pnp.sqrt(-2.0 * pnp.log(safe_q))
    y = -(t - (2.515517 + t * (0.802853 + t * 0.010328))
          / (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308))))   # y <= 0: lower tail
    for _ in range(3):
        f = 0.5 * erfc_p.bind(-y * _SQRT_HALF) - safe_q
        density = pnp.exp(-0.5 * y * y) / math.sqrt(2 * math.pi)
        y = y - f / (density - 0.5 * y * f)
    y = pnp.where(upper, -y, y)
    y = pnp.where(p == 0, -np.inf, pnp.where(p == 1, np.inf, y))
    return pnp.where((p < 0) | (p > 1) | pnp.isnan(p), np.nan, y)


def log_ndtr(x: Any, series_order: int = 3) -> Any:
    """log ndtr(x): log1p(-ndtr(-x)) for x > 0 (JAX: -ndtr(-x) above `upper`, log ndtr(x)
    below, which loses digits between 0 and `upper`), log ndtr(x) down to `lower`; below
    `lower` (where ndtr underflows) the asymptotic series
    -x^2/2 - log(-x) - log(2 pi)/2 + log(1 + sum_n (-1)^n (2n-1)!! / x^(2n))."""
    if not isinstance(series_order, int) or not 0 <= series_order <= 30:
        raise ValueError(f"plugax.scipy.special.log_ndtr: series_order must be an int in "
                         f"[0, 30], got {series_order!r}")
    (x,) = floats("log_ndtr", x)
    wide = np.dtype(x.dtype) == np.float64
    lower = -20.0 if wide else -10.0
    x_mid = pnp.where((x <= 0) & (x >= lower), x, -1.0)
    mid = pnp.log(0.5 * erfc_p.bind(-x_mid * _SQRT_HALF))
    x_hi = pnp.where(x > 0, x, 1.0)
    high = pnp.log1p(-0.5 * erfc_p.bind(x_hi * _SQRT_HALF))
    x_lo = pnp.where(x < lower, x, lower - 1.0)
    inv = 1.0 / (x_lo * x_lo)
    series, term, odd = pnp.ones_like(x_lo), pnp.ones_like(x_lo), 1.0
    for n in range(1, series_order + 1):
        odd = odd * (2 * n - 1)
        term = term * -inv
        series = series + odd * term
    low = (-0.5 * x_lo * x_lo - pnp.log(-x_lo) - 0.5 * math.log(2 * math.pi)
           + pnp.log(series))
    return pnp.where(x > 0, high, pnp.where(x < lower, low, mid))


def _axes(axis: int | Sequence[int] | None, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    return tuple(int(a) % max(ndim, 1) for a in ((axis,) if isinstance(axis, int) else axis))


def logsumexp(a: Any, axis: int | Sequence[int] | None = None, b: Any = None,
              keepdims: bool = False, return_sign: bool = False, where: Any = None) -> Any:
    """log |sum(b * exp(a))| over `axis`, stable: the (gradient-stopped) max is
    subtracted first, so the derivative is softmax(a) * b / sum, whichever element
    the max picks. With return_sign, (log |sum|, sign of sum); without it, a negative
    sum gives NaN (as JAX). Entries where b == 0 or where `where` is False do not count.
    """
    a = floats("logsumexp", a)[0] if b is None else floats("logsumexp", a, b)[0]
    if b is not None:
        b = pnp.asarray(b)
        a = pnp.where(b != 0, a, -np.inf)
    if where is not None:
        a = pnp.where(where, a, -np.inf)
    amax = pnp.max(a, axis=axis, keepdims=True, initial=-np.inf)
    amax = lax.stop_gradient(pnp.where(pnp.isfinite(amax), amax, 0.0))
    exp_a = pnp.exp(a - amax)
    if b is not None:
        exp_a = exp_a * b
    total = pnp.sum(exp_a, axis=axis, keepdims=keepdims)
    sign = pnp.sign(total)
    amax = amax if keepdims else pnp.squeeze(amax, _axes(axis, a.ndim))
    out = pnp.log(pnp.abs(total)) + amax
    if return_sign:
        return out, sign
    if b is not None:
        out = pnp.where(sign < 0, np.nan, out)
    return out


def log_softmax(x: Any, /, *, axis: int | Sequence[int] | None = None) -> Any:
    """x - logsumexp(x, axis): log-probabilities over `axis` (all axes when None)."""
    (x,) = floats("log_softmax", x)
    shifted = x - lax.stop_gradient(pnp.max(x, axis=axis, keepdims=True))
    return shifted - pnp.log(pnp.sum(pnp.exp(shifted), axis=axis, keepdims=True))


def softmax(x: Any, /, *, axis: int | Sequence[int] | None = None) -> Any:
    """exp(x) / sum(exp(x)) over `axis` (all axes when None), the max subtracted first."""
    (x,) = floats("softmax", x)
    unnormalized = pnp.exp(x - lax.stop_gradient(pnp.max(x, axis=axis, keepdims=True)))
    return unnormalized / pnp.sum(unnormalized, axis=axis, keepdims=True)


SCIPY = {fn.__name__: fn for fn in (
    erf, erfc, erfinv, gammaln, digamma, polygamma, zeta, gammainc, gammaincc, betainc,
    betaln, beta, gamma, gammasgn, loggamma, factorial, comb, poch, multigammaln, i0, i0e,
    i1, i1e, ndtr, ndtri, log_ndtr, logsumexp, softmax, log_softmax)}
