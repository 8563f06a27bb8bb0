"""`plugax.extend.override`: scoped rule overrides, and one eager path for every front end.

An override must change what runs everywhere the rule is used (plugax.numpy's
fast paths, lax, operators, grad, vmap, make_jaxpr, jit), only inside its block
and only in its thread, and the caches (abstract_eval memo, jit compile cache)
must never serve what was built with other rules.
"""
from __future__ import annotations

import threading

import numpy as np
import pytest

import plugax
import plugax.lax as lax
import plugax.numpy as pnp
from plugax.core import rules as R
from plugax.extend import (OverrideError, PluginInfo, Primitive, RuleSet, ShapedArray,
                           active_overrides, define_rule_kind, eval_jaxpr, get_primitive,
                           hookimpl, is_eager, override, rule_kinds)
from plugax.testing import scoped_plugin

sin_p, cos_p, add_p = get_primitive("sin"), get_primitive("cos"), get_primitive("add")
IMPL = rule_kinds["impl"].table


def sevens(ctx, x):
    """An impl of sin that no one would mistake for sin."""
    return np.full_like(x, 7.0)


def triple_jvp(ctx, primals, tangents):
    (x,), (t,) = primals, tangents
    return sin_p.bind(x), lax.mul(t, pnp.asarray(3.0, x.dtype))


def cos_lowering():
    """sin lowered as cos: the jitted form of an override, visibly different."""
    return {platform: table[cos_p] for platform, table in R.lowering_rules.items()
            if cos_p in table}


@pytest.fixture
def x():
    return pnp.asarray(np.linspace(0.1, 1.0, 5, dtype=np.float32))


def close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)


# --- eager: one path --------------------------------------------------------------
def test_eager_front_ends_all_run_the_override(x):
    before = pnp.sin(x)   # the fast path runs (and caches this signature) first
    with override(RuleSet(sin_p, impl=sevens)):
        for out in (pnp.sin(x), lax.sin(x), sin_p.bind(x), pnp.sin(x[0])):
            assert np.all(np.asarray(out) == 7.0)
            assert out.dtype == np.float32
    close(pnp.sin(x), np.sin(np.asarray(x)))
    close(before, pnp.sin(x))


def test_operators_and_scalar_paths_run_the_override(x):
    minus = RuleSet(add_p, impl=lambda ctx, a, b: np.subtract(a, b))
    with override(minus):
        close(x + x, np.zeros(5))
        close(x + 1.0, np.asarray(x) - 1.0)
        close(2.0 + x, 2.0 - np.asarray(x))
        close(pnp.add(x, x[:1]), np.asarray(x) - np.asarray(x)[0])   # broadcast path
        close(lax.add(x, x), np.zeros(5))
    close(x + x, 2 * np.asarray(x))


def test_a_plugin_override_changes_plugax_numpy_too(x):
    """One eager path also for a RuleSet(overrides=True) of a plugin: the numpy fast
    path must not keep running the NumPy function the family captured at import."""
    class Over:
        @hookimpl
        def plugax_plugin_info(self):
            return PluginInfo(name="sevens")

        @hookimpl
        def plugax_primitive_rules(self):
            return [RuleSet(sin_p, impl=sevens, overrides=True)]

    pnp.sin(x)
    with scoped_plugin(Over(), "sevens"):
        assert np.all(np.asarray(pnp.sin(x)) == 7.0)
        assert np.all(np.asarray(lax.sin(x)) == 7.0)
    close(pnp.sin(x), np.sin(np.asarray(x)))


def test_inside_a_block_is_eager_is_false_and_the_key_names_the_rulesets():
    rs = RuleSet(sin_p, impl=sevens)
    assert is_eager() and active_overrides() == ()
    with override(rs):
        assert not is_eager()
        assert active_overrides() == (rs,)
    assert is_eager() and active_overrides() == ()


