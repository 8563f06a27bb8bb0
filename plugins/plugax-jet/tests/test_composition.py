"""jet composes with jit and vmap, in both orders, and with lax control flow under jit."""
import numpy as np

import plugax
import plugax.numpy as jnp
from plugax import lax
from plugax.experimental.jet import jet

X = np.array([0.3, 0.7, 1.2])
S = [np.array([1.0, -0.5, 0.25]), np.array([0.3, 0.1, -0.2]), np.array([0.1, 0.2, 0.3])]


def f(v):
    return jnp.sin(jnp.exp(v)) * jnp.cos(v)


def _same(a, b):
    pa, sa = a
    pb, sb = b
    np.testing.assert_allclose(np.asarray(pa), np.asarray(pb), rtol=1e-12)
    assert len(sa) == len(sb)
    for x, y in zip(sa, sb):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-12)


def test_jit_of_a_function_that_calls_jet():
    jitted = plugax.jit(lambda v, a, b, c: jet(f, (v,), ([a, b, c],)))
    _same(jitted(X, *S), jet(f, (X,), (S,)))
    jaxpr = str(plugax.make_jaxpr(lambda v: jet(f, (v,), (S,)))(X))
    assert "sin" in jaxpr and "cos" in jaxpr       # the whole expansion is staged


def test_jet_of_a_jitted_function_stays_one_call():
    g = plugax.jit(f)
    _same(jet(g, (X,), (S,)), jet(f, (X,), (S,)))
    jaxpr = str(plugax.make_jaxpr(lambda v: jet(g, (v,), (S,)))(X))
    assert jaxpr.count("pjit[") == 1


def test_vmap_of_jet_and_jet_of_vmap():
    want = jet(f, (X,), (S,))
    per_row = plugax.vmap(lambda v, a, b, c: jet(f, (v,), ([a, b, c],)))(X, *S)
    _same(per_row, want)
    _same(jet(plugax.vmap(f), (X,), (S,)), want)
    # a batch of points along one fixed direction
    xs = np.stack([X, X + 1.0])
    p, s = plugax.vmap(lambda v: jet(f, (v,), (S,)))(xs)
    np.testing.assert_allclose(np.asarray(s[2])[1], np.asarray(jet(f, (X + 1.0,), (S,))[1][2]))


def test_control_flow_under_jit():
    def loop(v):
        v = lax.cond(jnp.sum(v) > 0, jnp.sin, jnp.cos, v)
        return lax.scan(lambda c, e: (c * e, jnp.exp(c * e)), 1.0, v)
    want = jet(loop, (X,), (S,))
    got = plugax.jit(lambda v: jet(loop, (v,), (S,)))(X)
    for a, b in zip(plugax.tree_util.tree_leaves(want), plugax.tree_util.tree_leaves(got)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12)


def test_jvp_of_jet_is_the_next_order():
    # d/dx of the 2nd term of exp along a line is the 3rd derivative's first-order piece
    second = lambda x: jet(jnp.exp, (x,), ([1.0, 0.0],))[1][1]   # noqa: E731
    _, t = plugax.jvp(second, (0.5,), (1.0,))
    np.testing.assert_allclose(float(t), np.exp(0.5), rtol=1e-12)


def test_custom_jvp_functions_run_their_body_as_jax_does():
    @plugax.custom_jvp
    def h(x):
        return jnp.sin(x)

    h.defjvp(lambda p, t: (h(p[0]), 100.0 * t[0]))   # a deliberately wrong rule
    _, s = jet(h, (0.3,), ([1.0, 0.0, 0.0],))
    np.testing.assert_allclose([float(t) for t in s],
                               [np.cos(0.3), -np.sin(0.3), -np.cos(0.3)], rtol=1e-12)
    _, s_jit = jet(plugax.jit(h), (0.3,), ([1.0, 0.0, 0.0],))   # staged custom_jvp_call
    np.testing.assert_allclose([float(t) for t in s_jit], [float(t) for t in s], rtol=1e-12)
