"""pure_callback, debug.callback and debug.print: eagerly and under jit, vmap and grad.

The reference for values is NumPy (float64, then compared at float32 tolerance);
the reference for behaviour is JAX 0.10.2 (what each vmap_method hands the
callback, the error pure_callback raises under differentiation, one print per
batch element, an unused debug.print kept and an unused pure_callback dropped by
jit).
"""
from __future__ import annotations

import numpy as np
import pytest

import plugax
import plugax.numpy as pnp
from plugax.extend import CallbackError
from plugax.testing import check_jit, check_vmap, x64

SDS = plugax.ShapeDtypeStruct


def np_sin(x):
    return np.sin(np.asarray(x, np.float64)).astype(np.float32)


def sin_cb(x):
    return plugax.pure_callback(np_sin, SDS(x.shape, x.dtype), x)


X = np.linspace(-2.0, 3.0, 7).astype(np.float32)


# --- pure_callback: values ---------------------------------------------------------

@pytest.mark.parametrize("wrap", [lambda f: f, plugax.jit], ids=["eager", "jit"])
def test_pure_callback_matches_numpy(wrap):
    out = wrap(lambda x: sin_cb(x) * 2.0 + 1.0)(X)
    np.testing.assert_allclose(np.asarray(out), np.sin(X.astype(np.float64)) * 2 + 1,
                               rtol=1e-6, atol=1e-6)
    assert out.dtype == np.float32 and out.shape == X.shape


@pytest.mark.parametrize("wrap", [lambda f: f, plugax.jit], ids=["eager", "jit"])
def test_pure_callback_pytrees_kwargs_and_argument_types(wrap):
    seen = []

    def cb(pair, *, scale):
        seen.append((type(pair["a"]), type(scale)))
        a, b = np.asarray(pair["a"]), np.asarray(pair["b"])
        return (a + b * scale, [np.sum(a).astype(np.int32)])

    def f(a, b):
        shapes = (SDS((3,), np.float32), [SDS((), np.int32)])
        return plugax.pure_callback(cb, shapes, {"a": a, "b": b}, scale=2.0)

    a, b = np.arange(3, dtype=np.float32), np.ones(3, np.float32)
    s, [total] = wrap(f)(a, b)
    np.testing.assert_allclose(np.asarray(s), a + 2 * b)
    assert int(total) == 3 and total.dtype == np.int32
    assert seen[-1] == (plugax.Array, plugax.Array)   # JAX hands its callbacks arrays too


def _plus_half_in_float64(x):
    return plugax.pure_callback(lambda a: np.asarray(a, np.float64) + 0.5,
                                SDS((2,), np.float32), x)


def test_float64_result_is_canonicalized_without_x64():
    out = plugax.jit(_plus_half_in_float64)(np.ones(2, np.float32))
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out), [1.5, 1.5])


def test_float64_result_is_a_dtype_error_with_x64():
    with x64():   # float64 is then a dtype of its own, as in JAX
        with pytest.raises(CallbackError, match="result #0 has dtype float64, but "
                                                "result_shape_dtypes declares float32"):
            plugax.jit(_plus_half_in_float64)(np.ones(2, np.float32))


def test_callback_may_call_plugax_under_jit():
    """The program may run while a transformation is current: the callback computes on
    concrete values all the same."""
    def f(x):
        return plugax.pure_callback(lambda a: pnp.sin(a) + 1.0, SDS(x.shape, x.dtype), x)
    np.testing.assert_allclose(np.asarray(plugax.jit(f)(X)), np.sin(X) + 1, rtol=1e-6)


# --- pure_callback: vmap ------------------------------------------------------------

def _recording_add(method, shapes):
    def f(x, y):
        def cb(a, b):
            shapes.append((a.shape, b.shape))
            return np.asarray(a) + np.asarray(b)
        return plugax.pure_callback(cb, SDS(x.shape, x.dtype), x, y, vmap_method=method)
    return f


