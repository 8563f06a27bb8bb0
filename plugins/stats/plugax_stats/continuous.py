"""Continuous distributions made of elementary functions: norm, cauchy, laplace, logistic,
uniform, expon, t, gumbel_l, gumbel_r, pareto, wrapcauchy.

Each follows jax.scipy.stats: the same parameters and defaults (loc=0, scale=1), the
same members, and the same answers outside the support (-inf for logpdf, 0/1 for
cdf, NaN for an invalid quantile or parameter). They are written with plugax.numpy,
so grad, jit and vmap go through them.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import plugax.numpy as jnp

from ._common import NEG_INF, promote, special
from ._registry import derived, member

ArrayLike = Any


def log1mexp(x: ArrayLike) -> Any:
    """log(1 - exp(-x)) for x >= 0, switching formula at log 2 to stay accurate at both
    ends (Maechler's note)."""
    return jnp.where(x < np.log(2.0), jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))


def _bad_quantile(q: Any) -> Any:
    return jnp.isnan(q) | (q < 0) | (q > 1)


# ---- norm ----------------------------------------------------------------------------------

@member("norm")
def norm_logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    x, loc, scale = promote("norm.logpdf", x, loc, scale)
    var = jnp.square(scale)
    return -0.5 * (jnp.log(2 * np.pi * var) + jnp.square(x - loc) / var)


norm_pdf = derived("norm", "pdf", "exp", norm_logpdf)


@member("norm")
def norm_cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    x, loc, scale = promote("norm.cdf", x, loc, scale)
    return special("ndtr", "norm.cdf")((x - loc) / scale)


@member("norm")
def norm_logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    x, loc, scale = promote("norm.logcdf", x, loc, scale)
    return special("log_ndtr", "norm.logcdf")((x - loc) / scale)


@member("norm")
def norm_sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    x, loc, scale = promote("norm.sf", x, loc, scale)
    return norm_cdf(-x, -loc, scale)          # by symmetry: accurate in the upper tail


@member("norm")
def norm_logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    x, loc, scale = promote("norm.logsf", x, loc, scale)
    return norm_logcdf(-x, -loc, scale)


@member("norm")
def norm_ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    q, loc, scale = promote("norm.ppf", q, loc, scale)
    return special("ndtri", "norm.ppf")(q) * scale + loc


@member("norm")
def norm_isf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    q, loc, scale = promote("norm.isf", q, loc, scale)
    return norm_ppf(1 - q, loc, scale)


# ---- cauchy --------------------------------------------------------------------------------

@member("cauchy")
def cauchy_logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    x, loc, scale = promote("cauchy.logpdf", x, loc, scale)
    z = (x - loc) / scale
    return -(jnp.log(np.pi * scale) + jnp.log1p(z * z))


cauchy_pdf = derived("cauchy", "pdf", "exp", cauchy_logpdf)


@member("cauchy")
def cauchy_cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    x, loc, scale = promote("cauchy.cdf", x, loc, scale)
    return 0.5 + jnp.arctan((x - loc) / scale) / np.pi


cauchy_logcdf = derived("cauchy", "logcdf", "log", cauchy_cdf)


@member("cauchy")
def cauchy_sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    x, loc, scale = promote("cauchy.sf", x, loc, scale)
    return cauchy_cdf(-x, -loc, scale)


@member("cauchy")
def cauchy_logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    x, loc, scale = promote("cauchy.logsf", x, loc, scale)
    return cauchy_logcdf(-x, -loc, scale)


@member("cauchy")
def cauchy_ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    q, loc, scale = promote("cauchy.ppf", q, loc, scale)
    return jnp.tan(np.pi * q - np.pi / 2) * scale + loc


@member("cauchy")
def cauchy_isf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    q, loc, scale = promote("cauchy.isf", q, loc, scale)
    return jnp.tan(np.pi / 2 - np.pi * q) * scale + loc


# ---- laplace -------------------------------------------------------------------------------

@member("laplace")
def laplace_logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    x, loc, scale = promote("laplace.logpdf", x, loc, scale)
    return -(jnp.abs(x - loc) / scale + jnp.log(2 * scale))


laplace_pdf = derived("laplace", "pdf", "exp", laplace_logpdf)


@member("laplace")
def laplace_cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    x, loc, scale = promote("laplace.cdf", x, loc, scale)
    z = (x - loc) / scale
    # each branch only exponentiates a non-positive number, so neither overflows (and
    # the gradient of the branch not taken stays finite)
    left = z <= 0
    return jnp.where(left, 0.5 * jnp.exp(jnp.where(left, z, 0.0)),
                     1 - 0.5 * jnp.exp(jnp.where(left, 0.0, -z)))


