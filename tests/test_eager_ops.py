"""`plugax.extend.eager_op`: the C accelerator of an elementwise op's eager fast path.

The wrapper must behave exactly as the Python function it wraps: the fast path
(NumPy function on the operands' values, result with their very aval) only
under the conditions core/_eager.c lists, and the wrapped function, with the
same arguments, in every other case. These tests count the wrapped function's
calls to tell which path ran. Without the compiled module `eager_op` returns the
function itself; the tests that need the module are skipped then.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import plugax
from plugax.core import eager_ops
from plugax.core.array import Array
from plugax.core.trace import _state, current_trace, eval_trace, non_eager_blocks
from plugax.extend import eager_op, interned_aval, ShapedArray

needs_c = pytest.mark.skipif(not eager_ops.accelerated(), reason="the C accelerator is not built")


def _array(values, dtype=np.float32, weak=False) -> Array:
    value = np.asarray(values, dtype)
    out = Array(value, weak)
    assert out.aval is interned_aval(ShapedArray(value.shape, value.dtype, weak))
    return out


class Counting:
    """A stand-in for the plugin's Python function: counts its calls."""

    def __init__(self, fn):
        self.fn, self.calls = fn, 0
        self.__name__ = "counting"

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.fn(*args, **kwargs)


def _op(numpy_fn, arity, known=()):
    fallback = Counting(lambda *xs, **kw: ("fallback", xs, kw))
    cell = [numpy_fn, set(known)]
    return eager_op(fallback, cell, arity), fallback, cell


@needs_c
def test_fast_path_builds_an_array_of_the_operands_aval():
    x = _array([0.0, 1.0, 2.0])
    op, fallback, _ = _op(np.sin, 1, {x.aval._sig})
    out = op(x)
    assert type(out) is Array and out.aval is x.aval and fallback.calls == 0
    np.testing.assert_array_equal(np.asarray(out), np.sin(np.asarray(x)))


@needs_c
def test_binary_fast_path_needs_one_aval_for_both_operands():
    x, y = _array([1.0, 2.0]), _array([3.0, 4.0])
    op, fallback, _ = _op(np.add, 2, {x.aval._sig})
    np.testing.assert_array_equal(np.asarray(op(x, y)), [4.0, 6.0])
    assert fallback.calls == 0
    weak = _array([3.0, 4.0], weak=True)     # another aval: the Python path decides
    assert op(x, weak)[0] == "fallback" and fallback.calls == 1
    assert op(x, np.ones(2, np.float32))[0] == "fallback"      # not an Array
    assert op(x, 1.0)[0] == "fallback"


@needs_c
def test_every_unmet_condition_calls_the_wrapped_function():
    x = _array([1.0, 2.0])
    op, fallback, cell = _op(np.sin, 1)
    assert op(x)[0] == "fallback"                      # signature not checked yet
    cell[1].add(x.aval._sig)
    cell[0] = None                                     # impl rule overridden
    assert op(x)[0] == "fallback"
    cell[0] = np.sin
    assert op(x, extra=1) == ("fallback", (x,), {"extra": 1})   # keywords
    assert op(x, x)[0] == "fallback"                   # wrong arity
    device_backed = Array.from_buffer(object(), x.aval)     # no NumPy value yet
    assert op(device_backed)[0] == "fallback"
    assert fallback.calls == 5
    assert type(op(x)) is Array and fallback.calls == 5


@needs_c
def test_a_running_transformation_takes_the_python_path():
    x = _array([1.0, 2.0])
    op, fallback, _ = _op(np.sin, 1, {x.aval._sig})
    seen = []
    plugax.grad(lambda v: seen.append(op(x)) or v)(1.0)
    assert seen[0][0] == "fallback"
    # another thread's block: this thread is still eager, so the fast path runs
    non_eager_blocks[0] += 1
    try:
        assert type(op(x)) is Array
        result = []
        previous, _state.trace = _state.trace, object()
        try:
            result.append(op(x))
        finally:
            _state.trace = previous
        assert result[0][0] == "fallback"
    finally:
        non_eager_blocks[0] -= 1


@needs_c
def test_rank_0_results_are_wrapped_by_array():
    x = _array(0.5, weak=True)
    op, _, _ = _op(np.sin, 1, {x.aval._sig})
    out = op(x)      # np.sin of a rank-0 array is a NumPy scalar
    assert type(out) is Array and out.shape == () and out.weak_type
    assert out.dtype == np.float32 and float(out) == pytest.approx(np.sin(0.5))


