"""rsf2csf, sqrtm and funm (schur_funcs.py) against SciPy in float64, eagerly and
under jit, over a table of matrices and functions."""
import numpy as np
import pytest

import plugax
import plugax.numpy as jnp
import plugax.scipy.linalg as psl
from plugax.testing import x64

sl = pytest.importorskip("scipy.linalg")
RNG = np.random.default_rng(7)


def _shifted(n):
    """A non-symmetric matrix whose eigenvalues are off the negative real axis (so its
    principal square root and logarithm are defined)."""
    a = RNG.standard_normal((n, n))
    return a + (np.abs(np.linalg.eigvals(a)).max() + 1) * np.eye(n)


MATRICES = {"1x1": np.array([[2.5]]), "2x2 rotation": np.array([[1.0, -2.0], [2.0, 1.0]]),
            "4x4": _shifted(4), "7x7": _shifted(7), "spd": (lambda b: b @ b.T + np.eye(5))(
                RNG.standard_normal((5, 5))), "upper": np.triu(_shifted(4))}
FUNCS = {"exp": (jnp.exp, sl.expm), "sin": (jnp.sin, sl.sinm), "cos": (jnp.cos, sl.cosm),
         "log": (jnp.log, sl.logm)}


@pytest.mark.parametrize("name", sorted(MATRICES))
@pytest.mark.parametrize("jit", [False, True])
def test_sqrtm(name, jit):
    a = MATRICES[name]
    with x64():
        f = plugax.jit(psl.sqrtm) if jit else psl.sqrtm
        s = np.asarray(f(a))
        assert s.dtype == np.complex128
        np.testing.assert_allclose(s @ s, a, atol=1e-10)
        np.testing.assert_allclose(s, sl.sqrtm(a), atol=1e-9)
    with pytest.raises(NotImplementedError, match="Blocked"):
        psl.sqrtm(a, blocksize=2)


@pytest.mark.parametrize("name", sorted(MATRICES))
@pytest.mark.parametrize("fname", sorted(FUNCS))
def test_funm_matches_scipy_matrix_functions(name, fname):
    a = MATRICES[name]
    ours, ref = FUNCS[fname]
    with x64():
        fns = [psl.funm] + ([plugax.jit(psl.funm, static_argnums=(1, 2))]  # (compiles: one)
                            if (name, fname) == ("7x7", "exp") else [])
        for f in fns:
            np.testing.assert_allclose(np.asarray(f(a, ours)), ref(a), atol=1e-8, rtol=1e-8)
        got, err = psl.funm(a, ours, False)
        assert 0 < float(err) <= 1


@pytest.mark.parametrize("name", ["4x4", "7x7", "2x2 rotation", "1x1"])
def test_rsf2csf(name):
    a = MATRICES[name]
    t, z = sl.schur(a)
    with x64():
        for f in [psl.rsf2csf] + ([plugax.jit(psl.rsf2csf)] if name == "4x4" else []):
            tc, zc = (np.asarray(v) for v in f(t, z))
            assert np.all(np.tril(tc, -1) == 0)
            np.testing.assert_allclose(zc @ tc @ zc.conj().T, a, atol=1e-12)
            np.testing.assert_allclose(zc.conj().T @ zc, np.eye(len(a)), atol=1e-12)
            want_t, _ = sl.rsf2csf(t, z)
            got = list(np.diag(tc))
            for w in np.diag(want_t):        # the same eigenvalues (matched, not sorted)
                i = int(np.argmin(np.abs(np.array(got) - w)))
                assert abs(got.pop(i) - w) < 1e-12
    with pytest.raises(ValueError, match="must match"):
        psl.rsf2csf(t, np.eye(len(a) + 1))
