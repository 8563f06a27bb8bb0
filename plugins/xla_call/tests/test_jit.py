"""jit: tracing once per signature, the cache, device arrays, and composition with
every transformation (Autodidax part 3, tracing-and-jit.txt)."""
import gc
import threading
import weakref

import numpy as np
import pytest

import plugax as px
import plugax.numpy as pnp
from plugax import lax
from plugax.testing import matmul_rtol


def test_traces_once_per_signature(capsys):
    @px.jit
    def f(x, y):
        print("tracing!")
        return pnp.sin(x) * pnp.cos(y)

    z = f(3., 4.)
    z = f(4., 5.)  # cache hit: same types, new values
    assert capsys.readouterr().out.count("tracing!") == 1
    np.testing.assert_allclose(z, np.sin(4.) * np.cos(5.), rtol=1e-6)
    f(np.ones(3, np.float32), np.ones(3, np.float32))  # new shape: traces again
    f(np.ones(3, np.int32), np.ones(3, np.int32))      # new dtype: traces again
    f(np.ones(3, np.float32), np.ones(3, np.float32))  # seen before
    assert capsys.readouterr().out.count("tracing!") == 2


def test_weak_types_and_pytree_structure_are_part_of_the_signature(capsys):
    @px.jit
    def f(tree):
        print("tracing!")
        return tree["a"] * 2

    f({"a": 1.0})
    f({"a": np.float32(1.0)})     # strong f32: new signature
    f({"a": 2.0})                 # weak again: cached
    f({"a": 2.0, "b": 3.0})       # new structure
    assert capsys.readouterr().out.count("tracing!") == 3


def test_autodidax_part3_examples():
    f = px.jit(lambda x: pnp.sum(x, axis=0))
    np.testing.assert_allclose(f(np.array([1., 2., 3.])), 6.0)

    def g(x):
        return -(pnp.sin(x) * 2.) + x

    deriv = lambda f: lambda x: px.jvp(f, (x,), (1.,))[1]
    np.testing.assert_allclose(deriv(deriv(px.jit(g)))(3.), 2 * np.sin(3.), rtol=1e-6)
    y, ydot = px.jvp(px.jit(g), (3.,), (1.,))
    np.testing.assert_allclose([y, ydot], [3. - 2 * np.sin(3.), 1 - 2 * np.cos(3.)], rtol=1e-6)
    ys = px.vmap(px.jit(g), (0,))(np.arange(3.))
    np.testing.assert_allclose(ys, [0., -0.68294197, 0.18140515], rtol=1e-6, atol=1e-7)


def _stress_f(x):
    y = pnp.sin(x) * 2.
    z = -y + x
    return z


def test_compositionality_stress_test_with_jit():
    def foo(x):
        def bar(y):
            def baz(w):
                q = px.jit(lambda x: y)(x)
                q = q + px.jit(lambda: y)()
                q = q + px.jit(lambda y: w + y)(y)
                q = px.jit(lambda w: px.jit(pnp.sin)(x) * y)(1.0) + q
                return q
            p, t = px.jvp(baz, (x + 1.0,), (y,))
            return t + (x * p)
        return bar(x)

    def expected(x):
        return x + x * (4 * x + 1 + np.sin(x) * x)

    for fn in (foo, px.jit(foo)):
        np.testing.assert_allclose(fn(3.), expected(3.), rtol=1e-6)

    f, grad, jit, jvp = _stress_f, px.grad, px.jit, px.jvp
    close = lambda *vals: [np.testing.assert_allclose(v, vals[0], rtol=1e-5) for v in vals]
    close(f(3.), jit(f)(3.), jvp(f, (3.,), (5.,))[0], jvp(jit(f), (3.,), (5.,))[0])
    close(grad(f)(3.), grad(jit(f))(3.), jit(grad(jit(f)))(3.), jvp(f, (3.,), (1.,))[1],
          jvp(jit(f), (3.,), (1.,))[1])
    close(grad(grad(f))(3.), grad(grad(jit(f)))(3.), grad(jit(grad(f)))(3.),
          jit(grad(grad(f)))(3.), jvp(grad(f), (3.,), (1.,))[1],
          jvp(jit(grad(f)), (3.,), (1.,))[1])