# --- traced ------------------------------------------------------------------------
def test_grad_vmap_and_make_jaxpr_use_the_override(x):
    batch_as_cos = lambda ctx, args, dims: (cos_p.bind(args[0]), dims[0])
    with override(RuleSet(sin_p, jvp=triple_jvp, batching=batch_as_cos)):
        assert float(plugax.grad(pnp.sin)(0.5)) == pytest.approx(3.0)
        close(plugax.vmap(pnp.sin)(x), np.cos(np.asarray(x)))
        jaxpr = plugax.make_jaxpr(plugax.grad(lambda v: pnp.sin(v)))(0.5)
        assert "cos" not in str(jaxpr)   # the built-in jvp would multiply by cos
    assert float(plugax.grad(pnp.sin)(0.5)) == pytest.approx(np.cos(0.5))
    close(plugax.vmap(pnp.sin)(x), np.sin(np.asarray(x)))


def test_an_abstract_eval_override_is_never_served_from_the_cache(x):
    """The memo of abstract evaluations must not give the loaded rule's answer inside
    the block (the eager fast path reads it directly) nor the override's after it."""
    assert not lax.sin(x).weak_type            # cached: (sin, f32[5]) -> strong
    with override(RuleSet(sin_p, abstract_eval=weak_sin)):
        assert lax.sin(x).weak_type
        assert lax.sin(x).weak_type            # again: nothing stale was cached
        assert plugax.make_jaxpr(lax.sin)(x).out_avals[0].weak_type
    assert not lax.sin(x).weak_type
    assert not plugax.make_jaxpr(lax.sin)(x).out_avals[0].weak_type


# --- jit and its cache -------------------------------------------------------------
def test_jit_compiles_with_the_active_rules_both_ways(x):
    f = plugax.jit(lambda v: pnp.sin(v) * 2.0)
    close(f(x), 2 * np.sin(np.asarray(x)))                 # compiled outside
    with override(RuleSet(sin_p, lowering=cos_lowering())):
        close(f(x), 2 * np.cos(np.asarray(x)))             # same function, inside
        g = plugax.jit(lambda v: pnp.sin(v) + 1.0)
        close(g(x), np.cos(np.asarray(x)) + 1.0)           # compiled inside
    close(f(x), 2 * np.sin(np.asarray(x)))                 # the outside entry again
    close(g(x), np.sin(np.asarray(x)) + 1.0)               # inside entry not reused


def test_a_jitted_transformation_is_traced_again_inside(x):
    """jit(grad(sin)) traced outside has the built-in jvp baked into its jaxpr: called
    inside a block that overrides the jvp it must be traced (not just compiled) again."""
    h = plugax.jit(plugax.grad(pnp.sin))
    assert float(h(0.5)) == pytest.approx(np.cos(0.5))
    with override(RuleSet(sin_p, jvp=triple_jvp)):
        assert float(h(0.5)) == pytest.approx(3.0)
    assert float(h(0.5)) == pytest.approx(np.cos(0.5))


def test_a_staged_call_is_transformed_again_inside(x):
    """The pjit rules memoise whole-jaxpr transformations and executables per jaxpr: a
    jaxpr staged outside and differentiated or run inside must not reuse the outside
    derivative or executable."""
    closed = plugax.make_jaxpr(plugax.jit(pnp.sin))(0.5)
    through_jaxpr = lambda v: eval_jaxpr(closed.jaxpr, closed.consts, v)[0]
    assert float(plugax.grad(through_jaxpr)(0.5)) == pytest.approx(np.cos(0.5))
    assert float(through_jaxpr(0.5)) == pytest.approx(np.sin(0.5))     # compiled here
    with override(RuleSet(sin_p, jvp=triple_jvp, lowering=cos_lowering())):
        assert float(plugax.grad(through_jaxpr)(0.5)) == pytest.approx(3.0)
        assert float(through_jaxpr(0.5)) == pytest.approx(np.cos(0.5))  # compiled again
    assert float(plugax.grad(through_jaxpr)(0.5)) == pytest.approx(np.cos(0.5))
    assert float(through_jaxpr(0.5)) == pytest.approx(np.sin(0.5))


