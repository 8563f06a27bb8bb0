"""Edge values (XLA's, which jit and JAX return, checked eagerly and under jit), dtype
rules (lax does not promote, scipy.special does) and the errors a user's mistake meets."""
import numpy as np
import pytest

import plugax
import plugax.lax as lax
import plugax.numpy as pnp
import plugax.scipy.special as special

needs_jit = pytest.mark.skipif(not hasattr(plugax, "jit"), reason="needs the xla_call plugin")

POLES = np.array([0.0, -0.0, -1.0, -3.0, -np.inf], np.float32)
EDGES = [
    # (function, arguments, JAX's values)
    (lax.lgamma, (POLES,), [np.inf] * 5),
    (lax.digamma, (POLES,), [np.nan] * 5),
    (lax.zeta, (np.float32([2.0, 1.0, 0.5, 2.0]), np.float32([0.0, 1.0, 1.0, -1.0])),
     [np.inf, np.inf, np.nan, np.inf]),
    (lax.polygamma, (np.float32([1.5, -1.0]), np.float32([1.0, 1.0])), [np.nan, np.nan]),
    (lax.erf_inv, (np.float32([-1.0, 1.0, 2.0]),), [-np.inf, np.inf, np.nan]),
    (lax.igamma, (np.float32([1.0, 1.0, -1.0, 0.0]), np.float32([0.0, np.inf, 1.0, 0.0])),
     [0.0, 1.0, np.nan, np.nan]),
    (lax.igammac, (np.float32([1.0, 1.0, 0.0]), np.float32([0.0, np.inf, 2.0])),
     [1.0, 0.0, 0.0]),
    (lax.betainc, (np.float32([1.0, 2.0, 1.0]), np.float32([2.0, 3.0, 1.0]),
                   np.float32([0.0, 1.0, 1.5])), [0.0, 1.0, np.nan]),
    (lax.bessel_i0e, (np.float32([0.0, np.inf]),), [1.0, 0.0]),
    (lax.bessel_i1e, (np.float32([0.0, -np.inf]),), [0.0, -0.0]),
]


@pytest.mark.parametrize("fn,args,want", EDGES, ids=[e[0].__name__ for e in EDGES])
def test_edge_values_are_xlas_eagerly_and_under_jit(fn, args, want):
    np.testing.assert_array_equal(np.asarray(fn(*args)), np.float32(want))
    if hasattr(plugax, "jit"):
        np.testing.assert_array_equal(np.asarray(plugax.jit(fn)(*args)), np.float32(want))


def test_lax_does_not_promote_and_says_which_primitive():
    with pytest.raises(plugax.ShapeError, match="'lgamma' does not accept dtype int32"):
        lax.lgamma(np.arange(3, dtype=np.int32))
    with pytest.raises(plugax.ShapeError, match="'igamma' requires operands of one dtype"):
        lax.igamma(np.float32(1.0), np.float64(2.0).astype(np.float16))
    with pytest.raises(plugax.ShapeError, match="'regularized_incomplete_beta'.*equal shapes"):
        lax.betainc(np.ones(2, np.float32), np.ones(3, np.float32), np.ones(2, np.float32))


def test_scipy_special_promotes_like_jax():
    assert special.gammaln(np.arange(1, 4)).dtype == np.float32
    assert special.gammainc(2, np.float32([1.0])).dtype == np.float32
    assert special.erf(np.float16(0.5)).dtype == np.float16
    assert special.betainc(1, 2, pnp.bfloat16(0.5)).dtype == pnp.bfloat16


def test_half_precision_is_computed_in_float32():
    x = np.float16([0.5, 1.5, 3.0])
    np.testing.assert_allclose(np.asarray(lax.igamma(x, x), np.float32),
                               np.asarray(lax.igamma(x.astype(np.float32), x.astype(np.float32)))
                               .astype(np.float16).astype(np.float32))


def test_unsupported_derivatives_and_options_raise_as_jax():
    with pytest.raises(ValueError, match="gradient with respect to a and b is not supported"):
        plugax.grad(lambda a: lax.betainc(a, np.float32(2), np.float32(0.5)))(np.float32(1.0))
    g = plugax.grad(lambda x: lax.betainc(np.float32(2), np.float32(3), x))(np.float32(0.5))
    assert abs(float(g) - 12 * 0.5 * 0.25) < 1e-5          # x (1-x)^2 / B(2, 3)
    with pytest.raises(ValueError, match="polygamma: the gradient with respect to the order"):
        plugax.grad(lax.polygamma)(np.float32(1.0), np.float32(2.0))
    with pytest.raises(ValueError, match="lax.zeta: the gradient with respect to s"):
        plugax.grad(lax.zeta)(np.float32(3.0), np.float32(2.0))
    # scipy.special.zeta differentiates in s (JAX's value, float32)
    assert abs(float(plugax.grad(special.zeta)(np.float32(3.0), np.float32(2.0)))
               - (-0.19812626)) < 1e-6
    with pytest.raises(NotImplementedError, match="exact=True"):
        special.factorial(3, exact=True)
    with pytest.raises(ValueError, match="multigammaln: d must be a positive integer"):
        special.multigammaln(2.0, 0)
    with pytest.raises(ValueError, match="series_order"):
        special.log_ndtr(1.0, series_order=-1)


