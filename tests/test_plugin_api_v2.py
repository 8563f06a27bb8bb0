"""Plugin API version 2: rule kinds as records, additive RuleSets, names identified by
primitive name, signature checks at load, transformations through a hook, and clear
errors for version-1 code. Kernel tests: toy primitives only (see conftest.py)."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import plugax
import plugax.lax
from plugax import cli
from plugax.core import rules as R
from plugax.errors import PluginAPIVersionError, PluginConflictError
from plugax.extend import (PluginInfo, Primitive, RuleSet, ShapedArray, Transformation,
                           define_rule_kind, get_primitive, hookimpl)
from plugax.loader.registry import PluginWarning
from plugax.testing import scoped_plugin


def _abstract_eval(ctx, x, **params):
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _defining(prim: Primitive, **rules) -> RuleSet:
    return RuleSet(prim, abstract_eval=_abstract_eval,
                   impl=lambda ctx, x: np.asarray(x) * 2, **rules)


class Plugin:
    """A plugin whose hooks return what it was built with."""

    def __init__(self, name: str, rulesets=(), transformations=(), api=(2, 2)):
        self.name, self.rulesets, self.transformations_ = name, list(rulesets), list(transformations)
        self.api = api

    @hookimpl
    def plugax_plugin_info(self) -> PluginInfo:
        return PluginInfo(name=self.name, api_versions=self.api)

    @hookimpl
    def plugax_primitive_rules(self) -> list:
        return self.rulesets

    @hookimpl
    def plugax_transformations(self) -> list:
        return self.transformations_


def _register_lenient(plugin, name, distribution):
    """Register, expecting a refusal: returns the record and the PluginWarning text."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        record = plugax.registry.register(plugin, name, distribution=distribution,
                                          version="1.0")
    return record, " ".join(str(w.message) for w in caught if w.category is PluginWarning)


@pytest.fixture
def lenient(monkeypatch):
    monkeypatch.delenv("PLUGAX_STRICT_PLUGINS", raising=False)
    names = []
    yield names
    for name in names:
        plugax.registry.unregister(name)


# --- version-1 code gets errors that say what changed ------------------------------------

@pytest.mark.parametrize("kind, says", [
    ("vmap", "is called 'batching'"),
    ("weak_type", "abstract_eval rule's weak_type is the only source"),
    ("partial_eval_jaxpr", "was removed"),
])
def test_version_1_rule_kinds_are_refused_with_what_changed(kind, says):
    with pytest.raises(PluginAPIVersionError, match=says) as info:
        RuleSet(Primitive("old"), **{kind: lambda *a: None})
    assert "RuleSet(old" in str(info.value) and "Changes in version 2" in str(info.value)


def test_a_version_1_plugin_is_refused_naming_the_changes(lenient):
    lenient.append("oldplugin")
    record, warned = _register_lenient(Plugin("oldplugin", api=(1, 1)), "oldplugin", "old-dist")
    assert record.status == "failed"
    for fragment in ("versions 1..1", "provides version 2", "'vmap' is called 'batching'",
                     "context first", "old-dist"):
        assert fragment in record.reason + warned


# --- signatures are checked when the plugin loads ------------------------------------------

@pytest.mark.parametrize("rules, fragment", [
    ({"jvp": lambda primals, tangents: None}, "jvp rule"),
    ({"batching": lambda ctx, args: None}, "batching rule"),
    ({"transpose": lambda ct: None}, "transpose rule"),
    ({"impl": lambda: None}, "impl rule"),
    ({"jvp": lambda ctx, primals, tangents, extra: None}, "requires 4 positional"),
])
def test_wrong_rule_signatures_fail_naming_plugin_primitive_and_kind(lenient, rules, fragment):
    prim = Primitive("sig_checked")
    rs = RuleSet(prim, abstract_eval=_abstract_eval, **{"impl": lambda ctx, x: x, **rules})
    lenient.append("sigplugin")
    record, warned = _register_lenient(Plugin("sigplugin", [rs]), "sigplugin", "sig-dist")
    assert record.status == "failed"
    assert "primitive 'sig_checked'" in record.reason and fragment in record.reason
    assert "plugin 'sigplugin' (distribution sig-dist" in warned


