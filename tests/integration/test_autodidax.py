"""Autodidax parts 1, 2 and 4 with their printed numbers (float64, as in the tutorial)."""
import numpy as np
import pytest

import plugax as px
import plugax.numpy as pnp


@pytest.fixture(autouse=True)
def x64():
    px.config.update("enable_x64", True)
    yield
    px.config.update("enable_x64", False)


def f(x):
    y = pnp.sin(x) * 2.
    z = - y + x
    return z


def test_eval_and_jvp():
    np.testing.assert_allclose(float(f(3.0)), 2.7177599838802657)
    y, ydot = px.jvp(f, (3.,), (1.,))
    assert (float(y), float(ydot)) == pytest.approx((2.7177599838802657, 2.979984993200891))
    _, sin_deriv = px.jvp(pnp.sin, (3.0,), (1.0,))
    assert float(sin_deriv) == pytest.approx(np.cos(3.0))


def test_higher_order_and_control_flow():
    deriv = lambda f: (lambda x: px.jvp(f, (x,), (1.,))[1])
    assert float(deriv(deriv(f))(3.)) == pytest.approx(0.2822400161197344)
    assert float(deriv(deriv(deriv(f)))(3.)) == pytest.approx(-1.9799849932008908)

    def g(x):
        if x > 0.:
            return 2. * x
        return x
    assert float(deriv(g)(3.)) == 2.0 and float(deriv(g)(-3.)) == 1.0


def test_pytree_jvp():
    def h(x):
        y = pnp.sin(x) * 2.
        return {'hi': - y + x, 'there': [x, y]}
    y, ydot = px.jvp(h, (3.,), (1.,))
    assert float(y['hi']) == pytest.approx(2.7177599838802657)
    assert float(ydot['there'][1]) == pytest.approx(-1.9799849932008908)


def test_vmap_and_jacfwd_fixed_versions():
    def add_one_to_a_scalar(scalar):
        assert np.ndim(scalar) == 0
        return 1 + scalar
    out = px.vmap(add_one_to_a_scalar, (0,))(np.arange(3.))
    np.testing.assert_allclose(np.asarray(out), [1., 2., 3.])
    jac = px.jacfwd(pnp.sin)(np.arange(3.))
    np.testing.assert_allclose(np.asarray(jac), np.diag(np.cos(np.arange(3.))))


def test_part4_linearize_vjp_grad():
    y, sin_lin = px.linearize(pnp.sin, 3.)
    assert float(y) == pytest.approx(0.1411200080598672)
    assert float(sin_lin(1.)) == pytest.approx(-0.9899924966004454)
    y, f_lin = px.linearize(f, 3.)
    assert (float(y), float(f_lin(1.))) == pytest.approx((2.7177599838802657, 2.979984993200891))

    def f2(x):
        return pnp.cos(x) + pnp.sin(x) * 2.
    y, f_lin = px.linearize(f2, 3.)
    assert (float(y), float(f_lin(1.))) == pytest.approx((-0.7077524804807109, -2.121105001260758))
    y, f_vjp = px.vjp(pnp.sin, 3.)
    assert float(f_vjp(1.)[0]) == pytest.approx(-0.9899924966004454)
    assert float(px.grad(f)(3.)) == pytest.approx(2.979984993200891)
    assert float(px.grad(px.grad(f))(3.)) == pytest.approx(0.2822400161197344)
    assert float(px.grad(lambda x: x ** 2 if x > 0 else 0.)(3.)) == 6.0


def test_compositionality_stress_without_jit():
    def foo(x):
        def bar(y):
            def baz(w):
                q = (lambda x: y)(x)
                q = q + (lambda: y)()
                q = q + (lambda y: w + y)(y)
                q = (lambda w: pnp.sin(x) * y)(1.0) + q
                return q
            p, t = px.jvp(baz, (x + 1.0,), (y,))
            return t + (x * p)
        return bar(x)
    ans1 = foo(3.)
    ans3, _ = px.jvp(foo, (3.,), (5.,))
    np.testing.assert_allclose(np.asarray(ans1), np.asarray(ans3))
    d1 = px.grad(foo)(3.)
    _, d4 = px.jvp(foo, (3.,), (1.,))
    np.testing.assert_allclose(np.asarray(d1), np.asarray(d4), rtol=1e-10)
    h1 = px.grad(px.grad(foo))(3.)
    _, h5 = px.jvp(px.grad(foo), (3.,), (1.,))
    np.testing.assert_allclose(np.asarray(h1), np.asarray(h5), rtol=1e-10)
