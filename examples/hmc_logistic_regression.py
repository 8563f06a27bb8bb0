"""Bayesian logistic regression sampled with Hamiltonian Monte Carlo.

Data come from known weights, so the posterior can be checked: its mean should
lie near the true weights. Each HMC step draws a momentum, follows Hamilton's
equations with `n_leapfrog` leapfrog steps (the force is `grad` of the log joint
density), and accepts the end point with the Metropolis probability, which
corrects the integrator's error exactly. The whole chain is one `lax.scan` over
split keys, compiled once with `jit`; several chains run at once with `vmap`.
(Written from Neal, "MCMC using Hamiltonian dynamics", 2011; no NumPyro.)

    python examples/hmc_logistic_regression.py [--size tiny|small|full] [--out DIR]

Shows: random.split/normal/uniform/bernoulli, grad, lax.fori_loop, lax.scan,
vmap over chains, jit, nn.log_sigmoid.
"""
from typing import Sequence

import numpy as np

import plugax.numpy as jnp
from plugax import grad, jit, lax, nn, random, vmap

import _gallery

PRIOR_STD = 2.0


def make_data(key, num_points: int, true_w):
    """Inputs ~ N(0, 1) with a column of ones (the bias), labels ~ Bernoulli(sigmoid(x @ w))."""
    k_x, k_y = random.split(key)
    x = random.normal(k_x, (num_points, true_w.shape[0] - 1))
    x = jnp.concatenate([x, jnp.ones((num_points, 1))], axis=1)
    y = random.bernoulli(k_y, nn.sigmoid(x @ true_w)).astype(jnp.float32)
    return x, y


def log_joint(w, x, y):
    """log p(w) + log p(y | x, w): a Gaussian prior and the Bernoulli likelihood,
    written with log_sigmoid so large logits do not overflow."""
    logits = x @ w
    log_lik = jnp.sum(y * nn.log_sigmoid(logits) + (1 - y) * nn.log_sigmoid(-logits))
    return log_lik - 0.5 * jnp.sum(w ** 2) / PRIOR_STD ** 2


def hmc_step(w, key, x, y, step_size, n_leapfrog):
    """One HMC transition from `w`: returns (new w, whether the proposal was accepted)."""
    k_p, k_u = random.split(key)
    force = grad(log_joint)
    p0 = random.normal(k_p, w.shape)

    def leapfrog(_, state):
        w, p = state
        p = p + 0.5 * step_size * force(w, x, y)
        w = w + step_size * p
        p = p + 0.5 * step_size * force(w, x, y)
        return w, p

    w_new, p_new = lax.fori_loop(0, n_leapfrog, leapfrog, (w, p0))
    log_ratio = (log_joint(w_new, x, y) - 0.5 * jnp.sum(p_new ** 2)
                 - log_joint(w, x, y) + 0.5 * jnp.sum(p0 ** 2))
    accept = jnp.log(random.uniform(k_u)) < log_ratio
    return jnp.where(accept, w_new, w), accept


def sample_chain(key, w0, x, y, num_samples: int, step_size: float, n_leapfrog: int):
    """`num_samples` HMC draws as one scan: returns (samples [num_samples, d], accepted)."""
    def body(w, key):
        w, accepted = hmc_step(w, key, x, y, step_size, n_leapfrog)
        return w, (w, accepted)
    _, (samples, accepted) = lax.scan(body, w0, random.split(key, num_samples))
    return samples, accepted


def main(argv: Sequence[str] | None = None) -> dict:
    args = _gallery.parse_args(__doc__.splitlines()[0], argv)
    num_points = _gallery.pick(args.size, 200, 500, 2000)
    num_samples = _gallery.pick(args.size, 200, 1000, 3000)
    num_chains, num_rounds = 4, 10
    step_size = _gallery.pick(args.size, 0.05, 0.03, 0.015)
    n_leapfrog = 10
    key = random.PRNGKey(args.seed)
    k_data, k_init, k_chain = random.split(key, 3)
    true_w = jnp.array([1.5, -2.0, 0.5, 0.8])          # three weights and a bias
    x, y = make_data(k_data, num_points, true_w)

    run = jit(vmap(lambda k, w0: sample_chain(k, w0, x, y, num_samples // num_rounds,
                                              step_size, n_leapfrog)))
    w = random.normal(k_init, (num_chains, true_w.shape[0]))
    draws, accepts = [], []
    bar = _gallery.progress(random.split(k_chain, num_rounds), f"HMC, {num_chains} chains",
                            args.quiet, total=num_rounds)
    for round_key in bar:
        samples, accepted = run(random.split(round_key, num_chains), w)
        w = samples[:, -1]
        draws.append(np.asarray(samples))
        accepts.append(np.asarray(accepted))
        _gallery.show(bar, acceptance=float(np.mean(accepts[-1])))
    samples = np.concatenate(draws, axis=1)             # [chains, draws, d]
    kept = samples[:, samples.shape[1] // 4:].reshape(-1, samples.shape[-1])   # drop warm-up
    posterior_mean, posterior_std = kept.mean(0), kept.std(0)
    acceptance = float(np.mean(np.concatenate(accepts, axis=1)))
    print("true weights   ", np.round(np.asarray(true_w), 3))
    print("posterior mean ", np.round(posterior_mean, 3))
    print("posterior std  ", np.round(posterior_std, 3), f"| acceptance {acceptance:.2f}")

    def draw(plt):
        for j in range(kept.shape[1]):
            plt.hist(kept[:, j], bins=40, alpha=0.5, density=True, label=f"w[{j}]")
            plt.axvline(float(true_w[j]), color="k", ls=":")
        plt.legend()
        plt.title("HMC posterior of the weights (dotted: true values)")
    png = _gallery.save_figure(draw, args.out, "hmc_logistic_regression.png")
    return {"true_w": np.asarray(true_w), "posterior_mean": posterior_mean,
            "posterior_std": posterior_std, "acceptance": acceptance, "samples": samples,
            "data": (np.asarray(x), np.asarray(y)), "png": png}


if __name__ == "__main__":
    main()
