"""scipy_more.py, hessenberg.py and schur.py against SciPy / NumPy in float64: one
table of the special matrices (name -> arguments), then the coefficient matrices,
qr_multiply, eigh_tridiagonal, hessenberg and schur with jit, vmap and derivatives
against central differences."""
import numpy as np
import pytest

import plugax
import plugax.numpy as jnp
import plugax.scipy.linalg as psl
from plugax.testing import x64

sl = pytest.importorskip("scipy.linalg")

SPECIAL = [  # (name, args, kwargs): exact constants, compared with SciPy's
    *[("hadamard", (n,), {}) for n in (1, 2, 8)],
    *[("helmert", (n,), {"full": f}) for n in (1, 2, 5) for f in (False, True)],
    *[(name, (n,), {"kind": k}) for name in ("pascal", "invpascal") for n in (1, 4, 7)
      for k in ("symmetric", "lower", "upper")],
    *[("invhilbert", (n,), {}) for n in (1, 3, 6)],
    *[("dft", (n,), {"scale": s}) for n in (1, 3, 8) for s in (None, "sqrtn", "n")],
]


@pytest.mark.parametrize("name, args, kwargs", SPECIAL,
                         ids=[f"{n}{a}{k}" for n, a, k in SPECIAL])
def test_special_matrices_match_scipy(name, args, kwargs):
    want = getattr(sl, name)(*args, **kwargs)
    if name == "invhilbert":
        want = sl.invhilbert(*args, exact=True).astype(np.float64)
    with x64():
        got = np.asarray(getattr(psl, name)(*args, **kwargs))
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-14)
    if name in ("pascal", "invpascal", "helmert", "invhilbert"):
        assert got.dtype == np.float64
    assert np.asarray(getattr(psl, name)(*args, **kwargs)).dtype != np.float64   # x64 off


def test_special_matrix_errors():
    with pytest.raises(ValueError, match="power of 2"):
        psl.hadamard(6)
    with pytest.raises(ValueError, match="kind must be"):
        psl.pascal(3, kind="diagonal")
    with pytest.raises(ValueError, match="scale must be"):
        psl.dft(3, scale="sqrt")
    assert np.asarray(psl.pascal(3)).tolist() == sl.pascal(3).tolist()   # kind None


POLYS = [[1., 2], [1., 2, 3], [2., 1, 3, 4, 5], [1., -1, 2, 3, 4, 5, 6]]


@pytest.mark.parametrize("p", POLYS, ids=str)
def test_fiedler_companion(p):
    with x64():
        got = psl.fiedler_companion(np.array(p))
        np.testing.assert_allclose(got, sl.fiedler_companion(p), atol=1e-15)
        np.testing.assert_allclose(plugax.jit(psl.fiedler_companion)(np.array(p)), got)
        # its eigenvalues are the polynomial's roots
        np.testing.assert_allclose(np.sort_complex(np.linalg.eigvals(np.asarray(got))),
                                   np.sort_complex(np.roots(p)), atol=1e-9)
        # linear in a / a[0]: the derivative against central differences
        weights = np.arange(got.size).reshape(got.shape)
        f = lambda a: jnp.sum(psl.fiedler_companion(a) * weights)  # noqa: E731
        g = plugax.grad(f)(np.array(p))
        fd = [(f(np.array(p) + e) - f(np.array(p) - e)) / 2e-6 for e in np.eye(len(p)) * 1e-6]
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("m, n", [(3, 4), (4, 3), (1, 3), (5, 5)])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolution_matrix_convolves(m, n, mode):
    rng = np.random.default_rng(m * 10 + n)
    a, v = rng.standard_normal(m), rng.standard_normal(n)
    with x64():
        mat = psl.convolution_matrix(a, n, mode)
        np.testing.assert_allclose(mat, sl.convolution_matrix(a, n, mode), atol=1e-15)
        np.testing.assert_allclose(np.asarray(mat) @ v, np.convolve(a, v, mode), atol=1e-12)
        jitted = plugax.jit(psl.convolution_matrix, static_argnums=(1, 2))(a, n, mode)
        np.testing.assert_allclose(jitted, mat)
    with pytest.raises(ValueError, match="mode must be one of"):
        psl.convolution_matrix(a, n, "circular")


