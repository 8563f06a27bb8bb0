"""plugax.scipy.stats distributions, generated from one table: distribution -> its points
(inside and outside the support), its parameters (SciPy's order) and the points where
its density is differentiable.

Every function of every distribution (as plugax.scipy.stats has it, so a member added
later is checked too) is compared with scipy.stats in float64; each distribution's
functions are jitted together and compared with eager, vmapped over the points and
compared with a Python loop; the continuous logpdfs' gradients (in x and in every
parameter) are compared with central differences of SciPy's logpdf.

A function whose special function no loaded plugin gives (the special_functions
family) is skipped with the name of the missing function.
"""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import scipy.stats as ss

import plugax
import plugax.numpy as jnp
import plugax.scipy.stats as pst
from plugax.testing import numeric_grad, x64
from plugax_stats._registry import DISTRIBUTIONS

# points outside the support: NumPy warns about log(0) and the like, as it should
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

X_REAL = np.array([-3.0, -0.2, 0.0, 1.1, 4.0])
Q = np.array([0.02, 0.3, 0.5, 0.9])
SPD = np.array([[2.0, 0.3, -0.2], [0.3, 1.0, 0.1], [-0.2, 0.1, 0.5]])
SIMPLEX = np.array([[0.2, 0.5, 0.1, 0.3], [0.3, 0.25, 0.6, 0.3], [0.5, 0.25, 0.3, 0.4]])

# name -> (points, parameters after the point, interior points for gradients or None)
TABLE = {
    "norm": (X_REAL, (0.5, 1.5), X_REAL),
    "cauchy": (X_REAL, (0.5, 1.5), X_REAL),
    "laplace": (X_REAL, (0.5, 1.5), np.array([-3.0, -0.2, 1.1, 4.0])),
    "logistic": (X_REAL, (0.5, 1.5), X_REAL),
    "uniform": (np.array([-1.0, 0.2, 0.5, 1.0, 2.5]), (0.1, 2.0), None),
    "expon": (np.array([-1.0, 0.2, 0.6, 3.0]), (0.1, 2.0), np.array([0.2, 0.6, 3.0])),
    "t": (X_REAL, (3.5, 0.5, 1.5), X_REAL),
    "gumbel_l": (X_REAL, (0.5, 1.5), X_REAL),
    "gumbel_r": (X_REAL, (0.5, 1.5), X_REAL),
    "pareto": (np.array([0.5, 1.2, 1.6, 3.0, 10.0]), (2.5, 0.1, 1.0),
               np.array([1.6, 3.0, 10.0])),
    "wrapcauchy": (np.array([-1.0, 0.3, 1.0, 3.0, 6.0, 7.0]), (0.4,),
                   np.array([0.3, 1.0, 3.0, 6.0])),
    "beta": (np.array([-0.2, 0.1, 0.3, 0.7, 0.95, 1.2]), (2.5, 1.5, -0.1, 1.2),
             np.array([0.1, 0.3, 0.7, 0.95])),
    "gamma": (np.array([-1.0, 0.1, 1.0, 2.5, 7.0]), (2.5, -0.05, 1.5),
              np.array([0.1, 1.0, 2.5, 7.0])),
    "chi2": (np.array([-1.0, 0.1, 1.0, 2.5, 7.0]), (3.0, -0.05, 1.2),
             np.array([0.1, 1.0, 2.5, 7.0])),
    "gennorm": (X_REAL, (1.5,), np.array([-3.0, -0.2, 1.1, 4.0])),
    "vonmises": (np.array([-3.0, -1.0, 0.0, 0.5, 2.0]), (2.0,), np.array([-3.0, -1.0, 0.5])),
    "truncnorm": (np.array([-2.0, -0.6, 0.0, 0.7, 1.4, 3.0]), (-1.0, 1.5, 0.2, 1.1),
                  np.array([-0.6, 0.0, 0.7, 1.4])),
    "bernoulli": (np.array([-1.0, 0.0, 1.0, 2.0]), (0.3,), None),
    "binom": (np.array([-1.0, 0.0, 2.0, 5.0, 6.0, 7.0]), (6.0, 0.35), None),
    "betabinom": (np.array([0.0, 1.0, 3.0, 5.0, 6.0]), (5.0, 2.0, 3.0), None),
    "poisson": (np.array([-1.0, 0.0, 1.0, 3.0, 8.0]), (2.5,), None),
    "geom": (np.array([0.0, 1.0, 2.0, 5.0]), (0.3,), None),
    "nbinom": (np.array([0.0, 1.0, 2.0, 5.0]), (4.0, 0.4), None),
    "multinomial": (np.array([1, 2, 3]), (6, np.array([0.2, 0.3, 0.5])), None),
    "multivariate_normal": (np.random.RandomState(0).randn(4, 3),
                            (np.array([0.1, -0.2, 0.3]), SPD), None),
    "dirichlet": (SIMPLEX, (np.array([1.5, 2.0, 3.0]),), None),
}
# The members of each jax.scipy.stats module in JAX 0.10.2 (recorded once from JAX).
JAX_MEMBERS = {
    "bernoulli": "cdf logpmf pmf ppf", "beta": "cdf logcdf logpdf logsf pdf sf",
    "betabinom": "logpmf pmf", "binom": "logpmf pmf",
    "cauchy": "cdf isf logcdf logpdf logsf pdf ppf sf", "chi2": "cdf logcdf logpdf logsf pdf sf",
    "dirichlet": "logpdf pdf", "expon": "cdf logcdf logpdf logsf pdf ppf sf",
    "gamma": "cdf logcdf logpdf logsf pdf sf", "gennorm": "cdf logpdf pdf",
    "geom": "logpmf pmf", "gumbel_l": "cdf logcdf logpdf logsf pdf ppf sf",
    "gumbel_r": "cdf logcdf logpdf logsf pdf ppf sf", "laplace": "cdf logpdf pdf",
    "logistic": "cdf isf logpdf pdf ppf sf", "multinomial": "logpmf pmf",
    "multivariate_normal": "logpdf pdf", "nbinom": "logpmf pmf",
    "norm": "cdf isf logcdf logpdf logsf pdf ppf sf",
    "pareto": "cdf logcdf logpdf logsf pdf ppf sf", "poisson": "cdf entropy logpmf pmf",
    "t": "logpdf pdf", "truncnorm": "cdf logcdf logpdf logsf pdf sf",
    "uniform": "cdf logpdf pdf ppf", "vonmises": "logpdf pdf", "wrapcauchy": "logpdf pdf",
}
QUANTILE_FNS = ("ppf", "isf")
ROWS = sorted((d, f) for d, fns in DISTRIBUTIONS.items() for f in fns)


