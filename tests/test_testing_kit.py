"""Kernel tests of the conformance kit `plugax.testing`, on toy primitives only.

The toy plugin below defines everything the checks need (the batching helpers
move axes with the kernel's structural primitives), so these tests run with
no primitive family loaded. Each check is shown to pass on
correct rules and to fail, with an informative message, on a deliberately
wrong one.
"""
from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import plugax
from plugax.extend import (PluginInfo, Primitive, RuleSet, ShapedArray, Zero, bdim_at_front,
                           defbroadcasting, defjvp, deflinear, defvectorized, hookimpl,
                           is_undefined_primal)
from plugax.testing import (AbstractEvalMismatch, Case, JVPMismatch, RuleCheckError,
                            TracedUseMismatch, TransposeMismatch, VmapMismatch, batch_placements,
                            check_abstract_eval, check_case, check_jit, check_jvp, check_primitive,
                            check_transpose, check_vmap, check_vmap_jvp, random_args_like,
                            registry_restored, scoped_plugin, x64)

# --- toy primitives ------------------------------------------------------------------------
sin_p, cos_p, neg_p = Primitive("sin"), Primitive("cos"), Primitive("neg")
mul_p, add_p = Primitive("mul"), Primitive("add")
# own names: the kernel's structural primitives are called reduce_sum, transpose, ...
reduce_sum_p, transpose_p = Primitive("kit_reduce_sum"), Primitive("kit_transpose")
broadcast_in_dim_p = Primitive("kit_broadcast_in_dim")
take_p, batched_take_p = Primitive("take"), Primitive("batched_take")
to_int_p, nojvp_p = Primitive("to_int"), Primitive("nojvp")
sincos_p = Primitive("sincos", multiple_results=True)


def _same_aval(ctx, x, **params):
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _unbroadcast(ct, aval):
    """Cotangent of an operand that lax-style scalar broadcasting widened."""
    if aval.shape == np.shape(ct):
        return ct
    return reduce_sum_p.bind(ct, axes=tuple(range(np.ndim(ct))))


def _add_transpose(ctx, ct, x, y):
    return [_unbroadcast(ct, a.aval) if is_undefined_primal(a) else None for a in (x, y)]


def _mul_transpose(ctx, ct, x, y):
    if is_undefined_primal(x):
        return [_unbroadcast(mul_p.bind(ct, y), x.aval), None]
    return [None, _unbroadcast(mul_p.bind(x, ct), y.aval)]


def _reduce_sum_abstract(ctx, x, *, axes):
    return ShapedArray([d for i, d in enumerate(x.shape) if i not in axes], x.dtype, x.weak_type)


def _reduce_sum_vmap(ctx, args, dims, *, axes):
    (x,), (d,) = args, dims
    moved = tuple(a + (a >= d) for a in axes)
    return reduce_sum_p.bind(x, axes=moved), d - sum(a < d for a in axes)


def _reduce_sum_transpose(ctx, ct, x, *, axes):
    shape = x.aval.shape
    keep = tuple(i for i in range(len(shape)) if i not in axes)
    return [broadcast_in_dim_p.bind(ct, shape=shape, broadcast_dimensions=keep)]


def _bid_impl(ctx, x, *, shape, broadcast_dimensions):
    expanded = [1] * len(shape)
    for src, dst in enumerate(broadcast_dimensions):
        expanded[dst] = np.shape(x)[src]
    return np.broadcast_to(np.reshape(x, expanded), shape).copy()


def _bid_vmap(ctx, args, dims, *, shape, broadcast_dimensions):
    x = bdim_at_front(args[0], dims[0], ctx.axis_size)
    return broadcast_in_dim_p.bind(x, shape=(ctx.axis_size, *shape), broadcast_dimensions=(
        0, *(d + 1 for d in broadcast_dimensions))), 0


def _take_abstract(ctx, x, idx):
    return ShapedArray(idx.shape + x.shape[1:], x.dtype, x.weak_type)


def _take_vmap(ctx, args, dims):
    """Both operands' batch axes to the front, then the batched gather."""
    x, idx = (bdim_at_front(a, d, ctx.axis_size) for a, d in zip(args, dims))
    return batched_take_p.bind(x, idx), 0


def _batched_take_impl(ctx, x, idx):
    rows = np.arange(x.shape[0]).reshape((-1,) + (1,) * (idx.ndim - 1))
    return x[rows, idx]