@pytest.mark.parametrize("mode, c_shape", [("right", (2, 5)), ("left", (3, 2)),
                                           ("right", (5,)), ("left", (3,))])
def test_qr_multiply(mode, c_shape):
    rng = np.random.default_rng(1)
    a, c = rng.standard_normal((5, 3)), rng.standard_normal(c_shape)
    with x64():
        cq, r = psl.qr_multiply(a, c, mode)
        q, r_want = np.linalg.qr(a)
        assert np.allclose(np.abs(r), np.abs(sl.qr_multiply(a, c, mode)[1]))
        # Q's column signs are LAPACK's on both sides: compare through the signs of R
        np.testing.assert_allclose(r, r_want, atol=1e-12)
        want = q @ c if mode == "left" else c @ q
        np.testing.assert_allclose(cq, want, atol=1e-12)
        cq_jit, _ = plugax.jit(lambda a, c: psl.qr_multiply(a, c, mode))(a, c)
        np.testing.assert_allclose(cq_jit, want, atol=1e-12)
    with pytest.raises(ValueError, match="c must have"):
        psl.qr_multiply(a, np.ones((4, 4)), mode)


def test_eigh_tridiagonal():
    rng = np.random.default_rng(2)
    d, e = rng.standard_normal(6), rng.standard_normal(5)
    t = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    with x64():
        w = psl.eigh_tridiagonal(d, e, eigvals_only=True)
        np.testing.assert_allclose(w, sl.eigh_tridiagonal(d, e, eigvals_only=True), atol=1e-12)
        w2, v = plugax.jit(psl.eigh_tridiagonal)(d, e)
        np.testing.assert_allclose(t @ np.asarray(v), np.asarray(v) * np.asarray(w2), atol=1e-12)
        np.testing.assert_allclose(np.asarray(v).T @ np.asarray(v), np.eye(6), atol=1e-12)
        sub = psl.eigh_tridiagonal(d, e, eigvals_only=True, select="i", select_range=(1, 3))
        np.testing.assert_allclose(sub, np.linalg.eigvalsh(t)[1:4], atol=1e-12)
        batched = plugax.vmap(lambda d: psl.eigh_tridiagonal(d, e, eigvals_only=True))(
            np.stack([d, 2 * d]))
        np.testing.assert_allclose(batched[1], np.linalg.eigvalsh(t + np.diag(d)), atol=1e-12)
        # d(sum of the k smallest eigenvalues)/dd against central differences
        f = lambda d: jnp.sum(psl.eigh_tridiagonal(d, e, eigvals_only=True)[:3])  # noqa: E731
        fd = [(f(d + h) - f(d - h)) / 2e-6 for h in np.eye(6) * 1e-6]
        np.testing.assert_allclose(plugax.grad(f)(d), fd, atol=1e-6)
    with pytest.raises(NotImplementedError, match="select='v'"):
        psl.eigh_tridiagonal(d, e, select="v", select_range=(0.0, 1.0))
    with pytest.raises(ValueError, match="empty index range"):
        psl.eigh_tridiagonal(d, e, select="i", select_range=(3, 1))
    with x64(), pytest.raises(TypeError, match="same dtype"):
        psl.eigh_tridiagonal(d.astype(np.float32), e)


