"""plugax-special's SciPy impls, seen through the built-in front ends: the values are
SciPy's own (eager), the transformations are the built-in family's rules, and jit
(the family's CHLO lowerings) agrees with them."""
import numpy as np
import pytest
import scipy.special as sc
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import plugax
import plugax.lax as lax
import plugax.numpy as pnp
import plugax.scipy.special as special
from plugax.testing import check_jvp, check_primitive, check_second_order, x64

erf_p, erf_inv_p, lgamma_p = lax.erf_p, lax.erf_inv_p, lax.lgamma_p
digamma_p, polygamma_p, erfc_p = lax.digamma_p, lax.polygamma_p, lax.erfc_p

X = np.linspace(-2.0, 2.0, 7, dtype=np.float32)
POS = np.linspace(0.3, 5.0, 7, dtype=np.float32)
UNIT = np.linspace(-0.95, 0.95, 7, dtype=np.float32)
A = np.array([[0.5, -1.0, 3.0], [2.0, 2.0, -0.5]], np.float32)

PAIRS = [(special.erf, sc.erf, X), (special.erfc, sc.erfc, X), (special.erfinv, sc.erfinv, UNIT),
         (special.gammaln, sc.gammaln, POS), (special.digamma, sc.digamma, POS)]


@pytest.mark.parametrize("ours,theirs,x", PAIRS, ids=lambda v: getattr(v, "__name__", ""))
def test_values_match_scipy(ours, theirs, x):
    out = ours(x)
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out), theirs(x.astype(np.float64)), rtol=2e-6,
                               atol=1e-6)
    with x64():   # in float64 the eager impl *is* SciPy's: equal to the last bit
        np.testing.assert_array_equal(np.asarray(ours(x.astype(np.float64))),
                                      theirs(x.astype(np.float64)))


def test_lax_names_bind_the_primitives_and_print_like_jax():
    jaxpr = plugax.make_jaxpr(lambda x: lax.digamma(lax.lgamma(lax.erf_inv(lax.erfc(
        lax.erf(x))))))(np.float32(0.1))
    assert [str(e.primitive) for e in jaxpr.jaxpr.eqns] == ["erf", "erfc", "erf_inv", "lgamma",
                                                            "digamma"]
    assert "b:f32[] = erf a" in str(jaxpr)


def test_integers_are_promoted_in_scipy_special_only():
    assert special.erf(np.arange(3)).dtype == np.float32
    with pytest.raises(plugax.ShapeError, match="'erf' does not accept dtype int32"):
        plugax.make_jaxpr(lax.erf)(np.arange(3, dtype=np.int32))


def test_low_precision_dtypes_keep_their_dtype():
    for dtype in (np.float16, pnp.bfloat16):
        x = POS.astype(dtype)
        out = lax.lgamma(x)
        assert out.dtype == np.dtype(dtype)
        # exact on the rounded input, then rounded once more to the output dtype
        want = sc.gammaln(x.astype(np.float64)).astype(dtype).astype(np.float64)
        np.testing.assert_allclose(np.asarray(out, np.float64), want, rtol=0, atol=1e-12)


def test_grad_of_gammaln_is_digamma_and_hessian_is_trigamma():
    g = plugax.vmap(plugax.grad(special.gammaln))(POS)
    np.testing.assert_allclose(np.asarray(g), sc.digamma(POS), rtol=1e-5)
    h = plugax.vmap(plugax.grad(plugax.grad(special.gammaln)))(POS)
    np.testing.assert_allclose(np.asarray(h), sc.polygamma(1, POS), rtol=1e-4)


def test_erf_inv_inverts_erf_with_matching_derivatives():
    y = special.erfinv(special.erf(UNIT))
    np.testing.assert_allclose(np.asarray(y), UNIT, atol=1e-5)
    d = plugax.vmap(plugax.grad(lambda t: special.erfinv(special.erf(t))))(UNIT)
    np.testing.assert_allclose(np.asarray(d), np.ones_like(UNIT), rtol=1e-3)


def test_polygamma_orders_and_no_derivative_in_the_order():
    np.testing.assert_allclose(np.asarray(special.polygamma(2, POS)), sc.polygamma(2, POS),
                               rtol=1e-5)
    check_jvp(polygamma_p, np.float32(1.0), POS, argnums=1, rtol=1e-4)
    check_primitive(polygamma_p, np.full(7, 2, np.float32), POS, rules=("abstract_eval", "vmap"))


@settings(max_examples=20, deadline=None)
@given(x=hnp.arrays(np.float64, hnp.array_shapes(max_dims=2, max_side=3),
                    elements=st.floats(0.2, 6.0)))
def test_lgamma_and_digamma_rules_at_random_points(x):
    check_jvp(lgamma_p, x)
    check_jvp(digamma_p, x, rtol=1e-3)


@settings(max_examples=15, deadline=None)
@given(x=hnp.arrays(np.float64, (3,), elements=st.floats(-0.9, 0.9)))
def test_erf_family_second_order_at_random_points(x):
    check_second_order(erf_p, x)
    check_second_order(erf_inv_p, x)


# --- lowering: jitted (XLA's CHLO expansions) equals eager (SciPy) ---------------------
def test_lowerings_match_the_scipy_impls():
    """Every primitive in float32 and float64 (erf also in the half types), one module.

    One module means one compile; the CHLO expansions of lgamma, digamma and
    polygamma are large, so each dtype added costs about a second.
    """
    from plugax.testing import check_lowerings
    cases = [(erf_p, (X.astype(dtype),), {}) for dtype in (np.float16, pnp.bfloat16)]
    for dtype in (np.float32, np.float64):
        cast = lambda a: a.astype(dtype)
        orders = cast(np.array([0, 1, 2, 1, 0, 3, 2], np.float32))
        cases += [(erf_p, (cast(X),), {}), (erfc_p, (cast(X),), {}),
                  (erf_inv_p, (cast(UNIT),), {}), (lgamma_p, (cast(POS),), {}),
                  (digamma_p, (cast(POS),), {}), (polygamma_p, (orders, cast(POS)), {})]
    with x64():
        check_lowerings(cases)


def test_jit_of_logsumexp_and_gammaln():
    """A whole function (built-in front ends + several families' primitives) compiled
    equals eager, where gammaln runs SciPy's impl.

    check_lowering compiles through the kernel's lowering directly, so this runs
    with only the plugins plugax-special requires (no jit plugin needed).
    """
    from plugax.testing import check_lowering

    def f(a):
        return special.logsumexp(a, axis=1) + special.gammaln(pnp.abs(a) + 1)[:, 0]
    check_lowering(f, A)
    np.testing.assert_allclose(np.asarray(f(A)), sc.logsumexp(A, axis=1)
                               + sc.gammaln(np.abs(A) + 1)[:, 0], rtol=1e-5)


@pytest.mark.skipif(not hasattr(plugax, "jit"), reason="compares with jit: the xla_call plugin is not loaded")
def test_poles_match_xla_eagerly_and_under_jit():
    """SciPy and XLA disagree at poles; the SciPy impls patch in XLA's (JAX's) value."""
    x = np.array([0.0, -0.0, -1.0, -np.inf], np.float32)
    for fn, want in ((special.gammaln, [np.inf] * 4), (special.digamma, [np.nan] * 4)):
        np.testing.assert_array_equal(fn(x), want)
        np.testing.assert_array_equal(plugax.jit(fn)(x), want)
    assert np.isnan(plugax.grad(special.digamma)(np.float32(np.inf)))