def test_vmap_and_grad_of_jit_and_jit_of_them():
    w = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)

    def loss(w, x):
        return pnp.sum(pnp.tanh(x @ w) ** 2)

    xs = np.linspace(0, 1, 30, dtype=np.float32).reshape(5, 2, 3)
    eager = px.vmap(px.grad(loss), (None, 0))(w, xs)
    for fn in (px.vmap(px.grad(px.jit(loss)), (None, 0)),
               px.jit(px.vmap(px.grad(loss), (None, 0))),
               px.vmap(px.jit(px.grad(loss)), (None, 0))):
        np.testing.assert_allclose(fn(w, xs), eager, rtol=1e-5, atol=1e-6)


def test_jaxpr_of_nested_jit_matches_seed():
    def func12(arg):
        @px.jit
        def inner(x):
            return x + arg * pnp.ones(1)
        return arg + inner(arg - 2.)

    expected = """\
{ lambda ; a:f32[]. let
    b:f32[] = sub a 2.0
    c:f32[1] = pjit[
      name=inner
      jaxpr={ lambda ; d:f32[] e:f32[]. let
          f:f32[1] = broadcast_in_dim[broadcast_dimensions=() shape=(1,)] 1.0
          g:f32[] = convert_element_type[new_dtype=float32 weak_type=False] d
          h:f32[1] = mul g f
          i:f32[] = convert_element_type[new_dtype=float32 weak_type=False] e
          j:f32[1] = add i h
        in (j,) }
    ] a b
    k:f32[] = convert_element_type[new_dtype=float32 weak_type=False] a
    l:f32[1] = add k c
  in (l,) }"""
    got = str(px.make_jaxpr(func12)(1.))
    assert "\n".join(line.rstrip() for line in got.splitlines()) == expected
    np.testing.assert_allclose(func12(1.), [1. + (-1. + 1.)])
    np.testing.assert_allclose(px.jit(func12)(1.), [1.])


def test_static_argnums_and_argnames(capsys):
    def f(x, n, *, scale):
        print("tracing!")
        return x * n * scale

    g = px.jit(f, static_argnums=1, static_argnames="scale")
    assert float(g(2., 3, scale=2)) == 12.
    assert float(g(5., 3, scale=2)) == 30.
    assert float(g(5., 4, scale=2)) == 40.
    assert capsys.readouterr().out.count("tracing!") == 2
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        g(1., [1, 2], scale=1)
    assert float(g(1., 2, scale=1)) == 2.  # the next call after the error works


def test_pytree_inputs_and_outputs():
    @px.jit
    def f(params, x):
        return {"y": params["w"] * x + params["b"], "n": (x.sum(),)}

    out = f({"w": np.float32(2.), "b": np.ones(3, np.float32)}, np.arange(3, dtype=np.float32))
    np.testing.assert_allclose(out["y"], [1., 3., 5.])
    np.testing.assert_allclose(out["n"][0], 3.)


def test_results_stay_on_device_and_copy_to_host_once():
    f = px.jit(lambda x: x * 2.)
    y = f(np.ones(4, np.float32))
    assert y._buf is y    # a jaxlib ArrayImpl: its own device buffer
    assert y._npy_value is None  # not copied to the host yet
    z = f(y)  # the device buffer feeds the next call directly
    assert z.block_until_ready() is z and z.is_ready()
    host = np.asarray(z)   # NumPy reads the buffer protocol (read-only, as in JAX)
    assert not host.flags.writeable
    assert z._value is z._value and z._npy_value is not None   # plugax's copy: once, kept
    np.testing.assert_allclose(host, 4.)
    np.testing.assert_allclose(pnp.sin(z) + y, np.sin(4.) + 2.)  # eager ops on device arrays
    assert repr(f(np.float32(1.))) == "Array(2., dtype=float32)"


def test_weak_and_integer_results_keep_their_types():
    assert px.jit(lambda x: x * 2)(3).aval == px.ShapedArray((), np.int32, True)
    assert px.jit(lambda x: x > 0)(np.ones(2, np.float32)).dtype == np.bool_


def test_tracers_print_their_abstract_value(capsys):
    @px.jit
    def f(x):
        print("x:", x)
        return x

    f(np.ones(2, np.float32))
    assert "x: Traced<ShapedArray(float32[2])>with<DynamicJaxprTrace>" in capsys.readouterr().out