# ---- logistic ------------------------------------------------------------------------------

@member("logistic")
def logistic_logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    x, loc, scale = promote("logistic.logpdf", x, loc, scale)
    half = (x - loc) / scale / 2
    return -2 * jnp.logaddexp(half, -half) - jnp.log(scale)


logistic_pdf = derived("logistic", "pdf", "exp", logistic_logpdf)


@member("logistic")
def logistic_cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    x, loc, scale = promote("logistic.cdf", x, loc, scale)
    return special("expit", "logistic.cdf")((x - loc) / scale)


@member("logistic")
def logistic_sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    x, loc, scale = promote("logistic.sf", x, loc, scale)
    return special("expit", "logistic.sf")((loc - x) / scale)


@member("logistic")
def logistic_ppf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    x, loc, scale = promote("logistic.ppf", x, loc, scale)
    return special("logit", "logistic.ppf")(x) * scale + loc


@member("logistic")
def logistic_isf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    x, loc, scale = promote("logistic.isf", x, loc, scale)
    return -special("logit", "logistic.isf")(x) * scale + loc


# ---- uniform -------------------------------------------------------------------------------

@member("uniform")
def uniform_logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    x, loc, scale = promote("uniform.logpdf", x, loc, scale)
    outside = (x > loc + scale) | (x < loc)
    return jnp.where(outside, NEG_INF, -jnp.log(scale))


uniform_pdf = derived("uniform", "pdf", "exp", uniform_logpdf)


@member("uniform")
def uniform_cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    x, loc, scale = promote("uniform.cdf", x, loc, scale)
    inside = (x >= loc) & (x <= loc + scale)
    # NaN x falls through every test and gives 0, as JAX's select does
    return jnp.where(x < loc, 0.0, jnp.where(x > loc + scale, 1.0,
                                             jnp.where(inside, (x - loc) / scale, 0.0)))


@member("uniform")
def uniform_ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    q, loc, scale = promote("uniform.ppf", q, loc, scale)
    return jnp.where(_bad_quantile(q), np.nan, loc + scale * q)


# ---- expon ---------------------------------------------------------------------------------

@member("expon")
def expon_logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    x, loc, scale = promote("expon.logpdf", x, loc, scale)
    return jnp.where(x < loc, NEG_INF, -((x - loc) / scale + jnp.log(scale)))


expon_pdf = derived("expon", "pdf", "exp", expon_logpdf)


@member("expon")
def expon_cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    x, loc, scale = promote("expon.cdf", x, loc, scale)
    return jnp.where(x < loc, 0.0, -jnp.expm1((loc - x) / scale))


@member("expon")
def expon_logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    x, loc, scale = promote("expon.logsf", x, loc, scale)
    return jnp.where(x < loc, 0.0, (loc - x) / scale)


expon_sf = derived("expon", "sf", "exp", expon_logsf)


@member("expon")
def expon_logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    return jnp.log1p(-expon_sf(x, loc, scale))


@member("expon")
def expon_ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    q, loc, scale = promote("expon.ppf", q, loc, scale)
    return jnp.where(_bad_quantile(q), np.nan, loc - scale * jnp.log1p(-q))


# ---- t -------------------------------------------------------------------------------------

@member("t")
def t_logpdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    x, df, loc, scale = promote("t.logpdf", x, df, loc, scale)
    z = (x - loc) / scale
    half_df = df / 2
    gammaln = special("gammaln", "t.logpdf")
    log_norm = (gammaln(half_df) + jnp.log(np.pi * df * scale * scale) / 2
                - gammaln(half_df + 0.5))
    return -(log_norm + (half_df + 0.5) * jnp.log1p(z * z / df))


t_pdf = derived("t", "pdf", "exp", t_logpdf)


# ---- gumbel_l / gumbel_r -------------------------------------------------------------------

def _gumbel(name: str, x: Any, loc: Any, scale: Any) -> tuple:
    x, loc, scale = promote(name, x, loc, scale)
    return (x - loc) / scale, scale, scale > 0


@member("gumbel_l")
def gumbel_l_logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    z, scale, ok = _gumbel("gumbel_l.logpdf", x, loc, scale)
    return jnp.where(ok, z - jnp.exp(z) - jnp.log(scale), np.nan)


gumbel_l_pdf = derived("gumbel_l", "pdf", "exp", gumbel_l_logpdf)


