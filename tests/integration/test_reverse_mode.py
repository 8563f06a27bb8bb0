"""Reverse mode as a user sees it: symbolic zeros, memory, errors, control flow, identities.

Each test names one promise of `linearize` / `vjp` / `grad` (docs/architecture.md,
"Reverse mode") and checks it through the public API: unused inputs cost
nothing, tracers die by reference counting alone, mistakes are reported in the
user's terms and leave plugax usable, Python control flow on primal values
works, and vjp is the transpose of jvp.
"""
from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import plugax as px
import plugax.numpy as pnp
from plugax import tree_util as tu
from plugax.autodiff import linearize_flat
from plugax.core.trace import Tracer, current_trace, eval_trace
from plugax.extend import Primitive, PluginInfo, RuleSet, deflinear, defvectorized, hookimpl
from plugax.testing import scoped_plugin, x64


@pytest.fixture(autouse=True)
def float64():
    with x64():
        yield


# --- unused inputs: symbolic zeros are never materialised --------------------------------

def sin_sum(x, *unused):
    return pnp.sin(x).sum()


def _args(n_unused: int) -> list:
    return [np.linspace(0.0, 1.0, 3)] + [np.ones((2, 1 + i % 4)) for i in range(n_unused)]


def _primitive_names(closed) -> list[str]:
    return [eqn.primitive.name for eqn in closed.jaxpr.eqns]


def test_linearized_jaxpr_ignores_unused_inputs():
    args = _args(20)
    _, f_lin = px.linearize(sin_sum, *args)
    lin = px.make_jaxpr(f_lin)(*args)
    assert _primitive_names(lin) == ["mul", "reduce_sum"]   # cos(x) is a residual
    used = {id(v) for eqn in lin.jaxpr.eqns for v in eqn.invars}
    assert [id(v) in used for v in lin.jaxpr.invars] == [True] + [False] * 20


@pytest.mark.parametrize("transform", ["jvp", "linearize", "grad"])
def test_unused_inputs_add_no_equations(transform):
    def staged(n_unused: int):
        args = _args(n_unused)
        if transform == "jvp":
            fn = lambda *a: px.jvp(sin_sum, a, a)
        elif transform == "linearize":
            fn = lambda *a: px.linearize(sin_sum, *a)[1](*a)
        else:
            fn = px.grad(sin_sum, argnums=tuple(range(len(args))))
        return _primitive_names(px.make_jaxpr(fn)(*args))
    with_unused = staged(20)
    assert with_unused == staged(0)
    assert "broadcast_in_dim" not in with_unused or transform == "grad"  # grad seeds a 1.0


def test_grad_of_unused_inputs_is_zeros_of_their_type():
    args = _args(20)
    grads = px.grad(sin_sum, argnums=tuple(range(21)))(*args)
    np.testing.assert_allclose(np.asarray(grads[0]), np.cos(args[0]))
    for g, a in zip(grads[1:], args[1:]):
        assert g.shape == a.shape and g.dtype == np.float64
        assert not np.any(np.asarray(g))


def test_vjp_gives_float0_zeros_for_unused_integer_inputs():
    _, f_vjp = px.vjp(sin_sum, np.ones(2), np.arange(3))
    ct_x, ct_i = f_vjp(1.0)
    np.testing.assert_allclose(np.asarray(ct_x), np.cos(np.ones(2)))
    assert ct_i.shape == (3,) and ct_i.dtype == px.dtypes.float0


# --- memory: tracers die by reference counting, no cycles ----------------------------------

class TracerSpy:
    """Weak references to every tracer a traced function sees, nested ones included."""

    def __init__(self) -> None:
        self.refs: list[weakref.ref] = []
        self.kinds: set[str] = set()

    def see(self, x):
        stack = [x]
        while stack:
            t = stack.pop()
            if isinstance(t, Tracer):
                self.refs.append(weakref.ref(t))
                self.kinds.add(type(t).__name__)
                stack += [getattr(t, slot, None) for slot in ("primal", "tangent", "val")]
        return x

    def alive(self) -> list[str]:
        return [type(r()).__name__ for r in self.refs if r() is not None]


def _spied(spy: TracerSpy):
    def f(x):
        y = spy.see(pnp.sin(spy.see(x)) * x)
        return spy.see(pnp.tanh(y).sum())
    return f


