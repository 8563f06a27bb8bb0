"""jit's two dispatch paths (fastpath.py): jaxlib's C++ dispatcher for cached calls,
and the pure-Python path it falls back to. Every test runs the same calls on both
and demands identical results (values, dtypes, weak types, structure) and
identical errors (type and message)."""
from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import plugax
import plugax.numpy as pnp
from plugax_xla_call import fastpath

PATHS = ["cpp", "python"]


@pytest.fixture(params=PATHS)
def jit(request):
    """`plugax.jit` with the C++ dispatcher on or forced off for the functions it makes."""
    fastpath.set_enabled(request.param == "cpp")
    try:
        yield plugax.jit
    finally:
        fastpath.set_enabled(None)


def on_device(x) -> plugax.Array:
    """A device-backed Array (a jitted call's output), what the C++ path serves."""
    return plugax.jit(lambda a: a)(plugax.Array(np.asarray(x)))


def both_paths(make, call):
    """(result or exception) of `call(make(jit))` for the C++ and the Python path."""
    out = []
    for cpp in (True, False):
        fastpath.set_enabled(cpp)
        try:
            f = make(plugax.jit)
            try:
                out.append(("ok", call(f)))
            except Exception as err:    # the error itself is what is compared
                out.append(("err", type(err), str(err)))
        finally:
            fastpath.set_enabled(None)
    return out


def same_arrays(a, b):
    la, ta = plugax.tree_util.tree_flatten(a)
    lb, tb = plugax.tree_util.tree_flatten(b)
    assert ta == tb
    for x, y in zip(la, lb):
        assert type(x) is type(y) and isinstance(x, plugax.Array)
        assert (x.shape, x.dtype, x.weak_type) == (y.shape, y.dtype, y.weak_type)
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_cached_calls_skip_python(jit):
    f = jit(lambda x, y: pnp.sin(x) * y + 1)
    x = on_device(np.linspace(0, 1, 16, dtype=np.float32))
    jf = f.jit_function
    misses = []
    entry = jf._entry
    jf._entry = lambda *a: misses.append(1) or entry(*a)
    for _ in range(5):
        out = f(x, x)
    np.testing.assert_allclose(np.asarray(out), np.sin(np.asarray(x)) * np.asarray(x) + 1,
                               rtol=1e-6)
    assert len(misses) <= 2    # the first call (and the C++ side's first lookup)
    if f.uses_cpp_dispatch():
        assert f._cache_size() == 1
        assert len(misses) == 1


def test_many_results_stay_in_cpp(jit):
    """Results are jaxlib's ArrayImpl leaves: no per-result callback into Python, so a
    function of many results is served by the C++ path like any other."""
    x = on_device(np.linspace(0, 1, 16, dtype=np.float32))
    f = jit(lambda d: {k: v * 2 + 1 for k, v in d.items()})
    d = {f"w{i}": x for i in range(10)}
    misses = []
    entry = f.jit_function._entry
    f.jit_function._entry = lambda *a: misses.append(1) or entry(*a)
    for _ in range(3):
        out = f(d)
    assert sorted(out) == sorted(d)
    assert all(isinstance(v, plugax.Array) for v in out.values())
    np.testing.assert_allclose(np.asarray(out["w0"]), np.asarray(x) * 2 + 1)
    assert len(misses) == 1   # C++: the first call; Python: its own cached path


def test_cpp_path_returns_the_cpp_object_and_device_arrays(jit):
    """On the C++ path `jit` returns jaxlib's PjitFunction itself (no Python wrapper);
    on both paths a device result is jaxlib's ArrayImpl, an instance of plugax.Array."""
    from jaxlib import _jax
    f = jit(lambda a: a * 2)
    y = f(on_device(np.ones(3, np.float32)))
    assert (type(f) is _jax.PjitFunction) == fastpath.enabled()
    assert type(y) is _jax.ArrayImpl and isinstance(y, plugax.Array)
    assert issubclass(_jax.ArrayImpl, plugax.Array)
    assert f.__name__ == "<lambda>" and callable(f.lower)


