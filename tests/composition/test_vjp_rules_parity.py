"""The VJP tape (top-level vjp / grad) against the general path (jvp + partial eval +
transpose): every primitive with a `vjp` rule, which path each entry point takes,
and the trace state after errors."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import plugax as px
import plugax.numpy as pnp
from plugax import lax
from plugax.core import trace as core
from plugax.core.avals import get_aval
from plugax.core.rules import vjp_rules
from plugax.interpreters.ad_util import instantiate
from plugax.interpreters.linearize import linearize_flat
from plugax.interpreters.vjp_tape.linearize import tape_linearize_flat
from plugax.interpreters.vjp_tape.trace import VJPTapeTracer
from plugax.testing import check_vjp

UNARY = ["sqrt", "rsqrt", "cbrt", "exp", "exp2", "log", "log1p", "expm1", "sin", "cos",
         "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
         "logistic", "neg", "sign", "floor", "ceil", "is_finite", "square", "abs",
         "stop_gradient"]
BINARY = ["add", "sub", "mul", "div", "rem", "max", "min", "atan2", "pow", "add_any",
          "eq", "ne", "lt", "le", "gt", "ge"]
SHAPES = [(), (3,), (2, 3)]


def _prims() -> dict:
    pnp.ones(1)   # loads the plugins
    return {p.name: p for p in vjp_rules}


def _example(name: str, rng: np.random.Generator, shape: tuple, scalar_y: bool,
             weak: bool) -> tuple[list, dict]:
    """Operands (float32, `weak`: the first one weakly typed) and params."""
    def arr(s, w=False):
        return px.Array(rng.uniform(0.2, 0.9, s).astype(np.float32), w)
    if name in UNARY:
        return [arr(shape, weak)], {}
    if name == "round":
        return [arr(shape)], {"rounding_method": lax.RoundingMethod.TO_NEAREST_EVEN}
    if name == "add_any":
        return [arr(shape), arr(shape)], {}
    if name in BINARY:
        return [arr(shape, weak), arr(() if scalar_y else shape)], {}
    if name == "integer_pow":
        return [arr(shape, weak)], {"y": int(rng.integers(0, 4))}
    if name == "convert_element_type":
        return [arr(shape)], {"new_dtype": np.dtype(np.float64 if scalar_y else np.int32),
                              "weak_type": weak}
    if name == "reduce_sum":
        return [arr((2, 3))], {"axes": (1,) if scalar_y else (0, 1)}
    if name == "broadcast_in_dim":
        return [arr((3,))], {"shape": (2, 3), "broadcast_dimensions": (1,)}
    if name == "reshape":
        return [arr((2, 3))], {"new_sizes": (3, 2), "dimensions": None}
    if name == "transpose":
        return [arr((2, 3))], {"permutation": (1, 0)}
    if name == "dot_general":
        return [arr((2, 3)), arr((3, 4))], {"dimension_numbers": (((1,), (0,)), ((), ()))}
    if name in ("reduce_max", "reduce_min"):   # ties (rounded values) split the cotangent
        x = px.Array(np.round(rng.uniform(0, 2, (2, 3)), 0).astype(np.float32), weak)
        return [x], {"axes": (1,) if scalar_y else (0, 1)}
    if name == "select_n":
        which = px.Array(rng.uniform(0, 1, shape) > 0.5)
        return [which, arr(shape, weak), arr(shape)], {}
    raise KeyError(name)


def _cotangents(prim, outs, rng) -> list:
    return [px.Array(rng.standard_normal(np.shape(o)).astype(get_aval(o).dtype))
            if get_aval(o).dtype.kind == "f" else None for o in outs]


def _same(a, b) -> None:
    a_aval, b_aval = get_aval(a), get_aval(b)
    assert (a_aval.shape, a_aval.dtype, a_aval.weak_type) == \
        (b_aval.shape, b_aval.dtype, b_aval.weak_type)
    if a_aval.dtype.kind == "V":   # float0
        return
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-6, atol=1e-7,
                               equal_nan=True)


def _both_paths(fun, primals, cts) -> list:
    """(primal outputs, input cotangents) from the tape, then from the general path."""
    found = []
    for linearize in (tape_linearize_flat, linearize_flat):
        lin = linearize(fun, primals)
        found.append((lin.primals_out, [instantiate(c) for c in lin.transpose(cts)]))
    return found


def test_every_vjp_rule_has_an_example():
    rng = np.random.default_rng(0)
    missing = []
    for name in _prims():
        try:
            _example(name, rng, (3,), False, False)
        except KeyError:
            missing.append(name)
    assert missing == [], f"add an example for these primitives' vjp rules: {missing}"


@pytest.mark.parametrize("name", sorted(set(UNARY + BINARY) | {
    "integer_pow", "convert_element_type", "reduce_sum", "broadcast_in_dim", "reshape",
    "transpose", "dot_general", "round", "reduce_max", "reduce_min", "select_n"}))
@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**16), shape=st.sampled_from(SHAPES), scalar_y=st.booleans(),
       weak=st.booleans(), mask=st.integers(1, 3))
def test_tape_matches_the_general_path(name, seed, shape, scalar_y, weak, mask):
    prim = _prims()[name]
    rng = np.random.default_rng(seed)
    args, params = _example(name, rng, shape, scalar_y, weak)
    # `mask` picks the differentiated operands; the others are constants of the function
    diff = [i for i in range(len(args)) if mask >> i & 1] or [0]
    if name == "select_n":   # `which` is a bool: differentiate the cases
        diff = [1 + (i % 2) for i in diff]
        diff = sorted(set(diff))

    def fun(*xs):
        full = list(args)
        for i, x in zip(diff, xs):
            full[i] = x
        out = prim.bind(*full, **params)
        return list(out) if prim.multiple_results else [out]

    primals = [args[i] for i in diff]
    cts = _cotangents(prim, fun(*primals), rng)
    cts = [c if c is not None else px.Array(np.zeros((), np.float32)) for c in cts]
    (tape_out, tape_cts), (gen_out, gen_cts) = _both_paths(fun, primals, cts)
    for a, b in zip(tape_out + tape_cts, gen_out + gen_cts):
        _same(a, b)


@pytest.mark.parametrize("name", ["tanh", "mul", "div", "dot_general", "broadcast_in_dim",
                                  "reduce_sum", "convert_element_type", "integer_pow", "pow"])
def test_the_kit_checks_vjp_rules(name):
    prim = _prims()[name]
    args, params = _example(name, np.random.default_rng(1), (3,), True, False)
    check_vjp(prim, *args, **params)


def test_the_kit_catches_a_wrong_vjp_rule(monkeypatch):
    from plugax.testing import VJPMismatch
    prim = _prims()["sin"]

    def wrong(ctx, primals, wanted, **params):
        out = prim.bind(*primals)
        return out, lambda ct: [ct]       # forgets the factor cos(x)
    monkeypatch.setitem(vjp_rules, prim, wrong)
    with pytest.raises(VJPMismatch, match="not the transpose of the jvp"):
        check_vjp(prim, np.linspace(0.1, 1.0, 4, dtype=np.float32))


# --- which path: the tape at the top level only ---------------------------------------
def _kinds(transform) -> set:
    seen = set()

    def f(x):
        seen.add(type(x).__name__)
        return pnp.sum(pnp.tanh(x) * x)
    out = transform(f, pnp.linspace(0.1, 1.0, 4))
    return seen, out


def test_top_level_grad_vjp_and_value_and_grad_use_the_tape():
    for transform in (lambda f, x: px.grad(f)(x), lambda f, x: px.vjp(f, x)[1](1.0)[0],
                      lambda f, x: px.value_and_grad(f)(x)[1]):
        seen, _ = _kinds(transform)
        assert seen == {"VJPTapeTracer"}


@pytest.mark.parametrize("transform", [
    lambda f, x: px.jit(px.grad(f))(x),
    lambda f, x: px.vmap(px.grad(f))(x[None].repeat(2, 0))[0],
    lambda f, x: px.grad(lambda y: px.grad(f)(y).sum())(x),
    lambda f, x: px.jacrev(px.grad(f))(x).sum(0),
    lambda f, x: px.hessian(f)(x).sum(0),
], ids=["jit", "vmap", "grad_of_grad", "jacrev_of_grad", "hessian"])
def test_grad_under_a_transformation_takes_the_general_path(transform):
    """The function sees the general path's JVPTracer (over the outer transformation's
    tracer, which is the tape's only when the outermost transformation is a grad)."""
    seen, out = _kinds(transform)
    assert "VJPTapeTracer" not in seen and "JVPTracer" in seen
    with px.disable_jit():
        _same(out, transform(lambda x: pnp.sum(pnp.tanh(x) * x), pnp.linspace(0.1, 1.0, 4)))