@pytest.fixture
def no_gc():
    """Cyclic GC off: whatever is freed in the test was freed by reference counting."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


# top-level grad, vjp and value_and_grad run on the VJP tape; nested ones linearize
_TAPE, _LINEARIZE = {"VJPTapeTracer"}, {"JVPTracer", "PartialEvalTracer"}


@pytest.mark.parametrize("transform, kinds", [
    (lambda f, x: px.grad(f)(x), _TAPE),
    (lambda f, x: px.vjp(f, x)[1](1.0), _TAPE),
    (lambda f, x: px.value_and_grad(f)(x), _TAPE),
    (lambda f, x: px.hessian(f)(x), _LINEARIZE),
    (lambda f, x: px.grad(lambda x: px.grad(lambda y: f(y * x))(x).sum())(x), _LINEARIZE),
], ids=["grad", "vjp", "value_and_grad", "hessian", "grad_of_grad"])
def test_tracers_are_freed_without_the_cycle_collector(no_gc, transform, kinds):
    spy = TracerSpy()
    out = transform(_spied(spy), np.linspace(0.1, 1.0, 4))
    assert kinds <= spy.kinds
    assert spy.alive() == []
    del out


def test_linearized_function_keeps_no_tracer_alive(no_gc):
    spy = TracerSpy()
    _, f_lin = px.linearize(_spied(spy), np.linspace(0.1, 1.0, 4))
    assert "PartialEvalTracer" in spy.kinds and spy.alive() == []
    assert np.isfinite(float(f_lin(np.ones(4))))


@px.custom_jvp
def softplus(x):
    return pnp.log1p(pnp.exp(x))


softplus.defjvp(lambda p, t: (softplus(p[0]), t[0] * px.lax.logistic(p[0])))


@px.custom_vjp
def sin_with_vjp(x):
    return pnp.sin(x)


sin_with_vjp.defvjp(lambda x: (pnp.sin(x), {"cos": pnp.cos(x)}),
                    lambda res, g: (g * res["cos"],))


@pytest.mark.parametrize("call", [
    lambda f, x: px.grad(f)(x),
    lambda f, x: px.vjp(f, x)[1](1.0),
    lambda f, x: px.linearize(f, x)[1](x),
    lambda f, x: px.jacrev(lambda x: pnp.sin(x) * x)(x),
    lambda f, x: px.hessian(f)(x),
    lambda f, x: px.grad(lambda x: softplus(x).sum())(x),
    lambda f, x: px.grad(lambda x: sin_with_vjp(x).sum())(x),
], ids=["grad", "vjp", "linearize", "jacrev", "hessian", "custom_jvp", "custom_vjp"])
def test_reverse_mode_creates_no_cyclic_garbage(no_gc, call):
    f = lambda x: pnp.tanh(pnp.sin(x) * x).sum()
    x = np.linspace(0.1, 1.0, 4)
    call(f, x)              # warm-up: caches filled now are not garbage
    gc.collect()
    call(f, x)
    assert gc.collect() == 0


# --- errors: the user's mistake, in the user's terms; plugax still works after ----------------

def _still_works():
    assert current_trace() is eval_trace
    assert float(px.grad(lambda x: x * x)(3.0)) == 6.0


@pytest.mark.parametrize("shape", [(3,), (2, 3)])
def test_grad_of_non_scalar_output(shape):
    with pytest.raises(TypeError, match=r"scalar-output.*shape: \(" + r",? ?".join(
            str(d) for d in shape)):
        px.grad(lambda x: pnp.sin(x))(np.ones(shape))
    _still_works()


@pytest.mark.parametrize("arg, dtype", [(3, "int64"), (np.arange(3), "int64"), (True, "bool")])
def test_grad_wrt_integer_or_bool_input(arg, dtype):
    """JAX says: 'grad requires real- or complex-valued inputs (input dtype that is a
    sub-dtype of np.inexact), but got int32. If you want to use Boolean- or integer-valued
    inputs, use vjp ...'. Ours means the same and also names the argument."""
    with pytest.raises(TypeError, match=r"real- or complex-valued inputs") as info:
        px.grad(lambda x: (x * 2.0).sum())(arg)
    assert f"got {dtype} for argument 0" in str(info.value)
    assert "integer-valued inputs, use vjp" in str(info.value)
    _still_works()


