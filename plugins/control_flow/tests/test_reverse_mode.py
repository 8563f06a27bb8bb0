"""Reverse mode through scan and static fori_loop; transposes; nesting; closures; while."""
import numpy as np
import pytest

import plugax as px
import plugax.lax as lax
import plugax.numpy as pnp
from plugax.testing import numeric_grad, x64

f32 = np.float32


def assert_grad_matches_fd(f, *args, argnums=0, rtol=1e-6, atol=1e-8):
    with x64():
        args = [np.asarray(a, np.float64) for a in args]
        grads = px.grad(f, argnums=argnums)(*args)
        nums = (argnums,) if isinstance(argnums, int) else argnums
        grads = (grads,) if isinstance(argnums, int) else grads
        for k, g in zip(nums, grads):
            def f_k(v, k=k):
                full = list(args)
                full[k] = v
                return f(*full)
            np.testing.assert_allclose(np.asarray(g), numeric_grad(f_k, args[k]),
                                       rtol=rtol, atol=atol)


def rnn(w, h0, xs):
    def step(h, x):
        h = pnp.tanh(w * h + x)
        return h, h * h
    h, ys = lax.scan(step, h0, xs)
    return h + ys.sum()


def test_grad_through_scan_matches_finite_differences():
    assert_grad_matches_fd(rnn, 0.7, 0.1, np.linspace(-1, 1, 5), argnums=(0, 1, 2))


def test_grad_through_reverse_scan_with_consts_and_pytree_carry():
    def f(w, xs):
        (a, b), ys = lax.scan(lambda c, x: ((c[0] * w + x, c[1] + pnp.sin(c[0] * x)), c[0] * x),
                              (1., 0.), xs, reverse=True)
        return a + b + (ys * ys).sum()
    assert_grad_matches_fd(f, 0.8, np.linspace(-0.5, 0.5, 4), argnums=(0, 1))


def test_grad_through_static_fori_loop_matches_finite_differences():
    f = lambda x, w: lax.fori_loop(0, 4, lambda i, c: pnp.sin(c) * w + i * c, x)
    assert_grad_matches_fd(f, 0.3, 1.2, argnums=(0, 1))


def test_grad_of_scan_whose_carry_only_becomes_differentiable_inside():
    f = lambda w: lax.scan(lambda c, x: (c + w * x, c), 0., pnp.arange(4.))[0]
    assert float(px.grad(f)(2.)) == 6.


def test_linearized_scan_stages_one_scan_and_transposes_to_a_reverse_scan():
    jaxpr = px.make_jaxpr(px.grad(lambda w: rnn(w, 0.1, pnp.linspace(-1, 1, 5))))(0.7)
    scans = [e for e in jaxpr.eqns if e.primitive.name == "scan"]
    assert len(scans) == 2
    assert [e.params["reverse"] for e in scans] == [False, True]


def test_linear_scan_transpose_dot_product_identity():
    with x64():
        rng = np.random.default_rng(1)
        a, b = rng.standard_normal(3), rng.standard_normal(3)

        def f(c0, xs, k):  # linear in (c0, xs, k): a const, a carry and scanned operands
            def body(c, x):
                return a * c + x + k, b * c - x
            return lax.scan(body, c0, xs)
        c0, xs, k = rng.standard_normal(3), rng.standard_normal((4, 3)), rng.standard_normal(3)
        ct_c, ct_ys = rng.standard_normal(3), rng.standard_normal((4, 3))
        out_c, out_ys = f(c0, xs, k)
        t_c0, t_xs, t_k = px.linear_transpose(f, c0, xs, k)((ct_c, ct_ys))
        lhs = np.vdot(ct_c, out_c) + np.vdot(ct_ys, out_ys)
        rhs = np.vdot(t_c0, c0) + np.vdot(t_xs, xs) + np.vdot(t_k, k)
        np.testing.assert_allclose(lhs, rhs, rtol=1e-12)
        for reverse in (False, True):
            g = lambda xs: lax.scan(lambda c, x: (c * 0.5 + x, c), pnp.zeros(3), xs,
                                    reverse=reverse)[1]
            ct = rng.standard_normal((4, 3))
            (t_xs,) = px.linear_transpose(g, xs)(ct)
            np.testing.assert_allclose(np.vdot(ct, g(xs)), np.vdot(t_xs, xs), rtol=1e-12)


# --- nesting ---------------------------------------------------------------------------
def nested(w, xs):
    def body(c, x):
        c = lax.cond(x > 0, lambda v: v * w + x, lambda v: pnp.sin(v) - x, c)
        return c, c * x
    c, ys = lax.scan(body, 0.5, xs)
    return c + ys.sum()


