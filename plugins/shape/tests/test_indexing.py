"""iota, gather, scatter-add, and NumPy-style indexing built on them."""
from typing import NamedTuple

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import plugax
import plugax.lax as lax
import plugax.numpy as jnp
from plugax.testing import (DEFAULT_RULES, check_abstract_eval, check_primitive, check_transpose,
                            rand)
from plugax_shape.gather_scatter import GatherDimensionNumbers, gather_p, scatter_add_p
from plugax_shape.indexing import iota_p, take_params

ALL = (*DEFAULT_RULES, "transpose")   # the rule checks and those of traced use
fast = settings(max_examples=20, deadline=None)


class Take(NamedTuple):
    """A take along `axis` with `batch_dims` shared leading axes (indexing.take_params)."""
    axis: int
    batch_dims: int = 0


@st.composite
def gathers(draw):
    batch = tuple(draw(st.lists(st.integers(0, 2), max_size=1)))
    rest = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=2)))
    axis = len(batch) + draw(st.integers(0, len(rest) - 1))
    ishape = batch + tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
    rng = np.random.default_rng(draw(st.integers(0, 99)))
    x = rand(batch + rest)
    idx = rng.integers(0, x.shape[axis], ishape).astype(np.int32)
    return x, idx, Take(axis, len(batch))


def numpy_gather(x, idx, dn):
    out = np.empty(x.shape[:dn.axis] + idx.shape[dn.batch_dims:] + x.shape[dn.axis + 1:], x.dtype)
    for b in np.ndindex(x.shape[:dn.batch_dims]):
        out[b] = np.take(x[b], idx[b], axis=dn.axis - dn.batch_dims)
    return out


@fast
@given(gathers())
def test_gather(case):
    x, idx, dn = case
    check_primitive(gather_p, x, idx[..., None], rules=ALL, linear_argnums=0,
                    vmap_options={"max_placements": 20},
                    **take_params(x.shape, idx.ndim, dn.axis, dn.batch_dims))
    np.testing.assert_array_equal(lax.gather(x, idx, dn.axis, dn.batch_dims),
                                  numpy_gather(x, idx, dn))


@fast
@given(gathers())
def test_scatter_add(case):
    x, idx, dn = case
    upd = rand(numpy_gather(x, idx, dn).shape, seed=1)
    check_primitive(scatter_add_p, x, idx[..., None], upd, rules=ALL, linear_argnums=(0, 2),
                    vmap_options={"max_placements": 20},
                    **take_params(x.shape, idx.ndim, dn.axis, dn.batch_dims, scatter=True))
    want = x.copy()
    for b in np.ndindex(x.shape[:dn.batch_dims]):
        moved = np.moveaxis(want[b], dn.axis - dn.batch_dims, 0)
        np.add.at(moved, idx[b], np.moveaxis(upd[b], range(dn.axis - dn.batch_dims,
                                                           dn.axis - dn.batch_dims
                                                           + idx[b].ndim),
                                             range(idx[b].ndim)))
    got = lax.scatter_add(x, idx, upd, dn.axis, dn.batch_dims)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_gather_clamps_out_of_range_indices_like_xla():
    x = np.arange(4.0, dtype=np.float32)
    np.testing.assert_array_equal(lax.gather(x, np.array([-3, 9], np.int32), 0), [0.0, 3.0])


def test_gather_and_scatter_add_errors():
    with pytest.raises(plugax.ShapeError, match="integer indices.*Fix"):
        lax.gather(rand((3,)), np.zeros(2, np.float32), 0)
    with pytest.raises(plugax.ShapeError, match="scatter-add.*updates"):
        lax.scatter_add(rand((3,)), np.zeros(2, np.int32), rand((3,)), 0)


def test_dimension_numbers_print_and_hash():
    dn = GatherDimensionNumbers((1,), (0,), (0,))
    assert str(dn) == ("GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), "
                       "start_index_map=(0,), operand_batching_dims=(), "
                       "start_indices_batching_dims=())")   # JAX's spelling
    assert hash(dn) == hash(GatherDimensionNumbers((1,), (0,), (0,), (), ()))


@pytest.mark.parametrize("shape, dim, dtype", [((4,), 0, np.int32), ((2, 3), 1, np.float32),
                                                ((0, 3), 0, np.int32)])
def test_iota(shape, dim, dtype):
    check_abstract_eval(iota_p, dtype=np.dtype(dtype), shape=shape, dimension=dim)
    want = np.broadcast_to(np.expand_dims(np.arange(shape[dim], dtype=dtype),
                                          [i for i in range(len(shape)) if i != dim]), shape)
    np.testing.assert_array_equal(lax.broadcasted_iota(dtype, shape, dim), want)
    assert lax.iota(np.int32, 3).dtype == np.int32


def test_iota_jaxpr_matches_jax():
    text = str(plugax.make_jaxpr(lambda: lax.iota(np.int32, 4))())
    assert "iota[dimension=0 dtype=int32 shape=(4,)]" in text


# --- x[...] against NumPy ------------------------------------------------------------
X = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
INDICES = [
    1, -1, (0, 2), (1, -2, 3), slice(None), slice(1, None), slice(None, None, 2),
    slice(None, None, -1), slice(-1, 0, -2), slice(5, 1), (Ellipsis, 1), (None, 0),
    (1, None, Ellipsis, None), (slice(None), None, 2), np.array([1, 0, 1]), [1, 1],
    np.array([[0, -1], [1, 0]]), (slice(None), np.array([2, 0])), (Ellipsis, np.array([3, -4])),
    (1, np.array([0, 2])), (np.array([0, 1]), slice(None), 1), (0, slice(None), np.array([1])),
    (np.array([True, False]),), (slice(None, None, -2), np.array([0, 2]), slice(1, 3)),
    (None, np.array([1]), None), np.int32(1), (), Ellipsis,
    (np.array([0, 1]), np.array([2, 0])), (np.array([[1], [0]]), slice(None), np.array([3, 0])),
    (X[..., 0] > 4,), (X[:, :, 0] > 3, 1), (np.array([1]), None, np.array([0, 2])),
]