@pytest.mark.parametrize("method,seen", [
    ("sequential", [((2,), (2,))] * 3),
    ("sequential_unrolled", [((2,), (2,))] * 3),
    ("expand_dims", [((3, 2), (1, 2))]),
    ("broadcast_all", [((3, 2), (3, 2))]),
    ("legacy_vectorized", [((3, 2), (2,))]),   # JAX's: unbatched arguments untouched
])
@pytest.mark.parametrize("wrap", [lambda f: f, plugax.jit], ids=["eager", "jit"])
def test_vmap_methods_as_jax(method, seen, wrap):
    xs = np.arange(6, dtype=np.float32).reshape(3, 2)
    y = np.array([10.0, 20.0], np.float32)
    shapes: list = []
    out = wrap(plugax.vmap(_recording_add(method, shapes), in_axes=(0, None)))(xs, y)
    np.testing.assert_allclose(np.asarray(out), np.stack([x + y for x in xs]))
    assert shapes == seen


def test_nested_vmap_expand_dims_shapes_as_jax():
    shapes: list = []
    f = _recording_add("expand_dims", shapes)
    xs, ys = np.ones((3, 2), np.float32), np.arange(8, dtype=np.float32).reshape(4, 2)
    out = plugax.vmap(plugax.vmap(f, in_axes=(0, None)), in_axes=(None, 0))(xs, ys)
    assert out.shape == (4, 3, 2) and shapes == [((1, 3, 2), (4, 1, 2))]
    np.testing.assert_allclose(np.asarray(out), xs[None] + ys[:, None])


def test_vmap_batch_axis_not_first():
    shapes: list = []
    xs = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = plugax.vmap(_recording_add("sequential", shapes), in_axes=(1, None))(xs, 1.0)
    np.testing.assert_allclose(np.asarray(out), xs.T + 1)


def test_vmap_without_method_is_refused_as_jax():
    with pytest.raises(NotImplementedError, match="vmap_method is one of 'sequential'.*"
                                                  "Got vmap_method=None"):
        plugax.vmap(sin_cb)(np.ones((3, 2), np.float32))


def test_unknown_vmap_method_is_refused():
    with pytest.raises(ValueError, match="vmap_method must be one of the allowed methods "
                                         r"\['sequential', .*, None\], but got: loop"):
        plugax.pure_callback(np_sin, SDS((2,), np.float32), np.ones(2), vmap_method="loop")


# --- pure_callback: differentiation ----------------------------------------------------

@pytest.mark.parametrize("transform", [plugax.grad, lambda f: plugax.grad(plugax.jit(f)),
                                       lambda f: plugax.jit(plugax.grad(f))])
def test_pure_callback_is_not_differentiable(transform):
    with pytest.raises(ValueError, match="Pure callbacks do not support JVP. Please use "
                                         "`plugax.custom_jvp`"):
        transform(lambda x: sin_cb(x).sum() if hasattr(x, "sum") else sin_cb(x))(1.0)


def test_custom_jvp_makes_it_differentiable():
    @plugax.custom_jvp
    def f(x):
        return sin_cb(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), plugax.pure_callback(lambda a: np.cos(np.asarray(a)),
                                          SDS(x.shape, x.dtype), x) * t

    for g in (plugax.grad(f), plugax.jit(plugax.grad(f))):
        np.testing.assert_allclose(float(g(0.7)), np.cos(0.7), rtol=1e-6)


# --- dead code and errors ------------------------------------------------------------

def test_unused_pure_callback_is_dropped_by_jit():
    calls = []

    def f(x):
        plugax.pure_callback(lambda a: (calls.append(1), np.asarray(a))[1],
                             SDS((), np.float32), x)
        return x + 1.0
    assert float(plugax.jit(f)(1.0)) == 2.0
    assert calls == []   # XLA removed the call, as in JAX


@pytest.mark.parametrize("wrap", [lambda f: f, plugax.jit], ids=["eager", "jit"])
def test_error_in_callback_surfaces_and_next_call_works(wrap):
    def f(x):
        def cb(a):
            if np.asarray(a)[0] < 0:
                raise ZeroDivisionError("negative input")
            return np.asarray(a) * 2
        return plugax.pure_callback(cb, SDS(x.shape, x.dtype), x)
    g = wrap(f)
    with pytest.raises(CallbackError, match=r"pure_callback\(.*cb\) raised "
                                            r"ZeroDivisionError: negative input") as info:
        g(-np.ones(2, np.float32))
    assert isinstance(info.value.__cause__, ZeroDivisionError)
    np.testing.assert_allclose(np.asarray(g(np.ones(2, np.float32))), [2.0, 2.0])


