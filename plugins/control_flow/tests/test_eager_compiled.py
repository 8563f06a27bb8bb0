"""Eager scan / fori_loop / while_loop run compiled (eager.py): the compiled path gives
the interpreter's values, types and errors; it compiles once per signature; callbacks
in bodies still run; disable_jit, forced interpretation and bodies that do not lower
use the step-by-step interpreter; grad and vmap of an eager loop are unchanged."""
from __future__ import annotations

import numpy as np
import pytest

import plugax
import plugax.numpy as pnp
from plugax import lax
from plugax.extend import PluginInfo, Primitive, RuleSet, ShapedArray, hookimpl
from plugax_control_flow import eager
from plugax_control_flow.eager import eager_loop_stats, interpret_eager_loops

@pytest.fixture(autouse=True)
def compile_every_loop(monkeypatch):
    """These tests use short loops, which are interpreted below the budget; compile
    them all (test_short_loops_of_fresh_closures_stay_interpreted restores it)."""
    monkeypatch.setattr(eager, "INTERPRET_BUDGET", 0)


RNG = np.random.default_rng(0)
XS = RNG.standard_normal((50, 3)).astype(np.float32)
C0 = RNG.standard_normal(3).astype(np.float32)

# debug.print and pure_callback come from the callback family, which control_flow does not
# require (its tox env loads only what it needs)
needs_callbacks = pytest.mark.skipif(
    not hasattr(plugax, "pure_callback"),
    reason="plugax.debug.print / pure_callback come from the callback family, not loaded")


def body(c, x):
    c = pnp.tanh(c * 0.9 + x)
    return c, (c.sum(), 2 * x)


def both(fn):
    """(compiled result, interpreted result) of `fn()`, leaves as NumPy."""
    before = dict(eager_loop_stats)
    compiled = fn()
    assert eager_loop_stats["compiled"] > before["compiled"]
    with interpret_eager_loops():
        interpreted = fn()
    return compiled, interpreted


def assert_same(a, b):
    la, ta = plugax.tree_util.tree_flatten(a)
    lb, tb = plugax.tree_util.tree_flatten(b)
    assert ta == tb
    for x, y in zip(la, lb):
        assert x.dtype == y.dtype and x.shape == y.shape and x.weak_type == y.weak_type
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=2e-6, atol=2e-6)


def reference_scan(c, xs):
    ys0, ys1 = [], []
    for x in xs:
        c = np.tanh(c * np.float32(0.9) + x)
        ys0.append(c.sum())
        ys1.append(2 * x)
    return c, (np.array(ys0), np.array(ys1))


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_compiled_equals_interpreted_and_numpy(reverse):
    c, xs = plugax.Array(C0), plugax.Array(XS)
    compiled, interpreted = both(lambda: lax.scan(body, c, xs, reverse=reverse))
    assert_same(compiled, interpreted)
    ref_xs = XS[::-1] if reverse else XS
    ref_c, (ref_s, ref_x2) = reference_scan(C0, ref_xs)
    np.testing.assert_allclose(np.asarray(compiled[0]), ref_c, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(compiled[1][0]),
                               ref_s[::-1] if reverse else ref_s, rtol=1e-5)


def test_fori_and_while_keep_weak_types_and_values():
    compiled, interpreted = both(lambda: (
        lax.fori_loop(0, 10, lambda i, x: x + i, 1.0),
        lax.while_loop(lambda x: x < 1000, lambda x: x * 3, 1),
        lax.fori_loop(2, 7, lambda i, v: v * 1.5, plugax.Array(C0))))
    assert_same(compiled, interpreted)
    assert float(compiled[0]) == 46.0 and compiled[0].weak_type
    assert int(compiled[1]) == 2187


