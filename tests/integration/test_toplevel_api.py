"""The top-level names ported JAX programs use: eval_shape, ShapeDtypeStruct, typeof,
jacobian, checkpoint/remat, disable_jit, named_call/named_scope, device queries."""
import numpy as np
import pytest

import plugax as jax
import plugax.numpy as jnp


def test_eval_shape_computes_nothing_and_returns_structs():
    calls = []

    def f(x, y, scale=1.0):
        calls.append(type(x).__name__)
        return {"prod": x @ y * scale, "total": jnp.sum(x, dtype=jnp.int32)}

    out = jax.eval_shape(f, jax.ShapeDtypeStruct((3, 4), np.float32), np.ones((4, 2)), scale=2.0)
    assert out == {"prod": jax.ShapeDtypeStruct((3, 2), np.float32),
                   "total": jax.ShapeDtypeStruct((), np.int32)}
    assert len(calls) == 1 and "Tracer" in calls[0]     # traced once, never evaluated
    with pytest.raises(Exception, match="dot_general|shape"):
        jax.eval_shape(f, np.ones((3, 4)), np.ones((3, 2)))


def test_shape_dtype_struct_feeds_lower_and_typeof_reads_types():
    lowered = jax.jit(jnp.sin).lower(jax.ShapeDtypeStruct((2,), np.float32))
    assert "tensor<2xf32>" in lowered.as_text()
    assert str(jax.typeof(np.ones((2, 3), np.float32))) == "ShapedArray(float32[2,3])"
    assert jax.typeof(1.0).weak_type


def test_jacobian_is_jacrev():
    x = np.array([0.3, 1.2], np.float32)
    np.testing.assert_allclose(np.asarray(jax.jacobian(jnp.sin)(x)), np.diag(np.cos(x)), rtol=1e-6)


@pytest.mark.parametrize("wrap", [
    jax.checkpoint, jax.remat, lambda f: jax.checkpoint(f, prevent_cse=False),
    lambda f: jax.checkpoint(policy=jax.checkpoint_policies.dots_saveable)(f),
])
def test_checkpoint_keeps_values_and_derivatives(wrap):
    f = lambda x: jnp.sum(jnp.tanh(x) ** 2)   # noqa: E731
    x = np.linspace(-1, 1, 4).astype(np.float32)
    g = wrap(f)
    assert float(g(x)) == pytest.approx(float(f(x)))
    np.testing.assert_allclose(np.asarray(jax.jit(jax.grad(g))(x)), np.asarray(jax.grad(f)(x)),
                               rtol=1e-6)
    with pytest.raises(TypeError, match="policy must be callable"):
        jax.checkpoint(f, policy="dots")


def test_disable_jit_runs_python_and_is_per_block():
    seen = []

    @jax.jit
    def f(x):
        seen.append(type(x).__name__)
        return x * 2

    with jax.disable_jit():
        assert float(f(np.float32(2.0))) == 4.0
        assert float(jax.grad(lambda x: f(x) ** 2)(1.0)) == 8.0
    assert seen[0] == "float32"                    # the concrete argument, not a tracer
    assert float(f(np.float32(3.0))) == 6.0        # compiled again after the block
    assert "Tracer" in seen[-1]


def test_named_call_scope_and_device_queries():
    f = jax.named_call(lambda x: x + 1, name="inc")
    with jax.named_scope("block"):
        assert f(1) == 2
    with pytest.raises(TypeError, match="name must be a str"):
        with jax.named_scope(3):
            pass
    assert jax.device_count() == jax.local_device_count() == len(jax.devices()) >= 1
    assert (jax.process_count(), jax.process_index()) == (1, 0)
    assert jax.float0 == np.dtype([("float0", "V")])