def test_grad_wrt_integer_among_argnums_names_that_argument():
    with pytest.raises(TypeError, match=r"int\d+ for argument 1"):
        px.grad(lambda x, n: x * n, argnums=(0, 1))(2.0, 3)
    assert float(px.grad(lambda x, n: x * n)(2.0, 3)) == 3.0   # fine when not differentiated
    _still_works()


def test_grad_wrt_integer_leaf_of_a_pytree_names_its_argument():
    """The leaf check runs on the flattened arguments; the message still names the
    argument (not the leaf position) the integer came from."""
    with pytest.raises(TypeError, match=r"int\d+ for argument 2"):
        px.grad(lambda a, b, c: a * b[0] * c["n"], argnums=(0, 2))(
            2.0, (1.0, 2.0), {"n": 3, "m": 1.0})
    _still_works()


def test_grad_of_pytree_output_says_scalar_only():
    with pytest.raises(TypeError, match=r"scalar-output.*pytree"):
        px.grad(lambda x: (x * 2.0,))(1.0)
    _still_works()


def test_dead_code_is_transposed_for_free_and_dropped_from_kept_linearizations():
    """grad runs the staged jaxpr backwards as is (a dead equation gets no cotangent);
    vjp, which keeps its linearization, drops dead equations and their residuals."""
    def f(x):
        unused = pnp.exp(x) * pnp.cos(x)   # staged (depends on x), needed by no output
        del unused
        return pnp.sin(x).sum()

    x = np.linspace(0.0, 1.0, 4)
    np.testing.assert_allclose(px.grad(f)(x), np.cos(x))
    lin = linearize_flat(lambda x: [f(x)], [px.numpy.asarray(x)])
    assert len(lin.staged.jaxpr.eqns) > len(lin.jaxpr.jaxpr.eqns)
    assert len(lin.staged.consts) > len(lin.jaxpr.consts)
    assert "exp" not in _primitive_names(lin.jaxpr)
    _, f_vjp = px.vjp(f, x)
    np.testing.assert_allclose(f_vjp(1.0)[0], np.cos(x))


def test_jvp_of_python_scalar_primals():
    """A Python scalar primal becomes a weak Array inside the JVP tracer, whose dtype,
    shape and weak type the numpy front ends read."""
    seen = []

    def f(x):
        seen.append((x.shape, x.dtype, x.weak_type))
        return x * x + 1.0

    p, t = px.jvp(f, (3.0,), (1.0,))
    assert float(p) == 10.0 and float(t) == 6.0
    assert seen == [((), np.dtype("float64"), True)] and p.weak_type


def test_shared_constants_cannot_be_changed_through_results():
    """grad's starting cotangent and the derivative constants are shared between calls;
    a result that is one of them (d/dx x is the cotangent itself) must not let NumPy
    code change them for the next call."""
    for f, x in [(lambda x: x, 2.0), (lambda x: pnp.tanh(x), 0.0), (pnp.mean, np.ones(4))]:
        first = np.asarray(px.grad(f)(x)).copy()
        try:
            np.asarray(px.grad(f)(x))[...] += 5.0
        except ValueError:   # read-only, as JAX's arrays are
            pass
        np.testing.assert_allclose(px.grad(f)(x), first)


def test_grad_of_integer_output():
    with pytest.raises(TypeError, match=r"real-valued outputs.*int"):
        px.grad(lambda x: pnp.sum(x > 0.0).astype(np.int32))(np.ones(3))
    _still_works()


def test_user_exception_under_grad_leaves_no_trace_behind():
    def f(x):
        y = pnp.sin(x) * x
        if y > 0.5:             # concrete primal: fine under grad
            raise ValueError(f"user bug at {float(y):.3f}")
        return y
    with pytest.raises(ValueError, match="user bug at 0.841"):
        px.grad(f)(1.0)
    assert float(px.grad(f)(0.1)) == pytest.approx(np.sin(0.1) + 0.1 * np.cos(0.1))
    _still_works()


double_p = Primitive("double_it")


class DoublerPlugin:
    """A linear primitive with a jvp but no transpose rule: forward mode only."""

    @hookimpl
    def plugax_plugin_info(self) -> PluginInfo:
        return PluginInfo(name="doubler")

    @hookimpl
    def plugax_primitive_rules(self) -> list:
        return [defvectorized(double_p, lambda x: 2 * x, jvp=deflinear(double_p))]


