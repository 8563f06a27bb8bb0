"""The current trace: per thread, restored after errors, and the errors that guard it.

Uses the toy plugin from conftest.py, so it runs with no family loaded.
"""
from __future__ import annotations

import inspect
import sys
import threading
import time

import numpy as np
import pytest

import plugax
from plugax.core.trace import current_trace, eval_trace
from plugax.extend import PluginInfo, Primitive, RuleSet, ShapedArray, hookimpl

HERE = __file__.replace("\\", "/")


def _line() -> int:
    """Line number of the caller."""
    return inspect.currentframe().f_back.f_lineno


def _assert_clean():
    assert current_trace() is eval_trace


# --- threads ----------------------------------------------------------------------------

yield_p = Primitive("yield_gil")


class YieldPlugin:
    """An identity primitive whose impl sleeps, so threads switch in the middle of a trace."""

    @hookimpl
    def plugax_plugin_info(self) -> PluginInfo:
        return PluginInfo(name="yielder")

    @hookimpl
    def plugax_primitive_rules(self) -> list:
        def impl(ctx, x):
            time.sleep(0.0002)
            return np.asarray(x)

        def jvp(ctx, primals, tangents):
            return yield_p.bind(primals[0]), tangents[0]

        return [RuleSet(yield_p, impl=impl, jvp=jvp,
                        abstract_eval=lambda ctx, x: ShapedArray(x.shape, x.dtype, x.weak_type))]


@pytest.fixture
def yielder():
    with plugax.registry.scoped(YieldPlugin(), "yielder"):
        yield yield_p.bind


def test_threads_have_their_own_trace(toy, yielder):
    """Two threads interleave jvp and make_jaxpr; each sees only its own trace."""
    def f_a(x):  # d/dx sin(x) * x = cos(x) x + sin(x)
        return toy.mul_p.bind(yielder(toy.sin(x)), yielder(x))

    def f_b(x):  # d/dx -cos(x) = sin(x)
        return toy.neg_p.bind(yielder(toy.cos(yielder(x))))

    expected = {
        "a": (f_a, lambda x: np.sin(x) * x, lambda x: np.cos(x) * x + np.sin(x),
              ["sin", "yield_gil", "yield_gil", "mul"]),
        "b": (f_b, lambda x: -np.cos(x), np.sin, ["yield_gil", "cos", "yield_gil", "neg"]),
    }
    barrier = threading.Barrier(2)
    errors: list = []
    counts = {"a": 0, "b": 0}

    def worker(which: str) -> None:
        fun, value, deriv, prims = expected[which]
        try:
            barrier.wait()
            for i in range(40):
                x = np.float32(0.1 + 0.05 * i + (0.5 if which == "b" else 0.0))
                p, t = plugax.jvp(fun, (x,), (np.float32(1.0),))
                np.testing.assert_allclose(np.asarray(p), value(x), rtol=1e-5)
                np.testing.assert_allclose(np.asarray(t), deriv(x), rtol=1e-5)
                jaxpr = plugax.make_jaxpr(fun)(x)
                assert [str(e.primitive) for e in jaxpr.jaxpr.eqns] == prims
                assert current_trace() is eval_trace
                counts[which] += 1
        except BaseException as err:  # reported by the main thread
            errors.append((which, err))

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        threads = [threading.Thread(target=worker, args=(w,)) for w in "ab"]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
    finally:
        sys.setswitchinterval(old)
    assert errors == []
    assert counts == {"a": 40, "b": 40}
    _assert_clean()


def test_a_new_thread_starts_at_the_eval_trace(toy):
    seen = []

    def inside(x):
        t = threading.Thread(target=lambda: seen.append(current_trace()))
        t.start()
        t.join()
        return toy.sin(x)

    plugax.make_jaxpr(inside)(np.float32(1.0))
    assert seen == [eval_trace]


# --- errors inside transformations leave the trace clean ----------------------------------

class Boom(Exception):
    pass


def _boom(*args):
    raise Boom("inside the traced function")


TRANSFORMS = {
    "jvp": lambda f: plugax.jvp(f, (np.float32(1.0),), (np.float32(1.0),)),
    "vmap": lambda f: plugax.vmap(f)(np.ones(3, np.float32)),
    "make_jaxpr": lambda f: plugax.make_jaxpr(f)(np.float32(1.0)),
    "make_jaxpr(jvp)": lambda f: plugax.make_jaxpr(
        lambda x: plugax.jvp(f, (x,), (x,)))(np.float32(1.0)),
    "jvp(vmap)": lambda f: plugax.jvp(plugax.vmap(f), (np.ones(2, np.float32),),
                                      (np.ones(2, np.float32),)),
    "vmap(make_jaxpr)": lambda f: plugax.vmap(
        lambda x: (plugax.make_jaxpr(f)(x), x)[1])(np.ones(2, np.float32)),
}


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_trace_restored_after_exception(toy, name):
    transform = TRANSFORMS[name]

    def fails_after_some_work(x):
        y = toy.sin(x)
        return _boom(y)

    with pytest.raises(Boom):
        transform(fails_after_some_work)
    _assert_clean()
    transform(lambda x: toy.sin(x))  # the next call works
    _assert_clean()


