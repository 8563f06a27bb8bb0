"""Lowering rules of the shape family: jitted (XLA) equals eager (NumPy impl).

Shape primitives move data without arithmetic, so they accept every dtype and
must be exact: each primitive is checked on every dtype, the dtypes taking
turns with the params (one module per primitive; XLA compiles each case to a
kernel of its own, so the product of dtypes and params would be slow). Then
what the impl defines beyond the obvious: out-of-range starts and indices are
clamped (negative, too large, huge unsigned), repeated scatter indices
accumulate (logical or for booleans), size-0 axes, negative padding. Last,
plugax.numpy functions and indexing under px.jit.
"""
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import plugax as px
import plugax.lax as lax
import plugax.numpy as pnp
from plugax.testing import (ALL_DTYPES, check_lowering, check_lowerings, exact_values,
                            has_lowering, x64)
from typing import NamedTuple

from plugax_shape.indexing import gather_p, iota_p, scatter_add_p, take_params
from plugax_shape.slicing import dynamic_slice_p, dynamic_update_slice_p, pad_p, slice_p
from plugax.extend import concatenate_p   # the kernel's (with split, for the Jacobians)
from plugax.extend import broadcast_in_dim_p, reshape_p, transpose_p   # the kernel's
from plugax_shape.structural import rev_p, squeeze_p

DTYPES = ALL_DTYPES
NUMBERS = DTYPES[1:]
ALL_PRIMS = (broadcast_in_dim_p, reshape_p, transpose_p, squeeze_p, rev_p, slice_p, pad_p,
             concatenate_p, dynamic_slice_p, dynamic_update_slice_p, iota_p, gather_p,
             scatter_add_p)

jit = getattr(px, "jit", None)
needs_jit = pytest.mark.skipif(jit is None, reason="the xla_call plugin (px.jit) is not loaded")


def draw(dtype, shape, seed=0):
    """Random values of `dtype`, small enough for exact int sums."""
    return exact_values(dtype, shape, seed, ints=(-20, 20), quarters=(-16, 16))


def check_dtypes(fn, make_args, param_sets, dtypes=DTYPES):
    """`fn(*make_args(dtype, seed), **params)`, dtypes taking turns with the params
    dicts, lowered as one module with x64 on."""
    n = max(len(dtypes), len(param_sets))
    with x64():
        check_lowerings([(fn, make_args(dtypes[i % len(dtypes)], i),
                          param_sets[i % len(param_sets)]) for i in range(n)])


def test_every_primitive_has_a_lowering():
    assert all(has_lowering(p) for p in ALL_PRIMS)


# --- whole-array rearrangements ------------------------------------------------------------
def test_broadcast_in_dim():
    check_dtypes(broadcast_in_dim_p, lambda d, s: (draw(d, (3, 1), s),), [
        dict(shape=(2, 3, 4), broadcast_dimensions=(1, 2)),
        dict(shape=(3, 5), broadcast_dimensions=(0, 1)),
        dict(shape=(3, 1), broadcast_dimensions=(0, 1)),
        dict(shape=(0, 3, 1), broadcast_dimensions=(1, 2))])


def test_reshape_with_and_without_dimensions():
    check_dtypes(reshape_p, lambda d, s: (draw(d, (2, 3, 4), s),), [
        dict(new_sizes=(6, 4), dimensions=None), dict(new_sizes=(24,), dimensions=None),
        dict(new_sizes=(4, 6), dimensions=(2, 0, 1)),
        dict(new_sizes=(3, 2, 2, 2), dimensions=(1, 2, 0))])


def test_transpose_squeeze_rev():
    check_dtypes(transpose_p, lambda d, s: (draw(d, (2, 3, 4), s),),
                 [dict(permutation=(2, 0, 1)), dict(permutation=(0, 1, 2)),
                  dict(permutation=(1, 2, 0))])
    check_dtypes(squeeze_p, lambda d, s: (draw(d, (1, 3, 1), s),),
                 [dict(dimensions=(0,)), dict(dimensions=(0, 2)), dict(dimensions=())])
    check_dtypes(rev_p, lambda d, s: (draw(d, (2, 3, 4), s),),
                 [dict(dimensions=(0, 2)), dict(dimensions=()), dict(dimensions=(1,))])


# --- windows ---------------------------------------------------------------------------------
def test_slice_with_strides_and_empty_windows():
    check_dtypes(slice_p, lambda d, s: (draw(d, (5, 6), s),), [
        dict(start_indices=(1, 0), limit_indices=(4, 6), strides=None),
        dict(start_indices=(0, 1), limit_indices=(5, 6), strides=(2, 3)),
        dict(start_indices=(2, 3), limit_indices=(2, 6), strides=None)])