@needs_c
def test_errors_of_the_numpy_function_propagate_and_leave_no_state():
    x = _array([1.0])

    def broken(v):
        raise FloatingPointError("boom")

    op, _, cell = _op(broken, 1, {x.aval._sig})
    with pytest.raises(FloatingPointError, match="boom"):
        op(x)
    cell[0] = np.sin
    assert type(op(x)) is Array and current_trace() is eval_trace   # the next call works


@needs_c
def test_it_is_a_method_and_looks_like_the_wrapped_function():
    def add(a, b, /):
        """Add, documented."""
        return ("fallback", a, b)

    op = eager_op(add, [np.add, set()], 2)
    assert op.__wrapped__ is add and op.__name__ == "add"
    assert op.__doc__ == "Add, documented." and repr(op) == repr(add)
    op.__qualname__ = "Thing.add"            # attributes are the wrapped function's
    assert add.__qualname__ == "Thing.add"

    class Thing:
        method = op

    thing = Thing()
    assert thing.method(2) == ("fallback", thing, 2)
    assert Thing.method is op


def test_without_the_module_eager_op_is_the_identity():
    code = ("from plugax.core import eager_ops as e\n"
            "f = lambda x: x\n"
            "assert not e.accelerated() and e.eager_op(f, [None, set()], 1) is f\n"
            "print('ok')")
    env = {**os.environ, "PLUGAX_EAGER_C": "0"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


@needs_c
def test_threads_share_the_ops():
    x = _array(np.arange(64.0))
    op, fallback, _ = _op(np.cos, 1, {x.aval._sig})
    want = np.cos(np.asarray(x))
    errors = []

    def work():
        for _ in range(200):
            if not np.array_equal(np.asarray(op(x)), want):
                errors.append("mismatch")

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and fallback.calls == 0


@needs_c
def test_weak_references_work_as_for_functions():
    import weakref
    op, _, _ = _op(np.sin, 1)
    ref = weakref.ref(op)        # jaxlib's jit cache keys on a weak reference to the function
    assert ref() is op
    del op
    assert ref() is None


# --- eval_fast: the EvalTrace's fast path in C ----------------------------------------
from plugax.core import trace as trace_module   # noqa: E402
from plugax.errors import PlugaxError            # noqa: E402


def _eval_both(monkeypatch, fn):
    """fn() with the C fast path, then with the Python one."""
    with_c = fn()
    monkeypatch.setattr(trace_module, "_eval_fast", None)
    return with_c, fn()


@needs_c
def test_eval_fast_gives_what_the_python_path_gives(toy, monkeypatch):
    x = _array([0.5, 1.5, -2.0])
    y = _array([2.0], weak=True)
    s = Array(np.asarray(np.float32(3.0)), True)

    def program():
        a = toy.sin(x)
        a = toy.sin(x)                          # a signature seen: the fast path
        b = toy.add_p.bind(a, x)
        c = toy.mul_p.bind(b, s)                # rank-0 weak operand
        return [a, b, c, toy.gt_p.bind(c, x), toy.add_p.bind(y, y)]

    for got, want in zip(*_eval_both(monkeypatch, program)):
        assert type(got) is type(want) is Array and got.aval is want.aval
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@needs_c
def test_eval_fast_misses_go_to_the_general_path(toy):
    x = _array([0.5, 1.5])
    miss = trace_module._MISS
    assert trace_module._eval_fast(toy.sin_p, (x,), {}) is miss    # not typed yet
    toy.sin(x)
    assert type(trace_module._eval_fast(toy.sin_p, (x,), {})) is Array
    assert trace_module._eval_fast(toy.sin_p, (np.ones(2, np.float32),), {}) is miss
    assert trace_module._eval_fast(toy.sin_p, (x,), {"unhashable": []}) is miss
    device_backed = Array.from_buffer(object(), x.aval)
    assert trace_module._eval_fast(toy.sin_p, (device_backed,), {}) is miss
    assert type(trace_module._eval_fast(toy.sin_p, [x], {})) is Array   # a list of operands


@needs_c
def test_an_impl_failure_is_worded_once_and_runs_once(toy, monkeypatch):
    from plugax.core.rules import impl_rules
    x = _array([1.0, 2.0])
    toy.sin(x)                                   # the signature is cached
    calls = []

    def broken(ctx, v):
        calls.append(1)
        raise FloatingPointError("boom")

    monkeypatch.setitem(impl_rules, toy.sin_p, broken)
    with pytest.raises(PlugaxError, match="primitive 'sin' failed on operands .*boom"):
        toy.sin(x)
    assert calls == [1] and current_trace() is eval_trace
