"""Issue 13, item 6: every lowering rule's result is checked against the primitive's
abstract values (count, shape, dtype) as the jaxpr is lowered.

Without the check a wrong result fails far from its cause: in MLIR's verifier,
or in the next equation's builder, with text naming neither primitive nor
plugin. Each test registers a toy primitive in-process whose lowering rule
makes one mistake, jits a function using it, and asserts the error names the
primitive, the rule (lowering, platform), the plugin that gave it, and what
was expected against what came back. Correct rules, written in each of the
accepted forms, compile and agree with eager evaluation.
"""
from __future__ import annotations

import numpy as np
import pytest

import plugax
import plugax.extend
from plugax.extend import PluginInfo, Primitive, RuleSet, ShapedArray, hookimpl
from plugax.lowering import LoweringRuleError
from plugax.testing import scoped_plugin

twice_p = Primitive("lowcheck_twice")                        # x -> 2 x
pair_p = Primitive("lowcheck_pair", multiple_results=True)   # x -> [x, 2 x]

X = np.array([1.0, -2.0, 3.0], np.float32)


def _same(ctx, x, **params):
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _twice_rules(lowering: dict) -> RuleSet:
    return RuleSet(twice_p, abstract_eval=_same, impl=lambda ctx, x: np.asarray(x * 2, x.dtype),
                   lowering=lowering)


def _pair_rules(lowering: dict) -> RuleSet:
    return RuleSet(pair_p, abstract_eval=lambda ctx, x: [_same(ctx, x), _same(ctx, x)],
                   impl=lambda ctx, x: [np.asarray(x), np.asarray(x * 2, x.dtype)],
                   lowering=lowering)


class Plugin:
    def __init__(self, name: str, rulesets: list):
        self.name, self.rulesets = name, rulesets

    @hookimpl
    def plugax_plugin_info(self) -> PluginInfo:
        return PluginInfo(name=self.name)

    @hookimpl
    def plugax_primitive_rules(self) -> list:
        return self.rulesets


def _double(ctx, x):
    return ctx.hlo.add(x, x)


def _jit_twice(x=X):
    return plugax.jit(lambda v: twice_p.bind(v))(x)


def _jit_pair(x=X):
    return plugax.jit(lambda v: pair_p.bind(v))(x)


def _error_of(run, plugin: Plugin) -> str:
    with scoped_plugin(plugin, plugin.name):
        with pytest.raises(LoweringRuleError) as info:
            run()
    message = str(info.value)
    assert f"plugin '{plugin.name}'" in message, message
    return message


# --- each mistake gives the named error ------------------------------------------------

def test_too_many_results_for_a_single_result_primitive():
    message = _error_of(_jit_twice, Plugin("lc_count", [_twice_rules(
        {"default": lambda ctx, x: [_double(ctx, x), x]})]))
    assert "primitive 'lowcheck_twice'" in message
    assert "lowering rule (platform 'default')" in message
    assert "returned 2 values for 1 output (f32[3])" in message


def test_too_few_results_for_a_multiple_results_primitive():
    message = _error_of(_jit_pair, Plugin("lc_count2", [_pair_rules(
        {"default": lambda ctx, x: [x]})]))
    assert "primitive 'lowcheck_pair'" in message
    assert "returned 1 value for 2 outputs (f32[3], f32[3])" in message


def test_wrong_shape():
    def bad(ctx, x):   # broadcast to (2, 3) where abstract_eval says (3,)
        return ctx.broadcast_in_dim(_double(ctx, x), np.float32, (2, 3), (1,))
    message = _error_of(_jit_twice, Plugin("lc_shape", [_twice_rules({"default": bad})]))
    assert "type tensor<2x3xf32> as output 0" in message
    assert "abstract value there is f32[3], so expected tensor<3xf32>" in message


def test_wrong_dtype():
    def bad(ctx, x):   # an int32 result where abstract_eval says float32
        return ctx.hlo.convert(ctx.ir_type(ShapedArray((3,), np.dtype(np.int32))), x)
    message = _error_of(_jit_twice, Plugin("lc_dtype", [_twice_rules({"default": bad})]))
    assert "type tensor<3xi32> as output 0" in message
    assert "expected tensor<3xf32>" in message


def test_wrong_dtype_in_the_second_result_of_a_multiple_results_primitive():
    def bad(ctx, x):
        return [x, ctx.hlo.convert(ctx.ir_type(ShapedArray((3,), np.dtype(np.float16))), x)]
    message = _error_of(_jit_pair, Plugin("lc_dtype2", [_pair_rules({"default": bad})]))
    assert "type tensor<3xf16> as output 1" in message
    assert "expected tensor<3xf32>" in message


def test_a_bare_value_for_a_multiple_results_primitive_is_not_a_list():
    message = _error_of(_jit_pair, Plugin("lc_bare", [_pair_rules(
        {"default": lambda ctx, x: x})]))
    assert "returned a single MLIR value (of type tensor<3xf32>); it must return a list of MLIR "\
           "values, one per output" in message