def test_compiles_once_per_signature():
    def step(c, x):
        return c + x, c
    c, xs = plugax.Array(C0), plugax.Array(XS)
    for _ in range(3):   # the first call runs the ordinary path, the second compiles
        lax.scan(step, c, xs)
    n = eager_loop_stats["compilations"]
    for _ in range(3):
        lax.scan(step, c, xs)
    assert eager_loop_stats["compilations"] == n   # cached: nothing traced or compiled
    for _ in range(3):   # new signatures: new compilations, then cached again
        lax.scan(step, c, xs[:7])
        lax.scan(step, c.astype(np.float16), xs.astype(np.float16))
    m = eager_loop_stats["compilations"]
    assert m > n
    lax.scan(step, c, xs[:7])
    lax.scan(step, c.astype(np.float16), xs.astype(np.float16))
    assert eager_loop_stats["compilations"] == m


def test_short_loops_of_fresh_closures_stay_interpreted(monkeypatch):
    """A fresh closure on every call would pay a compilation per call; below the budget
    the loop is interpreted, above it compiled."""
    monkeypatch.setattr(eager, "INTERPRET_BUDGET", 2000)
    c = plugax.Array(C0)
    n = dict(eager_loop_stats)
    lax.scan(lambda c, x: (c + x, None), c, plugax.Array(XS[:10]))
    assert eager_loop_stats["interpreted"] == n["interpreted"] + 1
    assert eager_loop_stats["compilations"] == n["compilations"]
    long_xs = plugax.Array(np.ones((3000, 3), np.float32))
    out, _ = lax.scan(lambda c, x: (c + x, None), c, long_xs)
    assert eager_loop_stats["compilations"] == n["compilations"] + 1
    np.testing.assert_allclose(np.asarray(out), C0 + 3000, rtol=1e-6)


@needs_callbacks
def test_a_while_loop_switches_to_compiled_mid_way(monkeypatch, capsys):
    """Interpreted for the budget's steps, then compiled from the current carry: the
    same result, and the predicate's callback runs once per evaluation, as interpreted."""
    monkeypatch.setattr(eager, "INTERPRET_BUDGET", 30)

    def cond(c):
        plugax.debug.print("cond {i}", i=c[0])
        return c[0] < 40

    def body(c):
        i, x = c
        return i + 1, x * 1.01 + 0.5
    init = (plugax.Array(np.int32(0)), plugax.Array(C0))
    n = eager_loop_stats["compilations"]
    compiled = lax.while_loop(cond, body, init)
    assert eager_loop_stats["compilations"] == n + 1
    printed = capsys.readouterr().out
    with interpret_eager_loops():
        interpreted = lax.while_loop(cond, body, init)
    assert capsys.readouterr().out == printed and printed.count("cond ") == 41
    assert_same(compiled, interpreted)


def test_errors_are_the_interpreters():
    bad = lambda c, x: (c.astype(np.int32), x)   # noqa: E731  the carry changes type
    c, xs = plugax.Array(C0), plugax.Array(XS)
    messages = []
    for interpret in (False, True):
        with interpret_eager_loops(interpret), pytest.raises(TypeError) as err:
            lax.scan(bad, c, xs)
        messages.append(str(err.value))
    assert messages[0] == messages[1] and "carry" in messages[0]
    with pytest.raises(ValueError, match="leading axes"):
        lax.scan(lambda c, x: (c, x), c, (xs, xs[:3]))


@needs_callbacks
def test_callbacks_in_an_eager_body_run(capsys):
    seen = []

    def record(x):
        seen.append(float(x.sum()))
        return np.asarray(x)

    def step(c, x):
        plugax.debug.print("step c0={c}", c=c[0])
        c = plugax.pure_callback(record, plugax.ShapeDtypeStruct(c.shape, c.dtype), c + x)
        return c, None

    compiled, interpreted = both(lambda: lax.scan(step, plugax.Array(C0), plugax.Array(XS[:4])))
    assert_same(compiled, interpreted)
    assert len(seen) == 8 and seen[:4] == seen[4:]
    assert capsys.readouterr().out.count("step c0=") == 8

    def failing(x):
        raise ValueError("boom in the user's callback")

    def step2(c, x):
        c = plugax.pure_callback(failing, plugax.ShapeDtypeStruct(c.shape, c.dtype), c)
        return c, None
    errors = []
    for interpret in (False, True):
        with interpret_eager_loops(interpret), pytest.raises(Exception) as err:
            lax.scan(step2, plugax.Array(C0), plugax.Array(XS[:2]))
        errors.append((type(err.value), str(err.value)))
    assert errors[0] == errors[1] and "boom in the user's callback" in errors[0][1]


