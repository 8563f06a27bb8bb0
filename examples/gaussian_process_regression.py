"""Gaussian-process regression with its hyperparameters fitted by gradient descent
on the negative log marginal likelihood.

Ported from JAX's examples/gaussian_process_regression.py (Copyright 2018 Google
LLC, Apache-2.0): `cov_map`, `softplus`, `exp_quadratic`, `gp` and `train_step`
are JAX's code with only the imports changed; the absl flags became argparse and
the plot is written to a PNG.

    python examples/gaussian_process_regression.py [--size tiny|small|full] [--out DIR]

Shows: vmap of vmap (covariance matrices), scipy.linalg.cholesky/solve_triangular
and their gradients, jit(grad) through a dict of parameters, random.uniform/normal.
"""
from functools import partial
from typing import Sequence

import plugax.numpy as np
import plugax.random as random
import plugax.scipy as scipy
from plugax import grad, jit, vmap

import _gallery


def main(argv: Sequence[str] | None = None) -> dict:
    args = _gallery.parse_args(__doc__.splitlines()[0], argv)
    numpts = _gallery.pick(args.size, 7, 7, 25)
    steps = _gallery.pick(args.size, 150, 1000, 1000)
    key = random.PRNGKey(args.seed)
    eye = np.eye(numpts)

    # --- JAX's code (imports changed) ------------------------------------------
    def cov_map(cov_func, xs, xs2=None):
        """Compute a covariance matrix from a covariance function and data points.

        Args:
          cov_func: callable function, maps pairs of data points to scalars.
          xs: array of data points, stacked along the leading dimension.
        Returns:
          A 2d array `a` such that `a[i, j] = cov_func(xs[i], xs[j])`.
        """
        if xs2 is None:
            return vmap(lambda x: vmap(lambda y: cov_func(x, y))(xs))(xs)
        else:
            return vmap(lambda x: vmap(lambda y: cov_func(x, y))(xs))(xs2).T

    def softplus(x):
        return np.logaddexp(x, 0.)

    # Note, writing out the vectorized form of the identity
    # ||x-y||^2 = <x-y,x-y> = ||x||^2 + ||y||^2 - 2<x,y>
    # for computing squared distances would be more efficient (but less succinct).
    def exp_quadratic(x1, x2):
        return np.exp(-np.sum((x1 - x2)**2))

    def gp(params, x, y, xtest=None, compute_marginal_likelihood=False):
        noise = softplus(params['noise'])
        amp = softplus(params['amplitude'])
        ls = softplus(params['lengthscale'])
        ymean = np.mean(y)
        y = y - ymean
        x = x / ls
        train_cov = amp * cov_map(exp_quadratic, x) + eye * (noise + 1e-6)
        chol = scipy.linalg.cholesky(train_cov, lower=True)
        kinvy = scipy.linalg.solve_triangular(
            chol.T, scipy.linalg.solve_triangular(chol, y, lower=True))
        if compute_marginal_likelihood:
            log2pi = np.log(2. * 3.1415)
            ml = np.sum(-0.5 * np.dot(y.T, kinvy) - np.sum(np.log(np.diag(chol))) -
                        (numpts / 2.) * log2pi)
            ml -= np.sum(-0.5 * np.log(2 * 3.1415) - np.log(amp)**2)  # lognormal prior
            return -ml

        if xtest is not None:
            xtest = xtest / ls
        cross_cov = amp * cov_map(exp_quadratic, x, xtest)
        mu = np.dot(cross_cov.T, kinvy) + ymean
        v = scipy.linalg.solve_triangular(chol, cross_cov, lower=True)
        var = (amp * cov_map(exp_quadratic, xtest) - np.dot(v.T, v))
        return mu, var

    marginal_likelihood = partial(gp, compute_marginal_likelihood=True)
    predict = partial(gp, compute_marginal_likelihood=False)
    grad_fun = jit(grad(marginal_likelihood))

    # Covariance hyperparameters to be learned
    params = {"amplitude": np.zeros((1, 1)),
              "noise": np.zeros((1, 1)) - 5.,
              "lengthscale": np.zeros((1, 1))}
    momentums = dict([(k, p * 0.) for k, p in params.items()])
    scales = dict([(k, p * 0. + 1.) for k, p in params.items()])

    lr = 0.01  # Learning rate

    def train_step(params, momentums, scales, x, y):
        grads = grad_fun(params, x, y)
        for k in (params):
            momentums[k] = 0.9 * momentums[k] + 0.1 * grads[k][0]
            scales[k] = 0.9 * scales[k] + 0.1 * grads[k][0]**2
            params[k] -= lr * momentums[k] / np.sqrt(scales[k] + 1e-5)
        return params, momentums, scales

    # Create a really simple toy 1D function
    y_fun = lambda x: np.sin(x) + 0.1 * random.normal(key, shape=(x.shape[0], 1))
    x = (random.uniform(key, shape=(numpts, 1)) * 4.) + 1
    y = y_fun(x)
    xtest = np.linspace(0, 6., 200)[:, None]
    # ----------------------------------------------------------------------------

    history = [float(marginal_likelihood(params, x, y))]
    bar = _gallery.progress(range(steps), "steps", args.quiet)
    for i in bar:
        params, momentums, scales = train_step(params, momentums, scales, x, y)
        if i % 50 == 49:
            history.append(float(marginal_likelihood(params, x, y)))
            _gallery.show(bar, neg_marginal_likelihood=history[-1])
    fitted = {k: float(softplus(v)[0, 0]) for k, v in params.items()}
    print("fitted:", ", ".join(f"{k} {v:.3g}" for k, v in fitted.items()),
          f"| negative log marginal likelihood {history[0]:.3f} -> {history[-1]:.3f}")

    mu, var = predict(params, x, y, xtest)
    std = np.sqrt(np.diag(var))
    inside = (xtest[:, 0] > 1.0) & (xtest[:, 0] < 5.0)   # where the training inputs lie
    rmse_inside = float(np.sqrt(np.sum(np.where(inside, (mu[:, 0] - np.sin(xtest[:, 0])) ** 2, 0))
                                / np.sum(inside)))

    def draw(plt):
        plt.plot(x, y, "k.", label="data")
        plt.plot(xtest, mu, label="posterior mean")
        plt.fill_between(xtest.flatten(), mu.flatten() - std * 2, mu.flatten() + std * 2,
                         alpha=0.3, label="2 std")
        plt.plot(xtest, np.sin(xtest), "k:", label="sin(x)")
        plt.legend()
        plt.title("GP regression, fitted hyperparameters")
    png = _gallery.save_figure(draw, args.out, "gaussian_process_regression.png")
    return {"neg_marginal_likelihood": history, "params": fitted, "rmse_inside": rmse_inside,
            "png": png}


if __name__ == "__main__":
    main()