def _arguments(dist: str, fn: str) -> tuple:
    """(point, parameters) for one function: a quantile function gets probabilities, and
    a function that takes fewer parameters (bernoulli.cdf has no loc) gets the first ones."""
    points, params, _ = TABLE[dist]
    if fn == "entropy":
        return np.array([0.5, 2.5, 30.0, 150.0]), ()
    if fn in QUANTILE_FNS:
        points = Q
    n_params = len(inspect.signature(DISTRIBUTIONS[dist][fn]).parameters) - 1
    return points, params[:n_params]


def _call_or_skip(fn, *args):
    try:
        return fn(*args)
    except NotImplementedError as err:
        if "needs plugax.scipy.special." in str(err):
            pytest.skip(str(err))
        raise


def test_every_distribution_has_a_row_and_jaxs_members():
    assert set(DISTRIBUTIONS) == set(TABLE) == set(JAX_MEMBERS)
    for dist, members in JAX_MEMBERS.items():
        assert set(DISTRIBUTIONS[dist]) == set(members.split()), dist
        module = getattr(pst, dist)
        assert all(getattr(module, f) is DISTRIBUTIONS[dist][f] for f in members.split())


@pytest.mark.parametrize("dist, fn", ROWS, ids=[f"{d}.{f}" for d, f in ROWS])
def test_value_against_scipy_float64(dist, fn):
    point, params = _arguments(dist, fn)
    ours = getattr(getattr(pst, dist), fn)
    with x64():
        got = np.asarray(_call_or_skip(ours, point, *params))
    with np.errstate(all="ignore"):
        want = getattr(getattr(ss, dist), fn)(point, *params)
    assert got.dtype == np.float64
    # poisson.entropy: above mu = 100 JAX uses a two-term asymptotic series (error ~1e-6)
    rtol = 2e-6 if fn == "entropy" else 1e-9
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-12, err_msg=f"{dist}.{fn}")


