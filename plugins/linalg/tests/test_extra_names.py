"""The array-API and SciPy extras (extra_api.py) against NumPy 2 / SciPy in float64,
plus a derivative and a jit of the compositions that are meant for them."""
import numpy as np
import pytest

import plugax
import plugax.numpy as jnp
import plugax.scipy.linalg as psl
from plugax.testing import numeric_grad, x64

la = jnp.linalg
RNG = np.random.default_rng(0)
A, R, V, W = (RNG.standard_normal(s) for s in [(3, 4, 4), (5, 3), (3,), (3,)])


def close(got, want, tol=1e-9):
    got = got if isinstance(got, (tuple, list)) else (got,)
    want = want if isinstance(want, (tuple, list)) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=tol, atol=tol)


def test_numpy_linalg_extras():
    with x64():
        close(la.svdvals(A), np.linalg.svdvals(A))
        close(la.matrix_transpose(A), np.linalg.matrix_transpose(A))
        for o in (2, 1, np.inf, 0, 3):
            close(la.vector_norm(A, ord=o), np.linalg.vector_norm(A, ord=o))
            close(la.vector_norm(A, axis=(0, 2), ord=o, keepdims=True),
                  np.linalg.vector_norm(A, axis=(0, 2), ord=o, keepdims=True))
        for o in ("fro", "nuc", 1, 2, -2, np.inf):
            close(la.matrix_norm(A, ord=o), np.linalg.matrix_norm(A, ord=o))
        for p in (None, 2, -2, 1, "fro", np.inf):
            close(la.cond(A, p), np.linalg.cond(A, p))
        close(la.multi_dot([V, R.T, R, W]), np.linalg.multi_dot([V, R.T, R, W]))
        t = RNG.standard_normal((4, 6, 8, 3))
        close(la.tensorinv(t, 2), np.linalg.tensorinv(t, 2))
        ts, bs = RNG.standard_normal((2, 3, 6)), RNG.standard_normal((2, 3))
        close(la.tensorsolve(ts, bs), np.linalg.tensorsolve(ts, bs))
        close(la.vecdot(A, A), np.linalg.vecdot(A, A))
        close(la.cross(V, W), np.linalg.cross(V, W))
        for off in (0, 1, -2, 5):
            close(la.diagonal(R, offset=off), np.linalg.diagonal(R, offset=off))
            close(la.trace(A, offset=off), np.linalg.trace(A, offset=off))
        close(la.outer(V, W), np.linalg.outer(V, W))
        close(la.matmul(A, A), np.linalg.matmul(A, A))


def test_scipy_linalg_extras():
    sl = pytest.importorskip("scipy.linalg")
    with x64():
        close(tuple(psl.svd(R, full_matrices=False)), tuple(sl.svd(R, full_matrices=False)))
        for mode in ("full", "economic", "r"):
            close(psl.qr(R, mode=mode), sl.qr(R, mode=mode))
        close(psl.det(A[0]), sl.det(A[0]))
        close(psl.inv(A[0]), sl.inv(A[0]))
        for side in ("right", "left"):
            close(psl.polar(A[0], side), sl.polar(A[0], side))
        e = RNG.standard_normal((4, 4))
        close(psl.expm_frechet(A[0], e), sl.expm_frechet(A[0], e), tol=1e-8)
        b, c = RNG.standard_normal((3, 3)) + 5 * np.eye(3), RNG.standard_normal((4, 3))
        close(psl.solve_sylvester(A[0] + 5 * np.eye(4), b, c),
              sl.solve_sylvester(A[0] + 5 * np.eye(4), b, c))
        close(psl.toeplitz(V, R[:, 0]), sl.toeplitz(V, R[:, 0]))
        close(psl.toeplitz(R[:, 0]), sl.toeplitz(R[:, 0]))
        close(psl.hankel(V, R[:, 0]), sl.hankel(V, R[:, 0]))
        close(psl.hankel(V), sl.hankel(V))
        close(psl.circulant(V), sl.circulant(V))
        close(psl.hilbert(4), sl.hilbert(4))
        close(psl.companion(np.array([2.0, 3, 4, 5])), sl.companion(np.array([2.0, 3, 4, 5])))
        close(psl.fiedler(V), sl.fiedler(V))
        f, s = np.array([0.1, 2, 1.5]), np.array([0.2, 0.8])
        close(psl.leslie(f, s), sl.leslie(f, s))
        assert psl.toeplitz(np.array([1, 2, 3])).dtype == sl.toeplitz(np.array([1, 2, 3])).dtype


def test_extras_differentiate_and_jit():
    with x64():
        f = lambda x: la.cond(x) + la.trace(x) + jnp.sum(psl.polar(x)[1])  # noqa: E731
        x = A[0]
        close(plugax.grad(f)(x), numeric_grad(f, x), tol=1e-5)
        close(plugax.jit(f)(x), float(f(x)))