def test_pad_with_negative_and_interior_padding():
    def args(d, s):
        x = draw(d, (3, 4), s)
        return x, draw(d, (), s + 1)
    check_dtypes(pad_p, args, [
        dict(padding_config=((1, 2, 0), (0, 0, 1))),
        dict(padding_config=((-1, 1, 1), (2, -3, 0))),
        dict(padding_config=((0, 0, 0), (0, 0, 0))),
        dict(padding_config=((-2, -3, 2), (0, 1, 0)))])


def test_concatenate_including_empty_operands():
    def three(a, b, c, *, dimension):
        return concatenate_p.bind(a, b, c, dimension=dimension)

    def args(d, s):
        return draw(d, (2, 3), s), draw(d, (2, 0), s), draw(d, (2, 2), s + 1)
    check_dtypes(three, args, [dict(dimension=1)])
    check_dtypes(concatenate_p, lambda d, s: (draw(d, (2, 3), s), draw(d, (1, 3), s)),
                 [dict(dimension=0)], dtypes=DTYPES[::3])


STARTS = [(np.int32(1), np.int32(2)), (np.int32(-4), np.int32(9)),      # in range; clamped
          (np.int8(-128), np.int8(127)), (np.uint32(2 ** 32 - 1), np.uint8(255)),
          (np.int64(-2 ** 40), np.int64(2 ** 40)), (np.uint8(0), np.int16(3))]


def test_dynamic_slice_clamps_starts_like_impl():
    def args(d, s):
        return (draw(d, (5, 6), s),) + STARTS[s % len(STARTS)]
    check_dtypes(dynamic_slice_p, args, [dict(slice_sizes=(2, 3)), dict(slice_sizes=(5, 0)),
                                         dict(slice_sizes=(0, 6))])


def test_dynamic_update_slice_clamps_starts_like_impl():
    def args(d, s):
        sizes = [(2, 3), (5, 6), (0, 2)][s % 3]
        return (draw(d, (5, 6), s), draw(d, sizes, s + 7)) + STARTS[s % len(STARTS)]
    check_dtypes(dynamic_update_slice_p, args, [{}])


# --- indexing --------------------------------------------------------------------------------
def test_iota_every_dtype_and_dimension():
    params = [dict(dtype=np.dtype(d if d != "bfloat16" else ml_dtypes.bfloat16),
                   shape=(2, 2) if d == "bool" else (3, 4, 2), dimension=i % 2)
              for i, d in enumerate(DTYPES)]
    with x64():
        check_lowerings([(iota_p, (), p) for p in params])


class Take(NamedTuple):
    """A take along `axis` (the first `batch_dims` axes shared): see indexing.take_params."""
    axis: int
    batch_dims: int = 0


def take(shape, idx, t, scatter=False):
    """(indices with their index-vector axis, the general primitive's params) of a take."""
    idx = np.asarray(idx)
    return idx[..., None], take_params(shape, idx.ndim, t.axis, t.batch_dims, scatter)


GATHERS = [  # (operand shape, indices, Take)
    ((4, 5), np.array([0, 3, -1, 7, 4], np.int32), Take(0)),
    ((3, 4, 5), np.array([[0, 3], [5, -2], [1, 1]], np.int64), Take(1)),
    ((3, 4, 5), np.array([[4, 0, 9], [2, 2, -7], [1, 3, 0]], np.int8),
     Take(2, batch_dims=1)),
    ((2, 3, 4), np.array([[[250, 0], [1, 2], [3, 3]], [[0, 1], [2, 200], [0, 0]]], np.uint8),
     Take(2, batch_dims=2)),
    ((3, 4), np.array([2 ** 32 - 1, 0, 5], np.uint32), Take(1)),
    ((3, 4), np.zeros((0, 2), np.int32), Take(1)),
    ((3, 2), np.zeros((0,), np.int32), Take(1)),
    ((3, 4), np.int32(-5), Take(0)),
]


def test_gather_clamps_out_of_range_indices_like_impl():
    def case(d, s):
        shape, idx, t = GATHERS[s % len(GATHERS)]
        idx, params = take(shape, idx, t)
        return gather_p, (draw(d, shape, s), idx), params
    with x64():
        check_lowerings([case(d, i) for i, d in enumerate(DTYPES + DTYPES[::4])])


def test_scatter_add_accumulates_repeats_and_clamps():
    """Repeated indices add up (or, for bool); out-of-range ones clamp onto the ends."""
    def case(d, s):
        shape, idx, dn = GATHERS[s % len(GATHERS)]
        upd_shape = shape[:dn.axis] + np.shape(idx)[dn.batch_dims:] + shape[dn.axis + 1:]
        idx, params = take(shape, idx, dn, scatter=True)
        return scatter_add_p, (draw(d, shape, s), idx, draw(d, upd_shape, s + 1)), params
    with x64():
        check_lowerings([case(d, i) for i, d in enumerate(DTYPES + DTYPES[::4])])
        x = np.zeros(3, np.float32)
        idx, params = take((3,), np.array([0, 0, 2, -9, 99], np.int32), Take(0), scatter=True)
        (out,) = check_lowering(scatter_add_p, x, idx, np.ones(5, np.float32), **params)
    assert np.asarray(out).tolist() == [3.0, 0.0, 2.0]


