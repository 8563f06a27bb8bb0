"""The kit's newer checks on toy primitives: second order, the dtype matrix, declared cases.

Like test_testing_kit.py, everything here runs with no primitive family loaded:
each check is shown to pass on correct rules and to fail, naming the rule, the
inputs and the error, on a deliberately wrong one.
"""
from __future__ import annotations

import numpy as np
import pytest

from plugax.core import rules as R
from plugax.extend import (PluginInfo, Primitive, RuleSet, ShapedArray, Transformation, Zero,
                           define_rule_kind, defjvp, defvectorized, hookimpl, is_undefined_primal,
                           same_dtypes)
from plugax.testing import (AbstractEvalMismatch, Case, JVPMismatch, RuleCheckError, check_case,
                            check_dtype_matrix, check_primitive, check_second_order,
                            declared_cases, plugin_cases, register_check, registry_restored,
                            scoped_plugin)
from plugax.testing import suite
from plugax.testing.traced import JIT_RULES

wsin_p, wcos_p, bad_cos_p = Primitive("wsin"), Primitive("wcos"), Primitive("bad_cos")
half_p, keyerr_p = Primitive("half"), Primitive("keyerr")
FLOATS = ("float16", "bfloat16", "float32", "float64")
floats_only = lambda prim: same_dtypes(prim, lambda d: d.kind == "f" or d.name == "bfloat16",
                                       "a floating-point dtype")


def _bad_cos_jvp(ctx, primals, tangents):
    """Right value, wrong derivative: claims cos is constant."""
    out = bad_cos_p.bind(*primals)
    return out, Zero.from_value(out)


def _keyerr_abstract_eval(ctx, x):
    return ShapedArray(x.shape, {np.dtype("float32"): np.dtype("float32")}[x.dtype])


class Toy:
    @hookimpl
    def plugax_plugin_info(self):
        return PluginInfo(name="toy-cases")

    @hookimpl
    def plugax_primitive_rules(self):
        mul = lambda a, b: wmul(a, b)
        return [
            defvectorized(wsin_p, np.sin, dtype_rule=floats_only(wsin_p),
                          jvp=defjvp(wsin_p, lambda g, ans, x: mul(g, wcos_p.bind(x)))),
            defvectorized(wcos_p, np.cos, dtype_rule=floats_only(wcos_p),
                          jvp=defjvp(wcos_p, lambda g, ans, x: mul(g, wneg(wsin_p.bind(x))))),
            defvectorized(bad_cos_p, np.cos, jvp=_bad_cos_jvp),
            # first derivative right (bad_cos has the right value), second wrong
            defvectorized(half_p, np.sin, dtype_rule=floats_only(half_p),
                          jvp=defjvp(half_p, lambda g, ans, x: mul(g, bad_cos_p.bind(x)))),
            RuleSet(keyerr_p, impl=lambda ctx, x: x, abstract_eval=_keyerr_abstract_eval),
            *TOY_ARITH,
        ]

    @hookimpl
    def plugax_test_cases(self):
        x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
        return [Case(wsin_p, x, second_order=True, dtypes=("int32",) + FLOATS,
                     accepted_dtypes=FLOATS),
                Case(wcos_p, x[0], id="wcos-row")]


wmul_p, wneg_p = Primitive("wmul"), Primitive("wneg")
wmul, wneg = wmul_p.bind, wneg_p.bind
TOY_ARITH = [
    RuleSet(wmul_p, impl=lambda ctx, x, y: x * y,
            abstract_eval=lambda ctx, x, y: ShapedArray(x.shape or y.shape, x.dtype,
                                                        x.weak_type and y.weak_type),
            jvp=lambda ctx, p, t: (wmul(*p), _add(_scale(t[0], p[1]), _scale(t[1], p[0]))),
            batching=lambda ctx, args, dims: _bmul(args, dims),
            transpose=lambda ctx, ct, x, y: [None if type(ct) is Zero else wmul(ct, y), None]
            if is_undefined_primal(x) else [None, None if type(ct) is Zero else wmul(x, ct)]),
    defvectorized(wneg_p, np.negative, transpose=lambda ctx, ct, x: [wneg(ct)],
                  jvp=lambda ctx, p, t: (wneg(*p), t[0] if type(t[0]) is Zero else wneg(t[0]))),
]


def _scale(t, y):
    return None if type(t) is Zero else wmul(t, y)


def _add(a, b):
    return b if a is None else a if b is None else wadd(a, b)


def _bmul(args, dims):
    # only used with both operands batched at the same axis, or one unbatched rank-0
    return wmul(*args), next(d for d in dims if d is not None)


