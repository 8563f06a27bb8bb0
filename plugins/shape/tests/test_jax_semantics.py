"""Regression tests: shape-family functions whose results silently differed from JAX's.

Each expected value was checked against jax 0.10.2 (issue 12, class 8).
"""
import numpy as np
import pytest

import plugax
import plugax.numpy as jnp
from plugax.extend import get_aval

X = np.arange(6.0, dtype=np.float32).reshape(3, 2)


@pytest.mark.skipif(not hasattr(plugax, "jit"), reason="compares with jit: the xla_call plugin is not loaded")
def test_grad_through_linspace_with_traced_endpoint():
    """The endpoint used to be read as a constant: grad 0 eagerly, an error under jit."""
    f = lambda s: jnp.linspace(0.0, s, 5).sum()
    assert float(plugax.grad(f)(2.0)) == pytest.approx(2.5)
    assert float(plugax.jit(plugax.grad(f))(2.0)) == pytest.approx(2.5)
    starts = np.array([0.0, 1.0], np.float32)
    out = plugax.vmap(lambda a: jnp.linspace(a, 3.0, 4))(starts)
    np.testing.assert_allclose(out, np.stack([np.linspace(a, 3.0, 4) for a in starts]),
                               rtol=1e-6)


def test_linspace_retstep_is_float32():
    out, step = jnp.linspace(0, 1, 5, retstep=True)
    assert step.dtype == np.float32 and out.dtype == np.float32
    assert float(step) == 0.25
    assert np.isnan(float(jnp.linspace(0, 1, 1, retstep=True)[1]))   # JAX: NaN, not 1.0
    np.testing.assert_array_equal(jnp.linspace(0, 10, 4, dtype=np.int32), [0, 3, 6, 10])


@pytest.mark.skipif(not hasattr(plugax, "jit"), reason="compares with jit: the xla_call plugin is not loaded")
def test_take_out_of_bounds_fills_nan_by_default():
    x = jnp.arange(5.0)
    idx = np.array([-7, -1, 0, 4, 6])
    np.testing.assert_array_equal(jnp.take(x, idx), [np.nan, 4, 0, 4, np.nan])
    np.testing.assert_array_equal(plugax.jit(jnp.take)(x, idx), [np.nan, 4, 0, 4, np.nan])
    np.testing.assert_array_equal(jnp.take(x, idx, mode="clip"), [0, 0, 0, 4, 4])
    np.testing.assert_array_equal(jnp.take(x, idx, mode="wrap"), [3, 4, 0, 4, 1])
    np.testing.assert_array_equal(jnp.take(x, idx, fill_value=-3), [-3, 4, 0, 4, -3])
    ints = jnp.take(jnp.arange(3), np.array([3]))
    assert int(ints[0]) == np.iinfo(np.int32).min
    np.testing.assert_array_equal(jnp.take_along_axis(x, idx, 0), [np.nan, 4, 0, 4, np.nan])
    grad = plugax.grad(lambda x: jnp.take(x, np.array([5, 1, 1])).sum())(jnp.arange(3.0))
    np.testing.assert_array_equal(grad, [0, 2, 0])
    with pytest.raises(ValueError, match="mode"):
        jnp.take(x, idx, mode="raise")


def test_at_get_clamps_or_fills():
    x = jnp.asarray(X)
    np.testing.assert_array_equal(x.at[np.array([5, -4])].get(), X[[2, 0]])
    assert np.isnan(np.asarray(x.at[np.array([5, 1])].get(mode="fill"))[0]).all()
    np.testing.assert_array_equal(x.at[np.array([5, 1])].get(mode="fill")[1], X[1])


@pytest.mark.skipif(not hasattr(plugax, "jit"), reason="compares with jit: the xla_call plugin is not loaded")
def test_static_index_out_of_range_clamps():
    x = jnp.asarray(X)
    np.testing.assert_array_equal(x[3], X[2])
    np.testing.assert_array_equal(x[-4], X[0])
    np.testing.assert_array_equal(plugax.jit(lambda x: x[10, -9])(x), X[2, 0])


def test_at_set_out_of_range_static_index_drops():
    x = jnp.asarray(X)
    for index in (5, -4, (1, 7)):
        np.testing.assert_array_equal(x.at[index].set(9.0), X)
        np.testing.assert_array_equal(x.at[index].add(9.0), X)


@pytest.mark.skipif(not hasattr(plugax, "jit"), reason="compares with jit: the xla_call plugin is not loaded")
def test_at_updates_drop_out_of_range_array_indices():
    z = jnp.zeros(4)
    np.testing.assert_array_equal(z.at[np.array([0, 7])].set(np.array([1.0, 2.0])), [1, 0, 0, 0])
    np.testing.assert_array_equal(
        z.at[np.array([0, 0, 5, -5, -1])].add(np.array([1.0, 2, 3, 4, 5])), [3, 0, 0, 5])
    add = plugax.jit(lambda z, i: z.at[i].add(1.0))
    np.testing.assert_array_equal(add(z, np.array([1, 9, -1])), [0, 1, 0, 1])


def test_at_set_repeated_index_last_write_wins():
    """It used to add the repeated writes (0 + 1 + 2) instead of keeping one of them."""
    z = jnp.zeros(4)
    np.testing.assert_array_equal(z.at[np.array([0, 0, 1])].set(np.array([1.0, 2, 3])),
                                  [2, 3, 0, 0])
    grad = plugax.grad(lambda v: z.at[np.array([0, 0, 7])].set(v).sum())(np.array([1.0, 2, 3]))
    np.testing.assert_array_equal(grad, [0, 1, 0])


def test_full_keeps_weak_type():
    assert get_aval(jnp.full((2,), 3)) == get_aval(plugax.Array(np.full(2, 3, np.int32), True))
    assert jnp.full((2,), 3.0).weak_type and not jnp.full((2,), np.float32(3)).weak_type
    assert not jnp.full((2,), 3, dtype=np.int32).weak_type
    weak = jnp.asarray(1.0)
    assert jnp.full_like(weak, 3).weak_type and jnp.zeros_like(weak).weak_type
    assert not jnp.full_like(weak, 3, dtype=np.float32).weak_type
    assert jnp.full((2,), 1.0).at[0].set(3).weak_type
