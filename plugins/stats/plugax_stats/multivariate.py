"""Multivariate distributions: multivariate_normal and dirichlet.

multivariate_normal.logpdf works from the Cholesky factor L of the covariance:
the Mahalanobis term is |L^-1 (x - mean)|^2 and the log-determinant is
2 sum(log diag L), which is both cheaper and better conditioned than an inverse.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import plugax
import plugax.lax as lax
import plugax.numpy as jnp

from ._common import NEG_INF, promote, special
from ._registry import derived, member

ArrayLike = Any


def _whiten(chol: Any, d: Any) -> Any:
    """L^-1 d for vectors d on the last axis (any leading shape) and one (n, n) factor."""
    n = chol.shape[-1]
    rows = jnp.reshape(d, (-1, n))
    # rows @ L^T = d_row  <=>  L y = d_row
    y = lax.linalg.triangular_solve(chol, rows, left_side=False, lower=True, transpose_a=True)
    return jnp.reshape(y, d.shape)


@member("multivariate_normal")
def multivariate_normal_logpdf(x: ArrayLike, mean: ArrayLike, cov: ArrayLike,
                               allow_singular: None = None) -> Any:
    """Log density of N(mean, cov) at x; a scalar `cov` means cov * identity, and a
    scalar `mean` a one-dimensional normal."""
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf "
                                  "is not supported (as in JAX)")
    x, mean, cov = promote("multivariate_normal.logpdf", x, mean, cov)
    log2pi = np.log(2 * np.pi)
    if mean.ndim == 0:
        return -0.5 * jnp.square(x - mean) / cov - 0.5 * (log2pi + jnp.log(cov))
    n = mean.shape[-1]
    d = x - mean
    if cov.ndim == 0:
        return -0.5 * jnp.sum(d * d, axis=-1) / cov - n / 2 * (log2pi + jnp.log(cov))
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError(f"multivariate_normal.logpdf got incompatible shapes: mean has "
                         f"{n} entries but cov has shape {cov.shape} (expected (..., {n}, {n}))")
    chol = lax.linalg.cholesky(cov)
    log_det = jnp.sum(jnp.log(jnp.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
    if cov.ndim == 2:
        y = _whiten(chol, jnp.broadcast_to(d, jnp.broadcast_shapes(d.shape, (n,))))
    else:     # a batch of covariances: one factor per batch member
        batch = jnp.broadcast_shapes(d.shape[:-1], cov.shape[:-2])
        d = jnp.reshape(jnp.broadcast_to(d, batch + (n,)), (-1, n))
        chol = jnp.reshape(jnp.broadcast_to(chol, batch + (n, n)), (-1, n, n))
        y = jnp.reshape(plugax.vmap(_whiten)(chol, d), batch + (n,))
    return -0.5 * jnp.sum(y * y, axis=-1) - n / 2 * log2pi - log_det


@member("multivariate_normal")
def multivariate_normal_pdf(x: ArrayLike, mean: ArrayLike, cov: ArrayLike) -> Any:
    return jnp.exp(multivariate_normal_logpdf(x, mean, cov))


@member("dirichlet")
def dirichlet_logpdf(x: ArrayLike, alpha: ArrayLike) -> Any:
    """Log density at points `x` whose first axis holds the K components (or K - 1, the
    last one then being 1 - their sum); -inf off the simplex."""
    x, alpha = promote("dirichlet.logpdf", x, alpha)
    if alpha.ndim != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}")
    k = alpha.shape[0]
    if x.ndim == 0 or x.shape[0] not in (k, k - 1):
        raise ValueError(f"`x` must have either the same number of entries as `alpha` or "
                         f"one entry fewer; got x.shape={x.shape}, alpha.shape={alpha.shape}")
    if x.shape[0] == k - 1:
        x = jnp.concatenate([x, 1 - jnp.sum(x, axis=0, keepdims=True)], axis=0)
    gammaln, xlogy = special("gammaln", "dirichlet.logpdf"), special("xlogy", "dirichlet.logpdf")
    log_beta = jnp.sum(gammaln(alpha)) - gammaln(jnp.sum(alpha))
    column = jnp.reshape(alpha, (k,) + (1,) * (x.ndim - 1))
    value = jnp.sum(xlogy(column - 1, x), axis=0) - log_beta
    on_simplex = jnp.all(x > 0, axis=0) & (jnp.abs(jnp.sum(x, axis=0) - 1) < 1e-6)
    return jnp.where(on_simplex, value, NEG_INF)


dirichlet_pdf = derived("dirichlet", "pdf", "exp", dirichlet_logpdf)