def test_results_agree_across_paths():
    def f(x, w):
        h = pnp.tanh(x @ w + 1.0)
        return pnp.mean((h ** 2 - x[:, :1]) ** 2)
    rng = np.random.default_rng(0)
    x = pnp.asarray(rng.standard_normal((4, 3)).astype(np.float32))
    w = pnp.asarray(rng.standard_normal((3, 3)).astype(np.float32))
    eager = px.grad(f, argnums=(0, 1))(x, w)
    jitted = px.jit(px.grad(f, argnums=(0, 1)))(x, w)
    for a, b in zip(eager, jitted):
        _same(a, b)
    h_eager = px.grad(lambda x: px.grad(lambda x: f(x, w))(x).sum())(x)
    h_jit = px.jit(px.grad(lambda x: px.grad(lambda x: f(x, w))(x).sum()))(x)
    _same(h_eager, h_jit)

    def branchy(x):   # Python control flow on primal values works on the tape
        return pnp.sum(pnp.sin(x)) if float(x.sum()) > 0 else pnp.sum(x)
    _same(px.grad(branchy)(x[0]), pnp.cos(x[0]) if float(x[0].sum()) > 0 else pnp.ones(3))


def test_integer_inputs_get_float0_and_aux_and_custom_rules():
    @px.custom_jvp
    def g(x):
        return pnp.sin(x)
    g.defjvp(lambda p, t: (g(p[0]), 2.0 * t[0]))

    def f(x, k):
        return pnp.sum(g(x) * k), {"k": k}
    (v, aux), (gx, gk) = px.value_and_grad(f, argnums=(0, 1), has_aux=True,
                                           allow_int=True)(pnp.ones(3), 2)
    assert gk.dtype == np.dtype([("float0", "V")]) or gk.dtype.kind == "V"
    np.testing.assert_allclose(np.asarray(gx), 4.0 * np.ones(3))
    assert int(aux["k"]) == 2