@pytest.mark.parametrize("index", INDICES, ids=repr)
def test_getitem_matches_numpy(index):
    got = plugax.Array(X)[index]
    want = X[index]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    traced = plugax.make_jaxpr(lambda x: x[index])(X)
    assert traced.out_avals[0].shape == want.shape


@fast
@given(st.data())
def test_getitem_random_basic_indices(data):
    index = [data.draw(st.one_of(
        st.integers(-n, n - 1),
        st.builds(slice, st.none() | st.integers(-5, 5), st.none() | st.integers(-5, 5),
                  st.none() | st.sampled_from([-3, -2, -1, 1, 2, 3]))))
        for n in X.shape[:data.draw(st.integers(0, 3))]]
    for _ in range(data.draw(st.integers(0, 2))):
        index.insert(data.draw(st.integers(0, len(index))), None)
    if data.draw(st.booleans()):
        index.insert(data.draw(st.integers(0, len(index))), Ellipsis)
    index = tuple(index)
    np.testing.assert_array_equal(plugax.Array(X)[index], X[index])


def test_int_index_is_slice_then_squeeze_like_jax():
    eqns = plugax.make_jaxpr(lambda x: x[1])(rand((2, 3))).jaxpr.eqns
    assert [e.primitive.name for e in eqns] == ["slice", "squeeze"]
    assert eqns[0].params == {"start_indices": (1, 0), "limit_indices": (2, 3), "strides": None}
    assert eqns[1].params == {"dimensions": (0,)}


def test_getitem_gradient_paths():
    x = rand((3, 4))
    idx = np.array([2, 0, 2], np.int32)
    check_primitive(lambda x: x[idx, 1:], x, rules=("jvp", "vmap"))
    check_primitive(lambda x: x[::-1, None, 2], x, rules=("jvp", "vmap"))


def test_getitem_errors():
    with pytest.raises(IndexError, match="out of bounds"):
        plugax.Array(np.zeros((0, 2)))[0]       # nothing to clamp to
    with pytest.raises(IndexError, match="too many indices"):
        plugax.Array(X)[0, 0, 0, 0]
    with pytest.raises(IndexError, match="could not be broadcast"):
        plugax.Array(X)[np.array([0, 1]), np.array([0, 1, 2])]


@pytest.mark.skipif(not hasattr(lax, "add"), reason="needs the elementwise family's add")
@pytest.mark.parametrize("index", [1, (slice(None), 2), np.array([0, 0, 1]), (Ellipsis, None, 1),
                                   (slice(None, None, -1), np.array([2, 0]))], ids=repr)
def test_at_add_and_set(index):
    x = plugax.Array(X)
    want = X.copy()
    np.add.at(want, index, 1.5)
    np.testing.assert_array_equal(x.at[index].add(1.5), want)
    np.testing.assert_array_equal(x.at[index].get(), X[index])
    if not isinstance(index, np.ndarray):   # repeated indices: which write wins is unspecified
        want = X.copy()
        want[index] = -1.0
        np.testing.assert_array_equal(x.at[index].set(-1.0), want)


def test_at_add_transposes_each_indexing_step():
    """x.at[i].add is x + (x[i])^T(v): check the transpose part on its own, no `add` needed."""
    from plugax_shape.getitem import _scatter
    x = plugax.Array(X)
    for index in [(1, slice(None, None, -2)), (0, None), (Ellipsis, 3)]:
        v = rand(X[index].shape, seed=3)
        want = np.zeros_like(X)
        np.add.at(want, index, v)
        np.testing.assert_allclose(_scatter(x, index, v), want)


def test_take_and_take_along_axis_match_numpy():
    x = rand((3, 4))
    idx = np.array([[0, -1], [2, 1]])
    np.testing.assert_array_equal(jnp.take(x, idx, axis=1), np.take(x, idx, axis=1))
    np.testing.assert_array_equal(jnp.take(x, np.array([5, 0])), np.take(x, [5, 0]))
    along = np.array([[0, 3, 1], [2, 2, 0], [1, 0, 0]])
    np.testing.assert_array_equal(jnp.take_along_axis(x, along, 1),
                                  np.take_along_axis(x, along, 1))
    along0 = np.array([[2, 0, 1, 1]])
    np.testing.assert_array_equal(jnp.take_along_axis(x, along0, 0),
                                  np.take_along_axis(x, along0, 0))
    check_primitive(lambda x: jnp.take_along_axis(x, along, 1), x, rules=("jvp", "vmap"))


def test_check_transpose_of_gather_on_duplicates():
    x = rand((3, 2))
    idx = np.array([1, 1, 0, 2], np.int32)
    check_transpose(gather_p, x, idx[:, None], linear_argnums=0,
                    **take_params(x.shape, 1, 0))


@pytest.mark.skipif(not hasattr(lax, "select_n"), reason="needs elementwise lt/add/select_n")
def test_traced_integer_index_under_vmap():
    x = rand((4, 3))
    idx = np.array([[0, -1], [3, 1], [-4, 2]], np.int32)
    out = plugax.vmap(lambda i: plugax.Array(x)[i])(idx)
    np.testing.assert_array_equal(out, np.stack([x[i] for i in idx]))
    cols = idx % 3 - 1
    out = plugax.vmap(lambda r, i: r[:, i], in_axes=(None, 0))(plugax.Array(x), cols)
    np.testing.assert_array_equal(out, np.stack([x[:, i] for i in cols]))
