"""Plugin discovery, validation and rule lookup, against fake installed distributions.

The `dists` fixture (tests/conftest.py) writes `*.dist-info` folders and the
plugin modules they point at into a temporary sys.path entry, then runs a
*fresh* `Registry().load_entry_points()`; afterwards it rebuilds the global
rule tables from the real registry.
"""
from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest

import plugax
from plugax.core import rules as R
from plugax.core.trace import current_trace, eval_trace
from plugax.extend import PluginInfo, Primitive, RuleSet, ShapedArray, hookimpl
from plugax.loader.registry import PluginWarning, Registry


def _load_quietly(fake) -> tuple[Registry, list[str]]:
    return fake.load_quietly()


# --- discovery ------------------------------------------------------------------------

def test_good_plugin_loads_with_its_distribution(dists):
    prims = dists.primitives("good_p")
    dists.good("good", "good_p", prims, offset=5)
    dist = dists.dist("gooddist", "3.1.4", {"good": dists.name("good")})
    dists.allow("good")
    reg, warned = _load_quietly(dists)
    assert warned == []
    rec = dists.record(reg, "good")
    assert (rec.status, rec.distribution, rec.version) == ("loaded", dist, "3.1.4")
    good_p = sys.modules[prims].good_p
    assert rec.primitives == [good_p]
    assert f"distribution {dist} 3.1.4" in R.rule_owner[good_p]
    np.testing.assert_array_equal(np.asarray(good_p.bind(np.float32(1.0))), 6.0)


def test_broken_import_fails_alone(dists):
    prims = dists.primitives("good_p")
    dists.good("good", "good_p", prims, offset=1)
    broken = dists.module("broken", "raise RuntimeError('kaboom at import')\n")
    dists.dist("okdist", "1.0", {"good": dists.name("good")})
    bad = dists.dist("baddist", "0.7.2", {"broken": broken})
    dists.allow("good", "broken")
    with pytest.warns(PluginWarning) as caught:
        reg = dists.load()
    messages = [str(w.message) for w in caught]
    [message] = [m for m in messages if dists.name("broken") in m]
    assert f"distribution {bad} 0.7.2" in message
    assert "RuntimeError" in message and "kaboom at import" in message
    rec = dists.record(reg, "broken")
    assert rec.status == "failed" and "kaboom" in rec.reason
    assert dists.record(reg, "good").status == "loaded"
    good_p = sys.modules[prims].good_p
    np.testing.assert_array_equal(np.asarray(good_p.bind(np.float32(2.0))), 3.0)


def test_broken_import_strict_raises_naming_distribution(dists):
    broken = dists.module("broken", "import a_module_that_does_not_exist_anywhere\n")
    bad = dists.dist("baddist", "0.7.2", {"broken": broken})
    dists.allow("broken")
    dists.strict(True)
    with pytest.raises(plugax.PluginError, match=f"{bad} 0.7.2") as info:
        dists.load()
    assert "ModuleNotFoundError" in str(info.value)
    assert not isinstance(info.value, plugax.PluginConflictError)


def _duplicate(dists, overrides_b: bool = False):
    prims = dists.primitives("dup_p")
    dists.good("a", "dup_p", prims, offset=10)
    dists.good("b", "dup_p", prims, offset=20, overrides=overrides_b)
    dist_a = dists.dist("dista", "1.0", {"a": dists.name("a")})
    dist_b = dists.dist("distb", "2.5", {"b": dists.name("b")})
    dists.allow("a", "b")
    return sys.modules.get(prims) or importlib.import_module(prims), dist_a, dist_b


def test_duplicate_primitive_warns_naming_both_distributions(dists):
    mod, dist_a, dist_b = _duplicate(dists)
    with pytest.warns(PluginWarning, match="dup_p") as caught:
        dists.load()
    [message] = [str(w.message) for w in caught if "dup_p" in str(w.message)]
    assert f"{dist_a} 1.0" in message and f"{dist_b} 2.5" in message
    assert "overrides=True" in message
    # The first plugin (by entry-point name) keeps the primitive.
    np.testing.assert_array_equal(np.asarray(mod.dup_p.bind(np.float32(0.0))), 10.0)


def test_duplicate_primitive_strict_is_a_conflict_error(dists):
    _, dist_a, dist_b = _duplicate(dists)
    dists.strict(True)
    with pytest.raises(plugax.PluginConflictError) as info:
        dists.load()
    assert f"{dist_a} 1.0" in str(info.value) and f"{dist_b} 2.5" in str(info.value)
    assert isinstance(info.value, plugax.PluginError)


