"""Samplers built from the others: choice, gamma and its family (beta, dirichlet, t,
generalized_normal, ball), poisson, multivariate_normal, orthogonal.

Gamma follows JAX's algorithm exactly (Marsaglia-Tsang with one key per element and
scalar rejection loops run by `lax.map`), so its samples are JAX's bit for bit; the
price is the same as in JAX: a loop over the elements.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

import plugax.lax as lax
import plugax.numpy as jnp
from plugax.extend import default_int_dtype, is_float

from .gamma import random_gamma_p
from .keys import _shape
from .samplers import (_broadcast_shape, _normal, _uniform, float_dtype, jitted,
                       key_of, randint, rademacher, split2, uniform)

__all__ = ["choice", "gamma", "loggamma", "beta", "dirichlet", "t", "generalized_normal",
           "ball", "poisson", "multivariate_normal", "orthogonal"]


# --- choice ------------------------------------------------------------------------------
def choice(key: Any, a: Any, shape: Sequence[int] = (), replace: bool = True, p: Any = None,
           axis: int = 0, mode: str | None = None) -> Any:
    """Samples from `a` (an int n means arange(n)) along `axis`, with or without
    replacement, uniformly or with probabilities p."""
    data = key_of("choice", key)
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"shape argument of plugax.random.choice must be a sequence, got "
                        f"{shape}")
    arr = jnp.asarray(a)
    if arr.ndim == 0:
        n_inputs = int(a)
    else:
        axis = axis % arr.ndim
        n_inputs = arr.shape[axis]
    shape = tuple(shape)
    n_draws = math.prod(shape)
    if n_draws == 0:
        return jnp.zeros(shape, dtype=arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population (size "
                         f"{n_inputs}) when 'replace=False'")
    if p is None:
        if replace:
            ind = randint(data, shape, 0, n_inputs)
        else:
            from .permutation import permutation
            perm = permutation(data, n_inputs if arr.ndim == 0 else arr, axis)
            if arr.ndim == 0:
                return perm[:n_draws].reshape(shape)
            taken = jnp.take(perm, jnp.arange(n_draws), axis=axis)
            return taken.reshape(arr.shape[:axis] + shape + arr.shape[axis + 1:])
    else:
        p_arr = jnp.asarray(p)
        if not is_float(p_arr.dtype):
            p_arr = p_arr.astype(np.float32)
        if tuple(p_arr.shape) != (n_inputs,):
            raise ValueError(f"p must be None or a 1D vector with the same size as "
                             f"a.shape[axis]. p has shape {tuple(p_arr.shape)} and "
                             f"a.shape[axis] is {n_inputs}.")
        if replace:
            p_cuml = jnp.cumsum(p_arr)
            r = p_cuml[-1] * (1 - uniform(data, shape, dtype=p_cuml.dtype))
            # searchsorted(p_cuml, r, side='left') == number of cumulative sums below r
            below = jnp.expand_dims(p_cuml, tuple(range(len(shape)))) < r[..., None]
            ind = jnp.sum(below.astype(default_int_dtype()), axis=-1)
        else:
            from .permutation import top_k_indices
            from .samplers import gumbel
            g = gumbel(data, (n_inputs,), dtype=p_arr.dtype, mode=mode) + jnp.log(p_arr)
            ind = top_k_indices(g, n_draws).astype(default_int_dtype())
    result = ind if arr.ndim == 0 else jnp.take(arr, ind, axis=axis)
    return result.reshape(shape if arr.ndim == 0 else
                          tuple(arr.shape[:axis]) + shape + tuple(arr.shape[axis + 1:]))


# --- gamma (the sampler itself is the random_gamma primitive: gamma.py) -----------------
def _gamma_body(data: Any, a: Any, shape: tuple, dtype: np.dtype, log_space: bool) -> Any:
    a = jnp.broadcast_to(lax.convert_element_type(a, dtype), shape)
    return random_gamma_p.bind(data, a, log_space=log_space)


_gamma_jit = jitted("shape", "dtype", "log_space")(_gamma_body)


def gamma(key: Any, a: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Gamma(a, 1) samples (Marsaglia-Tsang, as JAX), differentiable in `a` by implicit
    reparameterisation (dx/da at fixed CDF value, as JAX)."""
    dtype = float_dtype("gamma", dtype)
    shape = _broadcast_shape("gamma", shape, a)
    return _gamma_jit(key_of("gamma", key), a, shape=shape, dtype=dtype, log_space=False)


