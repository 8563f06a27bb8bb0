"""The remaining one-line distributions of jax.random, each JAX's formula on the same
samples: pareto, chisquare, f, maxwell, double_sided_maxwell, weibull_min, rayleigh,
wald, geometric, triangular, lognormal, binomial, multinomial; and `clone` / `key_dtype`."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

import plugax.lax as lax
import plugax.numpy as jnp
from plugax.extend import default_float_dtype, default_int_dtype, promote_dtypes

from .composite import _gamma_body
from .keys import KEY_DTYPE, _shape, check_key, split as split_keys
from .samplers import (_broadcast_shape, _exponential, _normal, _uniform, float_dtype, jitted,
                       key_of, split2)

__all__ = ["pareto", "chisquare", "f", "maxwell", "double_sided_maxwell", "weibull_min",
           "rayleigh", "wald", "geometric", "triangular", "lognormal", "clone", "key_dtype",
           "binomial", "multinomial"]


@jitted("shape", "dtype")
def _pareto(data, b, shape, dtype):
    return lax.exp(_exponential(data, shape, dtype) / lax.convert_element_type(b, dtype))


def pareto(key: Any, b: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Pareto(b) samples: exp(exponential / b)."""
    dtype = float_dtype("pareto", dtype)
    return _pareto(key_of("pareto", key), b, shape=_broadcast_shape("pareto", shape, b),
                   dtype=dtype)


def _chi2(data, df, shape, dtype):
    half_df = lax.convert_element_type(df, dtype) / np.array(2, dtype)
    return jnp.exp(_gamma_body(data, half_df, shape, dtype, True)) * np.array(2, dtype)


_chisquare = jitted("shape", "dtype")(_chi2)


