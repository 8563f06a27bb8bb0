"""plugax.numpy.linalg and plugax.scipy.linalg: values against NumPy (and SciPy when
installed) in float64, NumPy's batching and broadcasting, derivatives against
finite differences (first and second order), and jit against eager."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import plugax
import plugax.numpy as jnp
import plugax.scipy.linalg as psl
from plugax.testing import check_primitive, numeric_grad, numeric_jacobian, x64

la = jnp.linalg


def normal(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def spd(*batch, n=4, seed=0):
    a = normal(*batch, n, n, seed=seed)
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def close(got, want, tol=1e-9):
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)


A, B, S, R, V = normal(3, 4, 4), normal(3, 4, 2, seed=1), spd(3), normal(5, 3, seed=2), \
    normal(4, seed=3)


def test_numpy_linalg_values():
    with x64():
        close(la.solve(A, B), np.linalg.solve(A, B))
        close(la.solve(A[0], V), np.linalg.solve(A[0], V))
        close(la.solve(A, B[0]), np.linalg.solve(A, B[0]))           # batch broadcasts
        close(la.inv(A), np.linalg.inv(A))
        close(la.det(A), np.linalg.det(A))
        sign, logdet = la.slogdet(A)
        close(sign, np.linalg.slogdet(A)[0])
        close(logdet, np.linalg.slogdet(A)[1])
        close(la.cholesky(S), np.linalg.cholesky(S))
        close(la.cholesky(S, upper=True), np.swapaxes(np.linalg.cholesky(S), -1, -2))
        close(la.eigvalsh(S), np.linalg.eigvalsh(S))
        w, v = la.eigh(S)
        close(np.asarray(v) * np.asarray(w)[..., None, :] @ np.swapaxes(v, -1, -2), S)
        close(la.svd(R, compute_uv=False), np.linalg.svd(R, compute_uv=False))
        u, s, vh = la.svd(R, full_matrices=False)
        close(np.asarray(u) * np.asarray(s) @ vh, R)
        for mode in ("reduced", "complete"):
            for got, want in zip(la.qr(R, mode), np.linalg.qr(R, mode)):
                close(got, want)
        close(la.qr(R, "r"), np.linalg.qr(R, "r"))
        for got, want in zip(la.lstsq(R, normal(5, seed=4)),
                             np.linalg.lstsq(R, normal(5, seed=4))):
            close(got, want)
        close(la.pinv(R), np.linalg.pinv(R))
        close(la.pinv(A), np.linalg.pinv(A))
        for n in (0, 1, 2, 5, -3):
            close(la.matrix_power(A, n), np.linalg.matrix_power(A, n))
        low_rank = R @ R.T
        assert int(la.matrix_rank(low_rank)) == np.linalg.matrix_rank(low_rank) == 3
        np.testing.assert_array_equal(la.matrix_rank(A), np.linalg.matrix_rank(A))


@pytest.mark.parametrize("ord", [None, 1, 2, np.inf, -np.inf, 0, 3, -1.5])
def test_vector_norms(ord):
    with x64():
        close(la.norm(V, ord), np.linalg.norm(V, ord))
        close(la.norm(A, ord, axis=1), np.linalg.norm(A, ord, axis=1))


@pytest.mark.parametrize("ord", [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
def test_matrix_norms(ord):
    with x64():
        close(la.norm(R, ord), np.linalg.norm(R, ord))
        close(la.norm(A, ord, axis=(2, 0), keepdims=True),
              np.linalg.norm(A, ord, axis=(2, 0), keepdims=True))


def test_scipy_linalg_values():
    sl = pytest.importorskip("scipy.linalg")
    with x64():
        a, b = A[0], B[0]
        close(psl.solve_triangular(S[0], b, lower=True), sl.solve_triangular(S[0], b, lower=True))
        close(psl.solve_triangular(S[0], V, trans="T", unit_diagonal=True),
              sl.solve_triangular(S[0], V, trans="T", unit_diagonal=True))
        for lower in (True, False):
            close(psl.cho_solve(psl.cho_factor(S[0], lower=lower), b),
                  sl.cho_solve(sl.cho_factor(S[0], lower=lower), b))
        for x in (a, R, R.T):
            for got, want in zip(psl.lu(x), sl.lu(x)):
                close(got, want)
        for got, want in zip(psl.lu_factor(a), sl.lu_factor(a)):
            close(got, want)
        for trans in (0, 1):
            close(psl.lu_solve(psl.lu_factor(a), b, trans=trans),
                  sl.lu_solve(sl.lu_factor(a), b, trans=trans))
        close(psl.expm(a), sl.expm(a))
        close(psl.expm(6 * a), sl.expm(6 * a), tol=1e-8)           # needs squarings
        close(psl.eigh(S[0], eigvals_only=True), sl.eigh(S[0], eigvals_only=True))
        close(psl.block_diag(a, R, np.ones(2), 3.0), sl.block_diag(a, R, np.ones(2), 3.0))


def test_lax_linalg_namespace():
    import plugax.lax.linalg as L
    assert {"cholesky", "triangular_solve", "lu", "qr", "eigh", "svd"} <= set(dir(L))
    with x64():
        close(L.triangular_solve(S[0], V, left_side=True, lower=True),
              np.linalg.solve(np.tril(S[0]), V))
        _, pivots, perm = L.lu(A)
        np.testing.assert_array_equal(L.lu_pivots_to_permutation(pivots, 4), perm)
        np.testing.assert_array_equal(
            L.lu_pivots_to_permutation(np.array([2, 2, 2], np.int32), 4), [2, 0, 1, 3])


# --- derivatives ----------------------------------------------------------------------------
SCALAR_FUNCTIONS = [
    ("det", lambda x: la.det(x)),
    ("logdet", lambda x: la.slogdet(x)[1]),
    ("solve", lambda x: jnp.sum(la.solve(x, B[0]) ** 2)),
    ("inv", lambda x: jnp.sum(jnp.sin(la.inv(x)))),
    ("cholesky", lambda x: jnp.sum(la.cholesky(x @ x.T + 4 * jnp.eye(4)) ** 3)),
    ("eigvalsh", lambda x: jnp.sum(la.eigvalsh(x + x.T) ** 3)),
    ("pinv", lambda x: jnp.sum(la.pinv(x[:, :3]) ** 2)),
    ("expm", lambda x: jnp.sum(psl.expm(0.3 * x))),
    ("norm2", lambda x: la.norm(x, 2)),
]


@pytest.mark.parametrize("name,f", SCALAR_FUNCTIONS, ids=[c[0] for c in SCALAR_FUNCTIONS])
def test_grad_against_finite_differences(name, f):
    with x64():
        x = A[0]
        close(plugax.grad(f)(x), numeric_grad(f, x), tol=1e-6)
        close(plugax.jit(plugax.grad(f))(x), numeric_grad(f, x), tol=1e-6)


def test_hessian_of_logdet_and_det():
    """d2 log|det X| / dX_ij dX_kl = -inv(X)_jk inv(X)_li; det's Hessian by finite
    differences of its (exact) gradient det(X) inv(X)^T."""
    with x64():
        x = A[0]
        inv = np.linalg.inv(x)
        want = -np.einsum("jk,li->ijkl", inv, inv)
        close(plugax.hessian(lambda x: la.slogdet(x)[1])(x), want, tol=1e-8)
        close(plugax.jit(plugax.hessian(lambda x: la.slogdet(x)[1]))(x), want, tol=1e-8)
        grad_det = lambda x: np.linalg.det(x) * np.linalg.inv(x).T  # noqa: E731
        close(plugax.hessian(la.det)(x), numeric_jacobian(grad_det, x), tol=1e-6)


def test_det_gradient_is_the_cofactor_matrix_even_when_singular():
    """JAX's det derivative: tr(adj(a) da), finite at rank n-1 (the cofactor matrix) and
    zero at lower rank, where differentiating through LU would divide by zero."""
    with x64():
        m = np.arange(1.0, 10.0).reshape(3, 3)                  # rank 2
        cof = np.array([[-3.0, 6, -3], [6, -12, 6], [-3, 6, -3]])
        close(plugax.grad(la.det)(m), cof)
        close(plugax.jit(plugax.grad(la.det))(m), cof)
        close(plugax.grad(la.det)(np.ones((3, 3))), np.zeros((3, 3)))   # rank 1
        close(plugax.vmap(plugax.grad(la.det))(A),
              np.linalg.det(A)[:, None, None] * np.swapaxes(np.linalg.inv(A), 1, 2))


def test_batched_and_vmapped_solve_agree():
    with x64():
        close(plugax.vmap(la.solve, in_axes=(0, 2))(A, np.moveaxis(B, 0, 2)),
              np.linalg.solve(A, B))
        close(plugax.vmap(la.det, in_axes=1)(np.moveaxis(A, 0, 1)), np.linalg.det(A))


def test_jit_matches_eager():
    with x64():
        for f, args in [(la.solve, (A, B)), (la.inv, (A,)), (la.det, (A,)),
                        (lambda x: la.slogdet(x)[1], (A,)), (la.pinv, (R,)),
                        (lambda x: la.norm(x, "nuc"), (R,)), (psl.expm, (A[0],)),
                        (lambda x: psl.lu_solve(psl.lu_factor(x), B[0]), (A[0],))]:
            close(plugax.jit(f)(*args), np.asarray(f(*args)))


def test_errors_name_the_function():
    with pytest.raises(ValueError, match="linalg.solve takes square matrices"):
        la.solve(np.ones((3, 2)), np.ones(3))
    with pytest.raises(ValueError, match=r"b needs 3 rows"):
        la.solve(np.eye(3), np.ones(4))
    with pytest.raises(ValueError, match="invalid norm order 'bad'"):
        la.norm(np.ones((2, 2)), "bad")
    with pytest.raises(ValueError, match="trans must be"):
        psl.solve_triangular(np.eye(2), np.ones(2), trans=5)


# --- shapes drawn by hypothesis; the kit's second-order check ------------------------------
@settings(max_examples=8, deadline=None, derandomize=True)
@given(st.lists(st.integers(1, 3), max_size=2), st.lists(st.integers(1, 3), max_size=2),
       st.integers(1, 4), st.integers(1, 3))
def test_solve_det_inv_broadcast_like_numpy(a_batch, b_batch, n, k):
    a_batch, b_batch = tuple(a_batch), tuple(b_batch)
    try:
        np.broadcast_shapes(a_batch, b_batch)
    except ValueError:
        return
    with x64():
        a = normal(*a_batch, n, n, seed=n) + 2 * n * np.eye(n)
        b = normal(*b_batch, n, k, seed=k)
        close(la.solve(a, b), np.linalg.solve(a, b))
        close(la.det(a), np.linalg.det(a))
        close(la.inv(a), np.linalg.inv(a))
        close(plugax.jit(la.solve)(a, b), np.linalg.solve(a, b))


@pytest.mark.parametrize("name,f", [("solve", lambda x: la.solve(x, B[0])),
                                    ("logdet", lambda x: la.slogdet(x)[1]),
                                    ("inv", la.inv)], ids=["solve", "logdet", "inv"])
def test_second_order_against_finite_differences(name, f):
    with x64():
        ran = check_primitive(f, A[0], rules=("jvp", "second_order"))
    assert "second_order" in ran