def loggamma(key: Any, a: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """log of Gamma(a, 1) samples, accurate for small a."""
    dtype = float_dtype("loggamma", dtype)
    shape = _broadcast_shape("loggamma", shape, a)
    return _gamma_jit(key_of("loggamma", key), a, shape=shape, dtype=dtype, log_space=True)


@jitted("shape", "dtype")
def _beta(data, a, b, shape, dtype):
    key_a, key_b = split2(data)
    log_a = _gamma_body(key_a, a, shape, dtype, True)
    log_b = _gamma_body(key_b, b, shape, dtype, True)
    log_max = lax.max(log_a, log_b)
    ga, gb = jnp.exp(log_a - log_max), jnp.exp(log_b - log_max)
    return ga / (ga + gb)


def beta(key: Any, a: Any, b: Any, shape: Sequence[int] | None = None,
         dtype: Any = None) -> Any:
    """Beta(a, b) samples from two log-gamma samples."""
    dtype = float_dtype("beta", dtype)
    shape = _broadcast_shape("beta", shape, a, b)
    return _beta(key_of("beta", key), a, b, shape=shape, dtype=dtype)


@jitted("shape", "dtype")
def _dirichlet(data, alpha, shape, dtype):
    log_g = _gamma_body(data, alpha, shape, dtype, True)
    unnormalized = jnp.exp(log_g - lax.stop_gradient(jnp.max(log_g, axis=-1, keepdims=True)))
    return unnormalized / jnp.sum(unnormalized, axis=-1, keepdims=True)


def dirichlet(key: Any, alpha: Any, shape: Sequence[int] | None = None,
              dtype: Any = None) -> Any:
    """Dirichlet(alpha) samples: a softmax of log-gamma samples."""
    dtype = float_dtype("dirichlet", dtype)
    alpha = jnp.asarray(alpha)
    if alpha.ndim < 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {alpha.ndim}")
    batch = _broadcast_shape("dirichlet", shape, jnp.zeros(alpha.shape[:-1]))
    return _dirichlet(key_of("dirichlet", key), alpha, shape=batch + alpha.shape[-1:],
                      dtype=dtype)


@jitted("shape", "dtype")
def _t(data, df, shape, dtype):
    key_n, key_g = split2(data)
    n = _normal(key_n, shape, dtype)
    half_df = lax.convert_element_type(df, dtype) / np.array(2, dtype)
    g = _gamma_body(key_g, half_df, shape, dtype, False)
    return n * jnp.sqrt(half_df / g)


def t(key: Any, df: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Student's t samples: normal * sqrt(df / 2 / gamma(df / 2))."""
    dtype = float_dtype("t", dtype)
    shape = _broadcast_shape("t", shape, df)
    return _t(key_of("t", key), df, shape=shape, dtype=dtype)


def generalized_normal(key: Any, p: float, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Generalized normal samples with exponent p: sign * gamma(1/p) ** (1/p)."""
    dtype = float_dtype("generalized_normal", dtype)
    k1, k2 = split2(key_of("generalized_normal", key))
    g = gamma(k1, 1 / p, _shape(shape), dtype)
    r = rademacher(k2, _shape(shape), dtype)
    return r * g ** (1 / p)


def ball(key: Any, d: int, p: float = 2, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Points uniform in the d-dimensional unit p-ball."""
    dtype = float_dtype("ball", dtype)
    shape = _shape(shape)
    k1, k2 = split2(key_of("ball", key))
    g = generalized_normal(k1, p, shape + (int(d),), dtype)
    from .samplers import exponential
    e = exponential(k2, shape, dtype)
    return g / (((jnp.abs(g) ** p).sum(-1) + e) ** (1 / p))[..., None]


# --- poisson -----------------------------------------------------------------------------
def _poisson_knuth(data, lam, shape, dtype, max_iters):
    def body_fn(carry):
        i, k, rng, log_prod = carry
        rng, sub = split2(rng)
        k = lax.select(log_prod > -lam, k + dtype.type(1), k)
        u = _uniform(sub, 0.0, 1.0, shape, np.dtype(np.float32))
        return i + 1, k, rng, log_prod + jnp.log(u)

    def cond_fn(carry):
        i, log_prod = carry[0], carry[3]
        return jnp.any(log_prod > -lam) & (i < max_iters)
    init = (jnp.asarray(0, dtype), jnp.zeros(shape, dtype), data, jnp.zeros(shape, np.float32))
    k = lax.while_loop(cond_fn, body_fn, init)[1]
    return (k - dtype.type(1)).astype(dtype)


def _poisson_rejection(data, lam, shape, dtype, max_iters):
    f = lambda v: np.float32(v)   # noqa: E731
    log_lam = lax.log(lam)
    b = f(0.931) + f(2.53) * lax.sqrt(lam)
    a = f(-0.059) + f(0.02483) * b
    inv_alpha = f(1.1239) + f(1.1328) / (b - f(3.4))
    v_r = f(0.9277) - f(3.6224) / (b - f(2))

    def body_fn(carry):
        i, k_out, accepted, rng = carry
        rng, k0, k1 = split2(rng, 3)
        u = _uniform(k0, 0.0, 1.0, shape, lam.dtype) - f(0.5)
        v = _uniform(k1, 0.0, 1.0, shape, lam.dtype)
        u_shifted = f(0.5) - abs(u)
        k = lax.floor((f(2) * a / u_shifted + b) * u + lam + f(0.43))
        s = lax.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        tt = -lam + k * log_lam - lax.lgamma(k + f(1))
        accept1 = (u_shifted >= f(0.07)) & (v <= v_r)
        reject = (k < f(0)) | ((u_shifted < f(0.013)) & (v > u_shifted))
        accept = accept1 | (~reject & (s <= tt))
        return i + 1, lax.select(accept, k, k_out), accepted | accept, rng

    def cond_fn(carry):
        i, _, accepted, _ = carry
        return jnp.any(~accepted) & (i < max_iters)
    init = (jnp.asarray(0, dtype), jnp.full(shape, f(-1)), jnp.zeros(shape, bool), data)
    return lax.while_loop(cond_fn, body_fn, init)[1].astype(dtype)


@jitted("shape", "dtype")
def _poisson(data, lam, shape, dtype):
    use_knuth = jnp.isnan(lam) | (lam < np.float32(10))
    lam_knuth = lax.select(use_knuth, lam, jnp.zeros_like(lam))
    lam_rejection = lax.select(use_knuth, jnp.full(lam.shape, np.float32(100000.0)), lam)
    max_iters = dtype.type(np.iinfo(dtype).max)
    result = lax.select(use_knuth, _poisson_knuth(data, lam_knuth, shape, dtype, max_iters),
                        _poisson_rejection(data, lam_rejection, shape, dtype, max_iters))
    return lax.select(lam == np.float32(0), jnp.zeros_like(result), result)


def poisson(key: Any, lam: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Poisson(lam) counts: Knuth's method for lam < 10, transformed rejection above."""
    dtype = np.dtype(default_int_dtype() if dtype is None else dtype)
    shape = tuple(np.shape(lam)) if shape is None else _shape(shape)
    lam = lax.convert_element_type(jnp.broadcast_to(jnp.asarray(lam), shape), np.float32)
    return _poisson(key_of("poisson", key), lam, shape=shape, dtype=dtype)


# --- linear algebra ----------------------------------------------------------------------
def _linalg() -> Any:
    return jnp.linalg


@jitted("shape", "dtype", "method")
def _multivariate_normal(data, mean, cov, shape, dtype, method):
    linalg = _linalg()
    if method == "svd":
        u, s, _ = linalg.svd(cov)
        factor = u * jnp.sqrt(s[..., None, :])
    elif method == "eigh":
        w, v = linalg.eigh(cov)
        factor = v * jnp.sqrt(w[..., None, :])
    else:
        factor = linalg.cholesky(cov)
    z = _normal(data, shape + tuple(mean.shape[-1:]), dtype)
    return mean + jnp.einsum("...ij,...j->...i", factor, z)


def multivariate_normal(key: Any, mean: Any, cov: Any, shape: Sequence[int] | None = None,
                        dtype: Any = None, method: str = "cholesky") -> Any:
    """N(mean, cov) samples: mean + factor @ z, factor from cholesky (or eigh/svd)."""
    if method not in ("svd", "eigh", "cholesky"):
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    mean, cov = jnp.asarray(mean), jnp.asarray(cov)
    if not is_float(mean.dtype):
        mean = mean.astype(float_dtype("multivariate_normal", None))
    if not is_float(cov.dtype):
        cov = cov.astype(float_dtype("multivariate_normal", None))
    dtype = mean.dtype if dtype is None else float_dtype("multivariate_normal", dtype)
    if mean.ndim < 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                         f"{mean.ndim}")
    if cov.ndim < 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == "
                         f"{cov.ndim}")
    n = mean.shape[-1]
    if tuple(cov.shape[-2:]) != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                         f"but got cov.shape == {tuple(cov.shape)}.")
    batch = tuple(np.broadcast_shapes(mean.shape[:-1], cov.shape[:-2])) if shape is None \
        else _shape(shape)
    return _multivariate_normal(key_of("multivariate_normal", key), mean, cov, shape=batch,
                                dtype=np.dtype(dtype), method=method)


@jitted("n", "m", "shape", "dtype")
def _orthogonal(data, n, m, shape, dtype):
    z = _normal(data, shape + (max(n, m), min(n, m)), dtype)
    q, r = _linalg().qr(z)
    k = min(n, m)
    d = jnp.sum(r[..., :k, :k] * jnp.eye(k, dtype=dtype), axis=-1)   # the diagonal of r
    x = q * jnp.expand_dims(jnp.sign(d), -2)
    return jnp.swapaxes(x, -1, -2) if n < m else x


def orthogonal(key: Any, n: int, shape: Sequence[int] = (), dtype: Any = None,
               m: int | None = None) -> Any:
    """Uniformly (Haar) distributed n x m matrices with orthonormal columns or rows."""
    dtype = float_dtype("orthogonal", dtype)
    m = n if m is None else m
    return _orthogonal(key_of("orthogonal", key), n=int(n), m=int(m), shape=_shape(shape),
                       dtype=dtype)