def chisquare(key: Any, df: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Chi-square(df) samples: 2 * Gamma(df / 2), through log-gamma as JAX."""
    dtype = float_dtype("chisquare", dtype)
    return _chisquare(key_of("chisquare", key), df,
                      shape=_broadcast_shape("chisquare", shape, df), dtype=dtype)


@jitted("shape", "dtype")
def _f(data, dfnum, dfden, shape, dtype):
    dfden = lax.convert_element_type(dfden, dtype)
    dfnum = lax.convert_element_type(dfnum, dtype)
    key_dfd, key_dfn = split2(data)
    num = _chi2(key_dfn, dfnum, shape, dtype) / dfnum
    den = _chi2(key_dfd, dfden, shape, dtype) / dfden
    return num / den


def f(key: Any, dfnum: Any, dfden: Any, shape: Sequence[int] | None = None,
      dtype: Any = None) -> Any:
    """F(dfnum, dfden) samples: a ratio of scaled chi-squares."""
    dtype = float_dtype("f", dtype)
    return _f(key_of("f", key), dfnum, dfden,
              shape=_broadcast_shape("f", shape, dfnum, dfden), dtype=dtype)


def _maxwell_body(data, shape, dtype):
    z = _normal(data, shape + (3,), dtype)
    return jnp.sqrt(jnp.sum(z * z, axis=-1))


_maxwell = jitted("shape", "dtype")(_maxwell_body)


def maxwell(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Maxwell samples: the norm of a 3-D standard normal."""
    dtype = float_dtype("maxwell", dtype)
    return _maxwell(key_of("maxwell", key), shape=_shape(shape), dtype=dtype)


@jitted("shape", "dtype")
def _double_sided_maxwell(data, loc, scale, shape, dtype):
    k_maxwell, k_sign = split2(data)
    m = _maxwell_body(k_maxwell, shape, dtype)
    fdt = np.dtype(default_float_dtype())      # JAX's rademacher: bernoulli(p=0.5), a Python float
    b = _uniform(k_sign, 0.0, 1.0, shape, fdt) < fdt.type(0.5)
    sign = (2 * b.astype(np.int32) - 1).astype(dtype)    # rademacher
    return sign * m * scale + loc


def double_sided_maxwell(key: Any, loc: Any, scale: Any, shape: Sequence[int] = (),
                         dtype: Any = None) -> Any:
    """Double-sided Maxwell samples: a random sign times a Maxwell sample, scaled."""
    dtype = float_dtype("double_sided_maxwell", dtype)
    params = tuple(np.broadcast_shapes(np.shape(loc), np.shape(scale)))
    shape = _shape(shape) or params
    return _double_sided_maxwell(key_of("double_sided_maxwell", key), loc, scale,
                                 shape=shape + params, dtype=dtype)


@jitted("shape", "dtype")
def _weibull_min(data, scale, concentration, shape, dtype):
    u = _uniform(data, 0.0, 1.0, shape, dtype)
    return jnp.power(-jnp.log1p(-u), 1.0 / concentration) * scale


def weibull_min(key: Any, scale: Any, concentration: Any, shape: Sequence[int] = (),
                dtype: Any = None) -> Any:
    """Weibull samples: scale * (-log1p(-u)) ** (1 / concentration)."""
    dtype = float_dtype("weibull_min", dtype)
    return _weibull_min(key_of("weibull_min", key), scale, concentration, shape=_shape(shape),
                        dtype=dtype)


@jitted("shape", "dtype")
def _rayleigh(data, scale, shape, dtype):
    u = _uniform(data, 0.0, 1.0, shape, dtype)
    scale = jnp.broadcast_to(jnp.asarray(scale).astype(dtype), shape)
    return lax.mul(scale, lax.sqrt(lax.mul(lax.log(u), jnp.full(shape, np.array(-2, dtype)))))


def rayleigh(key: Any, scale: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Rayleigh(scale) samples: scale * sqrt(-2 log u)."""
    dtype = float_dtype("rayleigh", dtype)
    return _rayleigh(key_of("rayleigh", key), scale,
                     shape=_broadcast_shape("rayleigh", shape, scale), dtype=dtype)


@jitted("shape", "dtype")
def _wald(data, mean, shape, dtype):
    k1, k2 = split2(data)
    mean = jnp.broadcast_to(jnp.asarray(mean).astype(dtype), shape)
    v = _normal(k1, shape, dtype)
    z = _uniform(k2, 0.0, 1.0, shape, dtype)
    y = lax.integer_pow(v, 2)
    y_sq = lax.integer_pow(y, 2)
    mean_sq = lax.integer_pow(mean, 2)
    sqrt_term = lax.sqrt(4 * mean * y + mean_sq * y_sq)
    x = mean + mean_sq * y / 2 - mean / 2 * sqrt_term
    return lax.select(lax.le(z, mean / (mean + x)), x, mean_sq / x)


def wald(key: Any, mean: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Wald (inverse Gaussian, scale 1) samples (Michael-Schucany-Haas)."""
    dtype = float_dtype("wald", dtype)
    return _wald(key_of("wald", key), mean, shape=_broadcast_shape("wald", shape, mean),
                 dtype=dtype)


@jitted("shape", "dtype")
def _geometric(data, p, shape, dtype):
    u = _uniform(data, 0.0, 1.0, shape, np.dtype(p.dtype))
    u = jnp.where(u == 0, jnp.ones_like(u), u)
    log_one_minus_p = jnp.broadcast_to(lax.log1p(-p), shape)
    g = lax.floor(lax.div(lax.log(u), log_one_minus_p)) + 1
    return g.astype(dtype)


def geometric(key: Any, p: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Geometric(p) counts (trials until the first success, from 1)."""
    dtype = np.dtype(default_int_dtype() if dtype is None else dtype)
    if not np.issubdtype(dtype, np.integer):
        raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {dtype}")
    p = jnp.asarray(p)
    if not np.issubdtype(np.dtype(p.dtype), np.floating):
        p = p.astype(float_dtype("geometric", None))
    return _geometric(key_of("geometric", key), p,
                      shape=_broadcast_shape("geometric", shape, p), dtype=dtype)


@jitted("shape", "dtype")
def _triangular(data, left, mode, right, shape, dtype):
    left, right, mode = (jnp.broadcast_to(lax.convert_element_type(v, dtype), shape)
                         for v in (left, right, mode))
    fc = (mode - left) / (right - left)
    u = _uniform(data, 0.0, 1.0, shape, dtype)
    out1 = left + lax.sqrt(u * (right - left) * (mode - left))
    out2 = right - lax.sqrt((1 - u) * (right - left) * (right - mode))
    return lax.select(u < fc, out1, out2)


def triangular(key: Any, left: Any, mode: Any, right: Any, shape: Sequence[int] | None = None,
               dtype: Any = None) -> Any:
    """Triangular(left, mode, right) samples by inverting the CDF."""
    dtype = float_dtype("triangular", dtype)
    return _triangular(key_of("triangular", key), left, mode, right,
                       shape=_broadcast_shape("triangular", shape, left, mode, right),
                       dtype=dtype)


@jitted("shape", "dtype")
def _lognormal(data, sigma, shape, dtype):
    return lax.exp(_normal(data, shape, dtype) * lax.convert_element_type(sigma, dtype))


def lognormal(key: Any, sigma: Any = np.float32(1), shape: Sequence[int] | None = None,
              dtype: Any = None) -> Any:
    """Log-normal samples: exp(sigma * normal)."""
    dtype = float_dtype("lognormal", dtype)
    return _lognormal(key_of("lognormal", key), sigma,
                      shape=_broadcast_shape("lognormal", shape, sigma), dtype=dtype)


def clone(key: Any) -> Any:
    """The same key (JAX's clone only matters for its stateful-key checks)."""
    check_key("clone", key)
    return key


def key_dtype(impl: Any = None) -> Any:
    """The dtype of typed keys: key<fry> (threefry2x32 only)."""
    if impl not in (None, "threefry2x32", "threefry"):
        raise NotImplementedError(f"plugax.random implements the 'threefry2x32' PRNG only; "
                                  f"got {impl!r}")
    return KEY_DTYPE


# --- binomial and multinomial ------------------------------------------------------------
_STIRLING_TAIL = np.array([0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                           0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                           0.0118967099458917, 0.010411265261972, 0.00925546218271273,
                           0.00833056343336287])


def _stirling_approx_tail(k):
    """log k! minus Stirling's approximation: tabulated for k <= 9, a series above."""
    table = jnp.asarray(_STIRLING_TAIL.astype(k.dtype))
    use_table = k <= 9
    k = lax.clamp(np.array(0.0, k.dtype), k, np.array(9.0, k.dtype))
    kp1sq = (k + 1) * (k + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    return lax.select(use_table, table[jnp.floor(k).astype(np.int32)], approx)


def _binomial_inversion(data, count, prob, shape, dtype, max_iters):
    log1minusprob = jnp.log1p(-prob)

    def body_fn(carry):
        i, num_geom, geom_sum, rng = carry
        sub, rng = split2(rng)            # JAX's order here: (subkey, key)
        num_geom_out = lax.select(geom_sum <= count, num_geom + 1, num_geom)
        u = _uniform(sub, 0.0, 1.0, shape, np.dtype(prob.dtype))
        geom_sum = geom_sum + jnp.ceil(jnp.log(u) / log1minusprob)
        return i + 1, num_geom_out, geom_sum, rng

    def cond_fn(carry):
        return jnp.any(carry[2] <= count) & (carry[0] < max_iters)
    zeros = jnp.zeros(shape, prob.dtype)
    k = lax.while_loop(cond_fn, body_fn, (jnp.asarray(0, dtype), zeros, zeros, data))[1]
    return (k - 1).astype(dtype)


def _btrs(data, count, prob, shape, dtype, max_iters):
    """Hormann's transformed rejection with squeeze (BTRS), as JAX."""
    stddev = jnp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = jnp.floor((count + 1) * prob)

    def body_fn(carry):
        i, k_out, accepted, rng = carry
        rng, k0, k1 = split2(rng, 3)
        u = _uniform(k0, 0.0, 1.0, shape, np.dtype(prob.dtype))
        v = _uniform(k1, 0.0, 1.0, shape, np.dtype(prob.dtype))
        u = u - 0.5
        us = 0.5 - jnp.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = jnp.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = jnp.log(v * alpha / (a / (us * us) + b))
        ub = ((m + 0.5) * jnp.log((m + 1) / (r * (count - m + 1)))
              + (count + 1) * jnp.log((count - m + 1) / (count - k + 1))
              + (k + 0.5) * jnp.log(r * (count - k + 1) / (k + 1))
              + _stirling_approx_tail(m) + _stirling_approx_tail(count - m)
              - _stirling_approx_tail(k) - _stirling_approx_tail(count - k))
        accept = accept1 | (~reject & (v <= ub))
        return i + 1, lax.select(accept, k, k_out), accepted | accept, rng

    def cond_fn(carry):
        return jnp.any(~carry[2]) & (carry[0] < max_iters)
    init = (jnp.asarray(0, dtype), jnp.full(shape, np.array(-1, prob.dtype)),
            jnp.zeros(shape, bool), data)
    return lax.while_loop(cond_fn, body_fn, init)[1].astype(dtype)


def _binomial_body(data, count, prob, shape, dtype):
    count = jnp.broadcast_to(lax.convert_element_type(count, prob.dtype), shape)
    prob = jnp.broadcast_to(prob, shape)
    one = np.array(1.0, prob.dtype)
    p_lt_half = prob < 0.5
    q = lax.select(p_lt_half, prob, one - prob)
    count_nan_or_neg = jnp.isnan(count) | (count < 0.0)
    count_inf = jnp.isinf(count)
    q_is_nan = jnp.isnan(q)
    q_l_0 = q < 0.0
    q = lax.select(q_is_nan | q_l_0, jnp.full(shape, np.array(0.01, q.dtype)), q)
    use_inversion = count_nan_or_neg | (count * q <= 10.0)
    count = jnp.floor(count)
    count_inv = lax.select(use_inversion, count, jnp.zeros_like(count))
    count_btrs = lax.select(use_inversion, jnp.full(shape, np.array(10000.0, count.dtype)),
                            count)
    q_btrs = lax.select(use_inversion, jnp.full(shape, np.array(0.5, q.dtype)), q)
    max_iters = dtype.type(np.finfo(dtype).max)
    samples = lax.select(use_inversion,
                         _binomial_inversion(data, count_inv, q, shape, dtype, max_iters),
                         _btrs(data, count_btrs, q_btrs, shape, dtype, max_iters))
    invalid = q_l_0 | q_is_nan | count_nan_or_neg
    samples = lax.select(invalid, jnp.full(shape, np.array(np.nan, dtype)), samples)
    samples = lax.select(count_inf & ~invalid, jnp.full(shape, np.array(np.inf, dtype)),
                         samples)
    return lax.select(p_lt_half | count_nan_or_neg | q_is_nan | count_inf, samples,
                      count.astype(dtype) - samples)


_binomial = jitted("shape", "dtype")(_binomial_body)


def _inexact(x: Any) -> Any:
    x = jnp.asarray(x)
    return x if np.issubdtype(np.dtype(x.dtype), np.floating) else x.astype(
        float_dtype("binomial", None))


def binomial(key: Any, n: Any, p: Any, shape: Sequence[int] | None = None,
             dtype: Any = None) -> Any:
    """Binomial(n, p) counts (as floats, like JAX): inversion for n*p <= 10, BTRS above."""
    dtype = float_dtype("binomial", dtype)
    p = _inexact(p)
    return _binomial(key_of("binomial", key), n, p,
                     shape=_broadcast_shape("binomial", shape, n, p), dtype=dtype)


@jitted("shape", "dtype")
def _multinomial(data, n, p, shape, dtype):
    n = jnp.broadcast_to(n, shape[:-1])
    p = jnp.moveaxis(jnp.broadcast_to(p, shape), -1, 0)
    remaining = lax.rev(jnp.cumsum(lax.rev(p, (0,)), axis=0), (0,))
    ratios = p / jnp.where(remaining == 0, jnp.ones_like(remaining), remaining)
    keys = split_keys(data, ratios.shape[0])

    def step(remainder, ratio_key):
        ratio, k = ratio_key
        count = _binomial_body(k, remainder, jnp.clip(ratio, 0, 1), tuple(remainder.shape),
                               np.dtype(remainder.dtype))
        return remainder - count, count
    _, counts = lax.scan(step, n, (ratios, keys))
    return jnp.moveaxis(counts, 0, -1).astype(dtype)


def multinomial(key: Any, n: Any, p: Any, *, shape: Sequence[int] | None = None,
                dtype: Any = None, unroll: Any = 1) -> Any:
    """Multinomial(n, p) counts over p's last axis, by a chain of conditional binomials."""
    dtype = float_dtype("multinomial", dtype)
    n, p = (jnp.asarray(v) for v in promote_dtypes("multinomial", n, p, category="inexact"))
    shape = tuple(p.shape) if shape is None else _shape(shape)
    return _multinomial(key_of("multinomial", key), n, p, shape=shape, dtype=dtype)