def test_missing_transpose_rule_names_primitive_rule_and_plugin():
    f = lambda x: pnp.sin(double_p.bind(x))
    with scoped_plugin(DoublerPlugin(), "doubler"):
        assert float(px.jvp(f, (0.5,), (1.0,))[1]) == pytest.approx(2 * np.cos(1.0))
        with pytest.raises(px.MissingRuleError) as info:
            px.grad(f)(0.5)
        message = str(info.value)
        assert "'double_it'" in message and "transpose" in message and "doubler" in message
        assert "reverse" in message
        _still_works()
        with pytest.raises(px.MissingRuleError, match="double_it"):   # same error, again
            px.vjp(f, 0.5)[1](1.0)
    _still_works()


class ScalePlugin:
    """`scale_by[factor]`: a linear primitive whose abstract_eval counts its calls."""

    def __init__(self, out_dtype=None):
        self.out_dtype = out_dtype
        self.abstract_evals = 0

    def abstract_eval(self, ctx, x, *, factor):
        self.abstract_evals += 1
        out_dtype = self.out_dtype() if callable(self.out_dtype) else self.out_dtype
        return x if out_dtype is None else x.update(dtype=out_dtype)

    @hookimpl
    def plugax_plugin_info(self) -> PluginInfo:
        return PluginInfo(name="scaler")

    @hookimpl
    def plugax_primitive_rules(self) -> list:
        return [RuleSet(primitive=scale_p, impl=lambda ctx, x, *, factor: x * factor[0],
                        abstract_eval=self.abstract_eval, jvp=deflinear(scale_p))]


scale_p = Primitive("scale_by")


def _linear_dtype(factor, x=np.ones(3)) -> np.dtype:
    """The out dtype partial eval gave the staged tangent eqn of `scale_by`."""
    lin = linearize_flat(lambda x: [scale_p.bind(x, factor=factor)], [px.numpy.asarray(x)])
    return lin.jaxpr.jaxpr.outvars[0].aval.dtype


def test_staged_abstract_eval_is_memoized_per_rule():
    """Partial eval reuses a staged primitive's out aval for the same avals and params,
    never across a replaced rule, and still stages primitives with unhashable params."""
    first = ScalePlugin()
    with scoped_plugin(first, "scaler"):
        for _ in range(3):
            _, f_lin = px.linearize(lambda x: scale_p.bind(x, factor=(2.0,)), np.ones(3))
        assert first.abstract_evals == 1
        before = first.abstract_evals
        _, f_lin = px.linearize(lambda x: scale_p.bind(x, factor=[2.0]), np.ones(3))
        _, f_lin = px.linearize(lambda x: scale_p.bind(x, factor=[2.0]), np.ones(3))
        # unhashable params: no memo, so each linearize types both the eager primal
        # bind and the staged tangent one
        assert first.abstract_evals == before + 4
    second = ScalePlugin(out_dtype=np.float32)
    with scoped_plugin(second, "scaler"):
        assert _linear_dtype((2.0,)) == np.float32
        assert second.abstract_evals >= 1


def test_staged_abstract_eval_memo_follows_enable_x64():
    """A rule may read enable_x64 (dtype canonicalisation): changing it empties the memo."""
    x32 = np.ones(3, np.float32)
    plugin = ScalePlugin(out_dtype=lambda: np.float64 if px.config.enable_x64 else np.float16)
    with scoped_plugin(plugin, "scaler"):
        assert _linear_dtype((3.0,), x32) == np.float64
        with x64(False):
            assert _linear_dtype((3.0,), x32) == np.float16


# --- Python control flow on concrete primal values -------------------------------------------

def relu_square(x):
    return x ** 2 if x > 0 else 0.0


def test_python_control_flow_under_grad():
    assert float(px.grad(relu_square)(3.0)) == 6.0
    assert float(px.grad(relu_square)(-3.0)) == 0.0


def test_python_control_flow_under_jacrev_and_hessian():
    assert float(px.jacrev(relu_square)(3.0)) == 6.0
    assert float(px.jacrev(relu_square)(-3.0)) == 0.0
    assert float(px.hessian(relu_square)(3.0)) == 2.0
    assert float(px.hessian(relu_square)(-3.0)) == 0.0
    cube_if_positive = lambda x: x ** 3 if x > 0 else -x
    assert float(px.grad(px.grad(cube_if_positive))(2.0)) == 12.0
    assert float(px.grad(px.grad(cube_if_positive))(-2.0)) == 0.0


