"""rankdata, sem, mode and gaussian_kde against SciPy in float64, under jit and vmap, and
gaussian_kde's pytree-ness (an estimator passes through jit) and gradient."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as ss

import plugax
import plugax.numpy as jnp
import plugax.scipy.stats as pst
from plugax.testing import numeric_grad, x64

R = np.random.RandomState(0)
TIES = np.array([[3.0, 1.0, 2.0, 2.0, 5.0], [1.0, 1.0, 1.0, 0.0, 4.0], [2.0, 7.0, 7.0, 7.0, 2.0]])


@pytest.mark.parametrize("method", ["average", "min", "max", "dense", "ordinal"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_rankdata_against_scipy(method, axis):
    got = pst.rankdata(TIES, method, axis=axis)
    np.testing.assert_array_equal(np.asarray(got), ss.rankdata(TIES, method, axis=axis))
    if axis in (None, 0):         # compiling every combination costs seconds, adds little
        jitted = plugax.jit(lambda a: pst.rankdata(a, method, axis=axis))(TIES)
        np.testing.assert_array_equal(np.asarray(jitted), np.asarray(got))


def test_rankdata_nan_and_errors():
    assert np.all(np.isnan(np.asarray(pst.rankdata(np.array([1.0, np.nan, 2.0])))))
    with pytest.raises(ValueError, match="unknown method 'middle'"):
        pst.rankdata(TIES, "middle")
    with pytest.raises(NotImplementedError, match="nan_policy` of omit"):
        pst.rankdata(TIES, nan_policy="omit")
    with pytest.raises(ValueError, match="Illegal nan_policy value 'drop'"):
        pst.mode(TIES, nan_policy="drop")


@pytest.mark.parametrize("axis, ddof", [(0, 1), (1, 0), (None, 1), (-1, 2)])
def test_sem_against_scipy(axis, ddof):
    x = R.randn(4, 6)
    with x64():
        got = np.asarray(pst.sem(x, axis=axis, ddof=ddof))
        grad = np.asarray(plugax.grad(lambda a: jnp.sum(pst.sem(a, axis=axis, ddof=ddof)))(x))
    np.testing.assert_allclose(got, ss.sem(x, axis=axis, ddof=ddof), rtol=1e-12)
    np.testing.assert_allclose(grad, numeric_grad(
        lambda a: np.sum(ss.sem(a, axis=axis, ddof=ddof)), x), rtol=1e-6, atol=1e-9)
    nans = x.copy()
    nans[1, 2] = np.nan
    with x64():
        omitted = np.asarray(pst.sem(nans, axis=axis, ddof=ddof, nan_policy="omit"))
    np.testing.assert_allclose(omitted, ss.sem(nans, axis=axis, ddof=ddof, nan_policy="omit"),
                               rtol=1e-12)


@pytest.mark.parametrize("axis", [0, 1, None])
@pytest.mark.parametrize("keepdims", [False, True])
def test_mode_against_scipy(axis, keepdims):
    got = pst.mode(TIES, axis=axis, keepdims=keepdims)
    want = ss.mode(TIES, axis=axis, keepdims=keepdims)
    np.testing.assert_array_equal(np.asarray(got.mode), want.mode)
    np.testing.assert_array_equal(np.asarray(got.count), want.count)
    jitted = plugax.jit(lambda a: pst.mode(a, axis=axis, keepdims=keepdims))(TIES)
    np.testing.assert_array_equal(np.asarray(jitted.mode), want.mode)
    empty = pst.mode(np.zeros((0, 3)))            # JAX: NaN seen 0 times, per column
    assert np.all(np.isnan(np.asarray(empty.mode))) and np.asarray(empty.count).tolist() == [0, 0, 0]
    ints = pst.mode(np.array([4, 1, 4, 1, 2]))
    assert (int(ints.mode), int(ints.count)) == (1, 2) and ints.mode.dtype.kind == "i"


DATA_1D = R.randn(12)
DATA_2D = R.randn(2, 15)
WEIGHTS = R.uniform(0.5, 2.0, 15)


@pytest.mark.parametrize("dataset, kwargs", [
    (DATA_1D, {}), (DATA_1D, {"bw_method": "silverman"}), (DATA_1D, {"bw_method": 0.4}),
    (DATA_2D, {}), (DATA_2D, {"weights": WEIGHTS}),
    (DATA_2D, {"bw_method": lambda kde: 0.5 * kde.neff ** (-1.0 / 6)}),
], ids=["1d", "silverman", "scalar", "2d", "weighted", "callable"])
def test_gaussian_kde_against_scipy(dataset, kwargs):
    points = R.randn(np.atleast_2d(dataset).shape[0], 5)
    with x64():
        ours = pst.gaussian_kde(dataset, **kwargs)
        got = [np.asarray(ours.evaluate(points)), np.asarray(ours.logpdf(points)),
               np.asarray(ours.pdf(points)), np.asarray(ours.covariance)]
        gauss = float(ours.integrate_gaussian(np.zeros(ours.d), np.eye(ours.d)))
        other = pst.gaussian_kde(dataset[..., ::2] + 0.3)
        cross = float(ours.integrate_kde(other))
    theirs = ss.gaussian_kde(dataset, **kwargs)
    want = [theirs.evaluate(points), theirs.logpdf(points), theirs.pdf(points),
            theirs.covariance]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10)
    np.testing.assert_allclose(gauss, theirs.integrate_gaussian(np.zeros(theirs.d),
                                                                np.eye(theirs.d)), rtol=1e-10)
    np.testing.assert_allclose(cross, theirs.integrate_kde(
        ss.gaussian_kde(dataset[..., ::2] + 0.3)), rtol=1e-10)


def test_gaussian_kde_box_pytree_gradient_and_resample():
    with x64():
        kde = pst.gaussian_kde(DATA_1D)
        box = float(kde.integrate_box_1d(-0.5, 1.0))
        # an estimator is a pytree: it crosses jit as an argument
        jitted = np.asarray(plugax.jit(lambda k, p: k.logpdf(p))(kde, np.array([0.1, 0.7])))
        grad = np.asarray(plugax.grad(lambda p: jnp.sum(kde.logpdf(p)))(np.array([0.1, 0.7])))
    ref = ss.gaussian_kde(DATA_1D)
    np.testing.assert_allclose(box, ref.integrate_box_1d(-0.5, 1.0), rtol=1e-10)
    np.testing.assert_allclose(jitted, ref.logpdf([0.1, 0.7]), rtol=1e-10)
    np.testing.assert_allclose(grad, numeric_grad(lambda p: np.sum(ref.logpdf(p)),
                                                  np.array([0.1, 0.7])), rtol=1e-6)
    draws = np.asarray(pst.gaussian_kde(DATA_2D).resample(plugax.random.key(0), (4000,)))
    assert draws.shape == (2, 4000)
    # mean of the mixture = the data mean; covariance = data covariance + kernel covariance
    np.testing.assert_allclose(draws.mean(1), DATA_2D.mean(1), atol=0.08)
    with pytest.raises(NotImplementedError, match="integrate_box_1d"):
        kde.integrate_box(0.0, 1.0)
    with pytest.raises(ValueError, match="points have dimension 3, dataset has dimension 2"):
        pst.gaussian_kde(DATA_2D).evaluate(np.ones((3, 4)))
    with pytest.raises(ValueError, match="bw_method"):
        pst.gaussian_kde(DATA_1D, bw_method="wide")