def _batched_take_abstract(ctx, x, idx):
    return ShapedArray(idx.shape + x.shape[2:], x.dtype, x.weak_type)


def _sincos_jvp(ctx, primals, tangents):
    (x,), (t,) = primals, tangents
    s, c = sincos_p.bind(x)
    return [s, c], [mul_p.bind(t, c), neg_p.bind(mul_p.bind(t, s))]


def _lower(op):
    """A lowering rule: the StableHLO op `op` (scalars broadcast, as lax allows)."""
    return {"default": lambda ctx, *xs, **_: getattr(ctx.hlo, op)(*ctx.broadcast_scalars(*xs))}


GOOD_RULES = [
    defvectorized(sin_p, np.sin, jvp=defjvp(sin_p, lambda g, ans, x: mul_p.bind(g, cos_p.bind(x))),
                  lowering=_lower("sine")),
    defvectorized(cos_p, np.cos, lowering=_lower("cosine"),
                  jvp=defjvp(cos_p, lambda g, ans, x: neg_p.bind(mul_p.bind(g, sin_p.bind(x))))),
    defvectorized(neg_p, np.negative, jvp=deflinear(neg_p), lowering=_lower("negate"),
                  transpose=lambda ctx, ct, x: [neg_p.bind(ct)]),
    defbroadcasting(mul_p, np.multiply, transpose=_mul_transpose, lowering=_lower("multiply"),
                    jvp=defjvp(mul_p, lambda g, ans, x, y: mul_p.bind(g, y),
                               lambda g, ans, x, y: mul_p.bind(x, g))),
    defbroadcasting(add_p, np.add, jvp=deflinear(add_p), transpose=_add_transpose,
                    lowering=_lower("add")),
    RuleSet(reduce_sum_p, impl=lambda ctx, x, *, axes: np.sum(x, axis=axes, dtype=x.dtype),
            abstract_eval=_reduce_sum_abstract, jvp=deflinear(reduce_sum_p),
            batching=_reduce_sum_vmap, transpose=_reduce_sum_transpose),
    RuleSet(transpose_p, impl=lambda ctx, x, *, permutation: np.transpose(x, permutation),
            abstract_eval=lambda ctx, x, *, permutation: ShapedArray(
                [x.shape[p] for p in permutation], x.dtype, x.weak_type)),
    RuleSet(broadcast_in_dim_p, impl=_bid_impl, batching=_bid_vmap,
            abstract_eval=lambda ctx, x, *, shape, broadcast_dimensions: ShapedArray(
                shape, x.dtype, x.weak_type)),
    RuleSet(take_p, impl=lambda ctx, x, idx: x[idx], abstract_eval=_take_abstract,
            jvp=defjvp(take_p, lambda g, ans, x, idx: take_p.bind(g, idx), None),
            batching=_take_vmap),
    RuleSet(batched_take_p, impl=_batched_take_impl, abstract_eval=_batched_take_abstract),
    defvectorized(to_int_p, lambda x: np.round(x).astype(np.int32),
                  dtype_rule=lambda x, **_: np.dtype(np.int32),
                  jvp=lambda ctx, primals, tangents: (
                      to_int_p.bind(*primals), Zero.from_value(to_int_p.bind(*primals)))),
    defvectorized(nojvp_p, np.tanh),
    RuleSet(sincos_p, impl=lambda ctx, x: [np.sin(x), np.cos(x)],
            abstract_eval=lambda ctx, x: [_same_aval(ctx, x)] * 2, jvp=_sincos_jvp,
            batching=lambda ctx, args, dims: (sincos_p.bind(args[0]), [dims[0]] * 2)),
]

# --- deliberately wrong rules ----------------------------------------------------------------
bad_jvp_p, bad_primal_p = Primitive("bad_jvp_sin"), Primitive("bad_primal_sin")
bad_vmap_p, bad_sum_vmap_p = Primitive("bad_vmap_sin"), Primitive("bad_vmap_sum")
bad_dtype_p = Primitive("bad_dtype_sin")
bad_neg_t_p, bad_sum_t_p = Primitive("bad_transpose_neg"), Primitive("bad_transpose_sum")
bad_int_jvp_p = Primitive("bad_jvp_to_int")
bad_lower_p, untraceable_p = Primitive("bad_lowering_sin"), Primitive("untraceable_sin")
linear_no_t_p = Primitive("linear_without_transpose")