def test_python_control_flow_on_traced_values_raises_concretization_error():
    @px.jit
    def f(x):
        if x > 0:  # the line the error must name
            return x
        return -x

    line = f.__wrapped__.__code__.co_firstlineno + 2
    with pytest.raises(px.ConcretizationTypeError) as info:
        f(1.)
    assert isinstance(info.value, TypeError)
    assert "bool()" in str(info.value) and f"{__file__}:{line}" in str(info.value)
    assert float(px.jit(lambda x: x + 1)(1.)) == 2.


def test_escaped_tracer_error_says_where_it_was_created():
    leaked = []

    @px.jit
    def f(x):
        leaked.append(x)
        return x

    f(1.)
    with pytest.raises(px.UnexpectedTracerError, match="created by DynamicJaxprTrace"):
        pnp.sin(leaked[0])


def test_custom_jvp_rule_survives_jit():
    @px.custom_jvp
    def softplus(x):
        return pnp.log1p(pnp.exp(x))

    @softplus.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        return softplus(x), t * lax.logistic(x)

    with np.errstate(over="ignore"):
        assert float(px.grad(px.jit(softplus))(100.)) == 1.0
        assert float(px.jit(px.grad(softplus))(100.)) == 1.0
        np.testing.assert_allclose(px.vmap(px.grad(px.jit(softplus)))(np.array([0., 100.])),
                                   [0.5, 1.0])


def test_lru_bound(monkeypatch):
    monkeypatch.setattr(px.config, "jit_cache_size", 3)
    f = px.jit(lambda x: x + 1)
    for n in range(1, 8):
        f(np.ones(n, np.float32))
    assert f.cache_size() == 3


def test_registry_change_invalidates_cache(capsys):
    from plugax.testing import scoped_plugin

    @px.jit
    def f(x):
        print("tracing!")
        return x + 1

    f(1.)

    class Empty:
        pass

    from plugax.extend import PluginInfo, hookimpl

    class Plugin:
        @hookimpl
        def plugax_plugin_info(self):
            return PluginInfo(name="empty")

    with scoped_plugin(Plugin(), "empty"):
        f(1.)
    f(1.)
    assert capsys.readouterr().out.count("tracing!") == 3


def _growth(run, warmup: int, more: int) -> int:
    """Python objects still alive after `more` further iterations, beyond a warm state."""
    run(warmup)
    gc.collect()
    first = len(gc.get_objects())
    run(more)
    gc.collect()
    return len(gc.get_objects()) - first


def test_no_leak_with_10000_fresh_lambdas():
    x = np.ones(2, np.float32)
    refs = []

    def traced(n: int) -> None:  # jit under an outer trace: trace + cache, no compile
        for _ in range(n):
            fn = lambda x: x * 2. + 1.
            refs.append(weakref.ref(fn))
            px.make_jaxpr(px.jit(fn))(x)

    growth = _growth(traced, 2000, 8000)
    assert growth < 500 + 8000, growth  # the 8000 new weakrefs in `refs` aside: flat
    assert sum(r() is not None for r in refs) == 0  # caches hold functions weakly

    def compiled(n: int) -> None:  # top-level calls: trace, lower, executable
        for _ in range(n):
            px.jit(lambda x: x * 2. + 1.)(x)

    assert _growth(compiled, 300, 1000) < 500


def test_threads_trace_and_call_concurrently():
    errors, results = [], {}

    def work(k: int) -> None:
        try:
            for n in range(1, 6):
                f = px.jit(lambda x: pnp.sin(x) * k + n)
                x = np.full(n + k, 0.5, np.float32)
                results[(k, n)] = (np.asarray(f(x)), np.sin(x) * k + n)
        except Exception as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) == 20
    for got, want in results.values():
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_dispatch_is_asynchronous():
    @px.jit
    def heavy(x):
        for _ in range(8):
            x = pnp.tanh(x @ x)
        return x

    x = np.eye(1024, dtype=np.float32)
    heavy(x[:2, :2]).block_until_ready()  # compile a small one first: not what we time
    heavy(x).block_until_ready()          # and the big one
    y = heavy(x)
    assert not y.is_ready()  # returned while XLA is still computing (~0.5 s of matmuls)
    assert y.block_until_ready().is_ready()
    d = 1.0
    for _ in range(8):
        d = np.tanh(d * d)
    np.testing.assert_allclose(np.asarray(y)[:2, :2], np.eye(2) * d,
                               rtol=max(1e-5, 8 * matmul_rtol()))   # TF32 on GPUs, 8 products
