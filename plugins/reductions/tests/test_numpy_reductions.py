"""plugax.numpy reductions and Array methods: values vs NumPy, dtypes and jaxprs vs JAX."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import plugax
import plugax.numpy as pnp
from plugax.testing import check_jvp, check_vmap

AXES = [None, 0, 1, -1, (0, 2), (2, 0, 1)]


def _x(dtype=np.float32, shape=(2, 3, 4)):
    return (np.arange(np.prod(shape)).reshape(shape) * 7 % 11 - 3).astype(dtype)


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean", "var", "std",
                                  "all", "any"])
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_values_match_numpy(name, axis, keepdims):
    x = _x() / 4
    got = getattr(pnp, name)(x, axis=axis, keepdims=keepdims)
    want = getattr(np, name)(x, axis=axis, keepdims=keepdims)
    assert got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=2e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["argmax", "argmin", "cumsum", "cumprod"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_index_and_cumulative_values(name, axis):
    x = _x() / 8
    np.testing.assert_allclose(getattr(pnp, name)(x, axis=axis), getattr(np, name)(x, axis=axis),
                               rtol=1e-5)
    if name.startswith("arg"):
        got = getattr(pnp, name)(x, axis=axis, keepdims=True)
        assert got.shape == getattr(np, name)(x, axis=axis, keepdims=True).shape


@pytest.mark.parametrize("fn, dtype, expected", [
    (pnp.sum, np.int8, np.int32), (pnp.sum, np.uint8, np.uint32), (pnp.sum, np.bool_, np.int32),
    (pnp.sum, np.float16, np.float16), (pnp.prod, np.bool_, np.int32),
    (pnp.mean, np.int32, np.float32), (pnp.mean, np.bool_, np.float32),
    (pnp.var, np.int32, np.float32), (pnp.max, np.int8, np.int8), (pnp.max, np.bool_, np.bool_),
    (pnp.all, np.float32, np.bool_), (pnp.argmax, np.float32, np.int32),
    (pnp.cumsum, np.int8, np.int8), (pnp.cumsum, np.bool_, np.int32),
])
def test_result_dtypes_follow_jax(fn, dtype, expected):
    out = fn(_x(dtype))
    assert out.dtype == np.dtype(expected) and not out.weak_type


def test_explicit_dtype():
    assert pnp.sum(_x(np.int32), dtype=np.float32).dtype == np.float32
    assert pnp.mean(_x(np.int32), axis=0, dtype=np.float16).dtype == np.float16


def test_weak_python_scalars_become_strong():
    """jnp reductions of weak values are strongly typed (jnp.sum(3.0) is a strong f32)."""
    for fn in (pnp.sum, pnp.max, pnp.mean, pnp.prod, pnp.cumsum):
        out = fn(3.0)
        assert out.dtype == np.float32 and not out.weak_type
    assert pnp.sum(2).dtype == np.int32 and not pnp.sum(2).weak_type
    weak = plugax.Array(np.ones(3, np.float32), weak_type=True)
    jaxpr = str(plugax.make_jaxpr(pnp.sum)(weak))
    assert "convert_element_type[new_dtype=float32 weak_type=False]" in jaxpr


def test_jaxprs_match_jax():
    f32 = lambda *s: np.zeros(s, np.float32)  # noqa: E731
    assert str(plugax.make_jaxpr(pnp.sum)(f32(8))) == \
        "{ lambda ; a:f32[8]. let b:f32[] = reduce_sum[axes=(0,)] a in (b,) }"
    text = str(plugax.make_jaxpr(lambda x: pnp.mean(x, axis=1, keepdims=True))(
        np.zeros((2, 3), np.int32)))
    for line in ["convert_element_type[new_dtype=float32 weak_type=False] a",
                 "reduce_sum[axes=(1,)] b", "broadcast_in_dim[broadcast_dimensions=(0,)",
                 "div d 3.0"]:
        assert line in text, text
    text = str(plugax.make_jaxpr(lambda x: pnp.sum(x))(np.zeros(3, np.float16)))
    assert text.count("convert_element_type") == 2 and "f32[] = reduce_sum" in text
    text = str(plugax.make_jaxpr(pnp.argmax)(f32(2, 3)))
    assert "reshape" in text and "argmax[axes=(0,) index_dtype=int32]" in text


def test_methods():
    x = plugax.Array(_x() / 4)
    assert float(x.sum()) == pytest.approx(float(np.sum(np.asarray(x))))
    np.testing.assert_allclose(x.mean(axis=1), np.asarray(x).mean(axis=1), rtol=1e-6)
    np.testing.assert_allclose(x.std(0, ddof=1), np.asarray(x).std(0, ddof=1), rtol=1e-5)
    assert int(x.argmax()) == int(np.argmax(np.asarray(x)))
    assert x.max(keepdims=True).shape == (1, 1, 1)
    assert bool(x.any()) and not bool(plugax.Array(np.zeros(3, np.float32)).any())
    np.testing.assert_allclose(x.cumsum(axis=2), np.asarray(x).cumsum(axis=2), rtol=1e-6)


def test_empty_and_degenerate():
    assert np.isnan(float(pnp.mean(np.zeros(0, np.float32))))
    assert np.isnan(float(pnp.var(np.ones(3, np.float32), ddof=3)))
    np.testing.assert_array_equal(pnp.sum(np.ones((2, 0), np.float32), axis=1), [0., 0.])
    with pytest.raises(ValueError, match="zero-size"):
        pnp.max(np.zeros(0, np.float32))
    with pytest.raises(ValueError, match="out of bounds"):
        pnp.sum(np.ones(3), axis=1)


@settings(max_examples=10, deadline=None)
@given(st.sampled_from(["sum", "mean", "var", "std", "prod", "max", "min"]),
       st.sampled_from([None, 0, 1, (0, 1)]), st.booleans())
def test_derivatives_and_batching(name, axis, keepdims):
    fn = lambda x: getattr(pnp, name)(x, axis=axis, keepdims=keepdims)  # noqa: E731
    x = (np.random.default_rng(0).permutation(12).reshape(3, 4) + 1.).astype(np.float32) / 5
    check_jvp(fn, x)
    check_vmap(fn, x)


X2 = np.array([[1.0, 5.0, 3.0], [2.0, -1.0, 4.0]], np.float32)
W2 = np.array([[True, False, True], [False, False, True]])


@pytest.mark.parametrize("call, want", [
    (lambda: pnp.max(X2, axis=1, initial=4.0), [5, 4]),
    (lambda: pnp.max(X2, axis=1, where=W2, initial=0.0), [3, 4]),
    (lambda: pnp.min(X2, axis=1, where=W2, initial=10.0), [1, 4]),
    (lambda: pnp.amax(np.zeros((0,), np.float32), initial=2.0), 2),
    (lambda: pnp.sum(X2, axis=1, where=W2), [4, 4]),
    (lambda: pnp.sum(X2, initial=10), 24),
    (lambda: pnp.sum(np.arange(3), initial=10.5), 13),
    (lambda: pnp.sum(X2, axis=1, where=np.array([True, False, True])), [4, 6]),
    (lambda: pnp.prod(X2, axis=1, where=W2, initial=2.0), [6, 8]),
    (lambda: pnp.mean(X2, axis=1, where=W2), [2, 4]),
    (lambda: pnp.mean(X2, axis=1, where=np.zeros_like(W2)), [np.nan, np.nan]),
    (lambda: pnp.var(X2, axis=1, where=W2), [1, 0]),
    (lambda: pnp.var(X2, axis=1, where=W2, ddof=1), [2, np.nan]),
    (lambda: pnp.any(X2 > 2, axis=1, where=W2), [True, True]),
    (lambda: pnp.all(X2 > 2, axis=1, where=W2), [False, True]),
])
@pytest.mark.skipif(not hasattr(plugax, "jit"), reason="compares with jit: the xla_call plugin is not loaded")
def test_max_min_sum_accept_initial_and_where(call, want):
    """Values recorded from jax 0.10.2; these keywords used to raise TypeError."""
    np.testing.assert_array_equal(np.asarray(call()), want)
    np.testing.assert_array_equal(np.asarray(plugax.jit(call)()), want)


def test_initial_and_where_gradients_follow_jax():
    g = plugax.grad(lambda x: pnp.max(x, axis=1, where=W2, initial=0.0).sum())(X2)
    np.testing.assert_array_equal(g, [[0, 0, 1], [0, 0, 1]])
    g = plugax.grad(lambda x: pnp.max(x, initial=5.0))(X2)      # a tie with initial: halves
    np.testing.assert_array_equal(g, [[0, 0.5, 0], [0, 0, 0]])


def test_where_without_initial_names_the_fix():
    with pytest.raises(ValueError, match="initial"):
        pnp.max(X2, where=W2)
    with pytest.raises(ValueError, match="boolean"):
        pnp.sum(X2, where=W2.astype(np.int32))
