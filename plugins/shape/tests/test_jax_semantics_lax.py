"""Regression tests: shape-family lax and NumPy functions that differed from JAX's
(issue 12, class 8), found by tests/differential."""
import numpy as np

import plugax
import plugax.lax as lax
import plugax.numpy as jnp

X = np.arange(12.0, dtype=np.float32).reshape(4, 3)


def test_dynamic_slice_negative_starts_count_from_end():
    """JAX's allow_negative_indices=True: -2 on an axis of 3 is 1 (it was clamped to 0)."""
    want = X[2:4, 1:3]
    np.testing.assert_array_equal(lax.dynamic_slice(X, [np.int32(3), np.int32(-2)], (2, 2)),
                                  want)
    f = plugax.jit(lambda x, i: lax.dynamic_slice(x, [i, i], (2, 2)))
    np.testing.assert_array_equal(f(X, np.int32(-2)), X[2:4, 1:3])
    out = lax.dynamic_update_slice(np.zeros(4, np.float32), np.ones(2, np.float32),
                                   [np.int32(-3)])
    np.testing.assert_array_equal(out, [0, 1, 1, 0])
    g = plugax.grad(lambda x: lax.dynamic_slice(x, [-3], (2,)).sum())(np.arange(4.0))
    np.testing.assert_array_equal(g, [0, 1, 1, 0])


def test_ndim_shape_size_accept_lists():
    assert jnp.ndim([1, 2]) == 1 and jnp.shape([[1], [2]]) == (2, 1)
    assert jnp.size((1, 2, 3)) == 3 and jnp.shape(2.5) == ()
