"""cond and switch: values, pytrees, closures, jvp/grad, vmap, partial eval, transpose."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import plugax as px
import plugax.lax as lax
import plugax.numpy as pnp
from plugax.testing import check_jvp, check_vmap, numeric_grad, x64

f32 = np.float32


def branchy(p, x, y):
    return lax.cond(p > 0, lambda a, b: (pnp.sin(a) * b, a - b),
                    lambda a, b: (a * b + 1., pnp.cos(a) * b), x, y)


def branchy_ref(p, x, y):
    return (np.sin(x) * y, x - y) if p > 0 else (x * y + 1., np.cos(x) * y)


@settings(max_examples=25, deadline=None)
@given(p=st.floats(-3, 3), x=st.floats(-3, 3), y=st.floats(-3, 3))
def test_cond_matches_python(p, x, y):
    got = branchy(f32(p), f32(x), f32(y))
    want = branchy_ref(f32(p), f32(x), f32(y))
    np.testing.assert_allclose(np.array(got, np.float64), np.array(want, np.float64),
                               rtol=1e-5, atol=1e-5)


@settings(max_examples=25, deadline=None)
@given(i=st.integers(-5, 7), x=st.floats(-2, 2))
def test_switch_clamps_its_index(i, x):
    fns = [lambda a: a + 1., lambda a: a * 2., lambda a: np.cos(a)]
    got = lax.switch(i, [lambda a: a + 1., lambda a: a * 2., lambda a: pnp.cos(a)], f32(x))
    want = fns[min(max(i, 0), 2)](f32(x))
    np.testing.assert_allclose(float(got), float(want), rtol=1e-6, atol=1e-6)


def test_cond_with_pytree_operands_and_outputs():
    ops = {"a": pnp.arange(3.), "b": (f32(2.), pnp.ones(2))}
    out = lax.cond(True, lambda d: {"s": d["a"] * d["b"][0], "t": d["b"][1]},
                   lambda d: {"s": d["a"], "t": d["b"][1] * 0}, ops)
    np.testing.assert_allclose(out["s"], [0., 2., 4.])
    np.testing.assert_allclose(out["t"], [1., 1.])


def test_cond_accepts_integer_predicates_and_no_operands():
    assert float(lax.cond(np.int32(3), lambda: 1., lambda: 2.)) == 1.
    assert float(lax.cond(0, lambda: 1., lambda: 2.)) == 2.


def test_branches_closing_over_arrays_share_their_consts(typecheck_deep):
    c = pnp.arange(3.)
    jaxpr = px.make_jaxpr(lambda p, x: lax.cond(p, lambda v: v * c, lambda v: v + c, x))(
        True, pnp.ones(3))
    (eqn,) = [e for e in jaxpr.eqns if e.primitive.name == "cond"]
    assert len(eqn.invars) == 3  # index, the shared const, the operand
    typecheck_deep(jaxpr)
    np.testing.assert_allclose(lax.cond(False, lambda v: v * c, lambda v: v + c,
                                        pnp.ones(3)), [1., 2., 3.])


def test_branches_with_different_consts_each_get_their_own(typecheck_deep):
    # c strongly typed: a weak one (pnp.full's default, as in JAX) would be converted to
    # f32 eagerly at each use, a fresh constant per branch
    a, b, c = pnp.arange(3.), pnp.ones(3) * 10, pnp.full(3, 100., f32)
    branches = [lambda v: v * a + c, lambda v: v + b, lambda v: v - c * a]
    x = np.array([1., 2., 3.], f32)
    for i, want in enumerate([x * a + c, x + b, x - c * a]):
        np.testing.assert_allclose(lax.switch(i, branches, x), want)
    jaxpr = px.make_jaxpr(lambda i, v: lax.switch(i, branches, v))(0, x)
    (eqn,) = [e for e in jaxpr.eqns if e.primitive.name == "cond"]
    assert len(eqn.invars) == 1 + 3 + 1  # index, the three distinct consts, the operand
    typecheck_deep(jaxpr)


def test_branch_outputs_differing_in_weak_type_take_branch_0s_type():
    # as in JAX: nothing is converted, and the output types are branch 0's (false_fun's)
    # whichever branch runs, eagerly and traced alike
    x = pnp.ones((), pnp.float32)
    for pred in (True, False):
        out = lax.cond(pred, lambda x: x, lambda x: 1., x)
        assert out.weak_type and out.dtype == np.float32
        out = lax.cond(pred, lambda x: 1., lambda x: x, x)
        assert not out.weak_type and out.dtype == np.float32
    jaxpr = px.make_jaxpr(lambda p, x: lax.cond(p, lambda x: x, lambda x: 1., x))(True, x)
    assert jaxpr.out_avals[0].weak_type
    assert "convert_element_type[new_dtype=float32" not in str(jaxpr)


def test_single_branch_switch_just_calls_it():
    jaxpr = px.make_jaxpr(lambda i, x: lax.switch(i, [lambda v: v * 2.], x))(0, 1.)
    assert "cond" not in str(jaxpr)


# --- differentiation -------------------------------------------------------------------
@pytest.mark.parametrize("p", [1., -1.])
def test_cond_jvp_matches_finite_differences(p):
    check_jvp(branchy, f32(p), np.arange(3, dtype=f32), f32(2.))


@pytest.mark.parametrize("i", [0, 1, 2, 5])
def test_switch_jvp_matches_finite_differences(i):
    check_jvp(lambda i, x, w: lax.switch(i, [lambda a: a * w, lambda a: pnp.sin(a) + w,
                                             lambda a: a * a], x),
              np.int32(i), np.linspace(-1, 1, 4, dtype=f32), f32(0.7))


@pytest.mark.parametrize("x", [0.8, -1.3])
def test_grad_through_cond_matches_finite_differences(x):
    def f(x):
        return lax.cond(x > 0, lambda a: pnp.sin(a) * x, lambda a: a * a * a, x)
    with x64():
        g = px.grad(f)(np.float64(x))
        want = numeric_grad(lambda v: float(f(np.float64(v))), x)
    np.testing.assert_allclose(float(g), want, rtol=1e-6)


@pytest.mark.parametrize("i", [0, 1, 2])
def test_grad_through_switch_matches_finite_differences(i):
    def f(x, w):
        return lax.switch(i, [lambda a, b: a * b, lambda a, b: pnp.exp(a) - b,
                              lambda a, b: b], x, w)
    with x64():
        gx, gw = px.grad(f, argnums=(0, 1))(np.float64(0.3), np.float64(1.7))
        want_x = numeric_grad(lambda v: float(f(np.float64(v), np.float64(1.7))), 0.3)
        want_w = numeric_grad(lambda v: float(f(np.float64(0.3), np.float64(v))), 1.7)
    np.testing.assert_allclose([float(gx), float(gw)], [want_x, want_w], rtol=1e-6, atol=1e-9)


def test_grad_wrt_a_value_only_one_branch_uses():
    f = lambda x, y: lax.cond(x > 0, lambda: x * y, lambda: x)
    assert float(px.grad(f, 1)(2., 3.)) == 2.
    assert float(px.grad(f, 1)(-2., 3.)) == 0.


def test_linearized_cond_jaxpr_typechecks_and_has_one_staged_cond(typecheck_deep):
    f = lambda x: lax.cond(x > 0, lambda a: pnp.sin(a) * x, lambda a: a * a, x)
    jaxpr = px.make_jaxpr(px.grad(f))(1.)
    typecheck_deep(jaxpr)
    assert [e.primitive.name for e in jaxpr.eqns].count("cond") == 2  # known and transposed


def test_cond_transpose_dot_product_identity():
    with x64():
        rng = np.random.default_rng(0)
        w = rng.standard_normal(3)
        for p in (True, False):
            f = lambda x, y: lax.cond(p, lambda a, b: a * w + 2. * b,
                                      lambda a, b: b - a, x, y)
            x, y, ct = (rng.standard_normal(3) for _ in range(3))
            ctx, cty = px.linear_transpose(f, x, y)(ct)
            lhs = float(np.dot(ct, np.asarray(f(x, y))))
            rhs = float(np.dot(ctx, x) + np.dot(cty, y))
            np.testing.assert_allclose(lhs, rhs, rtol=1e-12)


# --- batching --------------------------------------------------------------------------
def test_vmap_cond_every_batch_placement():
    assert check_vmap(branchy, f32(1.), np.arange(3, dtype=f32), f32(2.)) > 10


def test_vmap_switch_batched_and_unbatched_index():
    sw = lambda i, x: lax.switch(i, [lambda a: a + 1., lambda a: a * 2., pnp.cos], x)
    assert check_vmap(sw, np.int32(1), np.arange(3, dtype=f32)) > 5


def test_batched_predicate_becomes_select_unbatched_stays_cond():
    f = lambda p, x: lax.cond(p, lambda a: a + 1., lambda a: a - 1., x)
    batched_p = px.make_jaxpr(px.vmap(f))(np.array([True, False]), np.ones(2, f32))
    names = [e.primitive.name for e in batched_p.eqns]
    assert "select_n" in names and "cond" not in names
    unbatched_p = px.make_jaxpr(px.vmap(f, in_axes=(None, 0)))(True, np.ones(2, f32))
    assert "cond" in [e.primitive.name for e in unbatched_p.eqns]
    np.testing.assert_allclose(px.vmap(f)(np.array([True, False]), np.ones(2, f32)), [2., 0.])


def test_vmap_of_grad_and_grad_of_vmap():
    f = lambda x: lax.cond(x > 0, lambda a: a * a, lambda a: pnp.sin(a), x)
    xs = np.array([-1., 0.5, 2.], f32)
    want = np.where(xs > 0, 2 * xs, np.cos(xs))
    np.testing.assert_allclose(px.vmap(px.grad(f))(xs), want, rtol=1e-6)
    np.testing.assert_allclose(px.grad(lambda v: px.vmap(f)(v).sum())(xs), want, rtol=1e-6)


# --- closures over outer tracers -------------------------------------------------------
def test_branches_close_over_grad_and_vmap_tracers():
    def f(w, x):
        return lax.cond(x > 0, lambda a: a * w * w, lambda a: a + w, x)
    assert float(px.grad(f)(3., 2.)) == 12.  # d/dw (2 w^2) = 4 w
    assert float(px.grad(f)(3., -2.)) == 1.
    out = px.vmap(f, in_axes=(0, None))(np.array([1., 2.], f32), f32(2.))
    np.testing.assert_allclose(out, [2., 8.])
    jac = px.jacfwd(lambda w: px.vmap(lambda x: f(w, x))(np.array([1., -1.], f32)))(f32(3.))
    np.testing.assert_allclose(jac, [6., 1.])


# --- errors ----------------------------------------------------------------------------
def test_mismatched_branch_outputs_show_both_types():
    with pytest.raises(TypeError, match=r"true_fun: .*f32\[3\]") as err:
        lax.cond(True, lambda x: x, lambda x: x.sum(), pnp.ones(3))
    assert "false_fun" in str(err.value) and "f32[]" in str(err.value)
    with pytest.raises(TypeError, match="structures"):
        lax.cond(True, lambda x: (x, x), lambda x: x, 1.)
    assert float(lax.cond(True, lambda x: x, lambda x: x, 1.)) == 1.  # still works after


def test_non_scalar_predicate_is_rejected():
    with pytest.raises(TypeError, match=r"pred must be a scalar, got bool\[2\]"):
        lax.cond(np.array([True, False]), lambda: 1., lambda: 2.)
    with pytest.raises(TypeError, match="boolean or integer"):
        lax.cond(1.5, lambda: 1., lambda: 2.)
    with pytest.raises(TypeError, match="index must be an integer"):
        lax.switch(1., [lambda: 1., lambda: 2.])
