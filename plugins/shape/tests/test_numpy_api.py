"""plugax.numpy creation and rearranging functions, and the Array methods, against NumPy."""
import numpy as np
import pytest

import plugax
import plugax.lax as lax
import plugax.numpy as jnp
from plugax.testing import check_primitive, rand, x64


def test_ones_traces_like_jax():
    text = str(plugax.make_jaxpr(lambda: jnp.ones((16,)))())
    assert "f32[16] = broadcast_in_dim[broadcast_dimensions=() shape=(16,)] 1.0" in text
    text = str(plugax.make_jaxpr(lambda: jnp.full((2,), 3))())
    assert "i32[2] = broadcast_in_dim[broadcast_dimensions=() shape=(2,)] 3" in text


@pytest.mark.parametrize("make, want", [
    (lambda: jnp.zeros((2, 3)), np.zeros((2, 3), np.float32)),
    (lambda: jnp.ones(4, np.int32), np.ones(4, np.int32)),
    (lambda: jnp.full((2,), 2.5), np.full((2,), 2.5, np.float32)),
    (lambda: jnp.zeros_like(np.ones((2, 2), np.int32)), np.zeros((2, 2), np.int32)),
    (lambda: jnp.ones_like(rand((3,)), dtype=np.float16), np.ones(3, np.float16)),
    (lambda: jnp.full_like(rand((2,)), 7), np.full(2, 7, np.float32)),
    (lambda: jnp.arange(5), np.arange(5, dtype=np.int32)),
    (lambda: jnp.arange(1.0, 2.0, 0.25), np.arange(1.0, 2.0, 0.25, dtype=np.float32)),
    (lambda: jnp.linspace(0, 1, 5), np.linspace(0, 1, 5, dtype=np.float32)),
    (lambda: jnp.eye(3, 4, k=1), np.eye(3, 4, k=1, dtype=np.float32)),
    (lambda: jnp.array([[1.0, 2.0]]), np.array([[1.0, 2.0]], np.float32)),
    (lambda: jnp.asarray(np.arange(3)), np.arange(3, dtype=np.int32)),
])
def test_creation_values_and_canonical_dtypes(make, want):
    got = make()
    assert isinstance(got, plugax.Array)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_asarray_weak_types_and_x64():
    assert jnp.asarray(3.0).weak_type and not jnp.asarray(np.float32(3)).weak_type
    with x64():
        assert jnp.asarray(np.arange(3.0)).dtype == np.float64
        assert jnp.zeros(2).dtype == np.float64
    assert jnp.asarray(np.arange(3.0)).dtype == np.float32


def test_array_of_traced_elements_stacks():
    out = plugax.vmap(lambda a: jnp.array([a, a]))(rand((3,)))
    assert out.shape == (3, 2)


@pytest.mark.parametrize("fn, ref", [
    (lambda x: jnp.reshape(x, (3, -1)), lambda x: np.reshape(x, (3, -1))),
    (lambda x: jnp.ravel(x), np.ravel),
    (lambda x: jnp.transpose(x), np.transpose),
    (lambda x: jnp.transpose(x, (1, 2, 0)), lambda x: np.transpose(x, (1, 2, 0))),
    (lambda x: jnp.swapaxes(x, 0, -1), lambda x: np.swapaxes(x, 0, -1)),
    (lambda x: jnp.moveaxis(x, 0, -1), lambda x: np.moveaxis(x, 0, -1)),
    (lambda x: jnp.moveaxis(x, (0, 1), (2, 0)), lambda x: np.moveaxis(x, (0, 1), (2, 0))),
    (lambda x: jnp.expand_dims(x, (0, 2)), lambda x: np.expand_dims(x, (0, 2))),
    (lambda x: jnp.squeeze(x[:, :1]), lambda x: np.squeeze(x[:, :1])),
    (lambda x: jnp.concatenate([x, x], axis=-1), lambda x: np.concatenate([x, x], -1)),
    (lambda x: jnp.concatenate([x, x], axis=None), lambda x: np.concatenate([x, x], None)),
    (lambda x: jnp.stack([x, x], axis=1), lambda x: np.stack([x, x], 1)),
    (lambda x: jnp.broadcast_to(x[:, :1], (5, 2, 3, 4)),
     lambda x: np.broadcast_to(x[:, :1], (5, 2, 3, 4))),
    (lambda x: jnp.broadcast_arrays(x, x[0])[1], lambda x: np.broadcast_arrays(x, x[0])[1]),
    (lambda x: x.reshape(4, 6), lambda x: x.reshape(4, 6)),
    (lambda x: x.reshape((24,)), lambda x: x.reshape((24,))),
    (lambda x: x.T, lambda x: x.T),
    (lambda x: x.transpose(2, 0, 1), lambda x: x.transpose(2, 0, 1)),
    (lambda x: x.flatten(), lambda x: x.flatten()),
    (lambda x: x.swapaxes(1, 2), lambda x: x.swapaxes(1, 2)),
    (lambda x: x[:, None].squeeze(1), lambda x: x[:, None].squeeze(1)),
])
def test_rearranging_matches_numpy(fn, ref):
    x = rand((2, 3, 4))
    got = fn(plugax.Array(x))
    np.testing.assert_array_equal(got, ref(x))
    assert plugax.make_jaxpr(fn)(x).out_avals[0].shape == ref(x).shape
    check_primitive(fn, x, rules=("jvp", "vmap"))


def test_shape_helpers():
    x = rand((2, 3))
    assert jnp.shape(x) == (2, 3) and jnp.ndim(x) == 2 and jnp.size(x) == 6
    assert jnp.size(x, 1) == 3


@pytest.mark.skipif(not hasattr(lax, "convert_element_type"), reason="needs elementwise")
def test_concatenate_promotes_like_jax():
    out = jnp.concatenate([np.ones(2, np.int32), np.ones(1, np.float32)])
    assert out.dtype == np.float32


def test_reshape_errors():
    with pytest.raises(ValueError, match="only specify one unknown"):
        jnp.reshape(rand((2, 3)), (-1, -1))
    with pytest.raises(ValueError, match="cannot reshape"):
        jnp.reshape(rand((2, 3)), (4, -1))