@pytest.mark.parametrize("dist", sorted(DISTRIBUTIONS))
def test_jit_and_vmap_against_eager(dist):
    """All the distribution's functions in one jitted program (float32), and vmapped
    over the points against a loop."""
    fns = DISTRIBUTIONS[dist]
    args = {f: _arguments(dist, f) for f in fns}
    f32 = {f: (np.asarray(p, np.float32) if np.asarray(p).dtype.kind == "f" else p, params)
           for f, (p, params) in args.items()}
    try:
        eager = {f: np.asarray(fns[f](p, *params)) for f, (p, params) in f32.items()}
    except NotImplementedError as err:
        pytest.skip(str(err))
    jitted = plugax.jit(lambda pts: {f: fns[f](pts[f], *f32[f][1]) for f in fns})(
        {f: p for f, (p, _) in f32.items()})
    for f in fns:
        np.testing.assert_allclose(np.asarray(jitted[f]), eager[f], rtol=2e-5, atol=1e-6,
                                   err_msg=f"{dist}.{f} under jit")
    if dist in ("multinomial", "dirichlet"):
        return                    # their points are not a batch of scalars (see below)
    for f, (p, params) in f32.items():
        mapped = np.asarray(plugax.vmap(lambda x: fns[f](x, *params))(p))
        looped = np.stack([np.asarray(fns[f](x, *params)) for x in p])
        np.testing.assert_allclose(mapped, looped, rtol=2e-6, atol=1e-6,
                                   err_msg=f"{dist}.{f} under vmap")


def test_vmap_of_multivariate_logpdfs_over_parameters():
    xs = TABLE["multivariate_normal"][0].astype(np.float32)
    means = np.random.RandomState(1).randn(5, 3).astype(np.float32)
    cov = SPD.astype(np.float32)
    mapped = plugax.vmap(lambda m: pst.multivariate_normal.logpdf(xs, m, cov))(means)
    want = np.stack([ss.multivariate_normal.logpdf(xs, m, SPD) for m in means])
    np.testing.assert_allclose(np.asarray(mapped), want, rtol=2e-5)
    alphas = np.array([[1.5, 2.0, 3.0], [0.7, 1.0, 4.0]], np.float32)
    mapped = plugax.vmap(lambda a: pst.dirichlet.logpdf(SIMPLEX.astype(np.float32), a))(alphas)
    want = np.stack([ss.dirichlet.logpdf(SIMPLEX, a) for a in alphas])
    np.testing.assert_allclose(np.asarray(mapped), want, rtol=2e-5)


CONTINUOUS = sorted(d for d, (_, _, interior) in TABLE.items() if interior is not None)


@pytest.mark.parametrize("dist", CONTINUOUS)
def test_logpdf_gradient_against_finite_differences(dist):
    """d logpdf / d(x and every parameter) at interior points, in float64."""
    _, params, interior = TABLE[dist]
    ours = getattr(pst, dist).logpdf
    ref = getattr(ss, dist).logpdf
    for x in interior:
        theta = np.array([x, *params], np.float64)
        with x64():
            got = np.asarray(_call_or_skip(
                plugax.grad(lambda th: ours(th[0], *[th[i] for i in range(1, len(th))])),
                theta))
        want = numeric_grad(lambda th: ref(th[0], *th[1:]), theta)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6,
                                   err_msg=f"{dist}.logpdf gradient at x={x}")


def test_multivariate_normal_gradient_and_shapes():
    x, (mean, cov), _ = TABLE["multivariate_normal"]
    with x64():
        got = np.asarray(plugax.grad(lambda m: jnp.sum(pst.multivariate_normal.logpdf(
            x, m, cov)))(mean))
        batched = np.asarray(pst.multivariate_normal.logpdf(x[:, None, :], mean,
                                                            np.stack([cov, 2 * cov])))
        scalar_cov = np.asarray(pst.multivariate_normal.logpdf(x, mean, 0.7))
        one_d = np.asarray(pst.multivariate_normal.logpdf(x[:, 0], 0.2, 0.7))
    want = numeric_grad(lambda m: np.sum(ss.multivariate_normal.logpdf(x, m, cov)), mean)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    ref = np.stack([ss.multivariate_normal.logpdf(x, mean, c) for c in (cov, 2 * cov)], 1)
    np.testing.assert_allclose(batched, ref, rtol=1e-10)
    np.testing.assert_allclose(scalar_cov, ss.multivariate_normal.logpdf(
        x, mean, 0.7 * np.eye(3)), rtol=1e-10)
    np.testing.assert_allclose(one_d, ss.norm.logpdf(x[:, 0], 0.2, np.sqrt(0.7)), rtol=1e-10)


