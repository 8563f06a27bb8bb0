"""Issue 12: an eager call accepts exactly what a traced call accepts, and gives the same type.

Every eager bind runs the primitive's abstract_eval (memoised) before its impl,
so eager evaluation, make_jaxpr and jit reject the same inputs with the same
error (naming the primitive, the operand types and the user's call line) and
type their results alike. Also here: constants hoisted into jaxprs keep their
dtype (the func8 seed), and `plugax.block_until_ready` of a pytree.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import plugax as px
import plugax.lax as lax
import plugax.numpy as pnp
from plugax.core import rules as R
from plugax.extend import (Array, Primitive, PluginInfo, RuleSet, ShapedArray, get_aval,
                           hookimpl)
from plugax.jaxpr.ir import Literal
from plugax.testing import (check_jvp, check_vmap, declared_cases, has_lowering, rand,
                            scoped_plugin, x64)

F32 = np.float32


# --- helpers -----------------------------------------------------------------------------
def _binder(prim: Primitive, params: dict):
    """`prim` bound with `params`. Eager and traced calls both bind on the line below, so
    an error's call site (the user's line) is the same in both."""
    def run(*args):
        return prim.bind(*args, **params)
    return run


def _types(outs) -> list[tuple]:
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    return [(a.shape, a.dtype, a.weak_type) for a in map(get_aval, outs)]


def _outcome(call) -> tuple:
    """("ok", output types) or ("rejected", error type, message) of `call()`."""
    try:
        out = call()
    except Exception as err:   # noqa: BLE001 - the outcome *is* the error
        return ("rejected", type(err), str(err))
    return ("ok", [(a.shape, a.dtype, a.weak_type) for a in out])


def _eager(fun, args) -> tuple:
    return _outcome(lambda: [get_aval(o) for o in
                             (lambda r: r if isinstance(r, (list, tuple)) else [r])(fun(*args))])


def _traced(fun, args) -> tuple:
    return _outcome(lambda: px.make_jaxpr(fun)(*args).out_avals)


def _assert_agree(prim: Primitive, args: list, params: dict, jit: bool = False) -> tuple:
    run = _binder(prim, params)
    eager, traced = _eager(run, args), _traced(run, args)
    assert eager == traced, f"{prim} on {[get_aval(a).str_short() for a in args]}"
    if jit and eager[0] == "ok" and has_lowering(prim):
        assert _eager(px.jit(run), args) == eager
    return eager


def _recorded_binds(fun, *args) -> list[tuple]:
    """(primitive, operands, params) of each equation of `fun`'s jaxpr, with the concrete
    operands evaluating that jaxpr gives it (so index operands are in range)."""
    closed = px.make_jaxpr(fun)(*args)
    env = dict(zip(closed.jaxpr.constvars, closed.consts))
    env.update(zip(closed.jaxpr.invars, args))
    records = []
    for eqn in closed.jaxpr.eqns:
        ins = [a.val if type(a) is Literal else env[a] for a in eqn.invars]
        records.append((eqn.primitive, ins, dict(eqn.params)))
        out = eqn.primitive.bind(*ins, **eqn.params)
        env.update(zip(eqn.outvars, out if eqn.primitive.multiple_results else [out]))
    return records


def _variants(args: list) -> dict[str, list]:
    """The operands recast (those of the first one's dtype), made weak, or with one more
    axis in front: inputs that some primitives accept and others reject."""
    first = get_aval(args[0]).dtype if args else None

    def cast(dtype):
        return [Array(np.asarray(a).astype(dtype), False)
                if type(a) not in (bool, int, float) and get_aval(a).dtype == first else a
                for a in args]
    out = {name: cast(name) for name in ("bool", "int32", "uint8", "float16", "float32")}
    out["weak"] = [Array(np.asarray(a), True) if isinstance(a, (Array, np.ndarray)) else a
                   for a in args]
    if args and isinstance(args[0], (Array, np.ndarray)):
        out["extra_axis"] = [Array(np.stack([np.asarray(args[0])] * 2)), *args[1:]]
    return out


# --- the regressions of the issue ---------------------------------------------------------
def test_eager_agrees_with_traced_sin_int32():
    f = lambda x: lax.sin(x)  # noqa: E731 - one line for eager and traced calls alike
    x = np.int32(3)
    eager, traced = _eager(f, [x]), _traced(f, [x])
    assert eager[0] == "rejected" and eager == traced
    assert _eager(px.jit(f), [x]) == eager
    _, kind, message = eager
    assert issubclass(kind, TypeError)
    assert "'sin'" in message and "int32" in message and "i32[]" in message
    assert f"{__file__}:" in message and "(<lambda>)" in message   # the user's call line


@pytest.mark.parametrize("cases", [
    (np.float32(1), np.int32(2)),                    # dtypes differ
    (np.ones(3, F32), np.float32(2)),                # a rank-0 case beside a full one
    (np.ones((), F32), np.ones((1,), F32)),          # rank 0 against rank 1
])
def test_eager_agrees_with_traced_select_mismatched_cases(cases):
    f = lambda p, a, b: lax.select(p, a, b)  # noqa: E731
    args = [np.bool_(True), *cases]
    eager = _eager(f, args)
    assert eager[0] == "rejected" and eager == _traced(f, args) == _eager(px.jit(f), args)
    assert "select_n" in eager[2]


def test_eager_agrees_with_traced_select_rank0_cases_and_weak_scalars():
    f = lambda p, a, b: lax.select(p, a, b)  # noqa: E731
    for args in ([np.bool_(True), np.float32(1), np.float32(2)],
                 [np.bool_(False), 1.0, np.float32(2)],
                 [np.bool_(True), 1.0, 2.0]):
        eager = _eager(f, args)
        assert eager[0] == "ok" and eager == _traced(f, args)
        assert float(f(*args)) == float(px.jit(f)(*args))


def test_eager_agrees_with_traced_result_dtype_comes_from_abstract_eval():
    """An impl computing in another dtype (NumPy's float64) is typed as abstract_eval says."""
    wide_p = Primitive("widening_double")

    class Widening:
        @hookimpl
        def plugax_plugin_info(self):
            return PluginInfo(name="widening")

        @hookimpl
        def plugax_primitive_rules(self):
            return [RuleSet(wide_p, impl=lambda ctx, x: np.asarray(x, np.float64) * 2,
                            abstract_eval=lambda ctx, x: ShapedArray(x.shape, x.dtype))]

    with scoped_plugin(Widening(), "widening"), x64():
        x = np.ones(3, np.float16)
        for _ in range(2):   # the general path, then the cached fast path
            out = wide_p.bind(x)
            assert out.dtype == np.float16 and np.asarray(out).dtype == np.float16
        assert _eager(_binder(wide_p, {}), [x]) == _traced(_binder(wide_p, {}), [x])


def test_eager_agrees_with_traced_errors_name_each_call_site():
    def f(x):
        return lax.sin(x)
    with pytest.raises(TypeError) as eager:
        f(np.int32(1))
    with pytest.raises(TypeError) as traced:
        px.make_jaxpr(f)(np.int32(1))
    assert str(eager.value) == str(traced.value)
    assert str(eager.value).count(" at ") == 1   # annotated once, however often raised


def test_eager_agrees_with_traced_abstract_eval_is_memoised_for_eager_binds():
    """Eager binds share staging's memo: one abstract_eval per signature, forgotten when
    the rules are rebuilt."""
    count_p = Primitive("counted")
    calls = []

    class Counted:
        @hookimpl
        def plugax_plugin_info(self):
            return PluginInfo(name="counted")

        @hookimpl
        def plugax_primitive_rules(self):
            def abstract_eval(ctx, x, *, k):
                calls.append(x)
                return ShapedArray(x.shape, x.dtype, x.weak_type)
            return [RuleSet(count_p, impl=lambda ctx, x, *, k: x * k,
                            abstract_eval=abstract_eval)]

    x = pnp.ones(3)
    with scoped_plugin(Counted(), "counted"):
        for _ in range(3):
            count_p.bind(x, k=2.0)
        px.make_jaxpr(lambda x: count_p.bind(x, k=2.0))(x)
        assert len(calls) == 1
        count_p.bind(x, k=3.0)
        count_p.bind(pnp.ones(4), k=2.0)
        assert len(calls) == 3
        count_p.bind(x, k=[2.0])   # unhashable params: typed every time, still correct
        count_p.bind(x, k=[2.0])
        assert len(calls) == 5
    with scoped_plugin(Counted(), "counted"):   # a rebuild forgets what the old rule said
        count_p.bind(x, k=2.0)
        assert len(calls) == 6


# --- einsum and matmul broadcast size-1 batch dimensions ----------------------------------
EINSUM_BROADCASTS = [
    ("bij,bjk->bik", (1, 40, 8), (10, 8, 5)),
    ("bij,bjk->bik", (10, 40, 8), (1, 8, 5)),
    ("...ij,...jk->...ik", (3, 1, 4, 2), (5, 2, 3)),
    ("bi,bi->b", (1, 4), (3, 4)),
    ("bi,bi->", (1, 4), (3, 4)),
    ("bi,bj->ij", (1, 4), (3, 4)),
    ("ij,ij->ij", (1, 4), (3, 1)),
    ("i,i->i", (1,), (3,)),
]


@pytest.mark.parametrize("spec,xs,ys", EINSUM_BROADCASTS)
def test_eager_agrees_with_traced_einsum_broadcasts_size1_letters(spec, xs, ys):
    x, y = rand(xs, 1), rand(ys, 2)
    want = np.einsum(spec, x, y)
    f = lambda a, b: pnp.einsum(spec, a, b)  # noqa: E731
    for got in (f(x, y), px.jit(f)(x, y)):
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
    assert _eager(f, [x, y]) == _traced(f, [x, y])


def test_eager_agrees_with_traced_einsum_size_mismatch_is_one_clear_error():
    f = lambda a, b: pnp.einsum("bi,bi->b", a, b)  # noqa: E731
    args = [np.ones((2, 4), F32), np.ones((3, 4), F32)]
    eager = _eager(f, args)
    assert eager[0] == "rejected" and eager == _traced(f, args)
    assert eager[1] is ValueError and "letter 'b' has size 2" in eager[2]


@pytest.mark.parametrize("spec,xs,ys", [c for c in EINSUM_BROADCASTS if c[0] != "i,i->i"])
def test_eager_agrees_with_traced_einsum_broadcast_jvp_vmap_transpose(spec, xs, ys):
    x, y = rand(xs, 3), rand(ys, 4)
    f = lambda a, b: pnp.einsum(spec, a, b)  # noqa: E731
    check_jvp(f, x, y)
    check_vmap(f, x, y, axis_size=2, max_placements=16)
    # transpose (through vjp): <T^T(ct), x'> == <ct, T(x')> in each operand
    out, pullback = px.vjp(f, x, y)
    ct = rand(out.shape, 5)
    ctx, cty = pullback(ct)
    assert ctx.shape == xs and cty.shape == ys
    x2, y2 = rand(xs, 6), rand(ys, 7)
    np.testing.assert_allclose(np.sum(np.asarray(ctx) * x2), np.sum(ct * np.einsum(spec, x2, y)),
                               rtol=1e-4)
    np.testing.assert_allclose(np.sum(np.asarray(cty) * y2), np.sum(ct * np.einsum(spec, x, y2)),
                               rtol=1e-4)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["abc,abd->acd", "abc,bcd->abd", "abc,abc->ab", "abc,cba->a",
                        "ab,bc->", "aab,ab->b"]), st.data())