@pytest.mark.parametrize("strict", [False, True])
def test_duplicate_primitive_with_overrides_wins_silently(dists, strict):
    mod, _, dist_b = _duplicate(dists, overrides_b=True)
    dists.strict(strict)
    reg, warned = _load_quietly(dists)
    assert warned == []
    assert {dists.record(reg, n).status for n in ("a", "b")} == {"loaded"}
    np.testing.assert_array_equal(np.asarray(mod.dup_p.bind(np.float32(0.0))), 20.0)
    assert f"distribution {dist_b} 2.5" in R.rule_owner[mod.dup_p]


@pytest.mark.parametrize("strict", [False, True])
def test_incompatible_api_version_range(dists, strict):
    prims = dists.primitives("future_p")
    dists.good("future", "future_p", prims, api=(7, 9))
    dist = dists.dist("futuredist", "4.0", {"future": dists.name("future")})
    dists.allow("future")
    dists.strict(strict)
    if strict:
        with pytest.raises(plugax.PluginError, match=r"7\.\.9") as info:
            dists.load()
        assert f"{dist} 4.0" in str(info.value)
        return
    with pytest.warns(PluginWarning, match=r"7\.\.9"):
        reg = dists.load()
    rec = dists.record(reg, "future")
    assert rec.status == "failed"
    assert "7..9" in rec.reason and str(plugax.plugin_api_version) in rec.reason
    assert sys.modules[prims].future_p not in R.impl_rules


def test_missing_plugin_info_fails(dists):
    prims = dists.primitives("anon_p")
    mod = dists.module("anon", f"""
        import numpy as np
        from plugax.extend import RuleSet, ShapedArray, hookimpl
        from {prims} import anon_p

        @hookimpl
        def plugax_primitive_rules():
            return [RuleSet(anon_p, abstract_eval=lambda ctx, x: x, impl=lambda ctx, x: x)]
        """)
    dist = dists.dist("anondist", "0.1", {"anon": mod})
    dists.allow("anon")
    with pytest.warns(PluginWarning, match="plugax_plugin_info") as caught:
        reg = dists.load()
    assert any(f"{dist} 0.1" in str(w.message) for w in caught)
    assert dists.record(reg, "anon").status == "failed"
    assert sys.modules[prims].anon_p not in R.impl_rules


