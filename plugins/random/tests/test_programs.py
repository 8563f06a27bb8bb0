"""Three JAX programs that use jax.random, unchanged but for their imports, checked
against the outputs JAX gave for them (recorded below with jax 0.10.2).

The pi estimate and the Metropolis chain's accept decisions are exact; the chain's states
and the training losses go through matrix products and transcendental functions that
XLA may fuse differently, so they are compared to float32 rounding.
"""
from __future__ import annotations

import numpy as np
import pytest

# --- the programs: JAX code, unchanged but for these imports --------------------------
from functools import partial

import plugax as jax
import plugax.numpy as jnp
from plugax import lax, random


# 1. Monte-Carlo estimate of pi, one independent stream per vmapped key
def sample_pi(key, n):
    kx, ky = random.split(key)
    x = random.uniform(kx, (n,))
    y = random.uniform(ky, (n,))
    return 4.0 * jnp.mean((x ** 2 + y ** 2 <= 1.0).astype(jnp.float32))


def estimate_pi(seed, n_chains=8, n=4096):
    keys = random.split(random.PRNGKey(seed), n_chains)
    return jax.jit(jax.vmap(partial(sample_pi, n=n)))(keys)


# 2. Random-walk Metropolis on a 2-D Gaussian, the chain in lax.scan
def log_prob(x):
    return -0.5 * jnp.sum(x ** 2)


@partial(jax.jit, static_argnums=1)
def rw_metropolis(key, n_steps, x0, step_size=0.8):
    def step(carry, key):
        x, lp = carry
        k1, k2 = random.split(key)
        prop = x + step_size * random.normal(k1, x.shape)
        lp_prop = log_prob(prop)
        accept = jnp.log(random.uniform(k2)) < lp_prop - lp
        x = jnp.where(accept, prop, x)
        lp = jnp.where(accept, lp_prop, lp)
        return (x, lp), (x, accept)
    keys = random.split(key, n_steps)
    _, (xs, accepted) = lax.scan(step, (x0, log_prob(x0)), keys)
    return xs, accepted


# 3. An MLP with dropout, trained a few SGD steps on random-feature regression data
def init_params(key, sizes):
    keys = random.split(key, len(sizes) - 1)
    return [(random.normal(k, (m, n)) * jnp.sqrt(2.0 / m), jnp.zeros(n))
            for k, m, n in zip(keys, sizes[:-1], sizes[1:])]


def dropout(key, x, rate):
    keep = random.bernoulli(key, 1.0 - rate, x.shape)
    return jnp.where(keep, x / (1.0 - rate), 0.0)


def forward(params, x, key, rate=0.2):
    for i, (w, b) in enumerate(params[:-1]):
        x = jnp.maximum(x @ w + b, 0.0)
        x = dropout(random.fold_in(key, i), x, rate)
    w, b = params[-1]
    return x @ w + b


def loss(params, x, y, key):
    return jnp.mean((forward(params, x, key)[:, 0] - y) ** 2)


@jax.jit
def sgd_step(params, x, y, key, lr=0.05):
    grads = jax.grad(loss)(params, x, y, key)
    return [(w - lr * gw, b - lr * gb) for (w, b), (gw, gb) in zip(params, grads)]


def train(seed=0, steps=5):
    key = random.PRNGKey(seed)
    k_data, k_feat, k_init, key = random.split(key, 4)
    x = random.normal(k_data, (64, 3))
    w_true = random.normal(k_feat, (3,))
    y = jnp.sin(x @ w_true)
    params = init_params(k_init, [3, 16, 1])
    losses = []
    for step in range(steps):
        key, sub = random.split(key)
        params = sgd_step(params, x, y, sub)
        losses.append(loss(params, x, y, sub))
    return params, jnp.stack(losses)


# --- JAX's outputs ------------------------------------------------------------------
PI = [1078657024, 1078497280, 1078558720, 1078407168, 1078325248, 1078534144, 1078546432, 1078530048]
CHAIN = [[-0.003636391833424568, -0.4855342209339142], [-1.6557650566101074, 0.05969635024666786], [-1.6557650566101074, 0.05969635024666786], [-1.0601335763931274, -0.3826078772544861], [-0.40418413281440735, -0.4456827938556671], [-1.0559139251708984, -1.5756282806396484]]
ACCEPTED = [1, 1, 0, 1, 1, 1]
LOSSES = [1.140345573425293, 1.1703996658325195, 0.8420614004135132, 1.0431894063949585, 0.7730544805526733]


def test_monte_carlo_pi_is_jax_bit_for_bit():
    estimates = np.asarray(estimate_pi(0))
    np.testing.assert_array_equal(estimates.view(np.uint32), PI)
    assert abs(estimates.mean() - np.pi) < 0.05


def test_metropolis_chain_in_scan_follows_jax():
    xs, accepted = rw_metropolis(random.PRNGKey(1), 6, jnp.zeros(2))
    np.testing.assert_array_equal(np.asarray(accepted).astype(int), ACCEPTED)
    np.testing.assert_allclose(np.asarray(xs), CHAIN, rtol=1e-6, atol=1e-7)
    long, acc = rw_metropolis(random.PRNGKey(2), 4000, jnp.zeros(2))
    long = np.asarray(long)[500:]
    assert abs(long.mean()) < 0.15 and abs(long.var() - 1.0) < 0.2    # the target N(0, I)
    assert 0.3 < np.asarray(acc).mean() < 0.9


@pytest.mark.skipif(not hasattr(jnp, "matmul"), reason="needs the dot plugin (x @ w)")
def test_dropout_mlp_training_follows_jax():
    params, losses = train()
    np.testing.assert_allclose(np.asarray(losses), LOSSES, rtol=2e-5)
