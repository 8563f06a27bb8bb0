"""Lowering: cond -> stablehlo.case, while -> stablehlo.while, scan -> stablehlo.while over
the stacked arrays; each compiled result is compared with eager evaluation."""
import numpy as np
import pytest

import plugax as px
import plugax.lax as lax
import plugax.numpy as pnp
from plugax.testing import x64

pytestmark = pytest.mark.skipif(not hasattr(px, "jit"), reason="the xla_call plugin (px.jit) "
                                "is not loaded")
f32 = np.float32


def assert_jit_matches_eager(f, *args, rtol=1e-6):
    eager = px.tree_util.tree_leaves(f(*args))
    compiled = px.tree_util.tree_leaves(px.jit(f)(*args))
    assert len(eager) == len(compiled)
    for e, c in zip(eager, compiled):
        assert (np.asarray(e).dtype, np.shape(e)) == (np.asarray(c).dtype, np.shape(c))
        np.testing.assert_allclose(np.asarray(c), np.asarray(e), rtol=rtol, atol=1e-6)


@pytest.mark.parametrize("i", [-2, 0, 1, 2, 7])
def test_cond_and_switch_lower_to_case(i):
    sw = lambda i, x: lax.switch(i, [lambda a: a + 1., lambda a: a * 2., pnp.cos], x)
    assert_jit_matches_eager(sw, np.int32(i), np.linspace(-1, 1, 3, dtype=f32))
    c = lambda p, x, y: lax.cond(p > 0, lambda a, b: (a * b, b), lambda a, b: (a - b, b + 1.), x, y)
    assert_jit_matches_eager(c, f32(i), np.arange(3, dtype=f32), f32(0.5))
    assert "stablehlo.case" in px.jit(sw).lower(np.int32(i), np.ones(3, f32)).as_text()


@pytest.mark.parametrize("n", [0, 1, 6])
def test_while_and_dynamic_fori_loop_lower_to_while(n):
    w = lambda n, x: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 1.5 + x),
                                    (0, x))
    assert_jit_matches_eager(w, np.int32(n), np.arange(3, dtype=f32))
    fl = lambda n, x: lax.fori_loop(0, n, lambda i, c: c * 2. + i, x)
    assert_jit_matches_eager(fl, np.int32(n), f32(0.5))
    assert "stablehlo.while" in px.jit(w).lower(np.int32(n), np.ones(3, f32)).as_text()


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_lowers_to_a_while_over_stacked_arrays(reverse):
    def f(init, xs, w):
        return lax.scan(lambda c, x: (pnp.sin(c) * w + x[0], (c * x[1], x[0])), init, xs,
                        reverse=reverse)
    xs = (np.linspace(-1, 1, 5, dtype=f32), np.arange(10, dtype=f32).reshape(5, 2))
    assert_jit_matches_eager(f, f32(0.3), xs, f32(0.9))
    assert_jit_matches_eager(lambda xs: lax.scan(lambda c, x: (c + x, c), 0., xs),
                             np.zeros((0,), f32))
    assert_jit_matches_eager(lambda x: lax.fori_loop(0, 4, lambda i, c: c * x + i, x), f32(0.7))


def test_transformed_control_flow_under_jit():
    def rnn(w, xs):
        def body(c, x):
            c = lax.cond(x > 0, lambda v: pnp.tanh(v * w + x), lambda v: v * w, c)
            return c, c * c
        c, ys = lax.scan(body, 0.5, xs)
        return c + ys.sum()
    xs = np.array([0.5, -0.3, 0.8, -1.1], f32)
    assert_jit_matches_eager(px.grad(rnn), f32(1.3), xs, rtol=1e-5)
    assert_jit_matches_eager(px.vmap(rnn, in_axes=(0, None)), np.array([0.5, 1.3], f32), xs,
                             rtol=1e-5)
    batched_pred = px.vmap(lambda n: lax.while_loop(lambda c: c[0] < n,
                                                    lambda c: (c[0] + 1, c[1] * 2.), (0, 1.)))
    assert_jit_matches_eager(batched_pred, np.array([0, 3, 1], np.int32))


def test_jit_inside_a_branch_and_control_flow_in_float64():
    inner = px.jit(lambda a: a * a + 1.)
    f = lambda p, x: lax.cond(p, inner, lambda a: a - 1., x)
    assert_jit_matches_eager(f, True, f32(3.))
    with x64():
        g = lambda x: lax.scan(lambda c, v: (c * v, c), 1., x)
        assert_jit_matches_eager(g, np.linspace(0.5, 1.5, 4))
        assert px.jit(g)(np.linspace(0.5, 1.5, 4))[0].dtype == np.float64


def test_scan_inside_cond_inside_jit():
    def f(p, xs):
        cumsum = lambda v: lax.scan(lambda c, x: (c + x, c + x), 0., v)[1]
        return lax.cond(p, cumsum, lambda v: v * 2., xs)

    xs = np.arange(5, dtype=f32)
    for p in (True, False):
        assert_jit_matches_eager(f, p, xs)
    np.testing.assert_allclose(px.jit(f)(True, xs), np.cumsum(xs))
    assert_jit_matches_eager(px.grad(lambda xs: f(True, xs).sum()), xs)


def test_scan_body_is_traced_once_per_signature_not_per_iteration():
    traces = []

    def body(c, x):
        traces.append(x)
        return c + x, c

    # (A weakly typed init, like a bare 0., is traced a second time to make the carry
    # strong when the body returns a strong value, as JAX does; f32(0) avoids that.)
    scan = px.jit(lambda xs: lax.scan(body, f32(0), xs))
    scan(np.arange(100, dtype=f32))
    scan(np.ones(100, f32))          # same signature: no new trace at all
    assert len(traces) == 1
    lax.scan(body, f32(0), np.arange(100, dtype=f32))  # eagerly too: one trace, not 100
    assert len(traces) == 2


def test_jit_scan_over_closed_over_int64_xs():
    """A closed-over NumPy int64 array is typed i32 (x64 off) but was emitted as an i64
    constant, which StableHLO rejected."""
    xs = np.arange(3, dtype=np.int64)
    carry, ys = px.jit(lambda c: lax.scan(lambda c, x: (c + x, c), c, xs))(0)
    assert int(carry) == 3 and ys.dtype == np.int32
    np.testing.assert_array_equal(ys, [0, 0, 1])
    np.testing.assert_array_equal(px.jit(lambda c: c + lax.neg(xs))(0), [0, -1, -2])
