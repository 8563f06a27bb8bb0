"""custom_jvp and custom_vjp with the real families: the examples of docs/custom-derivatives.md.

The softplus example is in float32 on purpose: that is where `exp(100.)`
overflows and the chain rule through `log1p(exp(x))` turns into `inf / inf`.
"""
from __future__ import annotations

from functools import partial

import numpy as np
import pytest

import plugax as px
import plugax.numpy as pnp
from plugax.core.trace import current_trace, eval_trace
from plugax.testing import x64


def naive_softplus(x):
    return pnp.log1p(pnp.exp(x))


@px.custom_jvp
def softplus(x):
    return pnp.maximum(x, 0.0) + pnp.log1p(pnp.exp(-pnp.abs(x)))


@softplus.defjvp
def softplus_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    return softplus(x), x_dot * px.lax.logistic(x)


def test_naive_softplus_gradient_overflows():
    with np.errstate(over="ignore", invalid="ignore"):
        g = px.grad(naive_softplus)(100.0)
    assert g.dtype == np.float32 and np.isnan(g)


def test_custom_jvp_softplus_gradient_is_exact():
    assert float(softplus(100.0)) == 100.0
    g = px.grad(softplus)(100.0)
    assert g.dtype == np.float32 and float(g) == 1.0
    assert float(px.grad(softplus)(0.0)) == 0.5
    assert float(px.grad(softplus)(-100.0)) == pytest.approx(0.0, abs=1e-40)


def test_custom_jvp_rule_is_what_runs():
    """The rule replaces differentiation of the body: a deliberately wrong rule shows it."""
    @px.custom_jvp
    def f(x):
        return pnp.sin(x)
    f.defjvp(lambda p, t: (f(p[0]), 3.0 * t[0]))
    assert float(px.jvp(f, (1.0,), (1.0,))[1]) == 3.0
    assert float(px.grad(f)(1.0)) == 3.0
    assert float(f(1.0)) == pytest.approx(np.sin(1.0))


def test_custom_jvp_composes_with_vmap_jvp_and_higher_order():
    xs = pnp.array([-3.0, 0.0, 2.0, 100.0])
    logistic = 1 / (1 + np.exp(-np.asarray(xs, np.float64)))
    np.testing.assert_allclose(np.asarray(px.vmap(px.grad(softplus))(xs)), logistic, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(px.vmap(softplus)(xs)),
                               np.logaddexp(0, np.asarray(xs, np.float64)), rtol=1e-6)
    y, y_dot = px.jvp(softplus, (100.0,), (2.0,))
    assert (float(y), float(y_dot)) == (100.0, 2.0)
    second = logistic * (1 - logistic)
    np.testing.assert_allclose(np.asarray(px.vmap(px.grad(px.grad(softplus)))(xs)), second,
                               rtol=1e-5, atol=1e-30)
    np.testing.assert_allclose(np.asarray(px.hessian(lambda v: softplus(v).sum())(xs)),
                               np.diag(second), rtol=1e-5, atol=1e-30)
    np.testing.assert_allclose(np.asarray(px.jacrev(softplus)(xs)),
                               np.asarray(px.jacfwd(softplus)(xs)))


def test_custom_jvp_with_nondiff_argnums():
    @partial(px.custom_jvp, nondiff_argnums=(0,))
    def scaled_sin(k, x):
        return k * pnp.sin(x)

    @scaled_sin.defjvp
    def _(k, primals, tangents):
        return scaled_sin(k, primals[0]), k * pnp.cos(primals[0]) * tangents[0]

    with x64():
        assert float(px.grad(scaled_sin, argnums=1)(2.0, 0.5)) == pytest.approx(2 * np.cos(0.5))


@partial(px.custom_vjp, nondiff_argnums=(0,))
def clip_gradient(bound, x):
    return x


clip_gradient.defvjp(lambda bound, x: (x, None),
                     lambda bound, res, g: (pnp.clip(g, -bound, bound),))


@px.custom_vjp
def sin_times(x, y):
    return pnp.sin(x) * y


def _sin_times_fwd(x, y):
    sin_x = pnp.sin(x)
    return sin_x * y, {"cos_x": pnp.cos(x), "sin_x": sin_x, "y": (y,)}


def _sin_times_bwd(res, g):
    return g * res["cos_x"] * res["y"][0], g * res["sin_x"]


sin_times.defvjp(_sin_times_fwd, _sin_times_bwd)


def test_custom_vjp_gradient_clipping():
    x = pnp.array([0.25, 3.0, -5.0])
    loss = lambda x: pnp.sum(clip_gradient(1.0, x) ** 2)
    assert float(loss(x)) == 34.0625
    np.testing.assert_allclose(np.asarray(px.grad(loss)(x)), [0.5, 1.0, -1.0])
    per_example = px.vmap(px.grad(lambda x: clip_gradient(0.5, x) * 4.0))(x)
    np.testing.assert_allclose(np.asarray(per_example), [0.5, 0.5, 0.5])


def test_custom_vjp_with_pytree_residuals():
    with x64():
        gx, gy = px.grad(sin_times, argnums=(0, 1))(0.5, 3.0)
        assert (float(gx), float(gy)) == pytest.approx((3 * np.cos(0.5), np.sin(0.5)))
        # grad of grad differentiates fwd and bwd: d/dx (y cos x) = -y sin x
        assert float(px.grad(px.grad(sin_times))(0.5, 3.0)) == pytest.approx(-3 * np.sin(0.5))
        xs = pnp.linspace(0.0, 1.0, 3)
        np.testing.assert_allclose(np.asarray(px.vmap(px.grad(sin_times))(xs, xs + 1)),
                                   np.cos(np.asarray(xs)) * (np.asarray(xs) + 1))
        # y shaped like x: bwd returns a cotangent for y shaped like x (JAX checks that too)
        jac = px.jacrev(lambda v: sin_times(v, pnp.full_like(v, 2.0)))(xs)
        np.testing.assert_allclose(np.asarray(jac), np.diag(2 * np.cos(np.asarray(xs))))


def test_custom_vjp_has_no_forward_mode():
    with pytest.raises(px.PlugaxError, match="forward-mode.*custom_vjp"):
        px.jvp(sin_times, (0.5, 3.0), (1.0, 0.0))
    assert current_trace() is eval_trace
    assert float(px.grad(sin_times)(0.0, 3.0)) == 3.0