BAD_RULES = [
    # d/dx sin = sin (should be cos)
    defvectorized(bad_jvp_p, np.sin,
                  jvp=defjvp(bad_jvp_p, lambda g, ans, x: mul_p.bind(g, sin_p.bind(x)))),
    # right tangent, primal off by a factor 2
    defvectorized(bad_primal_p, np.sin,
                  jvp=lambda ctx, ps, ts: (mul_p.bind(sin_p.bind(ps[0]), 2.0),
                                           mul_p.bind(ts[0], cos_p.bind(ps[0])))),
    # says the batch axis is in front wherever it really is
    defvectorized(bad_vmap_p, np.sin,
                  batching=lambda ctx, args, dims: (bad_vmap_p.bind(args[0]), 0)),
    # reduces the unbatched axes numbers in the batched array: ignores the batch dim
    GOOD_RULES[5].replace(primitive=bad_sum_vmap_p,
                        impl=lambda ctx, x, *, axes: np.sum(x, axis=axes, dtype=x.dtype),
                        batching=lambda ctx, args, dims, *, axes: (
                            bad_sum_vmap_p.bind(args[0], axes=axes), dims[0]),
                        jvp=None, transpose=None),
    # float32 impl, abstract_eval claims int32
    defvectorized(bad_dtype_p, np.sin, dtype_rule=lambda x, **_: np.dtype(np.int32)),
    # transpose of neg forgets the sign
    defvectorized(bad_neg_t_p, np.negative, transpose=lambda ctx, ct, x: [ct]),
    # transpose of reduce_sum that does not broadcast back
    GOOD_RULES[5].replace(primitive=bad_sum_t_p, jvp=None, batching=None,
                        transpose=lambda ctx, ct, x, *, axes: [ct]),
    # integer output with a float tangent
    defvectorized(bad_int_jvp_p, lambda x: np.round(x).astype(np.int32),
                  dtype_rule=lambda x, **_: np.dtype(np.int32),
                  jvp=lambda ctx, ps, ts: (bad_int_jvp_p.bind(ps[0]), ts[0])),
    # right eagerly, wrong only under jit: the lowering computes cos
    defvectorized(bad_lower_p, np.sin, lowering=_lower("cosine"),
                  jvp=defjvp(bad_lower_p, lambda g, ans, x: mul_p.bind(g, cos_p.bind(x)))),
    # right eagerly, not traceable: the jvp rule reads its operand's value with NumPy
    defvectorized(untraceable_p, np.sin, lowering=_lower("sine"),
                  jvp=defjvp(untraceable_p, lambda g, ans, x: mul_p.bind(g, np.cos(np.asarray(x))))),
    # declared linear (its jvp is deflinear), but reverse mode cannot transpose it
    defvectorized(linear_no_t_p, np.negative, jvp=deflinear(linear_no_t_p)),
]


class ToyPlugin:
    @hookimpl
    def plugax_plugin_info(self):
        return PluginInfo(name="toy-kit")

    @hookimpl
    def plugax_primitive_rules(self):
        return GOOD_RULES + BAD_RULES

    @hookimpl
    def plugax_array_methods(self):
        return {"__add__": lambda x, y: add_p.bind(x, y), "__mul__": lambda x, y: mul_p.bind(x, y),
                "__neg__": lambda x: neg_p.bind(x)}


@pytest.fixture(scope="module", autouse=True)
def toy_plugin():
    with scoped_plugin(ToyPlugin(), "toy-kit") as record:
        yield record


F32 = np.float32
X = np.linspace(-1.5, 2.0, 12, dtype=F32).reshape(4, 3)
RULES = ("abstract_eval", "jvp", "vmap")
EAGER_RULES = [*RULES, "grad", "vmap_jvp", "vmap_grad"]   # the default checks that need no jit
JIT_RULES = ["jit", "jit_grad", "jit_second_order"]


@pytest.fixture
def without_jit():
    """The xla_call plugin (plugax.jit) unloaded for the test, if it was loaded."""
    if not hasattr(plugax, "jit"):
        yield
        return
    with registry_restored() as registry:
        registry.unregister("xla_call")
        yield