def test_rules_with_keyword_params_and_defaults_pass_the_signature_check(lenient):
    prim = Primitive("kw_ok")
    rs = RuleSet(prim, abstract_eval=lambda ctx, x, *, k=1: _abstract_eval(ctx, x),
                 impl=lambda ctx, *xs, k=1: xs[0],
                 jvp=lambda ctx, primals, tangents, *, k=1, extra=None: (primals[0], tangents[0]),
                 batching=lambda ctx, args, dims, **params: (args[0], dims[0]))
    lenient.append("kwplugin")
    record, _ = _register_lenient(Plugin("kwplugin", [rs]), "kwplugin", "kw-dist")
    assert record.status == "loaded"


# --- a primitive is identified by its name -------------------------------------------------

def test_a_second_definition_of_a_taken_name_is_refused_naming_both(toy, lenient):
    other_sin = Primitive("sin")        # a different object with a taken name
    lenient.append("second")
    record, warned = _register_lenient(Plugin("second", [_defining(other_sin)]), "second",
                                       "second-dist")
    assert record.status == "failed"
    assert "primitive 'sin' is already defined by plugin 'toy' (distribution toy-dist" \
        in record.reason
    assert "second-dist" in warned and "overrides=True" in record.reason
    assert np.allclose(np.asarray(toy.sin(0.5)), np.sin(0.5))   # the first one still works


def test_strict_mode_stops_on_a_taken_name(toy, monkeypatch):
    monkeypatch.setenv("PLUGAX_STRICT_PLUGINS", "1")
    try:
        with pytest.raises(PluginConflictError, match="already defined by plugin 'toy'"):
            plugax.registry.register(Plugin("strict2", [_defining(Primitive("sin"))]),
                                     "strict2", distribution="strict-dist")
    finally:
        plugax.registry.unregister("strict2")
    assert np.allclose(np.asarray(toy.sin(0.5)), np.sin(0.5))


def test_overriding_with_another_object_of_the_same_name_is_refused(toy, lenient):
    rs = RuleSet(Primitive("sin"), impl=lambda ctx, x: np.asarray(x) * 0, overrides=True)
    lenient.append("imposter")
    record, _ = _register_lenient(Plugin("imposter", [rs]), "imposter", "imp-dist")
    assert record.status == "failed"
    assert "different Primitive object" in record.reason and "get_primitive('sin')" \
        in record.reason


def test_an_override_replaces_only_the_rules_it_gives(toy):
    rs = RuleSet(get_primitive("sin"), impl=lambda ctx, x: np.asarray(np.sin(x) + 10),
                 overrides=True)
    with scoped_plugin(Plugin("over", [rs]), "over"):
        assert np.allclose(np.asarray(toy.sin(0.0)), 10.0)
        assert R.rule_origin[(toy.sin_p, "jvp")] == "own"      # kept from the definer
        _, t = plugax.jvp(toy.sin, (0.0,), (1.0,))
        assert np.allclose(np.asarray(t), 1.0)                  # cos(0): the toy's jvp
        assert R.rule_origin[(toy.sin_p, "impl")] == "from over"
    assert np.allclose(np.asarray(toy.sin(0.0)), 0.0)


def test_additive_rulesets_add_kinds_and_conflict_per_kind(toy, lenient):
    kind = define_rule_kind("toykind", ("ctx", "x"), defined_by="test")
    adder = RuleSet(toy.sin_p, toykind=lambda ctx, x: ("sin-rule", x))
    with scoped_plugin(Plugin("adder", [adder]), "adder"):
        assert kind[toy.sin_p](None, 1) == ("sin-rule", 1)
        lenient.append("adder2")
        record, warned = _register_lenient(
            Plugin("adder2", [RuleSet(toy.sin_p, toykind=lambda ctx, x: None)]), "adder2",
            "adder2-dist")
        assert record.status == "failed"
        assert "gives a toykind rule for primitive 'sin'" in record.reason
        assert "plugin 'adder'" in record.reason and "overrides=True" in record.reason
    assert toy.sin_p not in kind


def test_rules_for_a_primitive_nobody_defines_are_refused(lenient):
    lenient.append("orphan")
    record, _ = _register_lenient(
        Plugin("orphan", [RuleSet(Primitive("nobody"), jvp=lambda ctx, p, t: None)]),
        "orphan", "orphan-dist")
    assert record.status == "failed" and "no loaded plugin defines" in record.reason