def test_eager_agrees_with_traced_einsum_matches_numpy_broadcasting(spec, data):
    """Whatever NumPy's einsum accepts (size-1 letters broadcast), plugax computes the
    same, eagerly and traced; whatever it rejects, plugax rejects eagerly and traced."""
    tx, ty = spec.split("->")[0].split(",")
    size = st.sampled_from([1, 2, 3])
    sx = {c: data.draw(size) for c in dict.fromkeys(tx)}
    sy = {c: data.draw(size) for c in dict.fromkeys(ty)}
    x, y = rand(tuple(sx[c] for c in tx), 1), rand(tuple(sy[c] for c in ty), 2)
    _check_einsum_like_numpy(spec, x, y)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from([1, 2, 3]), max_size=3),
       st.lists(st.sampled_from([1, 2, 3]), max_size=3))
def test_eager_agrees_with_traced_einsum_ellipsis_matches_numpy(xs, ys):
    x, y = rand((*xs, 2), 1), rand((*ys, 2), 2)
    _check_einsum_like_numpy("...c,...c->...", x, y)


def _check_einsum_like_numpy(spec: str, x: np.ndarray, y: np.ndarray) -> None:
    f = lambda a, b: pnp.einsum(spec, a, b)  # noqa: E731
    eager = _eager(f, [x, y])
    assert eager == _traced(f, [x, y])
    try:
        want = np.einsum(spec, x, y)
    except ValueError:
        assert eager[0] == "rejected"
        return
    assert eager == ("ok", [(want.shape, np.dtype(F32), False)])
    np.testing.assert_allclose(np.asarray(f(x, y)), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("xs,ys", [((1, 4, 2), (3, 2, 5)), ((3, 4, 2), (1, 2, 5)),
                                   ((2, 1, 4, 2), (3, 2, 5)), ((4, 2), (3, 1, 2, 5)),
                                   ((2,), (3, 2, 5)), ((3, 4, 2), (2,))])
def test_eager_agrees_with_traced_matmul_broadcasts_size1_batch_dims(xs, ys):
    x, y = rand(xs, 1), rand(ys, 2)
    want = np.matmul(x, y)
    f = lambda a, b: pnp.matmul(a, b)  # noqa: E731
    for got in (f(x, y), px.jit(f)(x, y), pnp.asarray(x) @ y):
        assert got.shape == want.shape
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
    assert _eager(f, [x, y]) == _traced(f, [x, y])
    check_jvp(f, x, y)
    check_vmap(f, x, y, axis_size=2, max_placements=16)


# --- generated: every declared case and every primitive the programs below use ---------
def test_eager_agrees_with_traced_declared_cases_exist():
    assert len({c.prim for c in declared_cases()}) >= 10


@pytest.mark.parametrize("case", declared_cases(), ids=lambda c: f"{c.plugin}:{c.id}")
def test_eager_agrees_with_traced_declared_case(case):
    if not isinstance(case.prim, Primitive):
        pytest.skip("a function, not a primitive")
    args = list(case.args)
    assert _assert_agree(case.prim, args, case.params, jit=True)[0] == "ok"
    for name, variant in _variants(args).items():
        if name == "extra_axis" and "callback" in case.params:
            continue   # a callback's result type is declared, and checked when it runs (JAX)
        _assert_agree(case.prim, variant, case.params)


def _programs() -> dict[str, tuple]:
    """Small programs whose jaxprs use most primitives of the built-in families; each
    equation becomes a generated eager-versus-traced check."""
    x, y = rand((2, 3), 1), rand((2, 3), 2)
    i, j = np.array([[3, -2, 5], [1, 4, -7]], np.int32), np.array([[2, 3, 1], [5, 2, 3]],
                                                                   np.int32)
    b = np.array([[True, False, True], [False, False, True]])
    return {
        "unary": (lambda x: [pnp.sin(x), pnp.cos(x), pnp.tan(x), pnp.exp(x), pnp.tanh(x),
                             pnp.log(pnp.abs(x) + 1), pnp.sqrt(pnp.abs(x)), pnp.arctan(x),
                             pnp.arcsin(x / 4), pnp.arccos(x / 4), pnp.sinh(x), pnp.cosh(x),
                             pnp.arcsinh(x), pnp.expm1(x), pnp.log1p(pnp.abs(x)), pnp.cbrt(x),
                             pnp.floor(x), pnp.ceil(x), pnp.round(x), pnp.sign(x), -x,
                             pnp.isfinite(x), x ** 2, x ** 3, lax.rsqrt(pnp.abs(x) + 1),
                             pnp.exp2(x), lax.logistic(x), pnp.abs(x), pnp.square(x),
                             pnp.arccosh(pnp.abs(x) + 1), pnp.arctanh(x / 4)], (x,)),
        "binary": (lambda x, y: [x + y, x - y, x * y, x / y, pnp.maximum(x, y),
                                 pnp.minimum(x, y), pnp.arctan2(x, y), x < y, x <= y, x > y,
                                 x >= y, x == y, x != y, pnp.remainder(x, y),
                                 pnp.where(x < y, x, y), pnp.clip(x, -0.5, 0.5),
                                 pnp.power(pnp.abs(x), y),
                                 lax.clamp(F32(-0.5), x, F32(0.5))], (x, y)),
        "integer": (lambda i, j: [i & j, i | j, i ^ j, ~i, i // j, i % j, i * j, -i,
                                  pnp.maximum(i, j), i ** 2], (i, j)),
        "boolean": (lambda b, c: [b & c, b | c, ~b, pnp.logical_xor(b, c)], (b, ~b)),
        "reductions": (lambda x: [pnp.sum(x, 0), pnp.prod(x, 1), pnp.max(x), pnp.min(x, 0),
                                  pnp.argmax(x, 1), pnp.argmin(x, 0), pnp.any(x > 0),
                                  pnp.all(x > 0), pnp.cumsum(x, 0), pnp.cumprod(x, 1),
                                  lax.cummax(x, 0), lax.cummin(x, 1), pnp.mean(x)], (x,)),
        "shape": (lambda x: [x.reshape(3, 2), x.T, pnp.broadcast_to(x, (4, 2, 3)),
                             pnp.expand_dims(x, 0)[0], pnp.concatenate([x, x]),
                             lax.pad(x, np.float32(0), [(1, 0, 0), (0, 2, 1)]),
                             x[1:, ::2], x[::-1], lax.rev(x, (1,)),
                             lax.dynamic_slice(x, (0, 1), (2, 2)),
                             lax.dynamic_update_slice(x, x[:1, :1], (1, 1)),
                             x[np.array([1, 0])], x.at[np.array([0, 0])].add(1.0),
                             pnp.squeeze(x[None], 0)], (x,)),
        "sorting": (lambda x: [lax.sort(x, dimension=0), pnp.argsort(x), lax.top_k(x, 2)[0],
                               pnp.median(x, axis=1)], (x,)),
        "products": (lambda x, y: [x @ y.T, pnp.dot(x[0], y[0]), pnp.outer(x[0], y[0]),
                                   pnp.einsum("ij,kj->ik", x, y),
                                   pnp.tensordot(x, y, 2)], (x, y)),
        "conversions": (lambda x: [x.astype(np.int32), x.astype(bool),
                                   lax.convert_element_type(x, np.float16),
                                   lax.integer_pow(x, 3), lax.iota(np.int32, 4),
                                   lax.stop_gradient(x)], (x,)),
        "control_flow": (lambda x: [lax.cond(x[0, 0] > 0, lambda v: v * 2, lambda v: -v, x),
                                    lax.fori_loop(0, 3, lambda k, v: v + k, x),
                                    lax.scan(lambda c, v: (c + v, c * v), x[0], x)[1],
                                    lax.while_loop(lambda v: v[0, 0] < 3, lambda v: v + 1, x),
                                    px.jit(lambda v: v * 2)(x), _smooth(x), _clipped(x)], (x,)),
        "bits": (lambda i, j: [lax.shift_left(i, j), lax.shift_right_arithmetic(i, j),
                               lax.shift_right_logical(i, j), lax.population_count(i),
                               lax.clz(i), lax.bitcast_convert_type(i, np.float32),
                               lax.reduce_xor(i, axes=(1,))], (i, j)),
        "floats": (lambda x, y: [lax.nextafter(x, y), lax.cumlogsumexp(x, axis=1),
                                 lax.reduce_precision(x, exponent_bits=5, mantissa_bits=10),
                                 lax.optimization_barrier(x), *pnp.split(x, 3, axis=1),
                                 lax.reduce_window(x, 0.0, lax.add, (1, 2), (1, 1), "VALID"),
                                 lax.custom_linear_solve(lambda v: 2 * v, y,
                                                         lambda mv, b: b / 2)], (x, y)),
        "complex": (lambda x, y: [lax.real(lax.complex(x, y)), lax.imag(lax.complex(x, y)),
                                  lax.conj(lax.complex(x, y))], (x, y)),
        "windows": (lambda x: [lax.reduce_window(x, -np.inf, lax.max, (1, 2), (1, 1), "VALID"),
                               lax.reduce_window(x, 1.0, lax.mul, (2, 1), (1, 1), "SAME")],
                    (x,)),
        "random": (lambda x: [px.random.normal(px.random.key_data(px.random.key(0)), (2,)),
                              px.random.gamma(px.random.PRNGKey(1), x[0, 0] ** 2 + 1),
                              lax.rng_bit_generator(np.array([1, 2, 3, 4], np.uint32),
                                                    (2, 3))[1],
                              lax.rng_uniform(0.0, 1.0, (3,))], (x,)),
    }


@px.custom_jvp
def _smooth(x):
    return pnp.sin(x)


_smooth.defjvp(lambda primals, tangents: (_smooth(primals[0]),
                                          pnp.cos(primals[0]) * tangents[0]))


@px.custom_vjp
def _clipped(x):
    return x * 2


_clipped.defvjp(lambda x: (x * 2, None), lambda res, ct: (pnp.clip(ct * 2, -1, 1),))


def _program_records() -> list:
    return [pytest.param(name, id=name) for name in _programs()]


@pytest.mark.parametrize("name", _program_records())
def test_eager_agrees_with_traced_every_primitive_of(name):
    """Each equation of the program, bound on the values it sees, and on variants of them
    (other dtypes, weak, one more axis): eager and traced agree on the outcome: the
    output types, or the error's type and message."""
    fun, args = _programs()[name]
    records = _recorded_binds(lambda *a: fun(*a), *args)
    assert records
    for prim, ins, params in records:
        assert _assert_agree(prim, ins, params, jit=True)[0] == "ok"
        if any(callable(v) or (isinstance(v, tuple) and any(map(callable, v)))
               for v in params.values()):
            continue   # params holding traced Python functions (custom_linear_solve's fns)
            #            were traced for these operand types: other types are not a call a
            #            user's program can make
        with np.errstate(all="ignore"):   # casts of the values may overflow: that is fine
            for variant in _variants(ins).values():
                _assert_agree(prim, variant, params)


def test_eager_agrees_with_traced_programs_cover_most_primitives():
    seen = {prim for fun, args in _programs().values()
            for prim, _, _ in _recorded_binds(lambda *a: fun(*a), *args)}
    seen |= {c.prim for c in declared_cases()}
    missing = sorted(p.name for p in R.impl_rules if p not in seen)
    assert len(seen) >= 0.9 * len(R.impl_rules), f"add programs using {missing}"


# --- constants keep their dtype (the func8 seed of jaxpr-language.txt) ---------------------
FUNC8_JAXPR = """\
{ lambda a:i32[1]; b:f32[] c:f32[1] d:f32[]. let
    e:bool[] = ge b 0.0
    f:i32[] = convert_element_type[new_dtype=int32 weak_type=False] e
    g:f32[1] = cond[
      branches=(
        { lambda ; h:i32[1] i:f32[1] j:f32[]. let
            k:f32[1] = convert_element_type[new_dtype=float32 weak_type=True] h
            l:f32[1] = add k j
          in (l,) }
        { lambda ; m:i32[1] n:f32[1] o:f32[]. let  in (n,) }
      )
    ] f a c d
  in (g,) }"""


def func8(arg1, arg2):  # Where `arg2` is a pair.
    return lax.cond(arg1 >= 0.,
                    lambda xtrue: xtrue[0],
                    lambda xfalse: pnp.array([1]) + xfalse[1],
                    arg2)


def test_constants_keep_their_dtype_func8():
    """The seed prints `m_` for the unused binder; plugax, like JAX 0.10, prints `m`."""
    closed = px.make_jaxpr(func8)(5., (pnp.zeros(1), 2.))
    assert "\n".join(line.rstrip() for line in str(closed).splitlines()) == FUNC8_JAXPR
    px.typecheck_jaxpr(closed)
    const, = closed.consts
    assert get_aval(const) == ShapedArray((1,), np.int32)
    # cond's result takes branch 0's (the false branch's) weak type, whichever runs
    assert closed.out_avals[0] == ShapedArray((1,), F32, weak_type=True)
    for pred, want in ((5., 0.), (-5., 3.)):
        for out in (func8(pred, (pnp.zeros(1), 2.)), px.jit(func8)(pred, (pnp.zeros(1), 2.))):
            assert out.dtype == F32 and out.weak_type and float(out[0]) == want


def test_constants_keep_their_dtype_when_promoted_under_a_trace():
    """A non-scalar constant is converted by a staged equation (JAX's jaxpr does the
    same); a rank-0 one is folded into a literal of the new type."""
    ints = np.arange(3, dtype=np.int32)
    closed = px.make_jaxpr(lambda x: x + ints)(F32(1))
    assert [get_aval(c) for c in closed.consts] == [ShapedArray((3,), np.int32)]
    assert "convert_element_type[new_dtype=float32 weak_type=False] a" in str(closed)
    closed = px.make_jaxpr(lambda x: x + np.int32(3))(F32(1))
    assert not closed.consts and "convert_element_type" not in str(closed)
    assert float(px.jit(lambda x: x + ints)(F32(1))[2]) == 3.0


# --- block_until_ready --------------------------------------------------------------------
def test_block_until_ready_tree():
    class Pending:
        waited = 0

        def block_until_ready(self):
            Pending.waited += 1
            return self

    device = px.jit(lambda x: x * 2)(pnp.ones(3))
    tree = {"host": pnp.ones(2), "device": [device, (device + 1, 3)], "none": None,
            "numpy": np.zeros(2), "text": "label", "other": Pending()}
    assert px.block_until_ready(tree) is tree
    assert device.is_ready() and Pending.waited == 1
    leaf = pnp.arange(3)
    assert px.block_until_ready(leaf) is leaf
    assert px.block_until_ready(7) == 7 and px.block_until_ready(None) is None
    assert px.block_until_ready([]) == []
    jaxpr = px.make_jaxpr(px.block_until_ready)({"a": pnp.ones(2)})   # tracers pass through
    assert not jaxpr.eqns and jaxpr.jaxpr.outvars == jaxpr.jaxpr.invars
