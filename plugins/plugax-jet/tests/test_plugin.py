"""plugax-jet is a plugin like any other: found by entry point, contributing a rule kind,
a Transformation and rules for other plugins' primitives, checked by the kit."""
import json
import pathlib
import subprocess
import sys
from importlib import metadata

import numpy as np
import pytest

import plugax
import plugax.numpy as jnp
from plugax.extend import (PluginInfo, Primitive, RuleSet, ShapedArray, get_primitive,
                           hookimpl, rule_kinds)
from plugax.experimental.jet import jet
from plugax.testing import declared_cases, scoped_plugin
from plugax.testing.imports import check_public_imports
from plugax_jet.derive import JetMismatch, check_jet
from plugax_jet.trace import JetTrace

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "plugax_jet"


def test_found_through_its_entry_point_with_its_transformation():
    [ep] = [e for e in metadata.entry_points(group="plugax") if e.name == "jet"]
    assert ep.value == "plugax_jet.plugin" and ep.dist.name == "plugax-jet"
    record = plugax.registry.records["jet"]
    assert (record.status, record.distribution, record.transformations) == \
        ("loaded", "plugax-jet", ["jet"])
    transformation, owner = plugax.registry.transformations["jet"]
    assert owner is record and transformation.rule_kind == "jet"
    assert transformation.trace is JetTrace and transformation.check is check_jet
    kind = rule_kinds["jet"]
    assert kind.defined_by == "plugax-jet" and kind.positional == ("ctx", "primals_in",
                                                                   "series_in")


def test_rules_are_added_to_other_families_primitives():
    table = rule_kinds["jet"].table
    for name in ("sin", "mul", "reduce_sum", "reduce_max", "broadcast_in_dim", "dot_general",
                 "cond", "scan", "while", "pjit"):
        assert get_primitive(name) in table, name
    # added, not defined: sin still belongs to its family, and gained only a jet rule
    assert plugax.registry.records["jet"].primitives == []


def test_plugax_plugins_json_shows_the_transformation_and_jet_coverage():
    out = subprocess.run([sys.executable, "-m", "plugax", "plugins", "--json"],
                         capture_output=True, text=True, check=True).stdout
    data = json.loads(out)
    [t] = [t for t in data["transformations"] if t["name"] == "jet"]
    assert (t["rule_kind"], t["plugin"], t["distribution"]) == ("jet", "jet", "plugax-jet")
    rows = {r["primitive"]: r for r in data["coverage"]}
    assert rows["sin"]["jet"] == "from jet" and rows["dot_general"]["jet"] == "from jet"
    assert rows["custom_jvp_call"]["jet"] == "derived"       # from its expand
    assert rows["custom_lin"]["jet"] == "-"                   # no forward meaning: no rule


class _Composite:
    """A third party's primitive given only as a decomposition, and one with its own rule."""
    sinexp = Primitive("sin_of_exp")
    cube = Primitive("cube_with_jet")

    @hookimpl
    def plugax_plugin_info(self):
        return PluginInfo(name="composite", requires=("elementwise",))

    @hookimpl
    def plugax_primitive_rules(self):
        cube = self.cube
        return [
            RuleSet(self.sinexp, expand=lambda ctx, x: jnp.sin(jnp.exp(x))),
            RuleSet(cube, impl=lambda ctx, x: x ** 3,
                    abstract_eval=lambda ctx, x: ShapedArray(x.shape, x.dtype),
                    jvp=lambda ctx, p, t: (cube.bind(p[0]), 3 * p[0] ** 2 * t[0]),
                    # a deliberately wrong jet rule, for the kit to catch
                    jet=lambda ctx, primals, series: (cube.bind(primals[0]),
                                                      [3 * primals[0] ** 2 * s
                                                       for s in series[0]]))]


def test_a_decomposition_gets_a_derived_jet_rule_and_a_wrong_rule_is_caught():
    from plugax.testing import Case
    x = np.array([0.3, -0.2])
    with scoped_plugin(_Composite(), "composite"):
        from plugax.core import rules as R      # test-only: where the origin is recorded
        assert R.rule_origin[(_Composite.sinexp, "jet")] == "derived"
        _, s = jet(_Composite.sinexp.bind, (x,), ([np.ones(2), np.zeros(2)],))
        _, want = jet(lambda v: jnp.sin(jnp.exp(v)), (x,), ([np.ones(2), np.zeros(2)],))
        np.testing.assert_allclose(np.asarray(s[1]), np.asarray(want[1]), rtol=1e-12)
        assert check_jet(Case(_Composite.sinexp, x)) == ["jet"]
        with pytest.raises(JetMismatch, match="jet rule of primitive 'cube_with_jet' "
                                              "disagrees with nested jvp at order 2"):
            check_jet(Case(_Composite.cube, x))


def test_rules_for_a_primitive_defined_by_a_later_plugin_are_found():
    """get_primitive inside the hook sees definitions of plugins answering later too."""
    late = Primitive("defined_later")

    class Adder:
        @hookimpl
        def plugax_plugin_info(self):
            return PluginInfo(name="aaa_adder")

        @hookimpl
        def plugax_primitive_rules(self):
            try:
                return [RuleSet(get_primitive("defined_later"),
                                jet=lambda ctx, p, s: (p[0], s[0]))]
            except LookupError:
                return []

    class Definer:
        @hookimpl
        def plugax_plugin_info(self):
            return PluginInfo(name="zzz_definer")

        @hookimpl
        def plugax_primitive_rules(self):
            return [RuleSet(late, impl=lambda ctx, x: x,
                            abstract_eval=lambda ctx, x: ShapedArray(x.shape, x.dtype))]

    with scoped_plugin(Adder(), "aaa_adder"), scoped_plugin(Definer(), "zzz_definer"):
        assert late in rule_kinds["jet"].table


def test_kit_check_passes_on_the_declared_cases():
    from plugax.testing import SkipCheck
    ran = []
    for case in declared_cases("elementwise"):
        try:
            ran += [case.id] if check_jet(case) else []
        except SkipCheck:
            pass
    assert len(ran) >= 5, f"the jet check ran on too few cases: {ran}"


X2 = np.array([[0.3, -0.7, 1.2], [0.5, 0.1, -0.4]])


@pytest.mark.parametrize("name, args, params", [
    ("reduce_sum", (X2,), {"axes": (1,)}),
    ("reduce_max", (X2,), {"axes": (0,)}),
    ("reduce_prod", (X2,), {"axes": (0, 1)}),
    ("cumsum", (X2,), {"axis": 1, "reverse": False}),
    ("transpose", (X2,), {"permutation": (1, 0)}),
    ("reshape", (X2,), {"new_sizes": (3, 2), "dimensions": None}),
    ("dot_general", (X2, X2.T), {"dimension_numbers": (((1,), (0,)), ((), ())),
                                 "preferred_element_type": np.dtype("float64")}),
])
def test_kit_check_on_other_families_primitives(name, args, params):
    from plugax.testing import Case
    assert check_jet(Case(get_primitive(name), *args, **params)) == ["jet"]


def test_sources_import_only_the_public_api():
    """The same scan tests/test_plugin_imports.py runs over every plugin (plugax.testing's):
    only plugax.extend, the front ends and the user-level API; derive.py's check imports
    plugax.testing inside the function, which runs under the kit."""
    assert len(sorted(PACKAGE.glob("*.py"))) >= 8
    check_public_imports(PACKAGE)