@pytest.fixture
def with_jit():
    """The xla_call plugin loaded for the test (the kernel tests load no plugin)."""
    if hasattr(plugax, "jit"):
        yield
        return
    with scoped_plugin(pytest.importorskip("plugax_xla_call.plugin"), "xla_call"):
        yield


def message_of(excinfo) -> str:
    return str(excinfo.value)


# --- the checks pass on correct rules ----------------------------------------------------------
def test_correct_rules_pass_every_check(without_jit):
    ran = check_primitive(sin_p, X)
    assert ran == EAGER_RULES and set(ran.skipped) == set(JIT_RULES)
    assert "xla_call plugin" in ran.skipped["jit"]
    assert check_primitive(mul_p, X, X[::-1] * 2) == EAGER_RULES
    assert check_primitive(mul_p, X, F32(3.0)) == EAGER_RULES
    assert check_primitive(add_p, X, 2.0) == [*RULES, "transpose", *EAGER_RULES[3:]]  # linear
    assert check_primitive(reduce_sum_p, X, axes=(1,), rules=("abstract_eval", "jvp", "vmap"),
                           linear_argnums=0) == ["abstract_eval", "jvp", "vmap", "transpose"]
    check_primitive(reduce_sum_p, np.ones((2, 3, 4), F32), axes=(0, 2))


def test_python_scalars_keep_weak_types():
    assert check_abstract_eval(mul_p, 2.0, 3.0)[0].weak_type
    assert not check_abstract_eval(mul_p, X, 3.0)[0].weak_type


def test_integer_arguments_stay_valid_indices_under_vmap():
    x = np.arange(5, dtype=F32) * 1.5
    idx = np.array([[4, 0], [2, 2]], np.int32)
    # variants of idx are resamplings of {0, 2, 4}: always in range for x
    assert check_primitive(take_p, x, idx, rules=RULES) == list(RULES)
    assert check_vmap(take_p, x, idx, axis_size=5) == 2 * (len(batch_placements([1, 2])))


def test_integer_only_primitive_skips_jvp():
    ran = check_primitive(take_p, np.arange(6, dtype=np.int32), np.array([5, 1], np.int32))
    assert [r for r in ran if r in RULES] == ["abstract_eval", "vmap"]
    assert not set(ran) & {"grad", "vmap_jvp", "vmap_grad"}


def test_integer_output_has_float0_tangent():
    check_jvp(to_int_p, X)
    ran = check_primitive(to_int_p, X, rules=RULES + ("vmap_jvp", "grad"))
    assert ran == [*RULES, "vmap_jvp"]   # a float0 tangent batches; no float output for grad
    assert ran.skipped == {"grad": "no floating output to differentiate"}


def test_functions_are_checked_like_primitives():
    def f(x, y):
        return add_p.bind(mul_p.bind(sin_p.bind(x), y), x)
    assert check_primitive(f, X, X + 1)[:6] == EAGER_RULES


def test_multiple_results_are_checked_per_output():
    assert check_primitive(sincos_p, X)[:6] == EAGER_RULES


def test_jvp_argnums_and_symbolic_zero_tangents():
    check_jvp(mul_p, X, X + 1, argnums=1)
    check_jvp(mul_p, X, X + 1, argnums=(0,))


@pytest.mark.parametrize("prim,linear,args", [
    (neg_p, 0, (X,)),
    (mul_p, 0, (X, X + 1)),
    (mul_p, 1, (X, X + 1)),
    (mul_p, 1, (X, F32(2.0))),
    (add_p, (0, 1), (X, F32(1.0))),
])
def test_transpose_passes_on_adjoints(prim, linear, args):
    check_transpose(prim, *args, linear_argnums=linear)


# --- the checks catch wrong rules --------------------------------------------------------------
def test_wrong_jvp_is_caught():
    with pytest.raises(JVPMismatch) as info:
        check_jvp(bad_jvp_p, X)
    msg = message_of(info)
    assert "jvp rule of primitive 'bad_jvp_sin'" in msg
    assert "disagrees with central finite differences" in msg
    assert "x0=f64[4,3] (tangent)" in msg
    assert re.search(r"max abs error [0-9.e+-]+, max rel error", msg)
    assert isinstance(info.value, AssertionError)


def test_wrong_jvp_primal_is_caught():
    with pytest.raises(JVPMismatch, match="primal output differs from eager evaluation"):
        check_jvp(bad_primal_p, X)


