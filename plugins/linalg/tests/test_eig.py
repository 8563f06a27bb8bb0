"""The general eigensolver (primitive `eig`) and what is built on it (eigvals, roots,
poly of a matrix), in float64 against NumPy: eigen-equation residuals for both
vector kinds, eigenvalues sorted against numpy's, eager against jit (eigenvectors
up to their phase, which two LAPACKs fix differently), vmap against a loop, and
derivatives against central differences of the jitted function."""
import numpy as np
import pytest

import plugax
import plugax.numpy as jnp
from plugax.lax import linalg as L
from plugax.testing import x64

RNG = np.random.default_rng(3)
REAL = RNG.standard_normal((5, 5))            # has a complex-conjugate pair
SYM = REAL + REAL.T                           # real spectrum
CPLX = RNG.standard_normal((4, 4)) + 1j * RNG.standard_normal((4, 4))
BATCH = RNG.standard_normal((3, 4, 4))
MATRICES = {"real": REAL, "symmetric": SYM, "complex": CPLX, "batch": BATCH}


def _sorted(w):
    w = np.asarray(w)
    if w.size == 0:
        return w
    return np.sort_complex(w.reshape(-1, w.shape[-1])).reshape(w.shape)


def _check_decomposition(a, w, vl, vr, tol):
    w, vl, vr = np.asarray(w), np.asarray(vl), np.asarray(vr)
    assert w.dtype == vr.dtype == vl.dtype == np.complex128
    np.testing.assert_allclose(a @ vr, vr * w[..., None, :], atol=tol)          # A v = w v
    vlh = np.conj(np.swapaxes(vl, -1, -2))
    np.testing.assert_allclose(vlh @ a, w[..., :, None] * vlh, atol=tol)        # u^H A = w u^H
    for v in (vl, vr):
        np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1, atol=tol)
        big = np.take_along_axis(v, np.argmax(np.abs(v), axis=-2)[..., None, :], axis=-2)
        np.testing.assert_allclose(big.imag, 0, atol=tol)                       # geev's phase


@pytest.mark.parametrize("name", sorted(MATRICES))
@pytest.mark.parametrize("jit", [False, True])
def test_eig_decomposes(name, jit):
    a = MATRICES[name]
    with x64():
        f = plugax.jit(L.eig) if jit else L.eig
        w, vl, vr = f(a)
        _check_decomposition(a, w, vl, vr, 1e-10)
        np.testing.assert_allclose(_sorted(w), _sorted(np.linalg.eigvals(a)), atol=1e-10)
        ev = (plugax.jit(jnp.linalg.eigvals) if jit else jnp.linalg.eigvals)(a)
        np.testing.assert_allclose(_sorted(ev), _sorted(np.linalg.eigvals(a)), atol=1e-10)
        w2, v2 = (plugax.jit(jnp.linalg.eig) if jit else jnp.linalg.eig)(a)
        np.testing.assert_allclose(np.asarray(w2), np.asarray(w), atol=1e-10)
        # the right eigenvectors agree with eig's up to a unit phase per column
        overlap = np.abs(np.sum(np.conj(np.asarray(v2)) * np.asarray(vr), axis=-2))
        np.testing.assert_allclose(overlap, 1, atol=1e-10)


def test_eig_eager_matches_jit_and_float32():
    with x64():
        we, _, vre = L.eig(REAL)
        wj, _, vrj = plugax.jit(L.eig)(REAL)
        np.testing.assert_allclose(np.asarray(we), np.asarray(wj), atol=1e-12)
        overlap = np.abs(np.sum(np.conj(np.asarray(vre)) * np.asarray(vrj), axis=-2))
        np.testing.assert_allclose(overlap, 1, atol=1e-12)
    w, v = jnp.linalg.eig(REAL.astype(np.float32))
    assert np.asarray(w).dtype == np.asarray(v).dtype == np.complex64
    wj = plugax.jit(jnp.linalg.eigvals)(REAL.astype(np.float32))
    assert np.asarray(wj).dtype == np.complex64
    np.testing.assert_allclose(_sorted(wj), _sorted(np.linalg.eigvals(REAL)), atol=1e-4)


def test_eig_of_non_finite_matrices_is_nan_not_an_error():
    a = np.stack([np.diag([1.0, 2.0]), np.full((2, 2), np.nan), np.diag([np.inf, 1.0])])
    for f in (jnp.linalg.eigvals, plugax.jit(jnp.linalg.eigvals)):
        w = np.asarray(f(a))
        np.testing.assert_allclose(np.sort(w[0].real), [1, 2])
        assert np.isnan(w[1]).all()
    w, vl, vr = L.eig(a)
    assert np.isnan(np.asarray(vl)[1:]).all() and np.isnan(np.asarray(vr)[1:]).all()


def test_eig_vmap_matches_loop():
    with x64():
        got = plugax.vmap(jnp.linalg.eigvals, in_axes=2)(np.moveaxis(BATCH, 0, 2))
        want = np.stack([np.asarray(jnp.linalg.eigvals(m)) for m in BATCH])
        np.testing.assert_allclose(np.asarray(got), want, atol=1e-12)
        w, vl, vr = plugax.jit(plugax.vmap(L.eig))(BATCH)
        _check_decomposition(BATCH, w, vl, vr, 1e-10)