def test_disable_jit_interprets():
    calls = []

    def step(c, x):
        calls.append(1)
        return c + x, None
    c, xs = plugax.Array(C0), plugax.Array(XS[:5])
    n = eager_loop_stats["interpreted"]
    with plugax.disable_jit():
        out, _ = lax.scan(step, c, xs)
    assert eager_loop_stats["interpreted"] > n
    np.testing.assert_allclose(np.asarray(out), C0 + XS[:5].sum(0), rtol=1e-6)


twice_p = Primitive("twice_without_lowering")


class _NoLowering:
    """A plugin whose primitive has an impl but no lowering: eager loops over it cannot
    be compiled, so they must be interpreted."""

    @hookimpl
    def plugax_plugin_info(self):
        return PluginInfo(name="no_lowering_test")

    @hookimpl
    def plugax_primitive_rules(self):
        return [RuleSet(twice_p, impl=lambda ctx, x: x * 2,
                        abstract_eval=lambda ctx, x: ShapedArray(x.shape, x.dtype))]


def test_a_body_without_lowering_is_interpreted(plugax_registry):
    plugax_registry.register(_NoLowering(), "no_lowering_test")
    step = lambda c, x: (twice_p.bind(c) + x, None)   # noqa: E731
    n = eager_loop_stats["interpreted"]
    out, _ = lax.scan(step, plugax.Array(C0), plugax.Array(XS[:4]))
    expected = C0
    for x in XS[:4]:
        expected = 2 * expected + x
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-6)
    assert eager_loop_stats["interpreted"] > n
    out2, _ = lax.scan(step, plugax.Array(C0), plugax.Array(XS[:4]))   # cached decision
    np.testing.assert_allclose(np.asarray(out2), expected, rtol=1e-6)


def test_grad_and_vmap_of_an_eager_scan_match_the_interpreter():
    def loss(w, xs):
        c, ys = lax.scan(lambda c, x: (pnp.tanh(c * w + x), (c * w).sum()),
                         pnp.zeros(3, np.float32), xs)
        return ys.sum() + c.sum()
    w, xs = plugax.Array(np.float32(0.7)), plugax.Array(XS[:20])
    before = eager_loop_stats["compiled"]
    plugax.grad(loss)(w, xs)
    # both loops of reverse mode run compiled: the forward (known) scan, which partial
    # evaluation runs on its parent EvalTrace, and the transposed scan
    assert eager_loop_stats["compiled"] >= before + 2
    compiled, interpreted = both(lambda: plugax.grad(loss)(w, xs))
    assert_same(compiled, interpreted)
    eps = 1e-5   # central differences in float64 through NumPy
    def np_loss(w):
        c, total = np.zeros(3), 0.0
        for x in XS[:20].astype(np.float64):
            total += (c * w).sum()
            c = np.tanh(c * w + x)
        return total + c.sum()
    fd = (np_loss(0.7 + eps) - np_loss(0.7 - eps)) / (2 * eps)
    np.testing.assert_allclose(float(compiled), fd, rtol=1e-3)
    batched = lambda: plugax.vmap(lambda c: lax.scan(body, c, plugax.Array(XS[:6])))(  # noqa
        plugax.Array(np.stack([C0, 2 * C0])))
    assert_same(*both(batched))
