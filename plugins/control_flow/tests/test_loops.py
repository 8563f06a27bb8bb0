"""while_loop, fori_loop, scan and map: values, pytrees, jvp, vmap, errors."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import plugax as px
import plugax.lax as lax
import plugax.numpy as pnp
from plugax.testing import check_jvp, check_vmap

f32 = np.float32


def scan_ref(f, init, xs, reverse=False):
    """scan in plain Python over NumPy values."""
    n = len(xs[0]) if isinstance(xs, tuple) else len(xs)
    carry, ys = init, [None] * n
    for i in (reversed(range(n)) if reverse else range(n)):
        x = tuple(a[i] for a in xs) if isinstance(xs, tuple) else xs[i]
        carry, ys[i] = f(carry, x)
    return carry, np.stack(ys) if n else np.zeros((0,))


# --- while_loop ------------------------------------------------------------------------
def collatz_steps(n):
    def body(c):
        k, steps = c
        return lax.select(k % 2 == 0, k // 2, 3 * k + 1), steps + 1
    return lax.while_loop(lambda c: c[0] != 1, body, (n, 0))[1]


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 40))
def test_while_loop_matches_python(n):
    k, steps = n, 0
    while k != 1:
        k, steps = (k // 2 if k % 2 == 0 else 3 * k + 1), steps + 1
    assert int(collatz_steps(np.int32(n))) == steps


def test_while_loop_pytree_carry_and_zero_iterations():
    out = lax.while_loop(lambda c: c["i"] < 0, lambda c: {"i": c["i"] + 1, "x": c["x"] * 2},
                         {"i": 5, "x": pnp.ones(2)})
    assert int(out["i"]) == 5
    np.testing.assert_allclose(out["x"], [1., 1.])


def test_while_jvp_matches_finite_differences():
    def f(n, x, w):
        return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, pnp.sin(c[1]) * w),
                              (0, x))[1]
    check_jvp(f, np.int32(3), np.linspace(-1, 1, 3, dtype=f32), f32(1.5))


def test_while_jvp_through_a_closure():
    w = 1.5
    f = lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * x * w),
                                 (0, x))[1]
    p, t = px.jvp(f, (2.,), (1.,))  # x^4 w^3
    np.testing.assert_allclose([float(p), float(t)], [16 * w ** 3, 32 * w ** 3], rtol=1e-6)


def test_vmap_while_batched_and_unbatched_predicates():
    def f(n, x):
        return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 2. + x), (0, x))
    assert check_vmap(f, np.int32(3), f32(0.5)) > 4
    jaxpr = px.make_jaxpr(px.vmap(f, in_axes=(None, 0)))(3, np.ones(2, f32))
    (loop,) = [e for e in jaxpr.eqns if e.primitive.name == "while"]
    assert "reduce_or" not in str(loop.params["cond_jaxpr"])  # one trip count for all
    jaxpr = px.make_jaxpr(px.vmap(f, in_axes=(0, None)))(np.array([1, 2]), f32(1.))
    (loop,) = [e for e in jaxpr.eqns if e.primitive.name == "while"]
    assert "reduce_or" in str(loop.params["cond_jaxpr"])


def test_vmap_while_with_batched_predicate_matches_a_python_loop():
    ns = np.array([0, 3, 1, 5], np.int32)
    out = px.vmap(lambda n: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 2.),
                                           (0, 1.))[1])(ns)
    np.testing.assert_allclose(out, 2. ** ns)


def test_forward_partial_eval_of_while_computes_known_carries_now():
    def f(x, y):  # the counter does not depend on x: it stays known under linearize
        i, a, b = lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * x, c[2] + y),
                                 (0, x, y))
        return a + b
    out, f_lin = px.linearize(f, 2., 1.)
    assert float(out) == 16. + 4.
    assert float(f_lin(1., 0.)) == 32. and float(f_lin(0., 1.)) == 4.


# --- fori_loop -------------------------------------------------------------------------
@pytest.mark.parametrize("lo,hi", [(0, 5), (2, 7), (4, 2)])
def test_fori_loop_static_and_dynamic_bounds_agree_with_python(lo, hi):
    body = lambda i, c: c * 2. + i
    want = 1.
    for i in range(lo, hi):
        want = want * 2. + i
    assert float(lax.fori_loop(lo, hi, body, 1.)) == want
    dynamic = px.make_jaxpr(lambda h: lax.fori_loop(lo, h, body, 1.))(hi)
    assert "while" in str(dynamic)
    assert float(px.eval_jaxpr(dynamic.jaxpr, dynamic.consts, np.int32(hi))[0]) == want


def test_static_fori_loop_is_a_scan():
    jaxpr = px.make_jaxpr(lambda x: lax.fori_loop(0, 5, lambda i, c: c * x, x))(2.)
    assert [e.primitive.name for e in jaxpr.eqns] == ["scan"]


# --- scan ------------------------------------------------------------------------------
@settings(max_examples=20, deadline=None)
@given(n=st.integers(0, 6), reverse=st.booleans(), seed=st.integers(0, 100))
def test_scan_matches_python(n, reverse, seed):
    rng = np.random.default_rng(seed)
    xs, ws = rng.standard_normal(n).astype(f32), rng.standard_normal((n, 2)).astype(f32)
    w0 = f32(0.5)

    def body(c, x):
        a, b = x
        return c * w0 + a, c * b
    carry, ys = lax.scan(body, f32(1.), (xs, ws), reverse=reverse)
    want_c, want_ys = scan_ref(body, f32(1.), (xs, ws), reverse)
    np.testing.assert_allclose(float(carry), float(want_c), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(ys), np.asarray(want_ys).reshape(n, 2),
                               rtol=1e-5, atol=1e-6)


def test_scan_without_xs_needs_a_length():
    carry, ys = lax.scan(lambda c, _: (c + 1, c * 2), 0, None, length=4)
    assert int(carry) == 4
    np.testing.assert_array_equal(ys, [0, 2, 4, 6])
    with pytest.raises(ValueError, match="length"):
        lax.scan(lambda c, _: (c, c), 0, None)


def test_scan_pytree_carry_and_none_outputs():
    (a, b), ys = lax.scan(lambda c, x: ((c[0] + x, c[1] * x), None), (0., 1.),
                          pnp.arange(1., 5.))
    assert (float(a), float(b), ys) == (10., 24., None)


def test_map_matches_python():
    xs = np.arange(6, dtype=f32).reshape(3, 2)
    out = lax.map(lambda r: {"s": r.sum(), "p": r * 2}, xs)
    np.testing.assert_allclose(out["s"], xs.sum(1))
    np.testing.assert_allclose(out["p"], xs * 2)


def test_scan_unroll_is_a_param_only():
    f = lambda xs: lax.scan(lambda c, x: (c + x, c), 0., xs, unroll=2)
    assert "unroll=2" in str(px.make_jaxpr(f)(np.ones(4, f32)))
    assert float(f(np.ones(4, f32))[0]) == 4.


def test_scan_jvp_matches_finite_differences():
    def f(init, xs, w):
        return lax.scan(lambda c, x: (pnp.sin(c) * w + x, c * x), init, xs)
    check_jvp(f, f32(0.3), np.linspace(-1, 1, 4, dtype=f32), f32(0.9))
    check_jvp(lambda init, xs: lax.scan(lambda c, x: (c * x, c), init, xs, reverse=True),
              f32(1.1), np.linspace(0.5, 1.5, 3, dtype=f32))


def test_vmap_scan_every_batch_placement():
    def f(init, xs, w):
        return lax.scan(lambda c, x: (c * w + x, pnp.sin(c) * x), init, xs)
    assert check_vmap(f, f32(1.), np.arange(4, dtype=f32), f32(0.5)) > 10


def test_vmap_scan_with_unbatched_carry_that_becomes_batched():
    f = lambda xs, init: lax.scan(lambda c, x: (c + x, c), init, xs)
    carry, ys = px.vmap(f, in_axes=(1, None))(np.arange(6, dtype=f32).reshape(3, 2), f32(1.))
    np.testing.assert_allclose(carry, [1. + 0 + 2 + 4, 1. + 1 + 3 + 5])
    np.testing.assert_allclose(ys, [[1., 1., 3.], [1., 2., 5.]])


# --- errors ----------------------------------------------------------------------------
def test_loop_carry_type_mismatch_shows_both():
    with pytest.raises(TypeError, match=r"input carry: .*i32\[\].*\n.*body output: .*f32\[\]"):
        lax.while_loop(lambda c: c < 3, lambda c: c * 1.5, 0)
    with pytest.raises(TypeError, match=r"f32\[2\]"):
        lax.scan(lambda c, x: (c * x, x), f32(1.), pnp.ones((3, 2)))
    with pytest.raises(TypeError, match="boolean scalar"):
        lax.while_loop(lambda c: c, lambda c: c + 1., 1.)
    with pytest.raises(ValueError, match="leading axes"):
        lax.scan(lambda c, x: (c, x), 0., (pnp.ones(3), pnp.ones(4)))
    with pytest.raises(TypeError, match=r"pair \(carry, y\)"):
        lax.scan(lambda c, x: c, 0., pnp.ones(3))
    assert float(lax.scan(lambda c, x: (c + x, x), 0., pnp.ones(3))[0]) == 3.


def test_fori_loop_index_is_weak_with_static_bounds():
    """JAX starts the loop index at the Python int lower bound: weakly typed, so an integer
    carry meeting it stays weak (it used to become a strong int32)."""
    out = lax.fori_loop(0, 3, lambda i, c: c + i, 0)
    assert int(out) == 3 and out.weak_type
    assert lax.fori_loop(np.int32(0), np.int32(3), lambda i, c: c + i, 0).weak_type