@pytest.mark.parametrize("wrap", [lambda f: f, plugax.jit], ids=["eager", "jit"])
def test_wrong_result_shape_or_structure_is_an_error(wrap):
    bad_shape = wrap(lambda x: plugax.pure_callback(lambda a: np.ones(3), SDS((2,), np.float32), x))
    with pytest.raises(CallbackError, match=r"result #0 has shape \(3,\), but "
                                            r"result_shape_dtypes declares \(2,\)"):
        bad_shape(np.ones(2, np.float32))
    bad_tree = wrap(lambda x: plugax.pure_callback(lambda a: (a, a), SDS((2,), np.float32), x))
    with pytest.raises(CallbackError, match="structure"):
        bad_tree(np.ones(2, np.float32))


# --- debug.print / debug.callback ---------------------------------------------------------

def _printing(x):
    plugax.debug.print("x={x} 2x={} s={:.2f}", x * 2, x.sum() if x.ndim else x, x=x)
    return (x * x).sum() if x.ndim else x * x


@pytest.mark.parametrize("wrap", [lambda f: f, plugax.jit], ids=["eager", "jit"])
def test_print_formats_like_numpy(wrap, capsys):
    x = np.array([0.0, 1.5, 2.0], np.float32)
    wrap(_printing)(x)
    assert capsys.readouterr().out == f"x={x} 2x={x * 2} s=3.50\n"


def test_jit_keeps_an_unused_print_and_prints_every_call(capsys):
    f = plugax.jit(lambda x: (plugax.debug.print("v={}", x), x + 1)[1])
    f(1.0), f(2.0)
    assert capsys.readouterr().out == "v=1.0\nv=2.0\n"


@pytest.mark.parametrize("wrap", [lambda f: f, plugax.jit], ids=["eager", "jit"])
def test_vmap_prints_each_element_in_order(wrap, capsys):
    xs = np.arange(3, dtype=np.float32)
    out = wrap(plugax.vmap(_printing))(xs)
    np.testing.assert_allclose(np.asarray(out), xs * xs)
    assert capsys.readouterr().out == "".join(f"x={x} 2x={2 * x} s={x:.2f}\n" for x in xs)


@pytest.mark.parametrize("transform", [plugax.grad, lambda f: plugax.jit(plugax.grad(f)),
                                       lambda f: plugax.grad(plugax.jit(f))],
                         ids=["grad", "jit-grad", "grad-jit"])
def test_grad_prints_primals_and_derivative_is_unchanged(transform, capsys):
    x = np.array([0.5, -1.0, 2.0], np.float32)
    g = transform(_printing)(x)
    np.testing.assert_allclose(np.asarray(g), 2 * x, rtol=1e-6)
    assert capsys.readouterr().out == f"x={x} 2x={x * 2} s={x.sum():.2f}\n"


def test_jvp_prints_primals(capsys):
    primal, tangent = plugax.jvp(_printing, (np.float32(3.0),), (np.float32(1.0),))
    assert (float(primal), float(tangent)) == (9.0, 6.0)
    assert capsys.readouterr().out == "x=3.0 2x=6.0 s=3.00\n"


def test_ordered_prints_run_in_program_order(capsys):
    def f(x):
        for i in range(6):
            plugax.debug.print("step {} {}", i, x, ordered=True)
        return x
    text = plugax.jit(f).lower(1.0).as_text()
    assert text.count("!stablehlo.token") >= 6   # one chain through the six calls
    plugax.jit(f)(1.0)
    assert capsys.readouterr().out == "".join(f"step {i} 1.0\n" for i in range(6))


