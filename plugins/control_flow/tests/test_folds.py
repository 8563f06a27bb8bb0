"""lax.reduce with a user's computation and lax.scatter_apply (folds.py): values
against NumPy float64 and results recorded from jax 0.10.2, with the authors' kit on the
compositions (jvp against central differences, vmap against a loop, jit)."""
import numpy as np
import pytest

import plugax
import plugax.lax as lax
import plugax.numpy as jnp
from plugax.testing import check_primitive

X = np.array([[0.5, -1., 2.], [1.5, 0.25, -3.]], np.float32)
# recorded with jax 0.10.2: reduce(X, 1, lambda a, b: a * b + 0.5, (0,))
FOLD = [2.0, 0.375, -7.0]


@pytest.mark.parametrize("computation, init, reduction", [
    (lax.add, 0.0, "reduce_sum"), (lambda a, b: a * b, 1.0, "reduce_prod"),
    (lax.max, -np.inf, "reduce_max"), (lax.min, np.inf, "reduce_min")])
def test_reduce_recognises_monoids_as_jax(computation, init, reduction):
    jaxpr = str(plugax.make_jaxpr(lambda x: lax.reduce(x, init, computation, (0,)))(X))
    assert reduction in jaxpr and "scan" not in jaxpr
    np.testing.assert_allclose(lax.reduce(X, init, computation, (0,)),
                               getattr(lax, reduction)(X, (0,)))


def test_reduce_folds_other_computations_as_jax():
    fold = lambda x: lax.reduce(x, np.float32(1.), lambda a, b: a * b + 0.5, (0,))  # noqa: E731
    np.testing.assert_allclose(fold(X), FOLD)   # (JAX's gradient of this non-associative
    # computation differentiates a tree-shaped reduction, not the value's; see docs/faq.md)
    lse = lambda x: lax.reduce(x, -np.inf, jnp.logaddexp, (1,))  # noqa: E731
    x64 = X.astype(np.float64)
    np.testing.assert_allclose(lse(X), np.logaddexp.reduce(x64, axis=1), rtol=1e-6)
    softmax = np.exp(x64 - np.logaddexp.reduce(x64, axis=1, keepdims=True))
    np.testing.assert_allclose(plugax.grad(lambda x: lse(x).sum())(X), softmax, rtol=1e-6)
    check_primitive(fold, X)
    check_primitive(lse, X)
    # a non-identity init is applied once, as JAX does on CPU
    np.testing.assert_allclose(lax.reduce(X, 1.0, lax.add, (0,)), X.sum(0) + 1)
    # pytrees of operands: JAX's recorded values
    mx, total = lax.reduce((X, np.arange(6).reshape(2, 3)), (np.float32(-np.inf), 0),
                           lambda a, b: (jnp.maximum(a[0], b[0]), a[1] + b[1]), (1,))
    np.testing.assert_allclose(mx, [2.0, 1.5])
    np.testing.assert_array_equal(total, [3, 12])
    pair = lambda x: lax.reduce((x, x), (0.0, 1.0),  # noqa: E731
                                lambda a, b: (a[0] + b[0], a[1] * b[1]), (0, 1))
    check_primitive(lambda x: pair(x)[1], X)


def test_reduce_errors():
    with pytest.raises(TypeError, match="same tree structure"):
        lax.reduce((X, X), 0.0, lax.add, (0,))
    with pytest.raises(TypeError, match="scalars"):
        lax.reduce(X, np.zeros(3, np.float32), lambda a, b: a + b * 2, (0,))


DN = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                 scatter_dims_to_operand_dims=(0,))
IDX = np.array([[1], [3], [1], [7]], np.int32)


def test_scatter_apply_matches_jax():
    x = np.arange(5, dtype=np.float32)

    def apply(v, mode=None):
        return lax.scatter_apply(v, IDX, lambda u: u * 2 + 1, DN, update_shape=(4,), mode=mode)
    # recorded with jax 0.10.2: an index hit twice gets func twice; 7 is dropped or clipped
    np.testing.assert_array_equal(apply(x), [0, 7, 2, 7, 4])
    np.testing.assert_array_equal(apply(x, "clip"), [0, 7, 2, 7, 9])
    np.testing.assert_array_equal(plugax.jit(apply)(x), [0, 7, 2, 7, 4])
    np.testing.assert_array_equal(plugax.vmap(apply)(np.stack([x, -x])),
                                  [[0, 7, 2, 7, 4], [0, -1, -2, -5, -4]])
