"""device_put / device_get / devices, as JAX programs use them."""
import numpy as np
import pytest

import plugax
import plugax.numpy as pnp


def test_device_put_moves_every_leaf_to_the_device_once():
    tree = {"w": np.arange(6, dtype=np.float32).reshape(2, 3), "b": 2.0, "n": None}
    put = plugax.device_put(tree)
    assert put["n"] is None
    assert put["w"]._buf is not None and put["b"]._buf is not None
    assert put["w"].dtype == np.float32 and put["b"].weak_type      # typed as jit types them
    buf = put["w"]._buf
    out = plugax.jit(lambda t: t["w"] * t["b"])(put)
    np.testing.assert_array_equal(np.asarray(out), tree["w"] * 2)
    assert put["w"]._buf is buf                                      # not transferred again


def test_device_get_returns_numpy_and_keeps_other_leaves():
    got = plugax.device_get({"a": pnp.ones(3), "s": "label", "k": 3})
    assert type(got["a"]) is np.ndarray and got["s"] == "label" and got["k"] == 3


def test_device_put_is_the_identity_under_a_trace_and_refuses_bad_leaves():
    assert float(plugax.grad(lambda x: plugax.device_put(x) ** 2)(3.0)) == 6.0
    with pytest.raises(TypeError, match="str"):
        plugax.device_put("not an array")
    with pytest.raises(ValueError, match="not one of this process's devices"):
        plugax.device_put(np.ones(2), device="tpu:7")
    assert plugax.device_put(np.ones(2), device=plugax.devices()[0]).shape == (2,)


def test_device_get_of_a_tracer_raises():
    with pytest.raises(plugax.TracerArrayConversionError):
        plugax.jit(lambda x: plugax.device_get(x))(1.0)


def test_devices_and_default_backend():
    assert len(plugax.devices()) == len(plugax.local_devices()) >= 1
    assert plugax.default_backend() in ("cpu", "gpu")