def nested_ref(w, xs):
    c, total = 0.5, 0.
    for x in xs:
        c = c * w + x if x > 0 else np.sin(c) - x
        total += c * x
    return c + total


def test_cond_inside_scan_values_and_grad():
    xs = np.array([0.5, -0.3, 0.8, -1.1])
    np.testing.assert_allclose(float(nested(f32(1.3), xs.astype(f32))), nested_ref(1.3, xs),
                               rtol=1e-5)
    assert_grad_matches_fd(nested, 1.3, xs, argnums=(0, 1))


def test_scan_inside_cond_values_grad_and_vmap():
    def f(p, w):
        return lax.cond(p > 0, lambda v: lax.scan(lambda c, x: (c * v + x, c), 1.,
                                                  pnp.arange(3.))[0],
                        lambda v: v * 10., w)
    assert float(f(1., 2.)) == ((1. * 2 + 0) * 2 + 1) * 2 + 2
    assert_grad_matches_fd(lambda w: f(1., w), 2.)
    np.testing.assert_allclose(px.vmap(f)(np.array([1., -1.], f32), np.array([2., 3.], f32)),
                               [12., 30.])


def test_while_inside_scan_forward_mode_and_vmap():
    def f(x):
        def body(c, n):
            return lax.while_loop(lambda s: s[0] < n, lambda s: (s[0] + 1, s[1] * x),
                                  (0, c))[1], c
        return lax.scan(body, 1., np.array([1, 2, 0], np.int32))[0]
    assert float(f(2.)) == 8.
    assert float(px.jvp(f, (2.,), (1.,))[1]) == 12.
    np.testing.assert_allclose(px.vmap(f)(np.array([1., 2., 3.], f32)), [1., 8., 27.])


# --- closures over outer tracers -------------------------------------------------------
def test_bodies_close_over_grad_tracers():
    f = lambda w: lax.scan(lambda c, x: (c * w, c), 1., None, length=3)[0]  # w**3
    assert float(px.grad(f)(2.)) == 12.
    assert float(px.grad(px.grad(f))(2.)) == 12.  # second order: 6 w


def test_bodies_close_over_vmap_tracers_and_grad_of_vmap():
    def f(w, xs):
        return lax.scan(lambda c, x: (c * w + x, c), 0., xs)[0]
    ws = np.array([0.5, 1., 2.], f32)
    xs = np.arange(3, dtype=f32)
    out = px.vmap(f, in_axes=(0, None))(ws, xs)
    np.testing.assert_allclose(out, [(0 * w + 1) * w + 2 for w in ws])
    g = px.grad(lambda ws: px.vmap(f, in_axes=(0, None))(ws, xs).sum())(ws)
    np.testing.assert_allclose(g, 1. + 0 * ws, rtol=1e-6)  # d/dw (w + 2) = 1
    np.testing.assert_allclose(px.vmap(px.grad(f), in_axes=(0, None))(ws, xs), [1., 1., 1.])


# --- reverse mode through while is an error --------------------------------------------
def test_grad_through_while_raises_and_suggests_scan():
    f = lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * x), (0, x))[1]
    with pytest.raises(Exception, match="lax.scan, or lax.fori_loop with static"):
        px.grad(f)(2.)
    g = lambda x, n: lax.fori_loop(0, n, lambda i, c: c * x, x)
    with pytest.raises(Exception, match="while_loop"):
        px.make_jaxpr(px.grad(g))(2., 3)
    assert float(px.jvp(f, (2.,), (1.,))[1]) == 32.  # forward mode still works after


def test_loop_invariant_residuals_are_not_stacked(typecheck_deep):
    def f(w, xs):
        return lax.scan(lambda h, x: (pnp.tanh(w * h + x), h), pnp.zeros(3), xs)[0].sum()
    jaxpr = px.make_jaxpr(px.grad(f))(np.ones(3, f32), np.ones((5, 3), f32))
    typecheck_deep(jaxpr)
    w_var = jaxpr.jaxpr.invars[0]
    scans = [e for e in jaxpr.eqns if e.primitive.name == "scan"]
    assert len(scans) == 2
    for eqn in scans:  # w enters both scans once, as a const, never as a stack of copies
        assert w_var in eqn.invars[:eqn.params["num_consts"]]
    assert_grad_matches_fd(f, np.linspace(-0.5, 0.5, 3), np.linspace(-1, 1, 15).reshape(5, 3),
                           argnums=(0, 1))