def test_python_loop_with_data_dependent_trip_count():
    def halve_until_small(x):
        while x > 1.0:
            x = x * 0.5
        return x
    assert float(px.grad(halve_until_small)(5.0)) == 0.125   # three halvings
    assert float(px.grad(halve_until_small)(0.5)) == 1.0


# --- vjp is the transpose of jvp: <ct, J t> == <J^T ct, t> -----------------------------------

def dict_to_tuple(p):
    return pnp.sin(p["w"]) @ p["b"], {"s": (p["w"] * p["w"]).sum(axis=0), "b": pnp.tanh(p["b"])}


def tuple_to_dict(xy):
    x, (y, z) = xy
    return {"xy": pnp.outer(x, y), "z": pnp.exp(pnp.cos(z)).mean(), "x": x}


def two_args_to_list(a, b):
    return [a * b[0], pnp.sum(a, axis=1) + b[1], pnp.transpose(a) * b[1][None, :]]


class Shape:
    """A pytree leaf standing for an array of this shape (tuples would be pytree nodes)."""

    def __init__(self, *dims: int):
        self.shape = dims


PYTREE_FUNCTIONS = {
    "dict_to_tuple": (dict_to_tuple, ({"w": Shape(3, 2), "b": Shape(2)},)),
    "tuple_to_dict": (tuple_to_dict, ((Shape(3), (Shape(4), Shape(2, 2))),)),
    "two_args_to_list": (two_args_to_list, (Shape(2, 3), (Shape(2, 3), Shape(2)))),
}


def _random_like(template, rng):
    return tu.tree_map(lambda leaf: px.Array(rng.standard_normal(leaf.shape)), template)


def _inner(a, b) -> float:
    return sum(float(np.vdot(np.asarray(x), np.asarray(y)))
               for x, y in zip(tu.tree_leaves(a), tu.tree_leaves(b)))


@pytest.mark.parametrize("name", sorted(PYTREE_FUNCTIONS))
def test_vjp_is_transpose_of_jvp_on_pytrees(name):
    f, shapes = PYTREE_FUNCTIONS[name]
    rng = np.random.default_rng(0)
    primals, tangents = _random_like(shapes, rng), _random_like(shapes, rng)
    out, t_out = px.jvp(f, primals, tangents)
    out2, f_vjp = px.vjp(f, *primals)
    ct = tu.tree_map(lambda o: px.Array(rng.standard_normal(o.shape)), out)
    ct_in = f_vjp(ct)
    assert tu.tree_structure(ct_in) == tu.tree_structure(primals)
    assert tu.tree_structure(out2) == tu.tree_structure(out)
    np.testing.assert_allclose(_inner(ct, t_out), _inner(ct_in, tangents), rtol=1e-10)
    _, f_lin = px.linearize(f, *primals)
    np.testing.assert_allclose(_inner(ct, f_lin(*tangents)), _inner(ct, t_out), rtol=1e-12)


def test_a_jvp_rule_whose_primal_depends_on_tangents_fails_clearly(plugax_registry):
    """JAX: "Linearization failed to produce known values for all output primals".
    plugax used to fail later with a confusing dtype-object error."""
    import pytest
    from plugax.extend import PluginInfo, Primitive, RuleSet, ShapedArray, hookimpl

    leaky_p = Primitive("leaky_primal")

    def jvp(ctx, primals, tangents):
        (x,), (t,) = primals, tangents
        return leaky_p.bind(x + 0 * t), 2 * t

    class Leaky:
        @hookimpl
        def plugax_plugin_info(self):
            return PluginInfo(name="leaky")

        @hookimpl
        def plugax_primitive_rules(self):
            return [RuleSet(leaky_p, impl=lambda ctx, x: 2 * x, jvp=jvp,
                            abstract_eval=lambda ctx, x: ShapedArray(x.shape, x.dtype))]

    plugax_registry.register(Leaky(), "leaky")
    _, t = px.jvp(leaky_p.bind, (1.0,), (1.0,))
    assert float(t) == 2.0                                   # forward mode still works
    with pytest.raises(ValueError, match="Linearization failed to produce known values"):
        px.grad(leaky_p.bind)(1.0)
    assert float(px.grad(lambda x: x * 3)(1.0)) == 3.0   # and the next call works