def test_float_tangent_of_integer_output_is_caught():
    with pytest.raises(JVPMismatch, match="must be float0") as info:
        check_jvp(bad_int_jvp_p, X)
    assert "Zero.from_value" in message_of(info)


def test_jvp_check_restores_x64_even_on_failure():
    before = plugax.config.enable_x64
    with pytest.raises(JVPMismatch):
        check_jvp(bad_jvp_p, X)
    assert plugax.config.enable_x64 == before


def test_vmap_lying_about_batch_axis_is_caught():
    check_vmap(bad_vmap_p, np.float32(0.5))  # rank 0: the only axis is in front, so it passes
    with pytest.raises(VmapMismatch) as info:
        check_vmap(bad_vmap_p, X)
    msg = message_of(info)
    assert "batching rule of primitive 'bad_vmap_sin': its output has an invalid batch axis" in msg
    assert "registered by: plugin 'toy-kit'" in msg and "axis_size=3" in msg
    assert "x0=f32[4,3,3] (batch axis 1)" in msg
    assert "returned f32[4,3,3] with out_dim=0; expected an axis of size 3" in msg


def test_vmap_ignoring_batch_dim_is_caught():
    with pytest.raises(VmapMismatch) as info:
        check_vmap(bad_sum_vmap_p, X, axes=(1,))
    msg = message_of(info)
    # checked against abstract_eval as the rule returns, before a loop is even compared
    assert "batching rule of primitive 'bad_vmap_sum': its output disagrees with abstract_eval" \
        in msg
    assert "registered by: plugin 'toy-kit' (distribution" in msg
    assert "params: axes=(1,)" in msg and "x0=f32[3,4,3] (batch axis 0)" in msg
    assert ("the rule returned f32[3,3] with out_dim=0, i.e. f32[3] per example, but "
            "abstract_eval of the unbatched operands gives f32[4]") in msg


def test_vmap_value_errors_report_the_size():
    # a square example: the wrong rule gets the shape right, so values are compared
    with pytest.raises(VmapMismatch) as info:
        check_vmap(bad_sum_vmap_p, np.ones((3, 3), F32) * np.arange(3, dtype=F32), axes=(0,))
    msg = message_of(info)
    assert "the output differs from a Python loop (in_dims=(0,), axis_size=3)" in msg
    assert re.search(r"max abs error [0-9.e+-]+, max rel error [0-9.e+-]+ \(worst at index", msg)
    assert "rule's out_dim=0, raw result f32[3,3]" in msg


def test_wrong_abstract_eval_dtype_is_caught():
    with pytest.raises(AbstractEvalMismatch) as info:
        check_abstract_eval(bad_dtype_p, X)
    msg = message_of(info)
    assert "abstract_eval rule of primitive 'bad_dtype_sin'" in msg
    assert "dtype: abstract_eval says int32, impl gives float32" in msg
    assert "x0=f32[4,3]" in msg


def test_wrong_transpose_is_caught():
    with pytest.raises(TransposeMismatch) as info:
        check_transpose(bad_neg_t_p, X, linear_argnums=0)
    msg = message_of(info)
    assert "transpose rule of primitive 'bad_transpose_neg'" in msg
    assert "not the adjoint" in msg
    assert "x0=f64[4,3] (linear)" in msg
    assert re.search(r"abs error [0-9.e+-]+, rel error", msg)


def test_transpose_with_wrong_cotangent_shape_is_caught():
    check_transpose(reduce_sum_p, X, linear_argnums=0, axes=(0,))
    with pytest.raises(TransposeMismatch, match=r"(?s)cotangent of x0 has the wrong type\n.*"
                                                r"got f64\[3\], the UndefPrimal is f64\[4,3\]"):
        check_transpose(bad_sum_t_p, X, linear_argnums=0, axes=(0,))


def test_missing_rule_is_a_failure_not_a_skip():
    with pytest.raises(RuleCheckError, match="jvp rule of primitive 'nojvp': none is registered"):
        check_primitive(nojvp_p, X)
    assert check_primitive(nojvp_p, X, rules=("abstract_eval", "vmap")) == \
        ["abstract_eval", "vmap"]


