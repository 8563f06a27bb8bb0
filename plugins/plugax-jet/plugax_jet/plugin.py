"""Hook implementations of plugax-jet (entry point `jet` in group `plugax`).

Three contributions make a transformation a plugin like a primitive family:

1. the rule kind `jet`, defined when this module is imported (before the
   registry reads any hook), so RuleSets anywhere may give ``jet=``;
2. the `Transformation` record: its rule kind, trace, jaxpr form, how a
   rule is derived from an `expand`, and its check for the kit;
3. additive RuleSets, ``RuleSet(get_primitive("sin"), jet=...)``, for the
   primitives other plugins define. Primitives are looked up by name when the
   hook runs, and names no loaded plugin defines are skipped, so the rules
   follow a primitive to whichever family defines it and plugax-jet loads with
   any subset of families.
"""
from __future__ import annotations

from typing import Any

from plugax.extend import PluginInfo, RuleSet, Transformation, define_rule_kind, \
    get_primitive, hookimpl

from . import __version__, rules_arrays, rules_control_flow, rules_elementwise
from .derive import check_jet, derive_jet_rule
from .frontend import jet, zero_series, zero_term
from .trace import JetTrace, trace_jet_jaxpr

JET_RULES = define_rule_kind(
    "jet", ("ctx", "primals_in", "series_in"), defined_by="plugax-jet",
    doc="Taylor-mode differentiation: (primal_out, series_out) from primals and their "
        "Taylor coefficients")

MAKERS = {**rules_elementwise.MAKERS, **rules_arrays.MAKERS, **rules_control_flow.MAKERS}


@hookimpl
def plugax_plugin_info() -> PluginInfo:
    # The rules compute with the elementwise family's operators and plugax.numpy's
    # where/sum/expand_dims/zeros_like (elementwise, reductions, shape). Rules for the
    # dot, control-flow and jit primitives are given only when those plugins are loaded.
    return PluginInfo(name="jet", api_versions=(2, 2), version=__version__,
                      requires=("elementwise", "reductions", "shape"),
                      description="Taylor-mode differentiation (jax.experimental.jet)")


@hookimpl
def plugax_transformations() -> list[Transformation]:
    return [Transformation(
        name="jet", rule_kind="jet",
        description="Taylor-mode differentiation: truncated Taylor series through a function",
        trace=JetTrace, jaxpr_transform=trace_jet_jaxpr, derive=derive_jet_rule,
        check=check_jet)]


@hookimpl
def plugax_primitive_rules() -> list[RuleSet]:
    rulesets = []
    for name, make in MAKERS.items():
        try:
            prim = get_primitive(name)
        except LookupError:   # no loaded plugin defines it: nothing to add a rule to
            continue
        rulesets.append(RuleSet(prim, jet=make(prim)))
    return rulesets


@hookimpl
def plugax_frontend() -> dict[str, dict[str, Any]]:
    return {"experimental.jet": {"jet": jet, "zero_series": zero_series,
                                 "zero_term": zero_term}}
