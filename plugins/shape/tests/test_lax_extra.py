"""JAX's lax helpers over the shape family (lax_extra.py): one table of name -> plugax
call -> NumPy float64 reference. Every row is checked for values eagerly, and with the
authors' kit on the composition (abstract_eval, jvp against central differences, vmap
against a Python loop, jit and grad under jit); scatter_sub against results that
jax 0.10.2 gave (recorded). (scatter_apply is the control-flow family's: its test_folds.py.)"""
import numpy as np
import pytest

import plugax
import plugax.lax as lax
import plugax.numpy as jnp
from plugax.testing import check_primitive

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 3, 4)).astype(np.float32)
V = RNG.standard_normal((5,)).astype(np.float32)
M = RNG.standard_normal((3, 4)).astype(np.float32)

# name -> (function of the array arguments, the arguments, NumPy reference, smooth)
TABLE = {
    "full": (lambda v: lax.full((2, 3), v), (np.float32(1.5),),
             lambda v: np.full((2, 3), v), True),
    "full_like": (lambda x: lax.full_like(x, 2.5), (M,), lambda x: np.full_like(x, 2.5),
                  False),
    "full_like_shape": (lambda x: lax.full_like(x, 3, np.int32, (2,)), (M,),
                        lambda x: np.full((2,), 3, np.int32), False),
    "empty": (lambda x: lax.empty((2, 2), np.float32) + 0 * x.sum(), (V,),
              lambda x: np.zeros((2, 2)), False),
    "broadcast": (lambda x: lax.broadcast(x, (2, 1)), (M,),
                  lambda x: np.broadcast_to(x, (2, 1) + x.shape), True),
    "broadcast_like": (lambda x: lax.broadcast_like(x, X), (np.ones((3, 1), np.float32) * 2,),
                       lambda x: np.broadcast_to(x, X.shape), True),
    "broadcast_to_rank": (lambda x: lax.broadcast_to_rank(x, 4), (M,),
                          lambda x: x.reshape((1, 1) + x.shape), True),
    "collapse": (lambda x: lax.collapse(x, 1), (X,), lambda x: x.reshape(2, 12), True),
    "collapse_stop": (lambda x: lax.collapse(x, 0, -1), (X,), lambda x: x.reshape(6, 4), True),
    "slice_in_dim": (lambda x: lax.slice_in_dim(x, 1, None, 2, axis=-1), (X,),
                     lambda x: x[..., 1::2], True),
    "slice_in_dim_negative": (lambda x: lax.slice_in_dim(x, -4, -1), (V,),
                              lambda x: x[-4:-1], True),
    "index_in_dim": (lambda x: lax.index_in_dim(x, -1, axis=1), (X,),
                     lambda x: x[:, -1:], True),
    "index_in_dim_drop": (lambda x: lax.index_in_dim(x, 2, 2, keepdims=False), (X,),
                          lambda x: x[:, :, 2], True),
    "index_take": (lambda x: lax.index_take(x, (np.array([0, 2, 2]), np.array([3, 0, 1])),
                                            (1, 2)), (X,),
                   lambda x: np.moveaxis(x, (1, 2), (0, 1))[[0, 2, 2], [3, 0, 1]], True),
    "stack": (lambda a, b: lax.stack([a, b], axis=-1), (M, M * 2),
              lambda a, b: np.stack([a, b], -1), True),
    "unstack": (lambda x: lax.unstack(x, 1), (M,), lambda x: tuple(np.moveaxis(x, 1, 0)), True),
    "tile": (lambda x: lax.tile(x, (2, 1, 3)), (X,), lambda x: np.tile(x, (2, 1, 3)), True),
}


@pytest.mark.parametrize("name", TABLE)
def test_values_and_rules(name):
    fn, args, ref, smooth = TABLE[name]
    got = fn(*args)
    expected = ref(*[np.asarray(a, np.float64) for a in args])
    for g, e in zip(got if isinstance(got, tuple) else [got],
                    expected if isinstance(expected, tuple) else [expected]):
        np.testing.assert_allclose(np.asarray(g), e, rtol=1e-6)
        assert np.asarray(g).dtype == np.asarray(fn(*args) if not isinstance(got, tuple)
                                                 else got[0]).dtype
    check_primitive(fn, *args, rules=None if smooth else ["abstract_eval", "vmap"])


def test_full_types_as_jax():
    assert lax.full((2,), 1.0).weak_type and lax.full((2,), 1).dtype == np.int32
    assert not lax.full((2,), np.float32(1)).weak_type
    assert lax.full_like(1.0, 2).weak_type
    np.testing.assert_array_equal(lax.full_like(np.ones(2, np.int32), 2.7), [2, 2])
    with pytest.raises(TypeError, match="scalar fill_value"):
        lax.full((2,), np.ones(2))


def test_shape_helpers_errors_and_values():
    assert lax.broadcast_shapes((2, 1), (3,), ()) == (2, 3)
    with pytest.raises(ValueError, match="Incompatible shapes"):
        lax.broadcast_shapes((2,), (3,))
    with pytest.raises(TypeError, match="reps length"):
        lax.tile(M, (2,))
    with pytest.raises(IndexError, match="out of bounds"):
        lax.index_in_dim(V, 5)
    assert lax.full(3, 1.0).shape == (3,)          # an int shape, as JAX accepts
    with pytest.raises(TypeError):                 # JAX does not clamp slice_in_dim
        lax.slice_in_dim(V, 2, 10)
    with pytest.raises(TypeError, match="dtype"):
        lax.dtype([1, 2])
    assert lax.dtype(1.0) == np.float64 and lax.dtype(True) == np.bool_
    assert lax.dtype(np.ones(2, np.int8)) == np.int8 and lax.dtype(np.float16) == np.float16
    assert len(lax.unstack(X, -1)) == 4


DN = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                 scatter_dims_to_operand_dims=(0,))
IDX = np.array([[1], [3], [1], [7]], np.int32)


def test_scatter_sub_matches_jax():
    x = np.arange(5, dtype=np.float32)
    upd = np.array([1, 2, 3, 4], np.float32)
    # recorded with jax 0.10.2: repeated indices accumulate, index 7 is dropped
    np.testing.assert_array_equal(lax.scatter_sub(x, IDX, upd, DN), [0, -3, 2, 1, 4])
    np.testing.assert_array_equal(plugax.grad(lambda u: lax.scatter_sub(x, IDX, u, DN).sum())(
        upd), [-1, -1, -1, 0])
    check_primitive(lambda v, u: lax.scatter_sub(v, IDX, u, DN, mode="clip"), x, upd)