@pytest.mark.parametrize("returned, described", [
    (lambda ctx, x: None, "returned None"),
    (lambda ctx, x: np.float32(2.0), "returned a numpy.float32"),
    (lambda ctx, x: {"out": x}, "returned a builtins.dict"),
], ids=["None", "numpy", "dict"])
def test_something_other_than_mlir_values(returned, described):
    message = _error_of(_jit_twice, Plugin("lc_junk", [_twice_rules({"default": returned})]))
    assert described in message
    assert "an MLIR value (or a list holding one)" in message or "expected an MLIR value" \
        in message


def test_a_list_holding_a_non_value():
    message = _error_of(_jit_pair, Plugin("lc_list", [_pair_rules(
        {"default": lambda ctx, x: [x, 2.0]})]))
    assert "returned 2.0 as output 1; expected an MLIR value of type tensor<3xf32>" in message


def test_the_error_names_the_platform_the_rule_was_given_for():
    platform = plugax.extend.runtime().backend().platform     # what jit lowers for
    bad = {platform: lambda ctx, x: [x, x], "default": _double}
    message = _error_of(_jit_twice, Plugin("lc_platform", [_twice_rules(bad)]))
    assert f"lowering rule (platform '{platform}')" in message


def test_an_overriding_plugin_is_named_with_the_plugin_it_overrides():
    over = RuleSet(twice_p, lowering={"default": lambda ctx, x: [x, x]}, overrides=True)
    with scoped_plugin(Plugin("lc_owner", [_twice_rules({"default": _double})]), "lc_owner"):
        with scoped_plugin(Plugin("lc_over", [over]), "lc_over"):
            with pytest.raises(LoweringRuleError) as info:
                _jit_twice()
        np.testing.assert_allclose(np.asarray(_jit_twice()), X * 2)   # its own rule again
    message = str(info.value)
    assert "given by plugin 'lc_over', overriding the rules of plugin 'lc_owner'" in message


def test_the_error_comes_from_a_nested_jaxpr_too():
    """A rule lowering a sub-jaxpr (ctx.lower_fun, as control flow does) checks the inner
    equations the same way, so the error names the inner primitive, not the outer one."""
    wrapper_p = Primitive("lowcheck_wrapper")
    wrapper = RuleSet(wrapper_p, abstract_eval=_same, impl=lambda ctx, x: np.asarray(x * 2),
                      lowering={"default": lambda ctx, x: ctx.lower_fun(twice_p.bind, x)[0]})
    bad = _twice_rules({"default": lambda ctx, x: [x, x]})
    with scoped_plugin(Plugin("lc_nested", [bad, wrapper]), "lc_nested"):
        with pytest.raises(LoweringRuleError, match="primitive 'lowcheck_twice'"):
            plugax.jit(lambda v: wrapper_p.bind(v))(X)


# --- correct rules, in every accepted form, are unaffected ------------------------------

@pytest.mark.parametrize("rule", [
    _double,                                              # a value
    lambda ctx, x: [_double(ctx, x)],                     # a list holding it
    lambda ctx, x: (_double(ctx, x),),                    # a tuple
    lambda ctx, x: ctx.hlo.AddOp(x, x),                   # the operation making it
    lambda ctx, x: ctx.lower_fun(lambda v: v + v, x)[0],  # reusing other lowerings
], ids=["value", "list", "tuple", "op", "lower_fun"])
def test_correct_single_result_rules_compile_and_agree_with_eager(rule):
    with scoped_plugin(Plugin("lc_ok", [_twice_rules({"default": rule})]), "lc_ok"):
        out = _jit_twice()
        assert out.shape == (3,) and out.dtype == np.float32
        np.testing.assert_array_equal(np.asarray(out), np.asarray(twice_p.bind(X)))


@pytest.mark.parametrize("rule", [
    lambda ctx, x: [x, _double(ctx, x)],
    lambda ctx, x: (x, _double(ctx, x)),
    lambda ctx, x: ctx.lower_fun(lambda v: [v, v + v], x, multiple_results=True),
], ids=["list", "tuple", "lower_fun"])
def test_correct_multiple_results_rules_compile_and_agree_with_eager(rule):
    with scoped_plugin(Plugin("lc_ok2", [_pair_rules({"default": rule})]), "lc_ok2"):
        a, b = _jit_pair()
        np.testing.assert_array_equal(np.asarray(a), X)
        np.testing.assert_array_equal(np.asarray(b), X * 2)


def test_the_loaded_families_lower_through_the_check():
    """The built-in families' rules pass the check on a program mixing shapes and dtypes."""
    import plugax.numpy as pnp

    def f(x, i):
        y = pnp.sin(x).reshape(3, 1) * pnp.ones((3, 2), np.float32)
        return y.sum(axis=0), (i > 1).astype(np.int32), pnp.argmax(x)

    got = plugax.jit(f)(X, np.arange(4, dtype=np.int32))
    want = f(X, np.arange(4, dtype=np.int32))
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