@member("gumbel_l")
def gumbel_l_logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    z, scale, ok = _gumbel("gumbel_l.logcdf", x, loc, scale)
    return jnp.where(ok, jnp.log(-jnp.expm1(-jnp.exp(z))), np.nan)


gumbel_l_cdf = derived("gumbel_l", "cdf", "exp", gumbel_l_logcdf)


@member("gumbel_l")
def gumbel_l_logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    z, scale, ok = _gumbel("gumbel_l.logsf", x, loc, scale)
    return jnp.where(ok, -jnp.exp(z), np.nan)


gumbel_l_sf = derived("gumbel_l", "sf", "exp", gumbel_l_logsf)


@member("gumbel_l")
def gumbel_l_ppf(p: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    p, loc, scale = promote("gumbel_l.ppf", p, loc, scale)
    quantile = loc + scale * jnp.log(-jnp.log1p(-p))
    return jnp.where((p > 0) & (p < 1), quantile, np.nan)


@member("gumbel_r")
def gumbel_r_logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    z, scale, ok = _gumbel("gumbel_r.logpdf", x, loc, scale)
    return jnp.where(ok, -(z + jnp.exp(-z)) - jnp.log(scale), np.nan)


gumbel_r_pdf = derived("gumbel_r", "pdf", "exp", gumbel_r_logpdf)


@member("gumbel_r")
def gumbel_r_logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    z, scale, ok = _gumbel("gumbel_r.logcdf", x, loc, scale)
    return jnp.where(ok, -jnp.exp(-z), np.nan)


gumbel_r_cdf = derived("gumbel_r", "cdf", "exp", gumbel_r_logcdf)


@member("gumbel_r")
def gumbel_r_sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    z, scale, ok = _gumbel("gumbel_r.sf", x, loc, scale)
    return jnp.where(ok, -jnp.expm1(-jnp.exp(-z)), np.nan)


@member("gumbel_r")
def gumbel_r_logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    z, scale, ok = _gumbel("gumbel_r.logsf", x, loc, scale)
    return jnp.where(ok, log1mexp(jnp.exp(-z)), np.nan)


@member("gumbel_r")
def gumbel_r_ppf(p: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    p, loc, scale = promote("gumbel_r.ppf", p, loc, scale)
    quantile = loc - scale * jnp.log(-jnp.log(p))
    return jnp.where((p > 0) & (p < 1), quantile, np.nan)


# ---- pareto --------------------------------------------------------------------------------

def _pareto(name: str, x: Any, b: Any, loc: Any, scale: Any) -> tuple:
    x, b, loc, scale = promote(name, x, b, loc, scale)
    return (x - loc) / scale, b, scale, x < loc + scale


@member("pareto")
def pareto_logpdf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    z, b, scale, below = _pareto("pareto.logpdf", x, b, loc, scale)
    return jnp.where(below, NEG_INF, -(jnp.log(scale / b) + (b + 1) * jnp.log(z)))


pareto_pdf = derived("pareto", "pdf", "exp", pareto_logpdf)


@member("pareto")
def pareto_cdf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    z, b, _, below = _pareto("pareto.cdf", x, b, loc, scale)
    return jnp.where(below, 0.0, 1 - jnp.power(z, -b))


@member("pareto")
def pareto_logcdf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    z, b, _, below = _pareto("pareto.logcdf", x, b, loc, scale)
    return jnp.where(below, NEG_INF, jnp.log1p(-jnp.power(z, -b)))


@member("pareto")
def pareto_logsf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    z, b, _, below = _pareto("pareto.logsf", x, b, loc, scale)
    return jnp.where(below, 0.0, -b * jnp.log(z))


pareto_sf = derived("pareto", "sf", "exp", pareto_logsf)


@member("pareto")
def pareto_ppf(q: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    q, b, loc, scale = promote("pareto.ppf", q, b, loc, scale)
    return jnp.where(_bad_quantile(q), np.nan, loc + scale * jnp.power(1 - q, -1 / b))


# ---- wrapcauchy ----------------------------------------------------------------------------

@member("wrapcauchy")
def wrapcauchy_logpdf(x: ArrayLike, c: ArrayLike) -> Any:
    x, c = promote("wrapcauchy.logpdf", x, c)
    value = (jnp.log(1 - c * c) - np.log(2 * np.pi)
             - jnp.log(1 + c * c - 2 * c * jnp.cos(x)))
    inside = (x >= 0) & (x <= 2 * np.pi)
    return jnp.where((c > 0) & (c < 1), jnp.where(inside, value, NEG_INF), np.nan)


wrapcauchy_pdf = derived("wrapcauchy", "pdf", "exp", wrapcauchy_logpdf)
