"""Whole programs a JAX user writes with jax.scipy.stats and jax.scipy.optimize, written as
such a user would (`import plugax as jax`, `plugax.scipy as jsp`), each checked against
an independent float64 NumPy/SciPy computation of the same thing.

1. Variational inference for Bayesian logistic regression, the pattern of JAX's
   "autobatching log-densities" notebook: a per-example log joint with
   `jsp.stats.norm.logpdf`, `jax.vmap` over posterior samples, `jax.jit`,
   `jax.value_and_grad` and `jax.random.normal` noise; SGD on the ELBO. The same
   updates are replayed in NumPy float64 with the hand-derived gradient and the same
   noise.
2. MAP logistic regression with `jsp.optimize.minimize(method="BFGS")` on
   `norm.logpdf` + `bernoulli.logpmf`, against scipy.optimize's BFGS on the same
   objective in float64, and its Laplace covariance against the inverse Hessian.
3. A two-component Gaussian mixture fitted by maximum likelihood (log-sum-exp of
   `norm.logpdf`), against SciPy on the same objective.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize as so
import scipy.special as sps
import scipy.stats as ss

import plugax as jax
import plugax.numpy as jnp
import plugax.scipy as jsp
from plugax import random
from plugax.testing import x64

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

RNG = np.random.RandomState(10009)
N_FEATURES, N_POINTS = 5, 60
TRUE_BETA = RNG.randn(N_FEATURES).astype(np.float32)
X = RNG.randn(N_POINTS, N_FEATURES).astype(np.float32)
Y = (RNG.rand(N_POINTS) < sps.expit(X @ TRUE_BETA)).astype(np.int32)
PRIOR_SCALE = 10.0


def test_variational_logistic_regression_matches_a_float64_replay():
    @jax.jit
    def log_joint(beta):
        prior = jnp.sum(jsp.stats.norm.logpdf(beta, loc=0.0, scale=PRIOR_SCALE))
        return prior + jnp.sum(-jnp.log1p(jnp.exp(-(2 * Y - 1) * jnp.dot(X, beta))))

    batched_log_joint = jax.jit(jax.vmap(log_joint))

    def elbo(loc, log_scale, eps):
        sample = loc + jnp.exp(log_scale) * eps
        return jnp.mean(batched_log_joint(sample), 0) + jnp.sum(log_scale - 0.5 * np.log(2 * np.pi))

    elbo_and_grad = jax.jit(jax.value_and_grad(elbo, argnums=(0, 1)))
    key = random.PRNGKey(10003)
    loc = jnp.zeros(N_FEATURES, jnp.float32)
    log_scale = jnp.zeros(N_FEATURES, jnp.float32)
    step, steps, batch = 0.01, 60, 32
    noises, values = [], []
    for _ in range(steps):
        key, sub = random.split(key)
        eps = random.normal(sub, (batch, N_FEATURES))
        value, (g_loc, g_scale) = elbo_and_grad(loc, log_scale, eps)
        loc, log_scale = loc + step * g_loc, log_scale + step * g_scale
        noises.append(np.asarray(eps, np.float64))
        values.append(float(value))

    # the same SGD in float64 NumPy, gradient by hand: d/d beta of the log joint is
    # -beta / s^2 + X^T (t * sigmoid(-t * X beta)) with t = 2y - 1
    t = 2.0 * Y - 1
    ref_loc, ref_log_scale = np.zeros(N_FEATURES), np.zeros(N_FEATURES)
    for eps in noises:
        scale = np.exp(ref_log_scale)
        beta = ref_loc + scale * eps                               # (batch, features)
        g = -beta / PRIOR_SCALE ** 2 + (t * sps.expit(-t * (beta @ X.T))) @ X
        ref_loc, ref_log_scale = (ref_loc + step * g.mean(0),
                                  ref_log_scale + step * ((g * eps).mean(0) * scale + 1))
    np.testing.assert_allclose(np.asarray(loc), ref_loc, rtol=2e-4, atol=2e-5)
    np.testing.assert_allclose(np.asarray(log_scale), ref_log_scale, rtol=2e-4, atol=2e-5)
    assert values[-1] > values[0] + 10                             # the ELBO went up


def test_map_logistic_regression_with_bfgs_matches_scipy():
    def neg_log_posterior(beta, x, y):
        prior = jnp.sum(jsp.stats.norm.logpdf(beta, 0.0, 2.0))
        p = jsp.special.expit(x @ beta)
        return -(prior + jnp.sum(jsp.stats.bernoulli.logpmf(y, p)))

    with x64():
        x64_x, y = X.astype(np.float64), Y
        result = jax.jit(lambda b0: jsp.optimize.minimize(
            neg_log_posterior, b0, (x64_x, y), method="BFGS"))(jnp.zeros(N_FEATURES))
        hessian = np.asarray(jax.hessian(neg_log_posterior)(result.x, x64_x, y))

    def reference(beta):
        return -(np.sum(ss.norm.logpdf(beta, 0.0, 2.0))
                 + np.sum(ss.bernoulli.logpmf(Y, sps.expit(X.astype(np.float64) @ beta))))

    ref = so.minimize(reference, np.zeros(N_FEATURES), method="BFGS", options={"gtol": 1e-8})
    assert bool(result.success) and int(result.status) == 0
    np.testing.assert_allclose(np.asarray(result.x), ref.x, atol=1e-5)
    np.testing.assert_allclose(float(result.fun), ref.fun, rtol=1e-9)
    # the Laplace covariance: the inverse Hessian at the mode
    np.testing.assert_allclose(np.linalg.inv(hessian), np.linalg.inv(
        _numeric_hessian(reference, ref.x)), rtol=1e-3, atol=1e-5)


def test_gaussian_mixture_maximum_likelihood_matches_scipy():
    data = np.concatenate([RNG.randn(40) * 0.5 - 2.0, RNG.randn(60) * 1.0 + 1.5])

    def neg_log_lik(theta, x):
        logit_w, mu, log_sigma = theta[0], theta[1:3], theta[3:5]
        log_w = -jnp.logaddexp(0.0, jnp.stack([-logit_w, logit_w]))     # log w, log(1 - w)
        per_point = jsp.stats.norm.logpdf(x[:, None], mu, jnp.exp(log_sigma)) + log_w
        return -jnp.sum(jsp.special.logsumexp(per_point, axis=1))

    start = np.array([0.0, -1.0, 1.0, 0.0, 0.0])
    with x64():
        fit = jsp.optimize.minimize(neg_log_lik, start, (data,), method="BFGS")

    def reference(theta):
        w = sps.expit(theta[0])
        dens = np.stack([ss.norm.logpdf(data, theta[1], np.exp(theta[3])) + np.log(w),
                         ss.norm.logpdf(data, theta[2], np.exp(theta[4])) + np.log1p(-w)], 1)
        return -np.sum(sps.logsumexp(dens, axis=1))

    ref = so.minimize(reference, start, method="BFGS", options={"gtol": 1e-8})
    assert bool(fit.success)
    np.testing.assert_allclose(float(fit.fun), ref.fun, rtol=1e-8)
    np.testing.assert_allclose(np.asarray(fit.x), ref.x, atol=1e-4)
    # the fit found the two clusters
    np.testing.assert_allclose(np.sort(np.asarray(fit.x)[1:3]), [-2.0, 1.5], atol=0.4)


def _numeric_hessian(f, x, eps=1e-4):
    n = x.size
    h = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            e_i, e_j = np.eye(n)[i] * eps, np.eye(n)[j] * eps
            h[i, j] = (f(x + e_i + e_j) - f(x + e_i - e_j) - f(x - e_i + e_j)
                       + f(x - e_i - e_j)) / (4 * eps * eps)
    return h