def test_edges_and_errors_follow_jax():
    with x64():
        # outside the support: -inf; invalid parameters: NaN; bad quantiles: NaN
        assert np.isneginf(np.asarray(pst.expon.logpdf(-1.0)))
        assert np.isnan(np.asarray(pst.gumbel_r.logpdf(0.3, 0.0, -1.0)))
        assert np.isnan(np.asarray(pst.expon.ppf(1.5)))
        assert np.isneginf(np.asarray(pst.poisson.logpmf(2.5, 1.0)))
        assert np.asarray(pst.uniform.cdf(np.nan)) == 0.0      # JAX's select default
        assert float(plugax.grad(pst.laplace.cdf)(0.0)) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="must be of integer type"):
        pst.multinomial.logpmf(np.array([1.0, 2.0]), 3, np.array([0.5, 0.5]))
    with pytest.raises(ValueError, match="incompatible shapes"):
        pst.multivariate_normal.logpdf(np.ones(3), np.zeros(3), np.eye(2))
    with pytest.raises(ValueError, match="one-dimensional"):
        pst.dirichlet.logpdf(np.ones(3) / 3, np.ones((3, 1)))
    with pytest.raises(NotImplementedError, match="allow_singular"):
        pst.multivariate_normal.logpdf(np.ones(2), np.zeros(2), np.eye(2), allow_singular=True)


# d/dx of each cumulative member, in terms of the density: cdf' = pdf, sf' = -pdf,
# logcdf' = pdf / cdf, logsf' = -pdf / sf, and ppf'(q) = isf'(1 - q) ... = 1 / pdf(ppf(q))
DERIVATIVES = {
    "cdf": lambda pdf, cdf, sf: pdf, "sf": lambda pdf, cdf, sf: -pdf,
    "logcdf": lambda pdf, cdf, sf: pdf / cdf, "logsf": lambda pdf, cdf, sf: -pdf / sf,
}
CUMULATIVE = sorted((d, f) for d in CONTINUOUS for f in DERIVATIVES if f in DISTRIBUTIONS[d])


@pytest.mark.parametrize("dist, fn", CUMULATIVE, ids=[f"{d}.{f}" for d, f in CUMULATIVE])
def test_cumulative_derivatives_are_the_density(dist, fn):
    """grad of cdf/sf/logcdf/logsf in x against SciPy's density (through the special
    functions' jvps: ndtr, log_ndtr, betainc, gammainc, gammaincc)."""
    _, params, interior = TABLE[dist]
    ours = getattr(getattr(pst, dist), fn)
    ref = getattr(ss, dist)
    with x64():
        got = np.asarray(_call_or_skip(plugax.vmap(plugax.grad(lambda x: ours(x, *params))),
                                       interior))
    want = DERIVATIVES[fn](ref.pdf(interior, *params), ref.cdf(interior, *params),
                           ref.sf(interior, *params))
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-12, err_msg=f"{dist}.{fn}'")


QUANTILES = sorted((d, f) for d in CONTINUOUS for f in QUANTILE_FNS if f in DISTRIBUTIONS[d])


@pytest.mark.parametrize("dist, fn", QUANTILES, ids=[f"{d}.{f}" for d, f in QUANTILES])
def test_quantile_derivatives_are_inverse_densities(dist, fn):
    _, params, _ = TABLE[dist]
    ours = getattr(getattr(pst, dist), fn)
    ref = getattr(ss, dist)
    with x64():
        got = np.asarray(_call_or_skip(plugax.vmap(plugax.grad(lambda q: ours(q, *params))), Q))
    sign = 1.0 if fn == "ppf" else -1.0
    want = sign / ref.pdf(getattr(ref, fn)(Q, *params), *params)
    np.testing.assert_allclose(got, want, rtol=1e-7, err_msg=f"{dist}.{fn}'")