# --- traced use: jit, grad, vmap of derivatives ---------------------------------------------
def test_traced_checks_pass_correct_rules_under_jit(with_jit):
    assert check_primitive(sin_p, X) == EAGER_RULES + JIT_RULES
    ran = check_primitive(mul_p, X, X[::-1])
    assert ran == EAGER_RULES + JIT_RULES and not ran.skipped
    check_jit(mul_p, X, 3.0)          # a weak Python scalar operand: jit keeps the weak types
    check_jit(mul_p, 2.0, 3.0)


def test_jit_checks_skip_with_a_reason_without_the_xla_call_plugin(without_jit):
    ran = check_primitive(sin_p, X, rules=("jit", "jit_grad"))
    assert ran == [] and set(ran.skipped) == {"jit", "jit_grad"}
    assert "the xla_call plugin (which provides plugax.jit) is not loaded" in ran.skipped["jit"]


def test_a_lowering_that_disagrees_with_the_impl_fails_only_under_jit(with_jit):
    assert check_primitive(bad_lower_p, X, rules=EAGER_RULES) == EAGER_RULES
    with pytest.raises(TracedUseMismatch) as info:
        check_primitive(bad_lower_p, X)
    msg = message_of(info)
    assert "jit of primitive 'bad_lowering_sin': the output of jit differs from eager" in msg
    assert "x0=f32[4,3]" in msg and re.search(r"max abs error [0-9.e+-]+", msg)


def test_an_untraceable_jvp_rule_is_caught_though_it_is_right_eagerly(without_jit):
    check_jvp(untraceable_p, X)   # eagerly the rule sees concrete values: right
    with pytest.raises(TracedUseMismatch) as info:
        check_primitive(untraceable_p, X)
    msg = message_of(info)
    assert "vmap(jvp) of primitive 'untraceable_sin': vmap(jvp) raised" in msg
    assert "np.asarray" in msg and "x0=f32[4,3] (differentiated)" in msg


def test_an_untraceable_jvp_rule_fails_jit_grad(with_jit):
    with pytest.raises(TracedUseMismatch, match=r"jit\(grad\) of primitive 'untraceable_sin': "
                                                r"jit\(grad\) raised"):
        check_primitive(untraceable_p, X, rules=("jit_grad",))


def test_a_primitive_declared_linear_without_a_transpose_rule_fails():
    with pytest.raises(TransposeMismatch) as info:     # declared by its deflinear jvp rule
        check_primitive(linear_no_t_p, X)
    msg = message_of(info)
    assert "transpose rule of primitive 'linear_without_transpose': none is registered, but " \
           "the primitive is declared linear" in msg
    assert "registered by: plugin 'toy-kit'" in msg
    with pytest.raises(TransposeMismatch, match="declared linear"):   # declared by the case
        check_case(Case(sin_p, X, linear_argnums=0, rules=RULES))
    with pytest.raises(TransposeMismatch, match="declared linear"):   # even with other rules
        check_primitive(sin_p, X, rules=("abstract_eval",), linear_argnums=0)


def test_grad_must_be_the_adjoint_of_the_jvp():
    # a right jvp (checked against finite differences) and a transpose rule that forgets
    # the sign: only reverse mode is wrong, and the grad check compares it with the jvp
    bad = RuleSet(Primitive("neg_wrong_grad"), impl=lambda ctx, x: -x,
                  abstract_eval=_same_aval)
    prim = bad.primitive
    rules = [bad.replace(jvp=lambda ctx, ps, ts: (prim.bind(*ps), prim.bind(ts[0])),
                         transpose=lambda ctx, ct, x: [ct])]

    class Wrong:
        @hookimpl
        def plugax_plugin_info(self):
            return PluginInfo(name="wrong-grad")

        @hookimpl
        def plugax_primitive_rules(self):
            return rules

    with scoped_plugin(Wrong(), "wrong-grad"):
        with pytest.raises(TracedUseMismatch) as info:
            check_primitive(prim, X, rules=("grad",))
    assert "reverse mode is not the adjoint of the jvp" in message_of(info)


def test_vmap_of_jvp_compares_with_a_loop():
    check_vmap_jvp(sincos_p, X)
    check_vmap_jvp(take_p, np.arange(5, dtype=F32), np.array([[4, 0], [2, 2]], np.int32))


