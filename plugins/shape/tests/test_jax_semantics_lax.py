"""Regression tests: shape-family lax and NumPy functions that differed from JAX's
(issue 12, class 8), found by tests/differential."""
import numpy as np
import pytest

import plugax
import plugax.lax as lax
import plugax.numpy as jnp

X = np.arange(12.0, dtype=np.float32).reshape(4, 3)


@pytest.mark.skipif(not hasattr(plugax, "jit"), reason="compares with jit: the xla_call plugin is not loaded")
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


def test_arange_computes_in_its_dtype_like_jax():
    """start + step * i in float32 (NumPy's float64 arange, rounded after, differs in the
    last place), and the dtype promoted from the arguments: np.int8(5) gives int8."""
    assert float(jnp.arange(0, 1, 0.1)[-1]) == float(np.float32(0.1) * np.float32(9))
    assert jnp.arange(np.int8(5)).dtype == np.int8
    np.testing.assert_array_equal(jnp.arange(2, 9, 3, dtype=np.float16), [2, 5, 8])
    assert not jnp.arange(3.0).weak_type


def test_python_bools_are_not_weakly_typed():
    assert not jnp.asarray(True).weak_type
    assert not lax.bitwise_xor(True, False).weak_type
    assert jnp.asarray(1).weak_type and jnp.asarray(1.0).weak_type


def test_pad_and_update_slice_are_weak_only_when_both_values_are():
    weak = jnp.asarray(2.0)[None]
    assert not lax.pad(weak, np.float32(0.0), [(1, 1, 0)]).weak_type
    assert lax.pad(weak, 0.0, [(1, 1, 0)]).weak_type
    assert not lax.dynamic_update_slice(weak, np.ones(1, np.float32), [0]).weak_type
    assert lax.dynamic_update_slice(weak, weak, [np.int32(0)]).weak_type
    assert jnp.full((2,), 1.0).at[0].set(3).weak_type     # transposes keep weak types