wadd_p = Primitive("wadd")
wadd = wadd_p.bind
TOY_ARITH.append(RuleSet(wadd_p, impl=lambda ctx, x, y: x + y,
                         abstract_eval=lambda ctx, x, y: ShapedArray(x.shape, x.dtype)))


@pytest.fixture(scope="module", autouse=True)
def toy():
    with scoped_plugin(Toy(), "toy-cases") as record:
        yield record


X64 = np.linspace(-1.2, 1.3, 6).reshape(2, 3)


def test_second_order_passes_when_the_jvp_binds_primitives():
    check_second_order(wsin_p, X64)
    assert "second_order" in check_primitive(wsin_p, X64.astype(np.float32),
                                             rules=("jvp", "second_order"))


def test_second_order_catches_a_jvp_that_is_only_first_order_right():
    check_primitive(half_p, X64, rules=("jvp",))  # the first derivative is fine
    with pytest.raises(JVPMismatch) as info:
        check_second_order(half_p, X64)
    message = str(info.value)
    assert "jvp rule of primitive 'half'" in message and "second derivative" in message
    assert "x0=f64[2,3] (tangent)" in message and "max abs error" in message


def test_dtype_matrix_accepts_floats_and_rejects_integers_clearly():
    matrix = check_dtype_matrix(wsin_p, X64, accepted=FLOATS)
    assert {k for k, v in matrix.items() if v == "ok"} == set(FLOATS)
    assert matrix["int32"].startswith("rejected: ShapeError") and "wsin" in matrix["int32"]


def test_dtype_matrix_catches_an_undeclared_dtype_change():
    with pytest.raises(AbstractEvalMismatch, match="accepts a different set of dtypes") as info:
        check_dtype_matrix(wsin_p, X64, accepted=("float32",))
    assert "accepts bfloat16, float16, float64 (not in accepted=)" in str(info.value)


def test_dtype_matrix_catches_impl_returning_another_dtype():
    # same_dtypes accepts int32, but np.cos(int32) is float64: abstract_eval is wrong there
    with pytest.raises(AbstractEvalMismatch, match="dtype: abstract_eval says int32"):
        check_dtype_matrix(bad_cos_p, X64, dtypes=("float32", "int32"))


def test_dtype_matrix_names_a_bare_error():
    with pytest.raises(AbstractEvalMismatch, match="dtype float16 raised a bare KeyError"):
        check_dtype_matrix(keyerr_p, X64, dtypes=("float32", "float16"))


def test_declared_cases_come_from_the_hook_with_their_plugin():
    cases = declared_cases("toy-cases")
    assert [c.id for c in cases] == ["wsin[2x3]", "wcos-row"]
    assert {c.plugin for c in cases} == {"toy-cases"}
    eager = ["abstract_eval", "jvp", "vmap", "grad", "vmap_jvp", "vmap_grad"]
    ran = check_case(cases[0])
    assert [r for r in ran if r not in JIT_RULES] == [*eager, "second_order", "dtypes"]
    assert set(ran.skipped) | set(ran) >= set(JIT_RULES)   # run with jit, else skipped
    assert [r for r in cases[1].check() if r not in JIT_RULES] == eager
    assert [p.id for p in plugin_cases("toy-cases")] == ["toy-cases:wsin[2x3]",
                                                         "toy-cases:wcos-row"]


def test_declared_cases_of_an_unloaded_plugin_is_a_clear_error():
    with pytest.raises(LookupError, match="no-such-plugin not loaded.*toy-cases"):
        declared_cases("no-such-plugin")


def test_a_hook_returning_non_cases_is_named(plugax_registry):
    class Wrong:
        @hookimpl
        def plugax_plugin_info(self):
            return PluginInfo(name="wrong")

        @hookimpl
        def plugax_test_cases(self):
            return [(wsin_p, X64)]

    plugax_registry.register(Wrong(), "wrong", distribution="wrongdist", version="0.3")
    with pytest.raises(TypeError, match="wrongdist 0.3.*must return plugax.testing.Case.*tuple"):
        declared_cases("wrong")


def test_a_raising_test_cases_hook_is_contained_and_named(plugax_registry):
    """One plugin's broken plugax_test_cases hook fails one named case; the other
    plugins' cases are still collected."""
    from plugax.errors import PluginError
    from plugax.testing.cases import plugin_cases

    class Broken:
        @hookimpl
        def plugax_plugin_info(self):
            return PluginInfo(name="broken")

        @hookimpl
        def plugax_test_cases(self):
            raise RuntimeError("no cases today")

    plugax_registry.register(Broken(), "broken", distribution="brokendist", version="1.2")
    with pytest.raises(PluginError, match="brokendist 1.2.*plugax_test_cases raised "
                                          "RuntimeError: no cases today"):
        declared_cases("broken")
    params = plugin_cases()
    ids = [p.id for p in params]
    assert "broken:plugax_test_cases" in ids and len(ids) > 1
    failure = params[ids.index("broken:plugax_test_cases")].values[0]
    with pytest.raises(PluginError, match="brokendist"):
        check_case(failure)


