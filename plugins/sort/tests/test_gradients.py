"""Derivatives through sorting: grad of median, quantile, percentile and top_k values
against central finite differences (inputs without ties, where the order statistics
are smooth), the exact subgradients JAX gives, and jit(grad) == grad."""
import numpy as np
import pytest

import plugax
import plugax.numpy as pnp
from plugax import lax
from plugax.testing import x64

_RNG = np.random.default_rng(5)
X = _RNG.permutation(24).reshape(4, 6) / 7.0 + _RNG.uniform(0, 0.01, (4, 6))   # no ties
W = _RNG.standard_normal((4, 6))


def _fd_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (float(f(x + d)) - float(f(x - d))) / (2 * eps)
    return g


FUNCTIONS = {
    "median": lambda x: pnp.sum(pnp.median(x, axis=1) * W[:, 0]),
    "median_all": lambda x: pnp.median(x),
    "quantile_linear": lambda x: pnp.sum(pnp.quantile(x, np.array([0.1, 0.35, 0.9]), axis=0)
                                         * W[:3, :]),
    "quantile_midpoint": lambda x: pnp.sum(pnp.quantile(x, 0.4, axis=1, method="midpoint")),
    "percentile_keepdims": lambda x: pnp.sum(pnp.percentile(x, 70.0, axis=(0, 1),
                                                            keepdims=True)),
    "nanquantile": lambda x: pnp.sum(pnp.nanquantile(x, 0.3, axis=1) * W[:, 1]),
    "top_k_values": lambda x: pnp.sum(lax.top_k(x, 3)[0] * W[:, :3]),
    "sort_descending": lambda x: pnp.sum(pnp.sort(x, axis=0, descending=True) * W),
    "sort_key_val_rider": lambda x: pnp.sum(lax.sort_key_val(x[0], x[1] ** 2)[1] * W[0]),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_grad_matches_finite_differences(name):
    f = FUNCTIONS[name]
    with x64():
        g = np.asarray(plugax.grad(f)(X))
        np.testing.assert_allclose(g, _fd_grad(f, X), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(np.asarray(plugax.jit(plugax.grad(f))(X)), g, rtol=1e-12)


def test_median_gradient_is_shared_by_the_middle_pair():
    with x64():
        g = plugax.grad(pnp.median)(np.array([4.0, 1.0, 3.0, 2.0]))     # middle: 2 and 3
        np.testing.assert_array_equal(g, [0.0, 0.0, 0.5, 0.5])
        g = plugax.grad(pnp.median)(np.array([4.0, 1.0, 3.0]))
        np.testing.assert_array_equal(g, [0.0, 0.0, 1.0])


def test_nan_entries_get_no_gradient_in_nan_functions():
    x = np.array([3.0, np.nan, 1.0, 2.0, np.nan])
    with x64():
        g = plugax.grad(pnp.nanmedian)(x)
        np.testing.assert_array_equal(g, [0.0, 0.0, 0.0, 1.0, 0.0])


def test_top_k_gradient_goes_to_the_chosen_entries():
    x = np.array([[0.5, 2.0, -1.0, 2.0]])
    g = plugax.grad(lambda v: pnp.sum(lax.top_k(v, 2)[0]))(x)
    np.testing.assert_array_equal(g, [[0.0, 1.0, 0.0, 1.0]])
    g = plugax.grad(lambda v: lax.top_k(v, 1)[0][0, 0])(x)      # tie: the lower index wins
    np.testing.assert_array_equal(g, [[0.0, 1.0, 0.0, 0.0]])


def test_vmap_of_grad_of_quantile_matches_a_loop():
    f = lambda v: pnp.quantile(v, 0.25)
    with x64():
        batched = np.asarray(plugax.vmap(plugax.grad(f))(X))
        for i in range(X.shape[0]):
            np.testing.assert_allclose(batched[i], plugax.grad(f)(X[i]), rtol=1e-12)
