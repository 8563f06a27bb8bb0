"""Real JAX programs, run on plugax with only the imports changed: Gaussian-process
regression (cholesky + solve_triangular, the log marginal likelihood and its
gradient), kernel ridge regression (solve), and a finite-horizon LQR (a Riccati
recursion of solves), each against a NumPy float64 reference and finite
differences. One edit: plugax.numpy has no `diag` yet, so the GP's
`jnp.diag(L)` is written `jnp.sum(L * jnp.eye(n), axis=1)`.
"""
import numpy as np
import pytest

import plugax as jax
import plugax.numpy as jnp
from plugax.scipy.linalg import cho_solve, solve_triangular
from plugax.testing import numeric_grad, x64


# --- the programs (JAX code) -----------------------------------------------------------------
def rbf_kernel(x1, x2, lengthscale, variance):
    sq = jnp.sum((x1[:, None, :] - x2[None, :, :]) ** 2, axis=-1)
    return variance * jnp.exp(-0.5 * sq / lengthscale ** 2)


def gp_neg_log_marginal_likelihood(log_params, x, y):
    lengthscale, variance, noise = jnp.exp(log_params)
    n = x.shape[0]
    K = rbf_kernel(x, x, lengthscale, variance) + (noise + 1e-6) * jnp.eye(n)
    L = jnp.linalg.cholesky(K)
    alpha = cho_solve((L, True), y)
    log_det = 2.0 * jnp.sum(jnp.log(jnp.sum(L * jnp.eye(n), axis=1)))
    return 0.5 * jnp.dot(y, alpha) + 0.5 * log_det + 0.5 * n * jnp.log(2 * jnp.pi)


def gp_predict(log_params, x, y, x_star):
    lengthscale, variance, noise = jnp.exp(log_params)
    K = rbf_kernel(x, x, lengthscale, variance) + (noise + 1e-6) * jnp.eye(x.shape[0])
    L = jnp.linalg.cholesky(K)
    K_s = rbf_kernel(x, x_star, lengthscale, variance)
    alpha = solve_triangular(L.T, solve_triangular(L, y, lower=True), lower=False)
    mean = K_s.T @ alpha
    v = solve_triangular(L, K_s, lower=True)
    var = variance - jnp.sum(v ** 2, axis=0)
    return mean, var


def kernel_ridge_fit_predict(log_lam, x, y, x_test):
    K = rbf_kernel(x, x, 1.0, 1.0)
    alpha = jnp.linalg.solve(K + jnp.exp(log_lam) * jnp.eye(x.shape[0]), y)
    return rbf_kernel(x_test, x, 1.0, 1.0) @ alpha


def riccati_step(P, A, B, Q, R):
    BtP = B.T @ P
    K = jnp.linalg.solve(R + BtP @ B, BtP @ A)
    return Q + A.T @ P @ (A - B @ K), K


def lqr_cost(A, B, Q, R, x0, horizon=8):
    P = Q
    for _ in range(horizon):
        P, K = riccati_step(P, A, B, Q, R)
    return x0 @ P @ x0


# --- NumPy references ----------------------------------------------------------------------
def np_gp_nll(log_params, x, y):
    ls, var, noise = np.exp(log_params)
    sq = np.sum((x[:, None, :] - x[None, :, :]) ** 2, -1)
    K = var * np.exp(-0.5 * sq / ls ** 2) + (noise + 1e-6) * np.eye(len(x))
    return 0.5 * y @ np.linalg.solve(K, y) + 0.5 * np.linalg.slogdet(K)[1] \
        + 0.5 * len(x) * np.log(2 * np.pi)


def np_lqr_cost(A, B, Q, R, x0, horizon=8):
    P = Q
    for _ in range(horizon):
        K = np.linalg.solve(R + B.T @ P @ B, B.T @ P @ A)
        P = Q + A.T @ P @ (A - B @ K)
    return x0 @ P @ x0


RNG = np.random.default_rng(0)
X = RNG.uniform(-3, 3, (12, 1))
Y = np.sin(X[:, 0]) + 0.1 * RNG.standard_normal(12)
X_STAR = np.linspace(-3, 3, 5)[:, None]


def test_gaussian_process_regression():
    with x64():
        params = np.log(np.array([1.0, 1.0, 0.1]))
        nll = jax.jit(gp_neg_log_marginal_likelihood)(params, X, Y)
        np.testing.assert_allclose(nll, np_gp_nll(params, X, Y), rtol=1e-10)
        grad = jax.jit(jax.grad(gp_neg_log_marginal_likelihood))(params, X, Y)
        np.testing.assert_allclose(grad, numeric_grad(
            lambda p: np_gp_nll(p, X, Y), params), rtol=1e-6, atol=1e-8)
        mean, var = gp_predict(params, X, Y, X_STAR)
        ls, v0, noise = np.exp(params)
        k = lambda a, b: v0 * np.exp(-0.5 * (a - b.T) ** 2 / ls ** 2)  # noqa: E731
        K = k(X, X) + (noise + 1e-6) * np.eye(12)
        np.testing.assert_allclose(mean, k(X_STAR, X) @ np.linalg.solve(K, Y), rtol=1e-9)
        np.testing.assert_allclose(var, v0 - np.einsum("ij,ji->i", k(X_STAR, X),
                                                       np.linalg.solve(K, k(X, X_STAR))),
                                   rtol=1e-8, atol=1e-12)
        # a few steps of gradient descent lower the objective
        for _ in range(5):
            params = params - 0.05 * np.asarray(grad)
            grad = jax.grad(gp_neg_log_marginal_likelihood)(params, X, Y)
        assert float(gp_neg_log_marginal_likelihood(params, X, Y)) < float(nll)


def test_kernel_ridge_regression():
    with x64():
        pred = jax.jit(kernel_ridge_fit_predict)(np.log(0.1), X, Y, X_STAR)
        sq = lambda a, b: np.exp(-0.5 * (a - b.T) ** 2)  # noqa: E731
        want = sq(X_STAR, X) @ np.linalg.solve(sq(X, X) + 0.1 * np.eye(12), Y)
        np.testing.assert_allclose(pred, want, rtol=1e-9)
        loss = lambda lam: jnp.sum(kernel_ridge_fit_predict(lam, X, Y, X_STAR) ** 2)  # noqa
        np_loss = lambda lam: float(np.sum((sq(X_STAR, X) @ np.linalg.solve(  # noqa: E731
            sq(X, X) + np.exp(lam) * np.eye(12), Y)) ** 2))
        np.testing.assert_allclose(jax.grad(loss)(np.log(0.1)),
                                   numeric_grad(np_loss, np.log(0.1)), rtol=1e-6)


@pytest.mark.parametrize("use_jit", [False, True])
def test_lqr_riccati_recursion(use_jit):
    with x64():
        A = np.array([[1.0, 0.1], [0.0, 1.0]])
        B = np.array([[0.0], [0.1]])
        Q, R, x0 = np.eye(2), np.array([[0.5]]), np.array([1.0, -0.5])
        cost = jax.jit(lqr_cost) if use_jit else lqr_cost
        np.testing.assert_allclose(cost(A, B, Q, R, x0), np_lqr_cost(A, B, Q, R, x0),
                                   rtol=1e-12)
        dA, dB = jax.grad(lqr_cost, argnums=(0, 1))(A, B, Q, R, x0)
        np.testing.assert_allclose(dA, numeric_grad(
            lambda a: np_lqr_cost(a, B, Q, R, x0), A), rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(dB, numeric_grad(
            lambda b: np_lqr_cost(A, b, Q, R, x0), B), rtol=1e-6, atol=1e-8)