def _fd_grad(f, a, eps=1e-6):
    g = np.zeros(a.shape)
    for idx in np.ndindex(*a.shape):
        e = np.zeros(a.shape)
        e[idx] = eps
        g[idx] = (float(f(a + e)) - float(f(a - e))) / (2 * eps)
    return g


def _eigvals_loss(a):
    w = jnp.linalg.eigvals(a)
    return jnp.sum(w.imag ** 2 + w.real ** 3)


def _right_loss(a):
    w, v = L.eig(a, compute_left_eigenvectors=False, enable_eigvec_derivs=True)
    k = jnp.arange(1, 6)
    return jnp.sum((v[:, 0] * k).real + (v[:, 2] * k).imag) + jnp.sum(w.real)


def _left_loss(a):
    w, vl, vr = L.eig(a, enable_eigvec_derivs=True)
    k = jnp.arange(1, 6)
    return jnp.sum((vl[:, 1] * k).real + (vl[:, 3] * k).imag + (vr[:, 4] * k).real)


@pytest.mark.parametrize("loss", [_eigvals_loss, _right_loss, _left_loss])
@pytest.mark.parametrize("jit", [False, True])
def test_eig_grad_matches_finite_differences(loss, jit):
    with x64():
        g = (plugax.jit(plugax.grad(loss)) if jit else plugax.grad(loss))(REAL)
        np.testing.assert_allclose(np.asarray(g), _fd_grad(plugax.jit(loss), REAL), atol=1e-6)


def test_eig_errors_name_the_mistake():
    with pytest.raises(NotImplementedError, match="enable_eigvec_derivs=True"):
        plugax.grad(lambda a: jnp.sum(jnp.linalg.eig(a)[1].real))(REAL)
    with pytest.raises(ValueError, match=r"eig takes square matrices.*\(3, 4\)"):
        jnp.linalg.eig(np.ones((3, 4)))
    with pytest.raises(ValueError, match="eigvals takes square"):
        jnp.linalg.eigvals(np.ones(3))


POLYS = {"cubic": [1., -6, 11, -6], "complex roots": [2., 0, 1, 3],
         "leading zeros": [0., 0, 1, -3, 2], "constant": [5.], "trailing zero": [1., 2, 0]}


@pytest.mark.parametrize("name", sorted(POLYS))
def test_roots_against_numpy(name):
    p = np.array(POLYS[name])
    with x64():
        np.testing.assert_allclose(_sorted(jnp.roots(p)), _sorted(np.roots(p)), atol=1e-10)
        # traced: leading zeros kept, their roots NaN at the end
        got = np.asarray(plugax.jit(lambda q: jnp.roots(q, strip_zeros=False))(p))
        lead = len(p) - len(np.trim_zeros(p, "f"))
        assert got.shape == (max(len(p) - 1, 0),)
        assert np.isnan(got[len(got) - lead:]).all()
        np.testing.assert_allclose(_sorted(got[:len(got) - lead]), _sorted(np.roots(p)),
                                   atol=1e-10)
    if len(p) >= 2:     # (JAX too returns no roots for a constant before looking at zeros)
        with pytest.raises(Exception, match="pass strip_zeros=False"):
            plugax.jit(jnp.roots)(p)


def test_poly_of_a_matrix_is_its_characteristic_polynomial():
    with x64():
        for a in (REAL, SYM, CPLX):
            np.testing.assert_allclose(np.asarray(jnp.poly(a)), np.poly(a), atol=1e-9)
        np.testing.assert_allclose(np.asarray(plugax.jit(jnp.poly)(REAL)), np.poly(REAL),
                                   atol=1e-9)


def test_second_derivative_of_eigenvalues_matches_finite_differences():
    # (JAX refuses it; plugax differentiates the eigenvectors inside the jvp, which
    # needs distinct eigenvalues, as the first derivative of a simple one does)
    a = REAL[:3, :3]
    with x64():
        grad = plugax.jit(plugax.grad(_eigvals_loss))
        hess = np.asarray(plugax.jacfwd(plugax.grad(_eigvals_loss))(a)).reshape(9, 9)
        fd = np.stack([(np.asarray(grad(a + e)) - np.asarray(grad(a - e))).ravel() / 2e-6
                       for e in np.eye(9).reshape(9, 3, 3) * 1e-6], axis=1)
        np.testing.assert_allclose(hess, fd, atol=1e-5)


def test_implementation_reaches_the_lowering():
    """`implementation` (or JAX's `use_magma`) picks the GPU kernel under jit: it is a
    param of the primitive; on CPU only "lapack" lowers, as in JAX, while the eager impl
    (NumPy) takes any."""
    a = REAL.astype(np.float32)
    eqn = plugax.make_jaxpr(lambda a: L.eig(a, use_magma=True))(a).jaxpr.eqns[-1]
    assert eqn.params["implementation"] == "magma"
    assert plugax.make_jaxpr(L.eig)(a).jaxpr.eqns[-1].params["implementation"] is None
    np.testing.assert_allclose(_sorted(plugax.jit(lambda a: L.eig(
        a, implementation="lapack")[0])(a)), _sorted(np.linalg.eigvals(a)), rtol=1e-4)
    assert np.asarray(L.eig(a, implementation="cusolver")[0]).shape == (5,)
    with pytest.raises(ValueError, match="Only the lapack implementation is supported on CPU"):
        plugax.jit(lambda a: L.eig(a, implementation="cusolver")[0])(a)
    with pytest.raises(ValueError, match="implementation='qdwh'"):
        L.eig(a, implementation="qdwh")
