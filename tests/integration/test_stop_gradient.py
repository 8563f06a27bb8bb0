"""lax.stop_gradient: the identity whose derivative is zero, under every transformation."""
import numpy as np
import pytest

import plugax
import plugax.numpy as pnp
from plugax import lax


def f(x):
    return pnp.sum(x * lax.stop_gradient(x) + pnp.sin(x))


X = np.array([0.5, -1.0, 2.0], np.float32)
WANT = X + np.cos(X)     # the stopped factor counts as a constant


@pytest.mark.parametrize("transform", [
    lambda g: g, plugax.jit, lambda g: plugax.jit(plugax.jit(g)),
], ids=["eager", "jit", "jit(jit)"])
def test_grad_treats_the_stopped_value_as_a_constant(transform):
    np.testing.assert_allclose(np.asarray(transform(plugax.grad(f))(X)), WANT, rtol=1e-6)


def test_jvp_vmap_and_second_order():
    _, t = plugax.jvp(f, (X,), (np.ones(3, np.float32),))
    np.testing.assert_allclose(float(t), WANT.sum(), rtol=1e-6)
    batched = plugax.vmap(plugax.grad(f))(np.stack([X, 2 * X]))
    loop = np.stack([np.asarray(plugax.grad(f)(x)) for x in (X, 2 * X)])
    np.testing.assert_allclose(np.asarray(batched), loop, rtol=1e-6)
    g2 = plugax.grad(plugax.grad(lambda x: lax.stop_gradient(x) ** 2 + x ** 3))(2.0)
    assert float(g2) == 12.0


def test_values_pass_through_and_integers_are_untouched():
    tree = {"a": np.arange(3), "b": np.float32(2.5)}
    out = lax.stop_gradient(tree)
    assert out["a"] is tree["a"]                          # integers: nothing to stop
    assert float(out["b"]) == 2.5
    assert "stop_gradient" in str(plugax.make_jaxpr(lax.stop_gradient)(1.0))
    assert float(plugax.jit(lax.stop_gradient)(np.float32(4.0))) == 4.0