@st.composite
def gathers(draw_):
    batch = tuple(draw_(st.lists(st.integers(0, 2), max_size=1)))
    rest = tuple(draw_(st.lists(st.integers(1, 3), min_size=1, max_size=2)))
    axis = len(batch) + draw_(st.integers(0, len(rest) - 1))
    ishape = batch + tuple(draw_(st.lists(st.integers(0, 3), max_size=2)))
    seed = draw_(st.integers(0, 99))
    idx = np.random.default_rng(seed).integers(-2, 5, ishape).astype(np.int32)
    return draw(("float32", "int32")[seed % 2], batch + rest, seed), idx, \
        Take(axis, len(batch))


@settings(max_examples=8, deadline=None)
@given(gathers())
def test_gather_and_scatter_add_agree_with_impl_on_any_layout(case):
    """Property: for any axis / batch_dims layout the StableHLO dimension numbers put
    every gathered element where the impl puts it (and scatter-add sends it back)."""
    x, idx, dn = case
    upd = np.ones(x.shape[:dn.axis] + idx.shape[dn.batch_dims:] + x.shape[dn.axis + 1:],
                  x.dtype)
    (gi, gp), (si, sp) = take(x.shape, idx, dn), take(x.shape, idx, dn, scatter=True)
    check_lowerings([(gather_p, (x, gi), gp), (scatter_add_p, (x, si, upd), sp)])


# --- plugax.numpy and indexing under jit --------------------------------------------------
IDX = np.array([2, -1, 0, 7, -9])
NUMPY_FUNCTIONS = {
    "reshape": lambda x: pnp.reshape(x, (4, -1)),
    "ravel_method": lambda x: x.ravel(),
    "transpose": lambda x: pnp.transpose(x, (2, 0, 1)),
    "T": lambda x: x.T,
    "concatenate": lambda x: pnp.concatenate([x, x[:1]], axis=0),
    "stack": lambda x: pnp.stack([x, x], axis=-1),
    "squeeze": lambda x: pnp.squeeze(x[:, :1], axis=1),
    "expand_dims": lambda x: pnp.expand_dims(x, (0, 2)),
    "int_index": lambda x: x[1, -1],
    "slices": lambda x: x[::-1, 1:3, ::2],
    "ellipsis_newaxis": lambda x: x[None, ..., 0],
    "array_index": lambda x: x[:, IDX[:3]],
    "array_index_negative": lambda x: x[np.array([0, 2, -3])],
    "take": lambda x: pnp.take(x, np.array([1, 3]), axis=2),
    "at_add_repeated": lambda x: x.at[np.array([0, 2, 0])].add(1.0),
    "at_set": lambda x: x.at[:, 1].set(0.0),
    "at_get": lambda x: x.at[1:, 2].get(),
    "arange": lambda x: x + pnp.arange(5),
}


def assert_jit_equals_eager(f, *args):
    got, want = np.asarray(jit(f)(*args)), np.asarray(f(*args))
    assert (got.shape, got.dtype) == (want.shape, want.dtype)
    np.testing.assert_array_equal(got, want)


@needs_jit
@pytest.mark.parametrize("name", list(NUMPY_FUNCTIONS))
def test_numpy_shape_functions_jit_equal_eager(name):
    x = pnp.asarray(draw("float32", (3, 4, 5), seed=5))   # a plugax Array: x.at, x.T
    assert_jit_equals_eager(NUMPY_FUNCTIONS[name], x)


@needs_jit
def test_traced_index_under_jit_is_normalised_and_clamped():
    """x[i] with a traced i: negative i counts from the end, as eagerly; an out-of-range
    i (which eager indexing rejects) clamps onto the nearest row, as in XLA."""
    x = pnp.asarray(draw("int32", (6, 3), seed=6))
    for i in (0, 4, -2, -6):
        assert_jit_equals_eager(lambda x, i: x[i], x, np.int32(i))
    getrow = jit(lambda x, i: x[i])
    rows = np.asarray(x)
    np.testing.assert_array_equal(getrow(x, np.int32(17)), rows[5])
    np.testing.assert_array_equal(getrow(x, np.int32(-30)), rows[0])
    for i in (0, 3, -4, 17):
        assert_jit_equals_eager(lambda x, i: lax.dynamic_slice(x, (i, i), (2, 2)), x,
                                np.int32(i))
