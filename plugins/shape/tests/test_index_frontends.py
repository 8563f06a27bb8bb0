"""lax's *_in_dim slices, put_along_axis, plugax.ops.segment_*, and the derivative rules
of the non-linear scatters on ties and repeats: expected values are jax 0.10.2's."""
import numpy as np
import pytest

import plugax as jax
import plugax.numpy as jnp
import plugax.ops
from plugax import lax
from plugax.testing import check_primitive, rand

DN = lax.ScatterDimensionNumbers((), (0,), (0,))
X = np.array([1.0, 2.0, 3.0], np.float32)
U = np.array([1.0, 5.0, 2.0, 3.0], np.float32)
I = np.array([[0], [0], [1], [2]], np.int32)
TX, TU = np.array([10.0, 20.0, 30.0], np.float32), np.array([1.0, 2.0, 3.0, 4.0], np.float32)


@pytest.mark.parametrize("f, out, tangent", [
    (lax.scatter_max, [5, 2, 3], [2, 11.5, 17]),     # ties (2 == 2, 3 == 3) averaged
    (lax.scatter_min, [1, 2, 3], [5.5, 11.5, 17]),
])
def test_scatter_min_max_jvp_averages_ties_like_jax(f, out, tangent):
    y, t = jax.jvp(lambda x, u: f(x, I, u, DN), (X, U), (TX, TU))
    np.testing.assert_allclose(y, out)
    np.testing.assert_allclose(t, tangent)
    y, t = jax.jit(lambda x, u, tx, tu: jax.jvp(lambda x, u: f(x, I, u, DN), (x, u),
                                                (tx, tu)))(X, U, TX, TU)
    np.testing.assert_allclose(t, tangent)


def test_set_with_repeated_indices_jvp_and_grad_like_jax():
    idx = jnp.array([0, 0, 2])
    y, t = jax.jvp(lambda x, u: x.at[idx].set(u[:3]), (X, U), (TX, TU))
    np.testing.assert_allclose(y, [5, 2, 2])
    np.testing.assert_allclose(t, [2, 20, 3])
    g = jax.grad(lambda u: jnp.zeros(3).at[idx].set(u[:3] ** 2).sum())(U)
    np.testing.assert_allclose(g, [0, 10, 4, 0])


def test_segment_reductions_like_jax():
    data, ids = jnp.array([1.0, 5.0, 2.0, 7.0]), jnp.array([0, 0, 2, 2])
    np.testing.assert_array_equal(plugax.ops.segment_max(data, ids, 4), [5, -np.inf, 7, -np.inf])
    np.testing.assert_array_equal(plugax.ops.segment_prod(data, ids, 3), [5, 1, 14])
    np.testing.assert_array_equal(plugax.ops.segment_min(jnp.array([1, 5, 2, 7]), ids, 4),
                                  [1, 2 ** 31 - 1, 2, 2 ** 31 - 1])
    summed = jax.jit(lambda d, s: plugax.ops.segment_sum(d, s, num_segments=3))(
        rand((6, 2)), np.array([0, 2, 2, 0, 1, 7]))   # 7 is out of range: dropped
    want = np.zeros((3, 2))
    for k, s in enumerate([0, 2, 2, 0, 1]):
        want[s] += rand((6, 2))[k]
    np.testing.assert_allclose(summed, want, rtol=1e-6)
    g = jax.grad(lambda x: plugax.ops.segment_max(x, jnp.array([0, 0, 1]), 2).sum())(
        jnp.array([3.0, 3.0, 1.0]))
    np.testing.assert_allclose(g, [0.5, 0.5, 1.0])
    with pytest.raises(ValueError, match="num_segments"):
        jax.jit(lambda d, s: plugax.ops.segment_sum(d, s))(data, ids)


def test_put_along_axis_and_in_dim_slices():
    a = jnp.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(
        jnp.put_along_axis(a, jnp.array([[0, 2], [1, 1]]), jnp.array([[9.0, 8.0], [7.0, 6.0]]),
                           1, inplace=False), [[9, 1, 8], [3, 6, 5]])
    with pytest.raises(ValueError, match="inplace=False"):
        jnp.put_along_axis(a, jnp.array([[0], [1]]), 1.0, 1)
    np.testing.assert_array_equal(
        lax.dynamic_update_index_in_dim(jnp.zeros((3, 2)), jnp.ones(2), 5, 0),
        [[0, 0], [0, 0], [1, 1]])
    np.testing.assert_array_equal(lax.dynamic_index_in_dim(a, -1, 1), [[2], [5]])
    np.testing.assert_array_equal(lax.dynamic_index_in_dim(a, 1, 0, keepdims=False), [3, 4, 5])
    f = jax.jit(lambda x, i: lax.dynamic_slice_in_dim(x, i, 2, axis=1))
    np.testing.assert_array_equal(f(a, 2), [[1, 2], [4, 5]])         # clamped start
    g = jax.jit(lambda x, u, i: lax.dynamic_update_slice_in_dim(x, u, i, 0))
    np.testing.assert_array_equal(g(jnp.zeros(4), jnp.ones(2), -1), [0, 0, 1, 1])


def test_in_dim_front_ends_under_the_kit():
    x = rand((4, 3))
    check_primitive(lambda x, i: lax.dynamic_slice_in_dim(x, i, 2, axis=0), x, np.int32(1),
                    rules=("jvp", "vmap", "jit"), jvp_options={"argnums": (0,)})
    check_primitive(lambda x, u, i: lax.dynamic_update_index_in_dim(x, u, i, 1), x,
                    rand((4,), seed=2), np.int32(2), rules=("jvp", "vmap", "jit"),
                    jvp_options={"argnums": (0, 1)})


def test_nonzero_argwhere_flatnonzero_eager_and_with_size_under_jit():
    a = np.array([[0, 3, 0], [4, 0, 5]])
    for got, want in zip(jnp.nonzero(a), np.nonzero(a)):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(jnp.argwhere(a), np.argwhere(a))
    np.testing.assert_array_equal(jnp.flatnonzero(a), np.flatnonzero(a))
    rows, cols = jax.jit(lambda a: jnp.nonzero(a, size=4, fill_value=-1))(a)   # JAX's values
    np.testing.assert_array_equal(rows, [0, 1, 1, -1])
    np.testing.assert_array_equal(cols, [1, 0, 2, -1])
    np.testing.assert_array_equal(jax.jit(lambda a: jnp.flatnonzero(a, size=2))(a), [1, 3])
    np.testing.assert_array_equal(jax.jit(lambda a: jnp.argwhere(a, size=4))(a),
                                  [[0, 1], [1, 0], [1, 2], [0, 0]])
    x = jnp.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(x[jnp.nonzero(a)], [1, 3, 5])
    with pytest.raises(plugax.ConcretizationTypeError, match="size argument of jnp.nonzero"):
        jax.jit(jnp.nonzero)(a)
