"""The six factorisation primitives: values against numpy.linalg in float64, the
kit's full matrix of checks (abstract eval, jvp against finite differences, vmap,
grad, jit, second order, LAPACK lowering against the impl), vmap against a
Python loop for every batch-axis placement, and the errors.

cholesky and eigh are checked through JAX's symmetrising wrappers: the primitives
read one triangle, so their jvp is only meaningful for symmetric tangents.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import plugax
import plugax.lax.linalg as L
from plugax.extend import ShapeError, ShapedArray
from plugax.testing import check_primitive, x64
from plugax_linalg.primitives import (_lu_abstract_eval, cholesky_p, eigh_p, lu_p, qr_p,
                                      svd_p, triangular_solve_p)

RNG = np.random.default_rng(0)


def normal(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def spd(*batch, n=3, seed=0):
    """Well-conditioned symmetric positive-definite matrices."""
    a = normal(*batch, n, n, seed=seed)
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def mT(x):
    return np.swapaxes(x, -1, -2)


# --- values against numpy.linalg (float64) -------------------------------------------------
def test_values_against_numpy():
    with x64():
        s, a, r = spd(2, n=4), normal(2, 4, 4), normal(2, 5, 3)
        np.testing.assert_allclose(L.cholesky(s), np.linalg.cholesky(s), rtol=1e-12)
        lu, piv, perm = (np.asarray(o) for o in L.lu(a))
        low = np.tril(lu, -1) + np.eye(4)
        np.testing.assert_allclose(np.take_along_axis(a, perm[..., None], 1), low @ np.triu(lu),
                                   atol=1e-12)
        q, rr = L.qr(r, full_matrices=False)
        nq, nr = np.linalg.qr(r)
        np.testing.assert_allclose(q, nq, atol=1e-12)
        np.testing.assert_allclose(rr, nr, atol=1e-12)
        v, w = L.eigh(s)
        np.testing.assert_allclose(w, np.linalg.eigvalsh(s), rtol=1e-12)
        np.testing.assert_allclose(np.asarray(v) * np.asarray(w)[..., None, :] @ mT(v), s,
                                   atol=1e-10)
        u, sv, vt = L.svd(r, full_matrices=False)
        np.testing.assert_allclose(sv, np.linalg.svd(r, compute_uv=False), rtol=1e-12)
        np.testing.assert_allclose(np.asarray(u) * np.asarray(sv)[..., None, :] @ vt, r,
                                   atol=1e-12)
        u, sv, vt = L.svd(r, full_matrices=True)
        assert u.shape == (2, 5, 5) and vt.shape == (2, 3, 3)


@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose_a", [True, False])
@pytest.mark.parametrize("unit_diagonal", [True, False])
def test_triangular_solve_values(left_side, lower, transpose_a, unit_diagonal):
    with x64():
        a = spd(2, n=3)
        b = normal(2, 3, 4, seed=1) if left_side else normal(2, 4, 3, seed=1)
        t = np.tril(a) if lower else np.triu(a)
        if unit_diagonal:
            t = t * (1 - np.eye(3)) + np.eye(3)
        op = mT(t) if transpose_a else t
        want = np.linalg.solve(op, b) if left_side else mT(np.linalg.solve(mT(op), mT(b)))
        got = L.triangular_solve(a, b, left_side=left_side, lower=lower,
                                 transpose_a=transpose_a, unit_diagonal=unit_diagonal)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
        jitted = plugax.jit(lambda a, b: L.triangular_solve(
            a, b, left_side=left_side, lower=lower, transpose_a=transpose_a,
            unit_diagonal=unit_diagonal))(a, b)
        np.testing.assert_allclose(jitted, want, rtol=1e-10, atol=1e-12)


# --- the kit ---------------------------------------------------------------------------------
KIT_CASES = [
    ("cholesky", lambda x: L.cholesky(x), (spd(n=3),)),
    ("lu", lambda x: L.lu(x)[0], (normal(3, 3),)),
    ("lu_wide", lambda x: L.lu(x)[0], (normal(2, 4),)),
    ("qr", lambda x: L.qr(x, full_matrices=False), (normal(4, 3),)),
    ("eigh", lambda x: L.eigh(x)[1], (spd(n=3),)),
    ("svd_values", lambda x: L.svd(x, compute_uv=False), (normal(4, 3),)),
]


@pytest.mark.parametrize("name,fn,args", KIT_CASES, ids=[c[0] for c in KIT_CASES])
def test_kit(name, fn, args):
    with x64():
        ran = check_primitive(fn, *args, lowering=True)
    assert {"jvp", "vmap", "grad", "jit", "jit_second_order", "lowering"} <= set(ran)


@pytest.mark.parametrize("left_side,lower", [(True, True), (False, False), (True, False)])
def test_kit_triangular_solve(left_side, lower):
    """Linear in b: the transpose rule is checked by the dot-product test."""
    with x64():
        a = spd(n=3)
        b = normal(3, 2) if left_side else normal(2, 3)
        ran = check_primitive(triangular_solve_p, a, b, linear_argnums=(1,), lowering=True,
                              left_side=left_side, lower=lower, transpose_a=not lower,
                              conjugate_a=False, unit_diagonal=False)
    assert {"transpose", "jvp", "vmap", "lowering"} <= set(ran)


def test_triangular_solve_vjp_dot_product():
    """<ct, T(b)> = <T^t(ct), b> through plugax.vjp of the solve in b."""
    with x64():
        a, b, ct = spd(n=4), normal(4, 3, seed=1), normal(4, 3, seed=2)
        f = lambda b: L.triangular_solve(a, b, left_side=True, lower=True)  # noqa: E731
        out, pullback = plugax.vjp(f, b)
        (bt,) = pullback(ct)
        np.testing.assert_allclose(np.sum(ct * np.asarray(out)), np.sum(np.asarray(bt) * b),
                                   rtol=1e-12)


# --- vmap against a loop, every batch-axis placement --------------------------------------
VMAP_CASES = [
    ("cholesky", lambda x: L.cholesky(x), lambda ax: np.moveaxis(spd(3, n=3), 0, ax)),
    ("lu", lambda x: L.lu(x), lambda ax: np.moveaxis(normal(3, 3, 4), 0, ax)),
    ("qr", lambda x: L.qr(x, full_matrices=True), lambda ax: np.moveaxis(normal(3, 4, 3), 0, ax)),
    ("eigh", lambda x: L.eigh(x), lambda ax: np.moveaxis(spd(3, n=3), 0, ax)),
    ("svd", lambda x: L.svd(x, full_matrices=False), lambda ax: np.moveaxis(normal(3, 4, 2), 0,
                                                                             ax)),
]


@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("name,fn,make", VMAP_CASES, ids=[c[0] for c in VMAP_CASES])
def test_vmap_every_axis(name, fn, make, axis):
    with x64():
        x = make(axis)
        got = plugax.vmap(fn, in_axes=axis)(x)
        slices = [fn(np.take(x, i, axis)) for i in range(x.shape[axis])]
        got = got if isinstance(got, tuple) else (got,)
        for k, out in enumerate(got):
            want = np.stack([np.asarray(s[k] if isinstance(s, tuple) else s) for s in slices])
            np.testing.assert_allclose(out, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("a_axis,b_axis", [(0, None), (None, 2), (1, 0), (2, 1)])
def test_vmap_triangular_solve(a_axis, b_axis):
    with x64():
        a = spd(3, n=3) if a_axis is not None else spd(n=3)
        a = np.moveaxis(a, 0, a_axis) if a_axis is not None else a
        b = normal(3, 3, 2, seed=3)
        b = np.moveaxis(b, 0, b_axis) if b_axis is not None else b[0]
        f = lambda a, b: L.triangular_solve(a, b, left_side=True, lower=True)  # noqa: E731
        got = plugax.vmap(f, in_axes=(a_axis, b_axis))(a, b)
        take = lambda x, ax, i: x if ax is None else np.take(x, i, ax)  # noqa: E731
        want = np.stack([np.asarray(f(take(a, a_axis, i), take(b, b_axis, i)))
                         for i in range(3)])
        np.testing.assert_allclose(got, want, rtol=1e-10)


# --- shapes, failures and errors ---------------------------------------------------------
@settings(max_examples=8, deadline=None, derandomize=True)
@given(st.integers(0, 2), st.integers(1, 4), st.integers(1, 4), st.booleans())
def test_factorisations_any_shape(nbatch, m, n, full):
    with x64():
        x = normal(*(2,) * nbatch, m, n, seed=m * 10 + n)
        for got, want in [(L.svd(x, compute_uv=False), np.linalg.svd(x, compute_uv=False)),
                          (L.qr(x, full_matrices=full)[1],
                           np.linalg.qr(x, mode="complete" if full else "reduced")[1])]:
            np.testing.assert_allclose(got, want, atol=1e-10)
            np.testing.assert_allclose(plugax.jit(lambda x: L.svd(x, compute_uv=False))(x),
                                       np.linalg.svd(x, compute_uv=False), atol=1e-10)
        lu, _, perm = L.lu(x)
        jlu, _, jperm = plugax.jit(L.lu)(x)
        np.testing.assert_allclose(jlu, lu, atol=1e-12)
        np.testing.assert_array_equal(jperm, perm)


def test_not_positive_definite_gives_nans_eagerly_and_under_jit():
    bad = np.stack([spd(n=3), -spd(n=3)])
    for f in (L.cholesky, plugax.jit(L.cholesky)):
        out = np.asarray(f(bad))
        assert np.isfinite(out[0]).all()
        assert np.isnan(out[1][np.tril_indices(3)]).all() and (np.triu(out[1], 1) == 0).all()


def test_errors_name_the_primitive_and_operands():
    with pytest.raises(ShapeError,
                       match=r"primitive 'cholesky' takes square matrices, got f32\[3,2\]"):
        L.cholesky(np.ones((3, 2), np.float32))
    with pytest.raises(ShapeError, match="primitive 'lu' takes a matrix"):
        lu_p.bind(plugax.numpy.ones(3))
    with pytest.raises(TypeError, match="primitive 'svd' takes float32 or float64 matrices"):
        svd_p.bind(plugax.numpy.ones((2, 2), np.int32), full_matrices=False, compute_uv=False)
    with pytest.raises(ShapeError, match="triangular_solve"):
        L.triangular_solve(np.eye(3), np.ones((4, 2)), left_side=True)
    with pytest.raises(TypeError, match="complex ones are not supported"):
        _lu_abstract_eval(None, ShapedArray((2, 2), np.complex64))
    assert cholesky_p.name == "cholesky" and qr_p.multiple_results and eigh_p.multiple_results


def test_lowering_emits_the_lapack_custom_calls():
    """jit uses jaxlib's LAPACK kernels (the same ones JAX calls), not a decomposition."""
    texts = {
        "potrf": plugax.jit(L.cholesky).lower(spd(n=3)).as_text(),
        "getrf": plugax.jit(L.lu).lower(normal(3, 3)).as_text(),
        "geqrf": plugax.jit(L.qr).lower(normal(3, 3)).as_text(),
        "syevd": plugax.jit(L.eigh).lower(spd(n=3)).as_text(),
        "gesdd": plugax.jit(L.svd).lower(normal(3, 3)).as_text(),
        "trsm": plugax.jit(lambda a, b: L.triangular_solve(a, b)).lower(
            spd(n=3), normal(3, 3)).as_text()}
    for routine, text in texts.items():
        assert f"@lapack_s{routine}_ffi" in text or f"@lapack_d{routine}_ffi" in text, routine