# --- helpers -----------------------------------------------------------------------------------
def test_x64_restores_the_flag():
    before = plugax.config.enable_x64
    with pytest.raises(ZeroDivisionError):
        with x64():
            assert plugax.config.enable_x64
            1 / 0
    assert plugax.config.enable_x64 == before


def test_batch_placements_cover_every_axis_and_none():
    assert batch_placements([1]) == [(0,), (1,)]
    both = batch_placements([0, 1])
    assert (None, 0) in both and (0, None) in both and (0, 1) in both and len(both) == 5
    capped = batch_placements([3] * 6, limit=50)
    assert (None, None, 3, None, None, None) in capped and len(capped) <= 50


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(0, 3), max_size=3), seed=st.integers(0, 2**16),
       weak=st.booleans())
def test_random_args_like_preserves_types_and_ranges(shape, seed, weak):
    rng = np.random.default_rng(seed)
    x = plugax.Array(rng.uniform(0.5, 3.0, shape).astype(F32), weak)
    idx = rng.integers(0, 5, shape).astype(np.int32)
    vx, vidx, vs = random_args_like(x, idx, 1.5, seed=seed)
    assert (vx.shape, vx.dtype, vx.weak_type) == (x.shape, x.dtype, weak)
    assert vidx.shape == idx.shape and vidx.dtype == idx.dtype
    assert set(np.asarray(vidx).ravel()) <= set(idx.ravel())
    if np.size(x) > 1:
        assert np.all(np.asarray(vx) >= np.min(np.asarray(x)))
    assert type(vs) is float and vs > 0


@settings(max_examples=15, deadline=None)
@given(shape=st.lists(st.integers(1, 3), max_size=3), seed=st.integers(0, 2**16),
       data=st.data())
def test_kit_passes_correct_rules_on_random_examples(shape, seed, data):
    x = np.random.default_rng(seed).normal(size=shape).astype(F32)
    check_primitive(sin_p, x, jvp_options={"seed": seed}, vmap_options={"seed": seed})
    axes = tuple(sorted(data.draw(st.sets(st.integers(0, len(shape) - 1))))) if shape else ()
    check_primitive(reduce_sum_p, x, axes=axes, rules=("abstract_eval", "jvp", "vmap",
                                                       "transpose"), linear_argnums=0)


@settings(max_examples=15, deadline=None)
@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=3), seed=st.integers(0, 2**16))
def test_kit_catches_wrong_rules_on_random_examples(shape, seed):
    x = np.random.default_rng(seed).uniform(-1, 1, size=shape).astype(F32)
    with pytest.raises(JVPMismatch):
        check_jvp(bad_jvp_p, x, seed=seed)
    with pytest.raises(AbstractEvalMismatch):
        check_abstract_eval(bad_dtype_p, x)
    with pytest.raises(TransposeMismatch):
        check_transpose(bad_neg_t_p, x, linear_argnums=0, seed=seed)


# --- registry helpers --------------------------------------------------------------------------
class Rejected:
    @hookimpl
    def plugax_plugin_info(self):
        return PluginInfo(name="rejected", api_versions=(99, 99))


def test_scoped_plugin_raises_when_the_plugin_is_rejected(monkeypatch):
    monkeypatch.delenv("PLUGAX_STRICT_PLUGINS", raising=False)  # lenient: the kit must raise
    with pytest.warns(Warning), pytest.raises(plugax.PluginError, match="not loaded"):
        with scoped_plugin(Rejected(), "rejected"):
            pass
    assert "rejected" not in plugax.registry.loaded_names()


def test_registry_restored_undoes_registrations_and_removals():
    before = plugax.registry.loaded_names()
    extra = Primitive("extra")

    class Extra:
        @hookimpl
        def plugax_plugin_info(self):
            return PluginInfo(name="extra")

        @hookimpl
        def plugax_primitive_rules(self):
            return [defvectorized(extra, np.sin)]

    with registry_restored() as registry:
        registry.register(Extra(), "extra")
        registry.unregister("toy-kit")
        assert "extra" in registry.loaded_names() and "toy-kit" not in registry.loaded_names()
    assert plugax.registry.loaded_names() == before
    check_primitive(sin_p, X)  # the toy rules are back in the tables
    with pytest.raises(plugax.MissingRuleError):
        extra.bind(X)


def test_pytest_fixtures(plugax_registry, plugax_x64):
    assert plugax_registry is plugax.registry
    assert plugax.config.enable_x64