def test_unknown_rule_kinds_are_refused_listing_the_defined_ones(toy, lenient):
    lenient.append("typo")
    record, _ = _register_lenient(
        Plugin("typo", [RuleSet(toy.cos_p, jte=lambda ctx, p, s: None)]), "typo", "typo-dist")
    assert record.status == "failed"
    assert "unknown rule kind 'jte'" in record.reason and "batching" in record.reason


def test_redefining_a_rule_kind_with_another_signature_names_both_definers():
    define_rule_kind("twice_defined", ("ctx", "a"), defined_by="first-dist")
    assert define_rule_kind("twice_defined", ("ctx", "a"), defined_by="again") is \
        R.rule_kinds["twice_defined"].table
    with pytest.raises(ValueError, match="already defined by first-dist.*second-dist"):
        define_rule_kind("twice_defined", ("ctx", "a", "b"), defined_by="second-dist")


def test_primitive_handles_follow_the_loaded_plugins(toy):
    assert plugax.lax.sin_p is toy.sin_p and get_primitive("gt") is toy.gt_p
    with pytest.raises(LookupError, match="no loaded plugin defines a primitive named 'nope'"):
        get_primitive("nope")


# --- transformations are plugins -------------------------------------------------------------

def _double_transformation(kind_name="double"):
    define_rule_kind(kind_name, ("ctx", "x"), defined_by="test")

    def derive(prim, expand):
        return lambda ctx, x: ("derived", prim.name)
    return Transformation(kind_name, kind_name, "a test transformation", derive=derive)


def test_a_third_party_transformation_gets_rules_derived_from_decompositions(toy):
    composite = Primitive("sin_twice")
    expand_rs = RuleSet(composite, expand=lambda ctx, x: toy.sin(toy.sin(x)))
    plugin = Plugin("doubler", [expand_rs], [_double_transformation()])
    with scoped_plugin(plugin, "doubler"):
        table = R.rule_kinds["double"].table
        assert table[composite](None, 1.0) == ("derived", "sin_twice")
        assert np.allclose(np.asarray(composite.bind(0.3)), np.sin(np.sin(0.3)))
        # the built-in transformations derived theirs too (jvp of the expansion)
        _, t = plugax.jvp(composite.bind, (0.3,), (1.0,))
        assert np.allclose(np.asarray(t), np.cos(np.sin(0.3)) * np.cos(0.3))
        data = cli.collect()
        names = {t["name"]: t for t in data["transformations"]}
        assert names["double"]["plugin"] == "doubler" and names["double"]["rule_kind"] == "double"
        assert {"jvp", "vmap", "transpose", "eval", "lowering"} <= set(names)
        row = next(r for r in data["coverage"] if r["primitive"] == "sin_twice")
        assert row["double"] == "derived" and row["jvp"] == "derived"
        json.dumps(data)   # JSON-ready


def test_a_transformation_name_taken_twice_refuses_the_later_plugin(lenient):
    with scoped_plugin(Plugin("t1", [], [_double_transformation("twin")]), "t1"):
        lenient.append("t2")
        record, _ = _register_lenient(Plugin("t2", [], [_double_transformation("twin")]), "t2",
                                      "t2-dist")
        assert record.status == "failed"
        assert "transformation 'twin' is already contributed by plugin 't1'" in record.reason


def test_a_transformation_of_an_undefined_rule_kind_is_refused(lenient):
    lenient.append("t3")
    record, _ = _register_lenient(
        Plugin("t3", [], [Transformation("ghost", "no_such_kind")]), "t3", "t3-dist")
    assert record.status == "failed" and "rule kind 'no_such_kind'" in record.reason


def test_builtin_transformations_are_registered_like_any_other():
    records = plugax.registry.records
    assert records["transformations"].status == "loaded"
    kinds = {t.name: t.rule_kind for t, _ in plugax.registry.transformations.values()}
    assert kinds["vmap"] == "batching" and kinds["jvp"] == "jvp" and kinds["eval"] == "impl"
    assert all(rec is records["transformations"]
               for _, rec in plugax.registry.transformations.values()
               if _.name in ("eval", "jvp", "vmap", "transpose", "partial_eval", "lowering"))
