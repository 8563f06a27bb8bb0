"""The eager shortcuts (plugax.numpy calling NumPy directly, the fused EvalTrace path,
the compiled linear function of `linearize`) must give what the bind path gives."""
import numpy as np
import pytest

import plugax
import plugax.numpy as pnp
from plugax.jaxpr.interpret import eval_jaxpr
from plugax.testing import x64


def via_jaxpr(f, *args):
    """f evaluated equation by equation from its jaxpr: every op goes through bind."""
    closed = plugax.make_jaxpr(f)(*args)
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)[0]


def same(a, b):
    assert a.shape == b.shape and a.dtype == b.dtype and a.weak_type == b.weak_type
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1), (1, 5)),
                                    ((), ()), ((3,), ())])
@pytest.mark.parametrize("op", [lambda x, y: pnp.sin(x) + y, lambda x, y: x * y - x,
                                lambda x, y: pnp.maximum(pnp.tanh(x), y) / (y + 3.0)])
def test_eager_matches_bind_path(op, shapes, dtype):
    with x64(dtype == "float64"):   # float64 is canonical only under x64
        rng = np.random.default_rng(0)
        x, y = (plugax.Array(rng.standard_normal(s).astype(pnp.dtype(dtype))) for s in shapes)
        same(op(x, y), via_jaxpr(op, x, y))


def test_weak_operands_stay_weak():
    x = plugax.Array(np.ones(3, np.float32), weak_type=True)
    out = pnp.sin(x) + x
    assert out.weak_type and out.dtype == np.float32
    same(out, via_jaxpr(lambda x: pnp.sin(x) + x, x))


def test_eager_broadcast_error_names_the_function():
    x, y = plugax.Array(np.ones((3, 4), np.float32)), plugax.Array(np.ones(5, np.float32))
    with pytest.raises(ValueError, match="add"):
        x + y


def test_linearized_function_applies_eagerly_and_under_transformations():
    chain = lambda x: pnp.sin(x) * x + pnp.tanh(x) * 2.0  # noqa: E731
    x = plugax.Array(np.linspace(-1, 1, 5, dtype=np.float32))
    _, f_lin = plugax.linearize(chain, x)
    t = plugax.Array(np.arange(5, dtype=np.float32))
    expected = plugax.jvp(chain, (x,), (t,))[1]
    np.testing.assert_allclose(f_lin(t), expected, rtol=1e-6)
    np.testing.assert_allclose(f_lin(t), f_lin(t))           # reusable
    batched = plugax.vmap(f_lin)(plugax.Array(np.stack([np.asarray(t), 2 * np.asarray(t)])))
    np.testing.assert_allclose(batched[1], 2 * np.asarray(expected), rtol=1e-6)
    assert "mul" in str(plugax.make_jaxpr(f_lin)(t))          # still traceable


def test_broadcast_in_dim_of_a_noncontiguous_operand():
    base = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = plugax.Array(base.T)                                   # a transposed view
    out = plugax.lax.broadcast_in_dim(x, (4, 3, 2), (1, 2))
    np.testing.assert_array_equal(np.asarray(out), np.broadcast_to(base.T, (4, 3, 2)))
    y = plugax.lax.broadcast_in_dim(plugax.Array(base[0]), (2, 3), (1,))
    np.testing.assert_array_equal(np.asarray(y), np.broadcast_to(base[0], (2, 3)))
