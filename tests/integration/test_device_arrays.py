"""Device results of jit and device_put are jaxlib's `ArrayImpl` (core/device_arrays.py),
and plugax's Array API holds for them exactly as for host-backed Arrays: the same
values, dtypes, weak types, printing and errors, on both jit dispatch paths."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import plugax
import plugax.numpy as pnp
from plugax_xla_call import fastpath


@pytest.fixture(params=["cpp", "python"])
def path(request):
    fastpath.set_enabled(request.param == "cpp")
    try:
        yield request.param
    finally:
        fastpath.set_enabled(None)


def pair(value, weak=False):
    """(host-backed Array, device result) holding the same value and type."""
    host = plugax.Array(np.asarray(value), weak)
    return host, plugax.jit(lambda a: a)(host)


def same(a, b):
    assert isinstance(a, plugax.Array) and isinstance(b, plugax.Array)
    assert (a.shape, a.dtype, a.weak_type) == (b.shape, b.dtype, b.weak_type)
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_device_results_are_jaxlib_arrays_and_plugax_arrays(path):
    from jaxlib import _jax
    host, dev = pair(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert type(host) is plugax.Array and type(dev) is _jax.ArrayImpl
    assert isinstance(dev, plugax.Array) and issubclass(type(dev), plugax.Array)
    assert type(plugax.device_put(host)) is _jax.ArrayImpl
    assert not isinstance(np.ones(2), plugax.Array) and not isinstance(1.0, plugax.Array)


OPS = {
    "add": lambda a: a + 1, "radd": lambda a: 2 * a, "matmul": lambda a: a @ a.T,
    "neg": lambda a: -a, "pow": lambda a: a ** 2, "compare": lambda a: a > 2,
    "index": lambda a: a[1], "slice": lambda a: a[:, 1:], "fancy": lambda a: a[np.array([1, 0])],
    "at_set": lambda a: a.at[0, 1].set(9.0), "at_add": lambda a: a.at[1].add(1.0),
    "T": lambda a: a.T, "sum": lambda a: a.sum(axis=0), "reshape": lambda a: a.reshape(3, 2),
    "astype": lambda a: a.astype(np.int32), "sin": lambda a: pnp.sin(a),
    "mixed": lambda a: a + plugax.Array(np.ones(3, np.float32)),
}


@pytest.mark.parametrize("op", sorted(OPS))
def test_operators_and_methods_match_host_arrays(op, path):
    host, dev = pair(np.arange(6, dtype=np.float32).reshape(2, 3))
    same(OPS[op](host), OPS[op](dev))


def test_weak_types_survive_the_device(path):
    f = plugax.jit(lambda a: a * 2)
    out = f(3.0)
    assert out.weak_type and out.dtype == np.float32
    assert (out + np.float16(1)).dtype == np.float16   # weak: the other operand wins
    assert f(out).weak_type     # a weak device input is a weak argument again
    strong = f(plugax.Array(np.float32(3.0)))
    assert not strong.weak_type and (strong + np.float16(1)).dtype == np.float32


def test_conversions_printing_and_pickling(path):
    host, dev = pair(np.array([1.5, 2.5], np.float32))
    assert repr(dev) == repr(host) == "Array([1.5, 2.5], dtype=float32)"
    assert str(dev) == str(host) and f"{dev}" == f"{host}"
    assert dev.tolist() == [1.5, 2.5] and float(dev[0]) == 1.5 and dev[1].item() == 2.5
    assert len(dev) == 2 and [float(v) for v in dev] == [1.5, 2.5]
    assert bool(dev[0] > 1) and int(dev[1]) == 2
    assert dev.ndim == 1 and dev.size == 2
    with pytest.raises(TypeError):
        hash(dev)
    same(pickle.loads(pickle.dumps(dev)), host)
    w = pair(np.float32(2.0), weak=True)[1]
    assert repr(w) == "Array(2., dtype=float32, weak_type=True)"


def test_device_methods_sharding_and_waiting(path):
    _, dev = pair(np.ones(4, np.float32))
    assert dev.block_until_ready() is dev and dev.is_ready()
    assert len(dev.sharding.device_set) == 1
    assert dev.devices() == dev.sharding.device_set
    assert not np.asarray(dev).flags.writeable


def test_device_arrays_as_inputs_of_transformations(path):
    _, x = pair(np.linspace(0, 1, 3, dtype=np.float32))
    g = plugax.grad(lambda a: pnp.sum(pnp.sin(a) * a))(x)
    np.testing.assert_allclose(np.asarray(g), np.cos(np.asarray(x)) * np.asarray(x)
                               + np.sin(np.asarray(x)), rtol=1e-6)
    v = plugax.vmap(lambda a: a * 2)(x)
    np.testing.assert_allclose(np.asarray(v), 2 * np.asarray(x))
    jaxpr = plugax.make_jaxpr(lambda a: pnp.sin(a))(x)
    assert "f32[3]" in str(jaxpr)
    h = plugax.jit(plugax.grad(lambda a: pnp.sum(a ** 2)))
    np.testing.assert_allclose(np.asarray(h(x)), 2 * np.asarray(x), rtol=1e-6)


def test_errors_match_host_arrays(path):
    host, dev = pair(np.ones((2, 3), np.float32))
    for bad in (lambda a: a + np.ones(4, np.float32), lambda a: a.reshape(7),
                lambda a: a @ a, lambda a: a[None, None, None, 0, 0, 0]):
        errors = []
        for a in (host, dev):
            with pytest.raises(Exception) as info:
                bad(a)
            errors.append((type(info.value), str(info.value)))
        assert errors[0] == errors[1]


def test_donated_device_array_is_deleted(path):
    f = plugax.jit(lambda a, b: a + b, donate_argnums=0)
    _, x = pair(np.ones(4, np.float32))
    _, y = pair(np.ones(4, np.float32))
    out = f(x, y)
    np.testing.assert_array_equal(np.asarray(out), 2 * np.ones(4))
    assert x.is_deleted()
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        np.asarray(x._value)