@pytest.mark.parametrize("shape", [(5, 5), (1, 1), (2, 2), (3, 4, 4)])
def test_hessenberg_matches_scipy_eager_and_jit(shape):
    a = np.random.default_rng(sum(shape)).standard_normal(shape)
    flat = a.reshape(-1, *shape[-2:])
    want = [sl.hessenberg(m, calc_q=True) for m in flat]
    with x64():
        for fn in (psl.hessenberg, plugax.jit(psl.hessenberg, static_argnames="calc_q")):
            h, q = fn(a, calc_q=True)
            h, q = np.asarray(h).reshape(flat.shape), np.asarray(q).reshape(flat.shape)
            for (hw, qw), hg, qg, m in zip(want, h, q, flat):
                # the same reflectors as LAPACK (dlarfg's signs), so SciPy's very factors
                np.testing.assert_allclose(hg, hw, atol=1e-12)
                np.testing.assert_allclose(qg, qw, atol=1e-12)
                np.testing.assert_allclose(qg @ hg @ qg.T, m, atol=1e-12)
                assert np.all(np.tril(hg, -2) == 0)
            np.testing.assert_allclose(fn(a), h.reshape(shape), atol=1e-12)
        packed, taus = plugax.vmap(plugax.lax.linalg.hessenberg)(flat)
        packed_loop = np.stack([np.asarray(plugax.lax.linalg.hessenberg(m)[0]) for m in flat])
        np.testing.assert_allclose(packed, packed_loop, atol=1e-14)
        assert np.asarray(taus).shape == (len(flat), shape[-1] - 1)
    h32 = psl.hessenberg(a.astype(np.float32))
    assert np.asarray(h32).dtype == np.float32


def test_hessenberg_errors():
    with pytest.raises(plugax.ShapeError, match=r"'hessenberg' takes square"):
        psl.hessenberg(np.ones((3, 4)))
    with pytest.raises(plugax.MissingRuleError, match="'hessenberg' has no jvp"):  # as JAX
        plugax.grad(lambda a: jnp.sum(psl.hessenberg(a)))(np.eye(3))


def _same_spectrum(got, want, tol):
    got, want = list(np.asarray(got).ravel()), list(np.asarray(want).ravel())
    for w in want:                     # match each eigenvalue to its nearest (no sort ties)
        i = int(np.argmin([abs(g - w) for g in got]))
        assert abs(got.pop(i) - w) < tol, (w, got)


SCHUR_CASES = [(n, kind) for n in (1, 2, 3, 6, 10) for kind in ("real", "complex", "cplx_in")]


@pytest.mark.parametrize("n, kind", SCHUR_CASES)
@pytest.mark.parametrize("jit", [False, True])
def test_schur_decomposes(n, kind, jit):
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n))
    if kind == "cplx_in":
        a = a + 1j * rng.standard_normal((n, n))
    output = "real" if kind == "real" else "complex"
    with x64():
        f = plugax.jit(psl.schur, static_argnames="output") if jit else psl.schur
        t, z = (np.asarray(v) for v in f(a, output=output))
        assert t.dtype == (np.float64 if kind == "real" else np.complex128)
        np.testing.assert_allclose(z @ t @ z.conj().T, a, atol=1e-12)
        np.testing.assert_allclose(z.conj().T @ z, np.eye(n), atol=1e-12)
        if kind == "real":   # quasi-triangular: 2x2 blocks only for complex pairs
            assert np.all(np.tril(t, -2) == 0)
            sub = np.nonzero(np.diag(t, -1))[0]
            assert np.all(np.diff(sub) > 1)              # no two adjacent 2x2 blocks
            for k in sub:
                blk = t[k:k + 2, k:k + 2]
                assert (blk[0, 0] - blk[1, 1]) ** 2 + 4 * blk[0, 1] * blk[1, 0] < 0
            _same_spectrum(np.linalg.eigvals(t), np.linalg.eigvals(a), 1e-9)
        else:
            assert np.all(np.tril(t, -1) == 0)
            _same_spectrum(np.diag(t), np.linalg.eigvals(a), 1e-9)


def test_schur_batches_and_errors():
    a = np.random.default_rng(0).standard_normal((3, 4, 4))
    with x64():
        t, z = plugax.vmap(psl.schur)(a)
        np.testing.assert_allclose(np.asarray(z) @ np.asarray(t) @ np.swapaxes(z, -1, -2), a,
                                   atol=1e-12)
        t_only = plugax.lax.linalg.schur(a[0], compute_schur_vectors=False)
        np.testing.assert_allclose(t_only, t[0], atol=1e-12)
    with pytest.raises(ValueError, match="'real' or 'complex'"):
        psl.schur(a[0], output="both")
    with pytest.raises(plugax.ShapeError, match="'schur' takes square"):
        psl.schur(np.ones((2, 3)))
    assert np.isnan(np.asarray(psl.schur(np.full((2, 2), np.nan))[0])).all()