def test_trace_restored_after_a_failing_impl(toy):
    bad_p = Primitive("bad_impl")

    class Bad:
        @hookimpl
        def plugax_plugin_info(self):
            return PluginInfo(name="bad")

        @hookimpl
        def plugax_primitive_rules(self):
            def impl(ctx, x):
                raise FloatingPointError("impl exploded")
            return [RuleSet(bad_p, impl=impl, abstract_eval=lambda ctx, x: x,
                            jvp=lambda ctx, p, t: (bad_p.bind(*p), t[0]))]

    with plugax.registry.scoped(Bad(), "bad"):
        with pytest.raises(plugax.PlugaxError, match="impl exploded") as info:
            plugax.jvp(lambda x: bad_p.bind(toy.sin(x)), (np.float32(1.0),),
                       (np.float32(1.0),))
        assert "bad_impl" in str(info.value)
        _assert_clean()
    p, t = plugax.jvp(toy.sin, (np.float32(0.0),), (np.float32(3.0),))
    assert float(p) == 0.0 and float(t) == 3.0


# --- escaped tracers ----------------------------------------------------------------------

def test_escaped_jaxpr_tracer_used_eagerly(toy):
    leaked = []

    def f(x):
        leaked.append(x)
        return toy.sin(x)

    plugax.make_jaxpr(f)(np.float32(1.0)); line = _line()  # noqa: E702
    with pytest.raises(plugax.UnexpectedTracerError) as info:
        toy.sin(leaked[0])
    message = str(info.value)
    assert isinstance(info.value, TypeError)
    assert "primitive 'sin'" in message and "escaped" in message
    assert f"created by DynamicJaxprTrace at {HERE}:{line}" in message
    _assert_clean()
    assert float(toy.sin(np.float32(0.0))) == 0.0


def test_escaped_jvp_tracer_used_eagerly(toy):
    leaked = []

    def f(x):
        leaked.append(toy.sin(x))
        return x

    plugax.jvp(f, (np.float32(1.0),), (np.float32(1.0),)); line = _line()  # noqa: E702
    with pytest.raises(plugax.UnexpectedTracerError) as info:
        leaked[0] * 2.0
    message = str(info.value)
    assert "primitive 'mul'" in message
    assert f"created by JVPTrace at {HERE}:{line}" in message
    _assert_clean()


def test_escaped_batch_tracer_used_eagerly(toy):
    leaked = []

    def f(x):
        leaked.append(x)
        return toy.sin(x)

    plugax.vmap(f)(np.ones(3, np.float32)); line = _line()  # noqa: E702
    with pytest.raises(plugax.UnexpectedTracerError, match="BatchTrace") as info:
        toy.cos(leaked[0])
    assert f"{HERE}:{line}" in str(info.value)


def test_escaped_tracer_used_in_a_later_trace(toy):
    leaked = []
    plugax.make_jaxpr(lambda x: leaked.append(x) or toy.sin(x))(np.float32(1.0))
    with pytest.raises(plugax.UnexpectedTracerError):
        plugax.make_jaxpr(lambda y: toy.sin(leaked[0]) * y)(np.float32(2.0))


# --- concretization -------------------------------------------------------------------------

@pytest.mark.parametrize("op", [bool, int, float])
def test_concretization_error_names_operation_and_user_line(toy, op):
    def f(x):
        return op(toy.sin(x))

    line = f.__code__.co_firstlineno + 1
    with pytest.raises(plugax.ConcretizationTypeError) as info:
        plugax.make_jaxpr(f)(np.float32(1.0))
    message = str(info.value)
    assert isinstance(info.value, TypeError)
    assert f"{op.__name__}() was called on" in message
    assert "JaxprTrace" in message
    assert f"{HERE}:{line} (f)" in message
    _assert_clean()


def test_concretization_error_from_python_if(toy):
    def f(x):
        if x > 0.0:
            return 2.0 * x
        return x

    line = f.__code__.co_firstlineno + 1
    with pytest.raises(plugax.ConcretizationTypeError, match=r"bool\(\)") as info:
        plugax.make_jaxpr(f)(np.float32(1.0))
    assert f"{HERE}:{line}" in str(info.value)
    # Under vmap the branch condition is batched, so it is abstract too.
    with pytest.raises(plugax.ConcretizationTypeError, match="BatchTrace"):
        plugax.vmap(f)(np.ones(3, np.float32))
    # Under jvp inside make_jaxpr, the primal itself is abstract.
    with pytest.raises(plugax.ConcretizationTypeError):
        plugax.make_jaxpr(lambda x: plugax.jvp(f, (x,), (x,)))(np.float32(1.0))
    _assert_clean()


def test_jvp_tracers_are_concrete(toy):
    """Autodidax's example: Python control flow on a JVP tracer uses its primal."""
    def f(x):
        if x > 0.:
            return 2. * x
        else:
            return x

    p, t = plugax.jvp(f, (3.0,), (1.0,))
    assert (float(p), float(t)) == (6.0, 2.0)
    p, t = plugax.jvp(f, (-3.0,), (1.0,))
    assert (float(p), float(t)) == (-3.0, 1.0)

    def deriv(g):
        return lambda x: plugax.jvp(g, (x,), (1.0,))[1]

    assert float(deriv(deriv(f))(3.0)) == 0.0  # nested jvp: primal of a primal


def test_conversions_of_jvp_tracers(toy):
    seen = {}

    def f(x):
        seen["bool"], seen["int"], seen["float"] = bool(x), int(x), float(x)
        return toy.sin(x)

    plugax.jvp(f, (np.float32(2.5),), (np.float32(1.0),))
    assert seen["bool"] is True and seen["int"] == 2 and seen["float"] == 2.5


def test_numpy_conversion_of_a_jvp_tracer_is_an_error(toy):
    """np.asarray would silently drop the tangent (a wrong derivative): JAX refuses it,
    and so do we, even though the primal is concrete."""
    def f(x):
        return toy.sin(np.asarray(x))

    with pytest.raises(plugax.errors.TracerArrayConversionError, match="__array__"):
        plugax.jvp(f, (np.float32(2.5),), (np.float32(1.0),))
    assert plugax.core.trace.current_trace() is plugax.core.trace.eval_trace
