"""gaussian_kde: kernel density estimation with a Gaussian kernel, as jax.scipy.stats has it.

A pytree (its arrays are the leaves), so a fitted estimator passes through jit,
vmap and grad like any array. The bandwidth is fixed when it is built (Scott's
or Silverman's rule, a scalar, or a callable), as in JAX: `set_bandwidth` and
box integration in more than one dimension are refused.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import plugax
import plugax.numpy as jnp
from plugax.tree_util import register_pytree_node_class

from ._common import promote, special

__all__ = ["gaussian_kde"]

_FIELDS = ("neff", "dataset", "weights", "covariance", "inv_cov")


@register_pytree_node_class
class gaussian_kde:  # noqa: N801 - SciPy's and JAX's name
    """Gaussian KDE of `dataset` (d, n) with optional `weights` (n,)."""

    def __init__(self, dataset: Any, bw_method: Any = None, weights: Any = None) -> None:
        dataset = jnp.atleast_2d(jnp.asarray(dataset))
        if dataset.dtype.kind == "c":
            raise NotImplementedError("gaussian_kde does not support complex data")
        if not dataset.size > 1:
            raise ValueError("`dataset` input should have multiple elements.")
        d, n = dataset.shape
        if weights is not None:
            dataset, weights = promote("gaussian_kde", dataset, weights)
            weights = jnp.atleast_1d(weights)
            if weights.ndim != 1:
                raise ValueError("`weights` input should be one-dimensional.")
            if weights.shape[0] != n:
                raise ValueError("`weights` input should be of length n")
            weights = weights / jnp.sum(weights)
        else:
            dataset, = promote("gaussian_kde", dataset)
            weights = jnp.full(n, 1.0 / n, dtype=dataset.dtype)
        self._set("dataset", dataset)
        self._set("weights", weights)
        neff = self._set("neff", 1 / jnp.sum(weights ** 2))
        bw_method = "scott" if bw_method is None else bw_method
        if isinstance(bw_method, str) and bw_method == "scott":
            factor = jnp.power(neff, -1.0 / (d + 4))
        elif isinstance(bw_method, str) and bw_method == "silverman":
            factor = jnp.power(neff * (d + 2) / 4.0, -1.0 / (d + 4))
        elif np.ndim(bw_method) == 0 and not isinstance(bw_method, str) and not callable(bw_method):
            factor = bw_method
        elif callable(bw_method):
            factor = bw_method(self)
        else:
            raise ValueError("`bw_method` should be 'scott', 'silverman', a scalar, or a callable.")
        data_cov = _weighted_cov(dataset, weights)
        self._set("covariance", data_cov * factor ** 2)
        self._set("inv_cov", jnp.linalg.inv(data_cov) / factor ** 2)

    def _set(self, name: str, value: Any) -> Any:
        object.__setattr__(self, name, value)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"gaussian_kde is immutable (as JAX's): cannot set {name!r}")

    def tree_flatten(self) -> tuple[tuple, None]:
        return tuple(getattr(self, f) for f in _FIELDS), None

    @classmethod
    def tree_unflatten(cls, aux_data: None, children: Any) -> "gaussian_kde":
        kde = cls.__new__(cls)
        for name, value in zip(_FIELDS, children):
            kde._set(name, value)
        return kde

    @property
    def d(self) -> int:
        return self.dataset.shape[0]

    @property
    def n(self) -> int:
        return self.dataset.shape[1]

    def evaluate(self, points: Any) -> Any:
        """The estimated density at `points` (d, m)."""
        return _kernel_sum(False, self.dataset.T, self.weights, self._points(points).T,
                           self.inv_cov)

    __call__ = evaluate
    pdf = evaluate

    def logpdf(self, x: Any) -> Any:
        """log of the estimated density, summed in log space (no underflow far out)."""
        return _kernel_sum(True, self.dataset.T, self.weights, self._points(x).T, self.inv_cov)

    def integrate_gaussian(self, mean: Any, cov: Any) -> Any:
        """Integral of the estimate times the Gaussian N(mean, cov)."""
        mean = jnp.atleast_1d(jnp.squeeze(jnp.asarray(mean)))
        cov = jnp.atleast_2d(jnp.asarray(cov))
        if mean.shape != (self.d,):
            raise ValueError(f"mean does not have dimension {self.d}")
        if cov.shape != (self.d, self.d):
            raise ValueError(f"covariance does not have dimension {self.d}")
        chol, norm = self._joint(self.covariance + cov)
        return _convolve(chol, norm, self.dataset, self.weights, mean)

    def integrate_box_1d(self, low: Any, high: Any) -> Any:
        """Mass of a one-dimensional estimate between the scalars `low` and `high`."""
        if self.d != 1:
            raise ValueError("integrate_box_1d() only handles 1D pdfs")
        if np.ndim(low) != 0 or np.ndim(high) != 0:
            raise ValueError("the limits of integration in integrate_box_1d must be scalars")
        ndtr = special("ndtr", "gaussian_kde.integrate_box_1d")
        sigma = jnp.squeeze(jnp.sqrt(self.covariance))
        lo = jnp.squeeze((low - self.dataset) / sigma)
        hi = jnp.squeeze((high - self.dataset) / sigma)
        return jnp.sum(self.weights * (ndtr(hi) - ndtr(lo)))

    def integrate_kde(self, other: "gaussian_kde") -> Any:
        """Integral of the product of two estimates of the same dimension."""
        if other.d != self.d:
            raise ValueError("KDEs are not the same dimensionality")
        chol, norm = self._joint(self.covariance + other.covariance)
        small, large = (self, other) if self.n < other.n else (other, self)
        per_point = plugax.vmap(lambda m: _convolve(chol, norm, large.dataset, large.weights, m),
                                in_axes=1)(small.dataset)
        return jnp.sum(per_point * small.weights)

    def resample(self, key: Any, shape: tuple = ()) -> Any:
        """Draws (d, *shape) from the estimate: a data point chosen by weight, plus
        kernel noise."""
        import plugax.random as random   # a namespace the random family fills: at call time
        ind_key, eps_key = random.split(key)
        ind = random.choice(ind_key, self.n, shape=shape, p=self.weights)
        eps = random.multivariate_normal(eps_key, jnp.zeros(self.d, self.covariance.dtype),
                                         self.covariance, shape=shape,
                                         dtype=self.dataset.dtype).T
        return jnp.take(self.dataset, ind, axis=1) + eps

    def integrate_box(self, low_bounds: Any, high_bounds: Any, maxpts: Any = None) -> Any:
        raise NotImplementedError("only 1D box integrations are supported; use "
                                  "`integrate_box_1d`")

    def set_bandwidth(self, bw_method: Any = None) -> None:
        raise NotImplementedError("dynamically changing the bandwidth method is not supported")

    def _joint(self, cov: Any) -> tuple:
        import plugax.scipy.linalg as linalg
        chol = linalg.cho_factor(cov)
        norm = 1.0 / (np.sqrt(2 * np.pi) ** self.d * jnp.prod(jnp.diag(chol[0])))
        return chol, norm

    def _points(self, points: Any) -> Any:
        points = jnp.atleast_2d(jnp.asarray(points))
        if points.dtype.kind == "c":
            raise NotImplementedError("gaussian_kde does not support complex coordinates")
        d, m = points.shape
        if d != self.d:
            if d == 1 and m == self.d:
                return jnp.reshape(points, (self.d, 1))
            raise ValueError(f"points have dimension {d}, dataset has dimension {self.d}")
        return points


def _weighted_cov(data: Any, weights: Any) -> Any:
    """np.cov(data, aweights=weights) (ddof 1) for weights summing to 1: the unbiased
    covariance with reliability weights divides by 1 - sum(w^2)."""
    centred = data - jnp.sum(data * weights, axis=1, keepdims=True)
    cov = (centred * weights) @ centred.T / (1 - jnp.sum(weights * weights))
    return jnp.atleast_2d(cov)


def _convolve(chol: Any, norm: Any, target: Any, weights: Any, mean: Any) -> Any:
    import plugax.scipy.linalg as linalg
    diff = target - mean[:, None]
    alpha = linalg.cho_solve(chol, diff)
    return norm * jnp.sum(jnp.exp(-0.5 * jnp.sum(diff * alpha, axis=0)) * weights)


def _kernel_sum(in_log: bool, points: Any, weights: Any, xi: Any, precision: Any) -> Any:
    """sum_j w_j N(xi; points_j, precision^-1) for each row of xi, in whitened coordinates
    (precision = W W^T, so the quadratic form is a squared distance)."""
    points, weights, xi, precision = promote("gaussian_kde", points, weights, xi, precision)
    d = points.shape[1]
    if xi.shape[1] != d:
        raise ValueError("points and xi must have same trailing dim")
    whitening = jnp.linalg.cholesky(precision)
    points, xi = points @ whitening, xi @ whitening
    log_norm = jnp.sum(jnp.log(jnp.diag(whitening))) - 0.5 * d * np.log(2 * np.pi)
    sq = jnp.sum(jnp.square(xi[:, None, :] - points[None, :, :]), axis=-1)   # (m, n)
    arg = log_norm - 0.5 * sq
    if in_log:
        logsumexp: Callable = special("logsumexp", "gaussian_kde.logpdf")
        return logsumexp(arg + jnp.log(weights)[None, :], axis=1)
    return jnp.sum(weights[None, :] * jnp.exp(arg), axis=1)
