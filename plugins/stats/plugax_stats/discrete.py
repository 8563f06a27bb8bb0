"""Discrete distributions: bernoulli, binom, betabinom, poisson, geom, nbinom, multinomial.

The log-pmfs are built on xlogy/xlog1py so that 0*log(0) terms are 0 (p = 0 or 1
are valid parameters), and answer -inf outside the support, as JAX's do.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import plugax.numpy as jnp
from plugax.extend import get_aval, promote_dtypes

from ._common import NEG_INF, promote, special
from ._registry import derived, member

ArrayLike = Any


def _fns(user: str, *names: str) -> list:
    return [special(name, user) for name in names]


# ---- bernoulli -----------------------------------------------------------------------------

@member("bernoulli")
def bernoulli_logpmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Any:
    k, p, loc = promote("bernoulli.logpmf", k, p, loc)
    xlogy, xlog1py = _fns("bernoulli.logpmf", "xlogy", "xlog1py")
    x = k - loc
    return jnp.where((x < 0) | (x > 1), NEG_INF, xlogy(x, p) + xlog1py(1 - x, -p))


bernoulli_pmf = derived("bernoulli", "pmf", "exp", bernoulli_logpmf)


@member("bernoulli")
def bernoulli_cdf(k: ArrayLike, p: ArrayLike) -> Any:
    k, p = promote("bernoulli.cdf", k, p)
    value = jnp.where(k < 0, 0.0, jnp.where(k < 1, 1 - p, 1.0))
    return jnp.where(jnp.isnan(k) | jnp.isnan(p) | (p < 0) | (p > 1), np.nan, value)


@member("bernoulli")
def bernoulli_ppf(q: ArrayLike, p: ArrayLike) -> Any:
    q, p = promote("bernoulli.ppf", q, p)
    bad = jnp.isnan(q) | jnp.isnan(p) | (p < 0) | (p > 1) | (q < 0) | (q > 1)
    return jnp.where(bad, np.nan, jnp.where(q <= 1 - p, 0.0, 1.0))


# ---- binom ---------------------------------------------------------------------------------

@member("binom")
def binom_logpmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Any:
    k, n, p, loc = promote("binom.logpmf", k, n, p, loc)
    gammaln, xlogy, xlog1py = _fns("binom.logpmf", "gammaln", "xlogy", "xlog1py")
    y = k - loc
    log_comb = gammaln(n + 1) - gammaln(y + 1) - gammaln(n - y + 1)
    linear = xlogy(y, p) + xlog1py(n - y, -p)
    value = jnp.where(((y == 0) & (n == 0)) | (linear == 0), 0.0, log_comb + linear)
    return jnp.where((k >= loc) & (k < loc + n + 1), value, NEG_INF)


binom_pmf = derived("binom", "pmf", "exp", binom_logpmf)


# ---- betabinom -----------------------------------------------------------------------------

@member("betabinom")
def betabinom_logpmf(k: ArrayLike, n: ArrayLike, a: ArrayLike, b: ArrayLike,
                     loc: ArrayLike = 0) -> Any:
    k, n, a, b, loc = promote("betabinom.logpmf", k, n, a, b, loc)
    betaln = special("betaln", "betabinom.logpmf")
    y = jnp.floor(k) - loc
    log_comb = -(jnp.log1p(n) + betaln(n - y + 1, y + 1))
    value = log_comb + betaln(y + a, n - y + b) - betaln(a, b)
    value = jnp.where((y == 0) & (n == 0), 0.0, value)
    value = jnp.where((y < -loc) | (y > n) | (y + a <= 0), NEG_INF, value)
    return jnp.where((n < 0) | (a <= 0) | (b <= 0), np.nan, value)


betabinom_pmf = derived("betabinom", "pmf", "exp", betabinom_logpmf)


# ---- poisson -------------------------------------------------------------------------------

@member("poisson")
def poisson_logpmf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Any:
    k, mu, loc = promote("poisson.logpmf", k, mu, loc)
    xlogy, gammaln = _fns("poisson.logpmf", "xlogy", "gammaln")
    x = k - loc
    value = xlogy(x, mu) - gammaln(x + 1) - mu
    return jnp.where((x < 0) | (jnp.round(k) != k), NEG_INF, value)


poisson_pmf = derived("poisson", "pmf", "exp", poisson_logpmf)


@member("poisson")
def poisson_cdf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Any:
    k, mu, loc = promote("poisson.cdf", k, mu, loc)
    x = k - loc
    mass = special("gammaincc", "poisson.cdf")(jnp.floor(1 + jnp.maximum(x, 0)), mu)
    return jnp.where(x < 0, 0.0, mass)


@member("poisson")
def poisson_entropy(mu: ArrayLike, loc: ArrayLike = 0) -> Any:
    """The entropy in nats: summed over the support for mu < 100 (35 terms below 10, 250
    below 100), the asymptotic series above, as JAX computes it."""
    mu, loc = promote("poisson.entropy", mu, loc)
    shape = jnp.broadcast_shapes(jnp.shape(mu), jnp.shape(loc))
    flat = jnp.ravel(mu)
    entr = special("entr", "poisson.entropy")

    def summed(terms: int, upper: Any) -> Any:
        k = jnp.arange(terms, dtype=flat.dtype)[:, None]
        probs = jnp.where(k < jnp.ceil(upper)[None, :], poisson_pmf(k, flat), 0.0)
        return jnp.sum(entr(probs), axis=0)

    large = 0.5 * jnp.log(2 * np.pi * np.e * flat) - 1 / (12 * flat)
    value = jnp.where(flat < 100, summed(250, flat + 10 * jnp.sqrt(flat) + 20), large)
    value = jnp.where(flat < 10, summed(35, flat + 20), value)
    value = jnp.where(flat == 0, 0.0, value)
    return jnp.broadcast_to(jnp.reshape(value, jnp.shape(mu)), shape)


# ---- geom / nbinom -------------------------------------------------------------------------

@member("geom")
def geom_logpmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Any:
    k, p, loc = promote("geom.logpmf", k, p, loc)
    x = k - loc
    value = special("xlog1py", "geom.logpmf")(x - 1, -p) + jnp.log(p)
    return jnp.where(x <= 0, NEG_INF, value)


geom_pmf = derived("geom", "pmf", "exp", geom_logpmf)


@member("nbinom")
def nbinom_logpmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Any:
    k, n, p, loc = promote("nbinom.logpmf", k, n, p, loc)
    gammaln, xlogy = _fns("nbinom.logpmf", "gammaln", "xlogy")
    y = k - loc
    value = (gammaln(y + n) - gammaln(n) - gammaln(y + 1) + xlogy(n, p)
             + xlogy(y, 1 - p))
    return jnp.where(k < loc, NEG_INF, value)


nbinom_pmf = derived("nbinom", "pmf", "exp", nbinom_logpmf)


# ---- multinomial ---------------------------------------------------------------------------

@member("multinomial")
def multinomial_logpmf(x: ArrayLike, n: ArrayLike, p: ArrayLike) -> Any:
    """Counts `x` (integers, last axis the categories) of `n` trials with probabilities `p`."""
    p, = promote("multinomial.logpmf", p)
    x, n = promote_dtypes("multinomial.logpmf", x, n, category="numeric")
    dtype = get_aval(x).dtype
    if dtype.kind not in "iu":
        raise ValueError(f"multinomial.logpmf: x and n must be of integer type; got "
                         f"x.dtype={dtype}, n.dtype={get_aval(n).dtype}")
    gammaln, xlogy = _fns("multinomial.logpmf", "gammaln", "xlogy")
    x, n = x.astype(p.dtype), n.astype(p.dtype)
    value = gammaln(n + 1) + jnp.sum(xlogy(x, p) - gammaln(x + 1), axis=-1)
    return jnp.where(jnp.sum(x) == n, value, NEG_INF)


multinomial_pmf = derived("multinomial", "pmf", "exp", multinomial_logpmf)