def test_igamma_derivative_in_a_is_the_igamma_grad_a_primitive():
    jaxpr = plugax.make_jaxpr(plugax.grad(lambda a: lax.igamma(a, np.float32(2.0))))(
        np.float32(1.5))
    names = {str(e.primitive) for e in jaxpr.jaxpr.eqns}
    assert "igamma_grad_a" in names and "while" not in names


def test_primitives_print_like_jax():
    text = str(plugax.make_jaxpr(lax.betainc)(np.float32(1), np.float32(2), np.float32(0.5)))
    assert "regularized_incomplete_beta a b c" in text
    text = str(plugax.make_jaxpr(special.gammainc)(np.float32(1), np.float32(2)))
    assert "igamma" in text


@needs_jit
def test_logsumexp_b_return_sign_and_where_under_jit():
    a = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 4.0]], np.float32)
    b = np.array([1.0, -2.0, 0.5], np.float32)
    out, sign = plugax.jit(lambda a: special.logsumexp(a, axis=1, b=b, return_sign=True))(a)
    s = (np.exp(a.astype(np.float64)) * b).sum(1)
    np.testing.assert_allclose(np.asarray(out), np.log(np.abs(s)), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(sign), np.sign(s))
    assert np.isnan(np.asarray(special.logsumexp(a, axis=1, b=b))[0]) == (s[0] < 0)
    where = np.array([True, False, True])
    np.testing.assert_allclose(np.asarray(special.logsumexp(a, axis=1, where=where)),
                               np.log(np.exp(a[:, where].astype(np.float64)).sum(1)),
                               rtol=1e-6)


def test_wofz_against_scipy_and_its_holomorphic_derivative():
    """wofz is complex-valued, so it has its own test rather than a row of the table."""
    import scipy.special as sc
    from plugax.testing import x64
    z = np.array([0.0, 1.0, -2.5, 1e-3j, 5 + 0.1j, -4 - 0.5j, 20 + 20j, 0.5 - 6j, 3 + 3.4j])
    with x64():
        out = special.wofz(z)
        assert out.dtype == np.complex128
        np.testing.assert_allclose(np.asarray(out), sc.wofz(z), rtol=1e-13)
        # w'(z) = -2 z w(z) + 2i / sqrt(pi)
        d = plugax.vmap(plugax.grad(special.wofz, holomorphic=True))(z)
        np.testing.assert_allclose(np.asarray(d), -2 * z * sc.wofz(z) + 2j / np.sqrt(np.pi),
                                   rtol=1e-10)
    small = z.astype(np.complex64)
    out32 = special.wofz(small)
    assert out32.dtype == np.complex64 and special.wofz(np.float32(1.0)).dtype == np.complex64
    np.testing.assert_allclose(np.asarray(out32), sc.wofz(small.astype(complex)), rtol=1e-5)
    if hasattr(plugax, "jit"):
        np.testing.assert_allclose(np.asarray(plugax.jit(special.wofz)(small)),
                                   np.asarray(out32), rtol=1e-5)
    # the real part of w on the real line is exp(-x^2): JAX's grad of it
    g = plugax.grad(lambda x: special.wofz(x).real)(np.float32(1.0))
    assert abs(float(g) - (-2 * np.exp(-1.0))) < 1e-5


def test_sph_harm_y_against_scipy_under_jit_vmap_and_grad():
    import scipy.special as sc
    from plugax.testing import x64
    rng = np.random.default_rng(0)
    n, m = rng.integers(0, 6, 40), rng.integers(-6, 7, 40)
    theta, phi = rng.uniform(0, np.pi, 40), rng.uniform(0, 2 * np.pi, 40)
    with x64():
        out = special.sph_harm_y(n, m, theta, phi)
        assert out.dtype == np.complex128
        np.testing.assert_allclose(np.asarray(out), sc.sph_harm_y(n, m, theta, phi),
                                   atol=1e-13)
        # d/dtheta of the real part against central differences
        f = lambda t: pnp.sum(special.sph_harm_y(n, m, t, phi, n_max=5).real)
        g = np.asarray(plugax.grad(f)(theta))
        h = 1e-6
        fd = (sc.sph_harm_y(n, m, theta + h, phi) - sc.sph_harm_y(n, m, theta - h, phi)).real
        np.testing.assert_allclose(g, fd / (2 * h), rtol=1e-6, atol=1e-7)
    t32, p32 = theta.astype(np.float32), phi.astype(np.float32)
    eager = special.sph_harm_y(n, m, t32, p32)
    assert eager.dtype == np.complex64
    batched = plugax.vmap(lambda t, p: special.sph_harm_y(n, m, t, p, n_max=5))(
        np.stack([t32, t32[::-1]]), np.stack([p32, p32[::-1]]))
    np.testing.assert_allclose(np.asarray(batched[0]), np.asarray(eager), rtol=1e-6, atol=1e-7)
    if hasattr(plugax, "jit"):
        jitted = plugax.jit(lambda t, p: special.sph_harm_y(n, m, t, p, n_max=5))(t32, p32)
        np.testing.assert_allclose(np.asarray(jitted), np.asarray(eager), atol=1e-6)
    with pytest.raises(NotImplementedError, match="diff_n"):
        special.sph_harm_y(n, m, theta, phi, diff_n=1)
    with pytest.raises(TypeError, match="n_max must be given statically"):
        plugax.vmap(lambda k: special.sph_harm_y(k, m, theta, phi))(np.stack([n, n]))