def test_uses_cpp_dispatch_reports_the_path(jit):
    f = jit(lambda x: x + 1)
    assert f.uses_cpp_dispatch() == fastpath.enabled()


@pytest.mark.parametrize("case", ["tuple", "dict", "nested", "kwargs", "static", "weak",
                                  "int", "scalar_arg", "numpy_arg", "host_arg", "none"])
def test_results_identical_on_both_paths(case):
    x = on_device(np.arange(6, dtype=np.float32).reshape(2, 3))
    i = on_device(np.arange(3, dtype=np.int32))
    makes = {
        "tuple": (lambda j: j(lambda a, b: (a + b, a * b)), lambda f: f(x, x)),
        "dict": (lambda j: j(lambda d: {k: v * 2 for k, v in d.items()}),
                 lambda f: f({"b": x, "a": x})),
        "nested": (lambda j: j(lambda t: [t[0], {"s": t[1][0] - 1}]),
                   lambda f: f((x, [x]))),
        "kwargs": (lambda j: j(lambda a, *, scale: a * scale), lambda f: f(x, scale=x)),
        "static": (lambda j: j(lambda a, n: a * n + len(str(n)), static_argnums=1),
                   lambda f: [f(x, 2), f(x, 3), f(x, 2)]),
        "weak": (lambda j: j(lambda a: (a * 2.0, pnp.sum(a) * 0 + 1.0)), lambda f: f(x)),
        "int": (lambda j: j(lambda a: a // 2 + 1), lambda f: f(i)),
        "scalar_arg": (lambda j: j(lambda a, s: a * s), lambda f: [f(x, 2.0), f(x, 3)]),
        "numpy_arg": (lambda j: j(lambda a: a + 1), lambda f: [f(np.ones(3, np.float32))] * 2),
        "host_arg": (lambda j: j(lambda a: a - 1), lambda f: [f(plugax.Array(np.ones(2, np.float32)))] * 2),
        "none": (lambda j: j(lambda a, b: (a, None)), lambda f: f(x, None)),
    }
    make, call = makes[case]
    (k1, *r1), (k2, *r2) = both_paths(make, lambda f: [call(f) for _ in range(3)])
    assert k1 == k2 == "ok"
    same_arrays(r1[0], r2[0])


BAD_CALLS = {
    "shape": (lambda j: j(lambda a, b: a @ b), lambda f, x: f(x, on_device(np.ones((4, 4))))),
    "dtype": (lambda j: j(lambda a: plugax.lax.shift_left(a, a)), lambda f, x: f(x)),
    "structure": (lambda j: j(lambda d: d["a"] + d["b"]), lambda f, x: f({"a": x})),
    "arity": (lambda j: j(lambda a, b: a + b), lambda f, x: f(x)),
    "unhashable_static": (lambda j: j(lambda a, n: a * len(n), static_argnums=1),
                          lambda f, x: f(x, [1, 2])),
    "unknown_kwarg": (lambda j: j(lambda a: a), lambda f, x: f(x, b=x)),
}


@pytest.mark.parametrize("case", sorted(BAD_CALLS))
def test_errors_identical_on_both_paths(case):
    x = on_device(np.ones(3, np.float32))
    make, bad = BAD_CALLS[case]

    def call(f):
        if case == "structure":
            f({"a": x, "b": x})   # a good call first: the bad one then misses the cache
        if case == "unhashable_static":
            f(x, (1, 2))
        return bad(f, x)

    (k1, *r1), (k2, *r2) = both_paths(make, call)
    assert k1 == k2 == "err", (r1, r2)
    assert r1 == r2


def test_static_argument_change_retraces(jit):
    traced = []

    def f(a, mode):
        traced.append(mode)
        return a * 2 if mode == "double" else a + 1

    g = jit(f, static_argnames="mode")
    x = on_device(np.ones(2, np.float32))
    outs = [np.asarray(g(x, mode=m)) for m in ("double", "inc", "double", "inc")]
    assert traced == ["double", "inc"]
    np.testing.assert_array_equal(outs, [[2, 2], [2, 2], [2, 2], [2, 2]])
    np.testing.assert_array_equal(g(x, mode="inc") + 0, [2, 2])


def test_call_inside_an_outer_trace_is_staged(jit):
    f = jit(lambda a: pnp.sin(a) * 2)
    x = on_device(np.linspace(0, 1, 3, dtype=np.float32))
    f(x)
    f(x)   # cached on both paths now
    jaxpr = plugax.make_jaxpr(lambda a: f(a) + 1)(x)
    assert "pjit" in str(jaxpr)
    g = plugax.grad(lambda a: pnp.sum(f(a)))(x)
    np.testing.assert_allclose(np.asarray(g), 2 * np.cos(np.asarray(x)), rtol=1e-6)
    v = plugax.vmap(f)(on_device(np.ones((4, 3), np.float32)))
    np.testing.assert_allclose(np.asarray(v), 2 * np.sin(np.ones((4, 3))), rtol=1e-6)
    # an outer jit stages the inner call even though its argument is concrete
    outer = jit(lambda a: f(x) + a)
    assert "pjit" in str(plugax.make_jaxpr(outer)(x))
    np.testing.assert_allclose(np.asarray(outer(x)), 2 * np.sin(np.asarray(x)) + np.asarray(x),
                               rtol=1e-6)


def test_disable_jit_runs_python(jit):
    calls = []
    f = jit(lambda a: calls.append(1) or a + 1)
    x = on_device(np.ones(2, np.float32))
    f(x)
    f(x)
    assert len(calls) == 1
    with plugax.disable_jit():
        f(x)
        f(x)
    assert len(calls) == 3


def test_a_thread_tracing_while_another_calls_at_top_level(jit):
    """The trace state is per thread: a call inside thread A's grad is staged, while
    thread B's top-level calls of the same function run (and are served from cache)."""
    f = jit(lambda a: pnp.sin(a) * 2)
    x = on_device(np.linspace(0, 1, 3, dtype=np.float32))
    f(x)
    f(x)
    inside, go_on, out = threading.Event(), threading.Event(), {}

    def tracer_thread():
        def g(a):
            inside.set()
            go_on.wait(10)
            out["jaxpr"] = str(plugax.make_jaxpr(f)(x))   # nested trace in this thread
            return pnp.sum(f(a))
        out["grad"] = np.asarray(plugax.grad(g)(x))

    t = threading.Thread(target=tracer_thread)
    t.start()
    inside.wait(10)
    for _ in range(5):    # meanwhile, top level in this thread: run, not staged
        y = f(x)
    assert isinstance(y, plugax.Array) and not isinstance(y, plugax.extend.Tracer)
    go_on.set()
    t.join()
    np.testing.assert_allclose(out["grad"], 2 * np.cos(np.asarray(x)), rtol=1e-6)
    assert "pjit" in out["jaxpr"]
    np.testing.assert_allclose(np.asarray(y), 2 * np.sin(np.asarray(x)), rtol=1e-6)


def test_override_block_stages_cached_calls(jit):
    """Inside a rule override, a cached function is traced again with the block's rules
    (the dispatch key is STAGING there), and served from cache again afterwards."""
    from plugax.core import rules as R
    from plugax.extend import RuleSet, get_primitive, override
    sin_p, cos_p = get_primitive("sin"), get_primitive("cos")
    as_cos = {platform: table[cos_p] for platform, table in R.lowering_rules.items()
              if cos_p in table}
    f = jit(lambda a: pnp.sin(a))
    x = on_device(np.zeros(2, np.float32))
    f(x)
    f(x)
    with override(RuleSet(sin_p, lowering=as_cos)):
        inner = np.asarray(f(x))
    assert inner.tolist() == [1.0, 1.0]
    assert np.asarray(f(x)).tolist() == [0.0, 0.0]


def test_calls_from_several_threads(jit):
    f = jit(lambda a: a * 2 + 1)
    inputs = [on_device(np.full((n % 3 + 1,), n, np.float32)) for n in range(12)]
    results: dict = {}
    errors: list = []

    def work(k):
        try:
            for _ in range(20):
                results[k] = np.asarray(f(inputs[k]))
        except Exception as err:  # reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for k, x in enumerate(inputs):
        np.testing.assert_array_equal(results[k], np.asarray(x) * 2 + 1)
    assert f.cache_size() == 3


def test_x64_switch_retraces(jit):
    f = jit(lambda a: a + 1)
    x = on_device(np.ones(2, np.float32))
    assert f(x).dtype == np.float32
    plugax.config.update("enable_x64", True)
    try:
        y = on_device(np.ones(2, np.float64))
        assert f(y).dtype == np.float64
        assert f(x).dtype == np.float32
    finally:
        plugax.config.update("enable_x64", False)
    assert f(x).dtype == np.float32


# --- donation -------------------------------------------------------------------

DELETED = "Array has been deleted with shape=float32[4]."


def test_donated_argument_is_deleted(jit):
    f = jit(lambda a, b: a + b, donate_argnums=0)
    one = on_device(np.ones(4, np.float32))
    for _ in range(3):         # the miss, then cached calls
        a = on_device(np.arange(4, dtype=np.float32))
        out = f(a, one)
        np.testing.assert_array_equal(np.asarray(out), np.arange(4) + 1)
        np.testing.assert_array_equal(np.asarray(one), np.ones(4))   # not donated
        with pytest.raises(RuntimeError, match=DELETED.replace("[", r"\[").replace("]", r"\]")):
            a + 1
        with pytest.raises(RuntimeError, match="Array has been deleted"):
            repr(a)
        with pytest.raises(ValueError, match="Buffer has been deleted or donated"):
            f(a, one)


def test_donate_argnames_by_keyword_and_position(jit):
    f = jit(lambda a, b: a * b, donate_argnames="b")
    for by_keyword in (True, False, True):
        a, b = on_device(np.ones(4, np.float32)), on_device(np.full(4, 3, np.float32))
        out = f(a, b=b) if by_keyword else f(a, b)
        np.testing.assert_array_equal(np.asarray(out), np.full(4, 3))
        np.testing.assert_array_equal(np.asarray(a), np.ones(4))
        with pytest.raises(RuntimeError, match="Array has been deleted"):
            np.asarray(b)


def test_donated_host_array_is_deleted_too(jit):
    f = jit(lambda a: a * 2, donate_argnums=(0,))
    a = plugax.Array(np.ones(4, np.float32))
    np.testing.assert_array_equal(np.asarray(f(a)), np.full(4, 2))
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        a + 1


def test_nothing_is_donated_under_a_transformation(jit):
    f = jit(lambda a: a * a, donate_argnums=0)
    x = on_device(np.full(4, 2, np.float32))
    g = plugax.grad(lambda a: pnp.sum(f(a)))(x)
    np.testing.assert_array_equal(np.asarray(g), np.full(4, 4))
    np.testing.assert_array_equal(np.asarray(x), np.full(4, 2))    # still alive


def test_donation_errors_are_jax_wording():
    def make(j):
        return j(lambda a: a + 1, donate_argnums=0)

    def call(f):
        a = on_device(np.ones(4, np.float32))
        f(a)
        f(on_device(np.ones(4, np.float32)))
        return f(a)

    (k1, *r1), (k2, *r2) = both_paths(make, call)
    assert k1 == k2 == "err" and r1 == r2
    assert r1[0] is ValueError


def test_unknown_donate_argname_is_refused():
    with pytest.raises(ValueError, match="invalid argnames \\['c'\\] in donate_argnames"):
        plugax.jit(lambda a, b: a, donate_argnames="c")


# --- falling back ---------------------------------------------------------------

def test_interface_check_names_the_problem():
    from jaxlib import _jax
    assert fastpath.check_interface(_jax, "0.10.2") is None
    assert "not a version" in fastpath.check_interface(_jax, "0.99.0")
    assert "has no _jax.pjit" in fastpath.check_interface(object(), "0.10.2")


def test_unavailable_dispatcher_logs_once_and_falls_back(monkeypatch, caplog):
    monkeypatch.setitem(fastpath._state, "reason", fastpath._state["reason"])
    monkeypatch.setitem(fastpath._state, "checked", False)
    monkeypatch.setattr(fastpath, "_check", lambda: "jaxlib 9.9 has no _jax.pjit")
    with caplog.at_level(logging.WARNING, logger="plugax.jit"):
        f = plugax.jit(lambda a: a * 3)
        x = on_device(np.ones(2, np.float32))
        np.testing.assert_array_equal(np.asarray(f(x)), [3, 3])
        f(x)
        assert not f.uses_cpp_dispatch()
    lines = [r.getMessage() for r in caplog.records if r.name == "plugax.jit"]
    assert lines == ["plugax.jit: using the pure-Python dispatch path: jaxlib 9.9 has no "
                     "_jax.pjit"]
    monkeypatch.undo()
    assert fastpath.available()


def test_environment_variable_forces_the_python_path():
    code = ("import numpy as np, plugax; f = plugax.jit(lambda a: a + 1); "
            "x = f(np.ones(2, np.float32)); print(f.uses_cpp_dispatch(), x)")
    env = dict(os.environ, PLUGAX_JIT_CPP_DISPATCH="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out[0] == "False"


def test_jax_imported_first_keeps_its_own_states():
    """jaxlib's dispatcher states are process-global: with JAX already imported,
    plugax must not replace them (jax.config.update("jax_enable_x64") must still work)."""
    pytest.importorskip("jax")
    code = ("import jax, numpy as np, plugax\n"
            "f = plugax.jit(lambda a: a + 1); x = f(np.ones(2, np.float32)); f(x); f(x)\n"
            "jax.config.update('jax_enable_x64', True)\n"
            "print(jax.jit(lambda a: a * 2)(np.ones(2)).dtype, np.asarray(f(x)).tolist(),"
            " f.uses_cpp_dispatch())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["float64", "[3.0,", "3.0]", "True"]


JAX_AND_PLUGAX = """
import sys, numpy as np
{first}
f = plugax.jit(lambda a: plugax.numpy.sin(a) * 2)
x = f(np.ones(2, np.float32)); f(x); f(x)
staged = "pjit" in str(plugax.make_jaxpr(lambda a: f(a))(x))
g = float(plugax.grad(lambda a: plugax.numpy.sum(f(a)))(x)[0])
with plugax.disable_jit():
    nojit = type(f(x)).__name__
jf = jax.jit(lambda a: jax.numpy.cos(a) + 1)
jx = jf(np.ones(2, np.float32)); jf(jx)
jstaged = "jit" in str(jax.make_jaxpr(lambda a: jf(a))(jx))
with jax.disable_jit():
    jnojit = float(jf(jx)[0])
jax.config.update("jax_enable_x64", True)
j64 = str(jax.jit(lambda a: a * 2)(np.ones(2)).dtype)
jax.config.update("jax_enable_x64", False)
plugax.config.update("enable_x64", True)
p64 = str(plugax.jit(lambda a: a * 2)(np.ones(2)).dtype)
plugax.config.update("enable_x64", False)
# operators and methods: plugax's on plugax's arrays, JAX's on JAX's (one class)
mine = (x * 2 + 1)[0].item(), isinstance(x.at[0].set(3.0), plugax.Array), x.T.shape
theirs = (jx * 2)[0].item(), isinstance(jx, plugax.Array), type(jx.at[0].set(3.0).aval).__module__
assert mine[1:] == (True, (2,)), mine
assert theirs[1:] == (False, "jax._src.core"), theirs
assert abs(mine[0] - (float(np.asarray(x)[0]) * 2 + 1)) < 1e-5
assert isinstance(plugax.numpy.sin(jx), plugax.Array)   # a JAX array is an array-like
print(staged, round(g, 4), nojit, jstaged, round(jnojit, 4), j64, p64,
      round(float(np.asarray(f(x))[1]), 4), type(x).__name__, f.uses_cpp_dispatch())
"""


@pytest.mark.parametrize("first", ["jax", "plugax"])
def test_jax_imported_before_or_after_plugax(first):
    """JAX sets jaxlib's process-global states and its own jit-key Configs: plugax's
    dispatch key, x64 flag and disable_jit must keep working beside JAX's, whichever
    library is imported first, and JAX's likewise."""
    pytest.importorskip("jax")
    imports = ("import jax, jax.numpy, plugax, plugax.numpy" if first == "jax"
               else "import plugax, plugax.numpy\nplugax.jit(lambda a: a)(np.ones(1))\n"
                    "import jax, jax.numpy")
    out = subprocess.run([sys.executable, "-c", JAX_AND_PLUGAX.format(first=imports)],
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "-0.2238", "Array", "True", "1.0305", "float64", "float64",
                   "1.9874", "ArrayImpl", "True"], out


def test_host_callbacks_run_on_every_call(jit):
    """A program that calls back into Python keeps the Python path (declined)."""
    if not hasattr(plugax, "pure_callback"):   # plugax.debug.callback comes with it
        pytest.skip("plugax.debug.callback comes from the callback family, not loaded here")
    seen = []
    f = jit(lambda a: (plugax.debug.callback(lambda v: seen.append(1), a), a + 1)[1])
    x = on_device(np.ones(4, np.float32))
    for _ in range(4):
        out = f(x)
    out.block_until_ready()
    assert len(seen) == 4
    np.testing.assert_array_equal(np.asarray(out), np.full(4, 2))


FIRST_JIT_INSIDE_A_TRACE = """
import numpy as np, plugax, plugax.numpy as pnp
fs = []
def g(a):
    f = plugax.jit(lambda v: pnp.sin(v) * 2)   # the process's first jit: the key is installed
    fs.append(f)                               # while grad's trace is current
    return pnp.sum(f(a)) + pnp.sum(f(a))
x = np.ones(3, np.float32)
d = plugax.grad(g)(x)
f = fs[0]
y = plugax.device_put(np.ones(3, np.float32))
misses = []
entry = f.jit_function._entry
f.jit_function._entry = lambda *a: misses.append(1) or entry(*a)
for _ in range(4):
    f(y)                                       # back at the top level: cached in C++
top_misses = len(misses)
staged = "pjit" in str(plugax.make_jaxpr(lambda a: f(a))(y))
print(round(float(d[0]), 4), top_misses, staged, f.uses_cpp_dispatch())
"""


def test_first_jit_inside_a_trace():
    """The dispatch key installed while a transformation runs (the first `jit` of the
    process is inside grad): that block stages, and the top level is served from the
    C++ cache once it ends."""
    out = subprocess.run([sys.executable, "-c", FIRST_JIT_INSIDE_A_TRACE],
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == [str(round(4 * np.cos(1.0), 4)), "1", "True", "True"], out


def test_host_array_arguments_take_the_cpp_path_after_their_first_call(monkeypatch):
    """A host-backed Array (plugax.Array(np_value), eager results) is a node of the
    private registry whose child is its device copy: its first call transfers it (a
    miss), later calls are served by C++ without entering Python's miss path."""
    if not fastpath.available():
        pytest.skip("jaxlib's C++ dispatcher is not available")
    fastpath.set_enabled(True)
    misses = []
    miss = fastpath._CacheMiss.__call__

    def counting(self, *args, **kwargs):
        misses.append(1)
        return miss(self, *args, **kwargs)
    monkeypatch.setattr(fastpath._CacheMiss, "__call__", counting)
    f = plugax.jit(lambda a, b: a * b + 1)
    x = plugax.Array(np.full(3, 2.0, np.float32))
    y = plugax.Array(np.full(3, 3.0, np.float32))
    outs = [f(x, y) for _ in range(6)]
    assert len(misses) <= 2
    for out in outs:
        np.testing.assert_array_equal(np.asarray(out), np.full(3, 7.0, np.float32))
    weak = plugax.Array(np.full(3, 2.0, np.float32), weak_type=True)
    assert f(weak, weak).weak_type   # weak type is in the signature: a new record
    assert not f(x, y).weak_type