def test_register_check_extends_check_primitive():
    seen = []
    register_check("toy_extra", lambda prim, *args, **params: seen.append((prim, params)),
                   table=R.impl_rules)
    try:
        assert check_primitive(wsin_p, X64, rules=("toy_extra",), k=1) == ["toy_extra"]
        assert seen == [(wsin_p, {"k": 1})]
        with pytest.raises(ValueError, match="unknown rule check"):
            check_primitive(wsin_p, X64, rules=("nope",))
    finally:
        suite._REGISTRY.pop("toy_extra")


def test_registry_restored_restores_every_rule_table():
    # hooks run again on rebuild (fresh closures), so compare which rules exist
    snapshot = {kind: set(table) for kind, table in R.all_tables().items()}
    owners = dict(R.rule_owner)
    with registry_restored() as registry:
        registry.unregister("toy-cases")
        assert wsin_p not in R.impl_rules
    assert {kind: set(table) for kind, table in R.all_tables().items()} == snapshot
    assert R.rule_owner == owners
    assert np.allclose(np.asarray(wsin_p.bind(np.float32(0.5))), np.sin(0.5))


# --- third-party transformations: their Transformation.check runs on every case -----------
RULES = ("abstract_eval", "jvp", "vmap")
checked = []


@pytest.fixture
def toy_jet_rules():
    """A rule kind of a toy third-party transformation, defined for one test (the kinds
    are global: `plugax plugins` would list it for every later test)."""
    yield define_rule_kind("kit_toy_jet", ("ctx", "primals", "series"),
                           doc="a toy Taylor rule", defined_by="toy-jet-dist")
    R.rule_kinds.pop("kit_toy_jet")


def _toy_jet_check(case):
    """The toy transformation's agreement: its rule gives the primitive's value."""
    rule = R.rule_kinds["kit_toy_jet"].table[case.prim]
    got, want = rule(None, case.args, []), case.prim.bind(*case.args, **case.params)
    if not np.allclose(np.asarray(got), np.asarray(want)):
        raise AssertionError(f"kit_toy_jet rule of primitive '{case.prim.name}' is wrong")
    checked.append(case.prim.name)


class ToyJet:
    @hookimpl
    def plugax_plugin_info(self):
        return PluginInfo(name="toy-jet")

    @hookimpl
    def plugax_transformations(self):
        return [Transformation("kit_toy_jet", "kit_toy_jet", "toy", check=_toy_jet_check)]

    @hookimpl
    def plugax_primitive_rules(self):
        return [RuleSet(wsin_p, kit_toy_jet=lambda ctx, primals, series: np.sin(primals[0])),
                RuleSet(wneg_p, kit_toy_jet=lambda ctx, primals, series: primals[0]),   # wrong
                RuleSet(wcos_p, kit_toy_jet=lambda ctx, primals, series: 1 / 0)]


def test_third_party_checks_run_for_primitives_with_their_rule(toy_jet_rules):
    checked.clear()
    with scoped_plugin(ToyJet(), "toy-jet"):
        assert check_primitive(wsin_p, X64)[-1] == "kit_toy_jet"
        assert "kit_toy_jet" not in check_primitive(half_p, X64)   # no rule of its kind
        assert "kit_toy_jet" not in check_primitive(wsin_p, X64, rules=RULES)   # not named
        assert check_primitive(wsin_p, X64, rules=("abstract_eval", "kit_toy_jet")) == \
            ["abstract_eval", "kit_toy_jet"]
        assert check_case(Case(wsin_p, X64[0]))[-1] == "kit_toy_jet"
        assert checked == ["wsin", "wsin", "wsin"]
        with pytest.raises(AssertionError, match="kit_toy_jet rule of primitive 'wneg' is wrong"):
            check_primitive(wneg_p, X64, rules=RULES + ("kit_toy_jet",))
        with pytest.raises(RuleCheckError) as info:
            check_primitive(wcos_p, X64, rules=("kit_toy_jet",))
    msg = str(info.value)
    assert "kit_toy_jet check of primitive 'wcos'" in msg and "ZeroDivisionError" in msg
    assert "transformation 'kit_toy_jet' (rule kind 'kit_toy_jet') of plugin 'toy-jet'" in msg
    assert "kit_toy_jet" not in check_primitive(wsin_p, X64)   # unloaded with its plugin