@pytest.mark.parametrize("wrap", [lambda f: f, plugax.jit], ids=["eager", "jit"])
def test_debug_callback_gets_arrays_and_pytrees(wrap):
    seen = []

    def f(x):
        plugax.debug.callback(lambda d, k: seen.append((type(d["a"]), np.asarray(d["a"]), k)),
                              {"a": x}, k=3)
        return x
    wrap(f)(np.ones(2, np.float32))
    kind, value, k = seen[-1]
    assert kind is plugax.Array and np.array_equal(value, [1, 1]) and int(k) == 3


@pytest.mark.parametrize("wrap", [lambda f: f, plugax.jit], ids=["eager", "jit"])
def test_debug_callback_error_surfaces(wrap):
    def f(x):
        plugax.debug.callback(lambda a: 1 / int(np.asarray(a)[0]), x)
        return x + 1
    g = wrap(f)
    with pytest.raises(CallbackError, match="ZeroDivisionError"):
        g(np.zeros(2, np.float32))
    np.testing.assert_allclose(np.asarray(g(np.ones(2, np.float32))), [2, 2])


def test_print_format_checked_at_the_call_as_jax():
    with pytest.raises(KeyError, match="y"):
        plugax.debug.print("{y}", 1.0)
    with pytest.raises(IndexError):
        plugax.jit(lambda x: plugax.debug.print("{} {}", x))(1.0)
    with pytest.raises(ValueError, match=r"Unused positional arguments to "
                                         r"`plugax.debug.print`: \[2\]"):
        plugax.debug.print("{}", 1, 2)
    with pytest.raises(ValueError, match="Unused keyword arguments .* f-string"):
        plugax.debug.print("{}", 1, y=2)


@pytest.mark.parametrize("wrap", [lambda f: f, plugax.jit], ids=["eager", "jit"])
def test_print_static_arguments_fields_and_two_call_form(wrap, capsys):
    def f(x):
        # ordered: XLA may run unordered prints in any order (one without operands first)
        plugax.debug.print("{0} {s} {x.shape} {0[1]}", x, s="label", x=x, ordered=True)
        plugax.debug.print(ordered=True)("two-call {}", x[0])
        plugax.debug.print("no placeholders", skip_format_check=True, ordered=True)
        return x
    wrap(f)(np.array([1.0, 2.0], np.float32))
    assert capsys.readouterr().out == ("[1. 2.] label (2,) 2.0\ntwo-call 1.0\n"
                                       "no placeholders\n")


def test_debug_callback_static_arguments_and_two_call_form():
    seen = []
    f = plugax.jit(lambda x: plugax.debug.callback(ordered=True)(
        lambda a, tag, n=None: seen.append((float(a), tag, n)), x, "tag", n=None))
    f(2.0)
    assert seen == [(2.0, "tag", None)]


def test_log_goes_to_the_plugax_debug_logger(caplog):
    with caplog.at_level("INFO", logger="plugax.debug"):
        plugax.jit(lambda x: (plugax.debug.log("logged {}", x), x)[1])(5.0)
    (record,) = [r for r in caplog.records if r.name == "plugax.debug"]
    assert record.getMessage() == "logged 5.0" and record.filename == "test_callbacks.py"


def test_jaxpr_shows_the_primitives():
    def f(x):
        plugax.debug.print("{} {}", x, "static")
        plugax.debug.callback(print, x)
        return sin_cb(x)
    text = str(plugax.make_jaxpr(f)(1.0))
    for name in ("debug_print[", "debug_callback[", "pure_callback["):
        assert name in text
    assert "static" in text   # a static argument is a param, as in JAX


def test_callbacks_in_loops_under_jit(capsys):
    lax = plugax.lax
    if not hasattr(lax, "scan"):
        pytest.skip("needs the control_flow family")

    def body(c, x):
        plugax.debug.print("x={}", x, ordered=True)
        y = plugax.pure_callback(lambda a: np.asarray(a) * 2, SDS((), np.float32), x)
        return c + y, y
    for f in (lambda xs: lax.scan(body, 0.0, xs), plugax.jit(lambda xs: lax.scan(body, 0.0, xs))):
        total, ys = f(np.arange(3, dtype=np.float32))
        assert float(total) == 6.0 and np.array_equal(np.asarray(ys), [0, 2, 4])
    assert capsys.readouterr().out == "x=0.0\nx=1.0\nx=2.0\n" * 2


