"""plugax.scipy.special's elementwise members (expit, logit, xlogy, xlog1py, entr,
rel_entr, kl_div) against SciPy in float64, under jit, and their gradients against
central differences; the edge values (0, negative, NaN) follow SciPy, and the
gradients at xlogy(0, 0) stay finite as JAX's custom jvp makes them."""
import numpy as np
import pytest
import scipy.special as sc

import plugax
import plugax.scipy.special as ps
from plugax.testing import numeric_grad, x64

P = np.array([0.0, 0.2, 0.5, 1.0, 2.5, -0.5, np.nan])
Q = np.array([0.0, 0.3, 0.5, 2.0, 1.5, 1.0, 0.7])
U = np.array([0.05, 0.2, 0.5, 0.8, 0.95])
TABLE = {   # name -> (args, smooth points for the gradient check)
    "expit": ((np.linspace(-6, 6, 7),), (np.linspace(-6, 6, 7),)),
    "logit": ((U,), (U,)),
    "xlogy": ((P, Q), (U, U[::-1])),
    "xlog1py": ((P, Q - 0.5), (U, U[::-1])),
    "entr": ((P,), (U,)),
    "rel_entr": ((P, Q), (U, U[::-1])),
    "kl_div": ((P, Q), (U, U[::-1])),
}


@pytest.mark.parametrize("name", sorted(TABLE))
def test_values_match_scipy_eager_and_jit(name):
    args, _ = TABLE[name]
    with np.errstate(all="ignore"):
        want = getattr(sc, name)(*args)
    if name == "rel_entr":   # JAX (the spec) gives inf where p is NaN; SciPy gives NaN
        want = np.where(np.isnan(args[0]), np.inf, want)
    f = getattr(ps, name)
    got = np.asarray(f(*(a.astype(np.float32) for a in args)))
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)
    jitted = np.asarray(plugax.jit(f)(*(a.astype(np.float32) for a in args)))
    np.testing.assert_allclose(jitted, got, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", sorted(TABLE))
def test_gradients_match_finite_differences(name):
    _, smooth = TABLE[name]
    f, ref = getattr(ps, name), getattr(sc, name)
    for i in range(len(smooth)):
        def ours(x, i=i):
            args = list(smooth)
            args[i] = x
            return plugax.numpy.sum(f(*args))

        def theirs(x, i=i):
            args = list(smooth)
            args[i] = x
            return np.sum(ref(*args))

        with x64():
            got = np.asarray(plugax.grad(ours)(smooth[i]))
        np.testing.assert_allclose(got, numeric_grad(theirs, smooth[i]), rtol=1e-5, atol=1e-7)


def test_xlogy_at_zero_has_finite_gradients():
    gx, gy = plugax.grad(ps.xlogy, argnums=(0, 1))(0.0, 1.0)
    assert float(gx) == 0.0 and float(gy) == 0.0
    assert float(ps.xlogy(0.0, 0.0)) == 0.0
