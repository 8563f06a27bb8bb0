"""Continuous distributions that need special functions: beta, gamma, chi2, gennorm,
vonmises, truncnorm.

The incomplete gamma and beta functions, ndtr/log_ndtr and i0e are looked up in
plugax.scipy.special when called (see `_common.special`), so this family loads
whichever order the special-function families load in.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import plugax.numpy as jnp

from ._common import NEG_INF, promote, special
from ._registry import derived, member
from .continuous import log1mexp, norm_logpdf

ArrayLike = Any


# ---- beta ----------------------------------------------------------------------------------

def _beta_y(name: str, x: Any, a: Any, b: Any, loc: Any, scale: Any) -> tuple:
    x, a, b, loc, scale = promote(name, x, a, b, loc, scale)
    return x, a, b, loc, scale, (x - loc) / scale


@member("beta")
def beta_logpdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0,
                scale: ArrayLike = 1) -> Any:
    x, a, b, loc, scale, y = _beta_y("beta.logpdf", x, a, b, loc, scale)
    xlogy = special("xlogy", "beta.logpdf")
    xlog1py = special("xlog1py", "beta.logpdf")
    value = (xlogy(a - 1, y) + xlog1py(b - 1, -y) - special("betaln", "beta.logpdf")(a, b)
             - jnp.log(scale))
    value = jnp.where((x > loc + scale) | (x < loc), NEG_INF, value)
    return jnp.where((a <= 0) | (b <= 0) | (scale <= 0), np.nan, value)


beta_pdf = derived("beta", "pdf", "exp", beta_logpdf)


@member("beta")
def beta_cdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0,
             scale: ArrayLike = 1) -> Any:
    _, a, b, _, _, y = _beta_y("beta.cdf", x, a, b, loc, scale)
    return special("betainc", "beta.cdf")(a, b, jnp.clip(y, 0, 1))


beta_logcdf = derived("beta", "logcdf", "log", beta_cdf)


@member("beta")
def beta_sf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0,
            scale: ArrayLike = 1) -> Any:
    _, a, b, _, _, y = _beta_y("beta.sf", x, a, b, loc, scale)
    # I_{1-y}(b, a) rather than 1 - I_y(a, b): no cancellation in the upper tail
    return special("betainc", "beta.sf")(b, a, 1 - jnp.clip(y, 0, 1))


beta_logsf = derived("beta", "logsf", "log", beta_sf)


# ---- gamma ---------------------------------------------------------------------------------

@member("gamma")
def gamma_logpdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    x, a, loc, scale = promote("gamma.logpdf", x, a, loc, scale)
    ok = x >= loc
    y = jnp.where(ok, (x - loc) / scale, 1.0)     # a harmless point where x is outside
    value = (special("xlogy", "gamma.logpdf")(a - 1, y) - y
             - special("gammaln", "gamma.logpdf")(a) - jnp.log(scale))
    return jnp.where(ok, value, NEG_INF)


gamma_pdf = derived("gamma", "pdf", "exp", gamma_logpdf)


@member("gamma")
def gamma_cdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    x, a, loc, scale = promote("gamma.cdf", x, a, loc, scale)
    y = jnp.maximum((x - loc) / scale, 0)
    return special("gammainc", "gamma.cdf")(a, y)


gamma_logcdf = derived("gamma", "logcdf", "log", gamma_cdf)


@member("gamma")
def gamma_sf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    x, a, loc, scale = promote("gamma.sf", x, a, loc, scale)
    y = (x - loc) / scale
    return jnp.where(y < 0, 1.0, special("gammaincc", "gamma.sf")(a, jnp.maximum(y, 0)))


gamma_logsf = derived("gamma", "logsf", "log", gamma_sf)


# ---- chi2 ----------------------------------------------------------------------------------

@member("chi2")
def chi2_logpdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    x, df, loc, scale = promote("chi2.logpdf", x, df, loc, scale)
    y = (x - loc) / scale
    half = df / 2
    value = ((half - 1) * jnp.log(y) - y / 2 - special("gammaln", "chi2.logpdf")(half)
             - half * np.log(2.0) - jnp.log(scale))
    return jnp.where(x < loc, NEG_INF, value)


chi2_pdf = derived("chi2", "pdf", "exp", chi2_logpdf)


@member("chi2")
def chi2_cdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    x, df, loc, scale = promote("chi2.cdf", x, df, loc, scale)
    return special("gammainc", "chi2.cdf")(df / 2, jnp.maximum((x - loc) / (2 * scale), 0))


chi2_logcdf = derived("chi2", "logcdf", "log", chi2_cdf)


@member("chi2")
def chi2_sf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    x, df, loc, scale = promote("chi2.sf", x, df, loc, scale)
    return special("gammaincc", "chi2.sf")(df / 2, jnp.maximum((x - loc) / (2 * scale), 0))


chi2_logsf = derived("chi2", "logsf", "log", chi2_sf)


# ---- gennorm -------------------------------------------------------------------------------

@member("gennorm")
def gennorm_logpdf(x: ArrayLike, beta: ArrayLike) -> Any:
    x, beta = promote("gennorm.logpdf", x, beta)
    gammaln = special("gammaln", "gennorm.logpdf")
    return jnp.log(0.5 * beta) - gammaln(1 / beta) - jnp.power(jnp.abs(x), beta)


gennorm_pdf = derived("gennorm", "pdf", "exp", gennorm_logpdf)


@member("gennorm")
def gennorm_cdf(x: ArrayLike, beta: ArrayLike) -> Any:
    x, beta = promote("gennorm.cdf", x, beta)
    mass = special("gammainc", "gennorm.cdf")(1 / beta, jnp.power(jnp.abs(x), beta))
    return 0.5 * (1 + jnp.sign(x) * mass)


# ---- vonmises ------------------------------------------------------------------------------

@member("vonmises")
def vonmises_logpdf(x: ArrayLike, kappa: ArrayLike) -> Any:
    x, kappa = promote("vonmises.logpdf", x, kappa)
    # i0e(k) = exp(-k) I0(k): the normaliser without overflow for large concentrations
    i0e = special("i0e", "vonmises.logpdf")
    value = kappa * (jnp.cos(x) - 1) - jnp.log(2 * np.pi * i0e(kappa))
    return jnp.where(kappa > 0, value, np.nan)


vonmises_pdf = derived("vonmises", "pdf", "exp", vonmises_logpdf)


# ---- truncnorm -----------------------------------------------------------------------------

def _log_diff(x: Any, y: Any) -> Any:
    """log(exp(x) - exp(y)) for x >= y (NaN otherwise), without leaving log space."""
    return x + log1mexp(x - y)


def _log_gauss_mass(a: Any, b: Any) -> Any:
    """log of the standard normal mass on [a, b], computed in whichever tail keeps it
    accurate: both bounds left of 0, both right (mirrored), or straddling 0."""
    log_ndtr = special("log_ndtr", "truncnorm")
    ndtr = special("ndtr", "truncnorm")
    a, b = jnp.broadcast_arrays(a, b)
    right = a > 0
    central = ~((b <= 0) | right)
    lo, hi = jnp.where(right, -b, a), jnp.where(right, -a, b)
    tail = _log_diff(log_ndtr(hi), log_ndtr(lo))
    middle = jnp.log1p(-ndtr(jnp.where(central, a, 0.0)) - ndtr(jnp.where(central, -b, 0.0)))
    return jnp.where(central, middle, tail)


@member("truncnorm")
def truncnorm_logpdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0,
                     scale: ArrayLike = 1) -> Any:
    x, a, b, loc, scale = promote("truncnorm.logpdf", x, a, b, loc, scale)
    value = norm_logpdf(x, loc, scale) - _log_gauss_mass(a, b)
    z = (x - loc) / scale
    value = jnp.where((z < a) | (z > b), NEG_INF, value)
    return jnp.where(a >= b, np.nan, value)


truncnorm_pdf = derived("truncnorm", "pdf", "exp", truncnorm_logpdf)


@member("truncnorm")
def truncnorm_logcdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0,
                     scale: ArrayLike = 1) -> Any:
    x, a, b, loc, scale = promote("truncnorm.logcdf", x, a, b, loc, scale)
    x, a, b = jnp.broadcast_arrays(x, a, b)
    z = (x - loc) / scale
    total = _log_gauss_mass(a, b)
    below = _log_gauss_mass(a, jnp.clip(z, a, b)) - total
    above = _log_gauss_mass(jnp.clip(z, a, b), b) - total
    # near 1 the complement is the accurate one: log1p(-sf)
    value = jnp.where(z > a, below, 0.0)
    value = jnp.where(below > -0.1, jnp.log1p(-jnp.exp(above)), value)
    value = jnp.where(z <= a, NEG_INF, value)
    value = jnp.where(z >= b, 0.0, value)
    return jnp.where(a >= b, np.nan, value)


truncnorm_cdf = derived("truncnorm", "cdf", "exp", truncnorm_logcdf)


@member("truncnorm")
def truncnorm_logsf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0,
                    scale: ArrayLike = 1) -> Any:
    x, a, b, loc, scale = promote("truncnorm.logsf", x, a, b, loc, scale)
    return truncnorm_logcdf(-x, -b, -a, -loc, scale)    # the mirror image of the cdf


truncnorm_sf = derived("truncnorm", "sf", "exp", truncnorm_logsf)