def test_compiled_with_callbacks_cannot_be_serialized():
    compiled = plugax.jit(lambda x: (plugax.debug.print("{}", x), x)[1]).lower(1.0).compile()
    with pytest.raises(ValueError, match="cannot be serialized"):
        compiled.serialize()


# --- the kit's checks: vmap against a loop (every batch placement, empty batches) and
# jit against eager --------------------------------------------------------------------

def _callback_of(method):
    def f(x, y):
        def cb(a, b):   # elementwise, operands of one rank: valid for every vmap_method
            return np.asarray(a) * 2 + np.tanh(np.asarray(b))
        return plugax.pure_callback(cb, SDS(np.broadcast_shapes(x.shape, y.shape), x.dtype),
                                    x, y, vmap_method=method)
    f.__name__ = f"pure_callback[{method}]"
    return f


@pytest.mark.parametrize("method", ["sequential", "expand_dims", "broadcast_all"])
def test_kit_vmap_and_jit(method):
    f = _callback_of(method)
    x, y = np.ones((2, 3), np.float32), np.linspace(0, 1, 6).astype(np.float32).reshape(2, 3)
    assert check_vmap(f, x, y) > 0
    check_jit(f, x, y)


def test_kit_vmap_of_a_printing_function(capsys):
    def f(x):
        plugax.debug.print("{}", x)
        return x * 3.0
    check_vmap(f, np.ones((2, 2), np.float32))
    check_jit(f, np.ones((2, 2), np.float32))
    assert capsys.readouterr().out   # it printed


# --- io_callback (jax.experimental.io_callback) and effects_barrier -----------------------

def _counting_io(log):
    def f(x):
        def host(a):
            log.append(float(np.sum(a)))
            return np.asarray(a) * 2
        return plugax.experimental.io_callback(host, SDS(x.shape, x.dtype), x)
    return f


@pytest.mark.parametrize("wrap", [lambda f: f, plugax.jit], ids=["eager", "jit"])
def test_io_callback_runs_once_per_call_even_unused(wrap):
    log = []
    io = _counting_io(log)
    out = wrap(lambda x: io(x) + 1)(np.ones(2, np.float32))
    np.testing.assert_allclose(np.asarray(out), [3, 3])
    unused = wrap(lambda x: (io(x), x * 0)[1])
    unused(np.ones(2, np.float32))
    unused(np.full(2, 2, np.float32))
    assert log == [2.0, 2.0, 4.0]   # kept although nothing uses its result
    plugax.effects_barrier()


def test_io_callback_vmap_is_sequential_and_ordered_vmap_is_refused():
    log = []
    out = plugax.vmap(_counting_io(log))(np.arange(6, dtype=np.float32).reshape(3, 2))
    assert log == [1.0, 5.0, 9.0]
    np.testing.assert_allclose(np.asarray(out), np.arange(6).reshape(3, 2) * 2)
    ordered = lambda x: plugax.experimental.io_callback(np.asarray, SDS((), np.float32), x,
                                                        ordered=True)
    with pytest.raises(ValueError, match="Cannot `vmap` ordered IO callback."):
        plugax.vmap(ordered)(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="IO callbacks do not support JVP."):
        plugax.grad(ordered)(1.0)


def test_programs_with_callbacks_skip_the_disk_cache(tmp_path, monkeypatch, capsys):
    """Two programs that differ only in their callbacks have the same module text: an
    executable cached by text would call the other program's Python function."""
    monkeypatch.setenv("PLUGAX_COMPILATION_CACHE_DIR", str(tmp_path))
    for word in ("first", "second"):
        def f(x, word=word):
            plugax.debug.callback(lambda a: print(word, float(a)), x)
            return x
        plugax.jit(f)(1.0)
    assert capsys.readouterr().out == "first 1.0\nsecond 1.0\n"
    assert not any(tmp_path.rglob("*"))   # nothing written