MALFORMED = {
    "no_rules": ("RuleSet(bad_p)", ["bad_p", "abstract_eval", "impl"]),
    "not_callable": ("RuleSet(bad_p, abstract_eval=lambda ctx, x: x, impl=lambda ctx, x: x, "
                     "jvp=42)", ["bad_p", "rule 'jvp' must be callable", "int"]),
    "not_a_ruleset": ("'bad_p is a string'", ["bad_p is a string", "expected a RuleSet",
                                              "str"]),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_ruleset_fails_naming_the_primitive(dists, case):
    item, expected = MALFORMED[case]
    prims = dists.primitives("bad_p", "fine_p")
    mod = dists.module("malformed", f"""
        from plugax.extend import PluginInfo, RuleSet, hookimpl
        from {prims} import bad_p, fine_p

        @hookimpl
        def plugax_plugin_info():
            return PluginInfo(name="malformed")

        @hookimpl
        def plugax_primitive_rules():
            return [RuleSet(fine_p, abstract_eval=lambda ctx, x: x, impl=lambda ctx, x: x),
                    {item}]
        """)
    dist = dists.dist("maldist", "0.0.1", {"malformed": mod})
    dists.allow("malformed")
    with pytest.warns(PluginWarning, match="malformed RuleSet") as caught:
        reg = dists.load()
    message = next(str(w.message) for w in caught if "malformed RuleSet" in str(w.message))
    assert f"{dist} 0.0.1" in message
    for fragment in expected:
        assert fragment in message
    rec = dists.record(reg, "malformed")
    assert rec.status == "failed"
    # The plugin is rejected as a whole: not even its well-formed primitive is installed.
    assert sys.modules[prims].fine_p not in R.impl_rules


def test_primitive_rules_hook_raising_fails(dists):
    mod = dists.module("raiser", """
        from plugax.extend import PluginInfo, hookimpl

        @hookimpl
        def plugax_plugin_info():
            return PluginInfo(name="raiser")

        @hookimpl
        def plugax_primitive_rules():
            raise KeyError("no table here")
        """)
    dists.dist("raisedist", "1.0", {"raiser": mod})
    dists.allow("raiser")
    with pytest.warns(PluginWarning, match="plugax_primitive_rules raised KeyError"):
        reg = dists.load()
    assert dists.record(reg, "raiser").status == "failed"


# --- allow and deny lists ---------------------------------------------------------------

def _two_plugins_one_exploding(dists):
    prims = dists.primitives("kept_p")
    dists.good("kept", "kept_p", prims)
    # Importing this module would fail: a disabled plugin must never be imported.
    boom = dists.module("boom", "raise SystemExit('imported a disabled plugin')\n")
    dists.dist("twodist", "1.0", {"kept": dists.name("kept"), "boom": boom})
    return boom


def test_disable_list(dists):
    boom = _two_plugins_one_exploding(dists)
    dists.allow("kept", "boom")
    dists.mp.setenv("PLUGAX_DISABLE_PLUGINS", f" {dists.name('boom')} , some_other")
    dists.strict(True)
    reg = dists.load()
    rec = dists.record(reg, "boom")
    assert rec.status == "disabled" and "PLUGAX_DISABLE_PLUGINS" in rec.reason
    assert boom not in sys.modules
    assert dists.record(reg, "kept").status == "loaded"
    assert dists.name("boom") not in reg.loaded_names()


def test_allow_list(dists):
    boom = _two_plugins_one_exploding(dists)
    dists.allow("kept")
    dists.strict(True)
    reg = dists.load()
    rec = dists.record(reg, "boom")
    assert rec.status == "disabled" and "not in PLUGAX_LOAD_PLUGINS" in rec.reason
    assert boom not in sys.modules
    assert reg.loaded_names() == [dists.name("kept")]
    # The installed families are not in the allow list either.
    assert all(r.status == "disabled" for n, r in reg.records.items()
               if not n.startswith(dists.tag))


def test_empty_allow_list_loads_nothing(dists):
    _two_plugins_one_exploding(dists)
    dists.mp.setenv("PLUGAX_LOAD_PLUGINS", "")
    reg = dists.load()
    assert reg.loaded_names() == []
    assert {r.status for r in reg.records.values()} == {"disabled"}
    assert R.impl_rules == {}


@pytest.mark.parametrize("strict", [False, True])
def test_missing_requirement(dists, strict):
    prims = dists.primitives("needy_p")
    dists.good("needy", "needy_p", prims, requires=("no_such_family",))
    dist = dists.dist("needydist", "5.0", {"needy": dists.name("needy")})
    dists.allow("needy")
    dists.strict(strict)
    if strict:
        with pytest.raises(plugax.PluginError, match="no_such_family") as info:
            dists.load()
        assert f"{dist} 5.0" in str(info.value)
        return
    with pytest.warns(PluginWarning, match="no_such_family") as caught:
        reg = dists.load()
    assert any(f"{dist} 5.0" in str(w.message) for w in caught)
    # Only a warning: the plugin itself is loaded and usable.
    assert dists.record(reg, "needy").status == "loaded"
    np.testing.assert_array_equal(
        np.asarray(sys.modules[prims].needy_p.bind(np.float32(1.0))), 1.0)


def test_satisfied_requirement_is_silent(dists):
    prims = dists.primitives("base_p", "top_p")
    dists.good("base", "base_p", prims)
    dists.good("top", "top_p", prims, requires=(dists.name("base"),))
    dists.dist("reqdist", "1.0", {"base": dists.name("base"), "top": dists.name("top")})
    dists.allow("base", "top")
    dists.strict(True)
    reg = dists.load()
    assert sorted(reg.loaded_names()) == sorted([dists.name("base"), dists.name("top")])


# --- the in-process registry: version, scoped, missing rules ----------------------------

only_p = Primitive("only_impl")


class OnlyImpl:
    """A primitive with impl and abstract_eval only: no jvp, no vmap."""

    @hookimpl
    def plugax_plugin_info(self) -> PluginInfo:
        return PluginInfo(name="onlyimpl")

    @hookimpl
    def plugax_primitive_rules(self) -> list:
        return [RuleSet(only_p, abstract_eval=lambda ctx, x: ShapedArray(x.shape, x.dtype),
                        impl=lambda ctx, x: np.asarray(x) * 3)]


def test_version_bumps_on_register_and_unregister():
    reg = plugax.registry
    v0 = reg.version
    with reg.scoped(OnlyImpl(), "onlyimpl"):
        v1 = reg.version
        assert v1 > v0
    assert reg.version > v1


def test_scoped_restores_tables():
    assert only_p not in R.impl_rules
    with plugax.registry.scoped(OnlyImpl(), "onlyimpl", distribution="od", version="2"):
        assert only_p in R.impl_rules and only_p in R.abstract_eval_rules
        assert "onlyimpl" in plugax.registry.loaded_names()
        np.testing.assert_array_equal(np.asarray(only_p.bind(np.float32(2.0))), 6.0)
    assert only_p not in R.impl_rules and only_p not in R.rule_owner
    assert "onlyimpl" not in plugax.registry.records
    with pytest.raises(plugax.MissingRuleError, match="no loaded plugin"):
        only_p.bind(np.float32(2.0))


def test_scoped_restores_tables_after_an_exception():
    with pytest.raises(ZeroDivisionError):
        with plugax.registry.scoped(OnlyImpl(), "onlyimpl"):
            1 / 0
    assert only_p not in R.impl_rules


@pytest.fixture
def only_impl():
    with plugax.registry.scoped(OnlyImpl(), "onlyimpl", distribution="onlydist",
                                version="9.9") as rec:
        yield rec


OWNER = "plugin 'onlyimpl' (distribution onlydist 9.9)"


def test_missing_jvp_rule(only_impl, toy):
    with pytest.raises(plugax.MissingRuleError) as info:
        plugax.jvp(lambda x: toy.sin(only_p.bind(x)), (np.float32(1.0),), (np.float32(1.0),))
    err = info.value
    assert isinstance(err, NotImplementedError)
    assert (err.primitive, err.rule_kind) == (only_p, "jvp")
    message = str(err)
    assert "'only_impl'" in message and "no jvp rule" in message
    assert "forward-mode" in message and OWNER in message
    assert current_trace() is eval_trace
    # The next call works, and the primitive still evaluates.
    _, t = plugax.jvp(toy.sin, (np.float32(0.0),), (np.float32(2.0),))
    np.testing.assert_allclose(np.asarray(t), 2.0)
    np.testing.assert_array_equal(np.asarray(only_p.bind(np.float32(1.0))), 3.0)


def test_missing_jvp_rule_is_not_needed_for_zero_tangents(only_impl, toy):
    # Only inputs with nonzero tangents need the rule: a closed-over value is just evaluated.
    c = np.float32(2.0)
    p, t = plugax.jvp(lambda x: toy.add_p.bind(x, only_p.bind(c)), (np.float32(1.0),),
                      (np.float32(1.0),))
    assert float(p) == 7.0 and float(t) == 1.0


def test_missing_vmap_rule(only_impl):
    with pytest.raises(plugax.MissingRuleError) as info:
        plugax.vmap(lambda x: only_p.bind(x))(np.arange(3, dtype=np.float32))
    message = str(info.value)
    assert info.value.rule_kind == "vmap"
    assert "no vmap rule" in message and "vmap (batching)" in message and OWNER in message
    assert current_trace() is eval_trace
    # Unbatched arguments don't need the rule.
    out = plugax.vmap(lambda x, y: only_p.bind(y), in_axes=(0, None), out_axes=None)(
        np.arange(3, dtype=np.float32), np.float32(2.0))
    np.testing.assert_array_equal(np.asarray(out), 6.0)


def test_missing_impl_after_unregistering_names_no_plugin():
    with plugax.registry.scoped(OnlyImpl(), "onlyimpl"):
        pass
    with pytest.raises(plugax.MissingRuleError) as info:
        only_p.bind(np.float32(1.0))
    assert info.value.rule_kind == "impl" and "evaluation" in str(info.value)
    assert current_trace() is eval_trace


def test_missing_rule_inside_make_jaxpr_of_jvp(only_impl, toy):
    with pytest.raises(plugax.MissingRuleError, match="no jvp rule"):
        plugax.make_jaxpr(lambda x: plugax.jvp(only_p.bind, (x,), (x,)))(np.float32(1.0))
    assert current_trace() is eval_trace
    jaxpr = plugax.make_jaxpr(lambda x: only_p.bind(toy.sin(x)))(np.float32(1.0))
    assert [str(e.primitive) for e in jaxpr.jaxpr.eqns] == ["sin", "only_impl"]
