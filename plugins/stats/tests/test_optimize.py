"""plugax.scipy.optimize.minimize (BFGS): the same iterates and counters as JAX's.

JAX's results for these problems were recorded once (jax 0.10.2, x64) and are data
here; in float64 the algorithm is deterministic enough that x, fun and the counters
nit/nfev/njev/status must agree (x to 1e-7; a different count would mean a different
line-search path). Also: jit against eager, vmap over starting points against a
loop, the derivative of the minimum through `args` (an envelope-theorem check).
"""
from __future__ import annotations

import numpy as np
import pytest

import plugax
import plugax.numpy as jnp
from plugax.scipy.optimize import OptimizeResults, minimize
from plugax.testing import x64

# the line search evaluates steps it then discards (0/0 in the cubic fit of a flat
# bracket): NumPy warns in eager mode, the result is selected away
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

A = np.array([[3.0, 0.5, 0.0], [0.5, 2.0, 0.3], [0.0, 0.3, 1.0]])
B = np.array([1.0, -2.0, 0.5])


def rosen(x):
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def quad(x, a, b):
    return 0.5 * x @ a @ x - b @ x


def himmelblau(x):
    return (x[0] ** 2 + x[1] - 11) ** 2 + (x[0] + x[1] ** 2 - 7) ** 2


# name -> (fun, x0, args, options, JAX's x, success, status, fun, nfev, njev, nit)
JAX_RECORDED = {
    "rosen": (rosen, np.zeros(4), (), None,
              [0.9999999911884966, 0.9999999788100861, 0.9999999571581071, 0.9999999151559601],
              True, 0, 3.726232986526739e-15, 48, 48, 33),
    "rosen_maxiter": (rosen, np.zeros(4), (), {"maxiter": 3},
                      [0.21821787561084047, 0.03226912993420674, 0.013330038645112112,
                       0.0027326105555429045], False, 1, 2.560519996915097, 10, 10, 3),
    "quad": (quad, np.zeros(3), (A, B), None,
             [0.5447073582420373, -1.268246806392983, 0.8804751861669754],
             True, 0, -1.7607208029170482, 7, 7, 5),
    "himmelblau": (himmelblau, np.array([-1.0, -1.0]), (), {"gtol": 1e-8},
                   [-3.7793102533389944, -3.283185991337665], True, 0, 2.6066520869828684e-19,
                   19, 19, 12),
    # the line search gives up (status 2 + 1... JAX reports 3): failure is reported alike
    "rosen_norm2": (rosen, np.array([-1.2, 1.0]), (), {"norm": 2},
                    [-0.2778069614751315, 0.043338775200157394], False, 3,
                    1.7472911993555371, 17, 17, 8),
}


def _check(result: OptimizeResults, record: tuple) -> None:
    x, success, status, fun, nfev, njev, nit = record[4:]
    np.testing.assert_allclose(np.asarray(result.x), x, rtol=1e-7, atol=1e-9)
    assert bool(result.success) is success
    assert (int(result.status), int(result.nfev), int(result.njev), int(result.nit)) == (
        status, nfev, njev, nit)
    np.testing.assert_allclose(float(result.fun), fun, rtol=1e-6, atol=1e-14)


@pytest.mark.parametrize("name", sorted(JAX_RECORDED))
def test_same_iterates_and_counters_as_jax_eager_and_jitted(name):
    fun, x0, args, options = JAX_RECORDED[name][:4]
    with x64():
        eager = minimize(fun, x0, args, method="BFGS", options=options)
        _check(eager, JAX_RECORDED[name])
        jitted = plugax.jit(lambda x: minimize(fun, x, args, method="bfgs", options=options))(x0)
        _check(jitted, JAX_RECORDED[name])
    assert set(OptimizeResults._fields) == {"x", "success", "status", "fun", "jac", "hess_inv",
                                            "nfev", "njev", "nit"}


def test_quadratic_solution_gradient_and_inverse_hessian():
    with x64():
        r = minimize(quad, np.zeros(3), (A, B), method="BFGS")
    # stopped at gradient max-norm < gtol = 1e-5, so x is within ~1e-5 of A^-1 b
    np.testing.assert_allclose(np.asarray(r.x), np.linalg.solve(A, B), atol=2e-5)
    np.testing.assert_allclose(np.asarray(r.jac), A @ np.asarray(r.x) - B, atol=1e-10)
    # BFGS's inverse-Hessian estimate of a quadratic approaches A^-1
    np.testing.assert_allclose(np.asarray(r.hess_inv), np.linalg.inv(A), atol=0.05)


def test_vmap_over_starting_points_matches_a_loop():
    starts = np.array([[-1.0, -1.0], [2.0, 2.0], [-3.0, 3.0]], np.float32)
    mapped = plugax.vmap(lambda x0: minimize(himmelblau, x0, method="BFGS").x)(starts)
    looped = np.stack([np.asarray(minimize(himmelblau, x0, method="BFGS").x) for x0 in starts])
    np.testing.assert_allclose(np.asarray(mapped), looped, rtol=1e-4, atol=1e-4)
    assert np.all(np.abs(np.asarray(plugax.vmap(himmelblau)(mapped))) < 1e-6)


def test_forward_derivative_of_the_minimum_through_args():
    """d/db min_x (x^T A x / 2 - b^T x) . v = -x*(b) . v (envelope theorem), by jvp through
    the while_loops. (Reverse mode through a while_loop is refused, as in JAX.)"""
    v = np.array([0.3, -1.0, 2.0])
    with x64():
        _, tangent = plugax.jvp(
            lambda b: minimize(quad, jnp.zeros(3), (A, b), method="BFGS").fun, (B,), (v,))
    np.testing.assert_allclose(float(tangent), -np.linalg.solve(A, B) @ v, rtol=1e-5)


def test_errors_name_the_mistake():
    with pytest.raises(ValueError, match="Method nelder-mead not recognized"):
        minimize(rosen, np.zeros(2), method="nelder-mead")
    with pytest.raises(TypeError, match="must be a tuple"):
        minimize(quad, np.zeros(3), [A, B], method="BFGS")
    with pytest.raises(TypeError, match="unknown options \\['maxfev'\\]"):
        minimize(rosen, np.zeros(2), method="BFGS", options={"maxfev": 3})
    with pytest.raises(ValueError, match="one-dimensional"):
        minimize(rosen, np.zeros((2, 2)), method="BFGS")