def test_transformations_of_a_jitted_function_use_the_override(x):
    f = plugax.jit(lambda v: pnp.sin(v))
    assert float(plugax.grad(f)(0.5)) == pytest.approx(np.cos(0.5))
    with override(RuleSet(sin_p, jvp=triple_jvp)):
        assert float(plugax.grad(f)(0.5)) == pytest.approx(3.0)
        assert float(plugax.jit(plugax.grad(f))(0.5)) == pytest.approx(3.0)
    assert float(plugax.grad(f)(0.5)) == pytest.approx(np.cos(0.5))


# --- threads -------------------------------------------------------------------------
def weak_sin(ctx, a):
    return ShapedArray(a.shape, a.dtype, weak_type=True)


def test_an_override_is_seen_only_by_its_thread(x):
    """One thread inside a block and one outside run at the same time, then the outside
    one runs again after the inside one has filled every cache: each must see its own
    rules in eager (the abstract_eval memo included), jitted and differentiated code."""
    f = plugax.jit(lambda v: pnp.sin(v))
    f(x)
    start = threading.Barrier(2, timeout=30)
    inside_done, outside_done = threading.Event(), threading.Event()
    results: dict = {"inside": [], "outside": []}
    errors: list = []

    def run(where):
        for _ in range(30):
            results[where].append((pnp.sin(x), lax.sin(x), f(x), plugax.grad(pnp.sin)(0.5)))

    def inside():
        try:
            with override(RuleSet(sin_p, impl=sevens, jvp=triple_jvp, abstract_eval=weak_sin,
                                  lowering=cos_lowering())):
                start.wait()
                run("inside")
                inside_done.set()
                assert outside_done.wait(30)     # still inside while the other runs
        except BaseException as err:  # reported by the main thread
            errors.append(err)

    def outside():
        try:
            start.wait()
            run("outside")
            assert inside_done.wait(30)
            run("outside")
        except BaseException as err:
            errors.append(err)
        finally:
            outside_done.set()

    threads = [threading.Thread(target=inside), threading.Thread(target=outside)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert len(results["inside"]) == 30 and len(results["outside"]) == 60
    for eager, strict, jitted, slope in results["inside"]:
        assert np.all(np.asarray(eager) == 7.0) and eager.weak_type and strict.weak_type
        close(jitted, np.cos(np.asarray(x)))
        assert float(slope) == pytest.approx(3.0)
    for eager, strict, jitted, slope in results["outside"]:
        close(eager, np.sin(np.asarray(x)))
        assert not eager.weak_type and not strict.weak_type
        close(jitted, np.sin(np.asarray(x)))
        assert float(slope) == pytest.approx(np.cos(0.5))


# --- nesting and exceptions --------------------------------------------------------
def test_nested_overrides_stack_and_unwind(x):
    eights = lambda ctx, a: np.full_like(a, 8.0)
    loaded = IMPL[sin_p]
    with override(RuleSet(sin_p, impl=sevens)):
        assert np.all(np.asarray(pnp.sin(x)) == 7.0)
        with override(RuleSet(sin_p, impl=eights), RuleSet(cos_p, impl=eights)):
            assert np.all(np.asarray(pnp.sin(x)) == 8.0)
            assert np.all(np.asarray(pnp.cos(x)) == 8.0)
        assert np.all(np.asarray(pnp.sin(x)) == 7.0)
        close(pnp.cos(x), np.cos(np.asarray(x)))
    assert IMPL[sin_p] is loaded and is_eager()
    close(pnp.sin(x), np.sin(np.asarray(x)))


def test_an_exception_in_the_block_restores_every_rule(x):
    tables = {kind: rule_kinds[kind].table.get(sin_p) for kind in ("impl", "jvp",
                                                                  "abstract_eval")}
    with pytest.raises(ZeroDivisionError):
        with override(RuleSet(sin_p, impl=sevens, jvp=triple_jvp,
                              abstract_eval=lambda ctx, a: a)):
            assert np.all(np.asarray(pnp.sin(x)) == 7.0)
            1 / 0
    assert {k: rule_kinds[k].table.get(sin_p) for k in tables} == tables
    assert is_eager() and active_overrides() == ()
    close(pnp.sin(x), np.sin(np.asarray(x)))
    assert sin_p not in R._uncached


def test_a_rule_the_primitive_lacks_can_be_given_and_is_missing_again_after():
    assert sin_p not in R.transpose_rules
    with override(RuleSet(sin_p, transpose=lambda ctx, ct, x: [ct])):
        assert R.transpose_rules[sin_p] is not None
    assert sin_p not in R.transpose_rules


# --- rule kinds of third parties ------------------------------------------------------
def test_a_third_party_rule_kind_can_be_overridden():
    table = define_rule_kind("override_probe", ("ctx", "x"), defined_by="tests")

    class Probe:
        @hookimpl
        def plugax_plugin_info(self):
            return PluginInfo(name="probe")

        @hookimpl
        def plugax_primitive_rules(self):
            return [RuleSet(sin_p, override_probe=lambda ctx, x: "loaded")]

    try:
        with scoped_plugin(Probe(), "probe"):
            assert table[sin_p](None, 1) == "loaded"
            with override(RuleSet(sin_p, override_probe=lambda ctx, x: "scoped")):
                assert table[sin_p](None, 1) == "scoped"
            assert table[sin_p](None, 1) == "loaded"
    finally:   # the kind is the test's own: later tests list every defined kind
        rule_kinds.pop("override_probe", None)
        plugax.registry.rebuild()


# --- malformed overrides ------------------------------------------------------------
@pytest.mark.parametrize("make, fragments", [
    (lambda: RuleSet(Primitive("no_such_prim"), impl=sevens),
     ["'no_such_prim'", "no loaded plugin defines"]),
    (lambda: RuleSet(Primitive("sin"), impl=sevens),
     ["'sin'", "different Primitive object", "get_primitive('sin')"]),
    (lambda: RuleSet(sin_p, no_such_kind=sevens),
     ["'sin'", "'no_such_kind'", "unknown rule kind"]),
    (lambda: RuleSet(sin_p, jvp=42),
     ["'sin'", "'jvp'", "must be callable"]),
    (lambda: RuleSet(sin_p, jvp=lambda primals, tangents: None),
     ["'sin'", "'jvp'", "context first"]),
    (lambda: RuleSet(sin_p, lowering={"cpu": "not a rule"}),
     ["'sin'", "lowering (cpu)", "must be callable"]),
    (lambda: RuleSet(sin_p, expand=lambda ctx, x: x),
     ["'sin'", "'expand'"]),
    (lambda: RuleSet(sin_p),
     ["'sin'", "gives no rules"]),
    (lambda: "sin",
     ["takes RuleSets", "str"]),
])
def test_a_malformed_override_names_primitive_and_rule_kind(make, fragments):
    before = IMPL.get(sin_p)
    with pytest.raises(OverrideError) as info:
        override(make())
    for fragment in fragments:
        assert fragment in str(info.value)
    assert IMPL.get(sin_p) is before and active_overrides() == ()


def test_one_override_giving_a_rule_twice_is_refused():
    with pytest.raises(OverrideError, match="'sin', rule kind 'impl': given by two"):
        override(RuleSet(sin_p, impl=sevens), RuleSet(sin_p, impl=sevens))


def test_an_override_entered_inside_a_differentiated_function():
    """Entered under grad, the block's rules apply to what grad does inside it: the
    jvp rule, and the impl that rule's own binds run (at the bottom, eagerly)."""
    def f(v):
        with override(RuleSet(sin_p, impl=sevens, jvp=triple_jvp)):
            return pnp.sin(v)

    value, slope = plugax.value_and_grad(f)(0.5)
    assert float(value) == 7.0 and float(slope) == pytest.approx(3.0)
    assert float(plugax.grad(pnp.sin)(0.5)) == pytest.approx(np.cos(0.5))