# --- errors leave the trace stack clean ---------------------------------------------
def _assert_clean():
    assert core.current_trace() is core.eval_trace
    assert core.non_eager_blocks[0] == 0


@pytest.mark.parametrize("where", ["function", "rule", "backward", "fallback"])
def test_errors_inside_a_taped_grad_leave_no_trace(where):
    @px.custom_vjp
    def h(x):
        return x * 2.0
    h.defvjp(lambda x: (x * 2.0, None), lambda r, ct: (_ for _ in ()).throw(
        RuntimeError("bwd failed")))

    def f(x):
        if where == "function":
            raise RuntimeError("user code failed")
        if where == "rule":
            return pnp.sum(lax.add(x, pnp.ones(5)))        # a shape error in a bind
        if where == "backward":
            return pnp.sum(h(x))
        return pnp.prod(x)                                   # no vjp rule: fallback
    if where == "fallback":
        assert float(px.grad(f)(pnp.ones(3)).sum()) == 3.0
        _assert_clean()
        return
    with pytest.raises(Exception):
        px.grad(f)(pnp.ones(3))
    _assert_clean()
    assert float(pnp.sin(pnp.zeros(()))) == 0.0


# --- linear primitives: the vjp derived from their transpose rule ----------------------
LINEAR_PROGRAMS = {
    "gather": lambda x: x[pnp.array([2, 0, 2])],
    "slice": lambda x: x[1:3],
    "concatenate": lambda x: pnp.concatenate([x, 2.0 * x]),
    "pad": lambda x: pnp.pad(x, (1, 2)),
    "cumsum": lambda x: pnp.cumsum(x),
    "squeeze_expand_dims": lambda x: pnp.squeeze(pnp.expand_dims(x, 0), 0),
    "rev": lambda x: x[::-1],
    "dynamic_slice": lambda x: lax.dynamic_slice(x, (1,), (2,)),
    "dynamic_update_slice": lambda x: lax.dynamic_update_slice(x, x[:2] * 3.0, (1,)),
    "where": lambda x: pnp.where(x > 0.5, x, -x),
    "softmax": lambda x: px.nn.log_softmax(x) * pnp.max(pnp.abs(x)),
}


@pytest.mark.parametrize("name", sorted(LINEAR_PROGRAMS))
def test_linear_primitives_take_no_fallback_and_match(name, monkeypatch):
    """Their jvp rules say they are linear (deflinear, linear_jvp): the tape transposes
    them directly, never linearizing one application, with the general path's values."""
    from plugax.interpreters.vjp_tape import trace as tape
    fallbacks = []
    real = tape.linearized_step
    monkeypatch.setattr(tape, "linearized_step",
                        lambda t, prim, *a: fallbacks.append(prim.name) or real(t, prim, *a))
    fun = LINEAR_PROGRAMS[name]
    x = pnp.asarray(np.linspace(0.1, 0.9, 4, dtype=np.float32))
    ct = pnp.asarray(np.random.default_rng(0).standard_normal(fun(x).shape).astype(np.float32))
    tape_ct = px.vjp(fun, x)[1](ct)[0]
    assert fallbacks == []
    with px.disable_jit():   # the general path (not the top level: no tape)
        general_ct = px.vjp(fun, x)[1](ct)[0]
    _same(tape_ct, general_ct)


def test_abs_of_complex_matches_the_general_path():
    z = pnp.asarray(np.array([1 + 2j, -3 + 0.5j, 0j], np.complex64))
    f = lambda z: pnp.sum(pnp.abs(z) * pnp.array([1.0, 2.0, 3.0]))   # noqa: E731
    tape_ct = px.grad(f)(z)
    with px.disable_jit():
        general_ct = px.grad(f)(z)
    _same(tape_ct, general_ct)
    assert np.isfinite(np.asarray(tape_ct)).all()    # |0| has a finite derivative
