"""plugax.flatten_util.ravel_pytree, against JAX 0.10.2's behaviour (recorded below):
the promoted dtype, the unravel function's checks, and use under jit, grad and vmap."""
from __future__ import annotations

import numpy as np
import pytest

import plugax
from plugax.flatten_util import ravel_pytree


def _tree():
    return {"a": 1.0, "b": np.arange(3, dtype=np.int32),
            "c": (np.ones((2, 2), np.float32) * 0.5, True)}


def test_mixed_dtypes_promote_and_round_trip():
    flat, unravel = ravel_pytree(_tree())
    # JAX: [1. 0. 1. 2. 0.5 0.5 0.5 0.5 1.] float32
    assert flat.dtype == np.float32 and flat.shape == (9,)
    np.testing.assert_array_equal(np.asarray(flat), [1, 0, 1, 2, .5, .5, .5, .5, 1])
    back = unravel(flat)
    assert plugax.tree.structure(back) == plugax.tree.structure(_tree())
    for got, want in zip(plugax.tree.leaves(back), plugax.tree.leaves(_tree())):
        want = np.asarray(want)
        assert got.dtype == (np.float32 if want.dtype == np.float64 else want.dtype)
        np.testing.assert_array_equal(np.asarray(got), want)


def test_single_dtype_and_empty_tree():
    flat, unravel = ravel_pytree([np.int32(1), np.array([2, 3], np.int32)])
    assert flat.dtype == np.int32 and np.array_equal(np.asarray(flat), [1, 2, 3])
    # one dtype: unravel keeps the dtype it is given (JAX: "dtype-polymorphic")
    parts = unravel(np.array([1.5, 2.5, 3.5], np.float32))
    assert parts[1].dtype == np.float32 and np.array_equal(np.asarray(parts[1]), [2.5, 3.5])
    flat, unravel = ravel_pytree({})
    assert flat.shape == (0,) and flat.dtype == np.float32 and unravel(flat) == {}


def test_unravel_refuses_wrong_dtype_and_length():
    _, unravel = ravel_pytree([np.ones(2, np.float32), np.zeros(1, np.int32)])
    with pytest.raises(TypeError, match="given array of dtype int32, but expected dtype "
                                        "float32"):
        unravel(np.arange(3, dtype=np.int32))
    with pytest.raises(ValueError, match=r"shape \(3,\).*got shape \(4,\)"):
        unravel(np.arange(4, dtype=np.float32))


def test_under_jit_grad_and_vmap():
    if not hasattr(plugax.Array, "sum"):
        pytest.skip("needs the reductions family")
    params = {"w": np.array([[1.0, -2.0]], np.float32), "b": np.float32(0.5)}

    def loss(p):
        flat, _ = ravel_pytree(p)
        return (flat ** 2).sum()

    g = plugax.grad(loss)(params)
    np.testing.assert_allclose(np.asarray(g["w"]), 2 * params["w"])
    np.testing.assert_allclose(float(g["b"]), 1.0)
    flat, unravel = plugax.jit(lambda p: ravel_pytree(p)[0])(params), ravel_pytree(params)[1]
    np.testing.assert_allclose(np.asarray(flat), [0.5, 1.0, -2.0])   # leaves in key order
    back = plugax.jit(unravel)(flat)
    np.testing.assert_allclose(np.asarray(back["w"]), params["w"])
    batched = plugax.vmap(lambda v: unravel(v)["w"])(np.stack([np.asarray(flat)] * 4))
    assert batched.shape == (4, 1, 2)
