"""plugax.nn against NumPy float64 references, one table for every function.

Each row: the function (with its keyword arguments), an independent NumPy
reference written here from the textbook formula, and the input domain. Every
row is checked for its value (float32 vs the float64 reference), jit vs eager,
vmap vs a Python loop, and its gradient vs central differences in float64.
"""
from __future__ import annotations

import math
from functools import partial

import numpy as np
import pytest

import plugax
import plugax.nn as nn
from plugax.testing import numeric_grad, x64

erf = np.vectorize(math.erf)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _softplus(x):
    return np.logaddexp(x, 0)


def _lse(x, axis=None, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


def _softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


SELU_A, SELU_L = 1.6732632423543772, 1.0507009873554805
ELEMENTWISE = {   # name -> (function, reference, (low, high))
    "relu": (nn.relu, lambda x: np.maximum(x, 0), (-3, 3)),
    "relu6": (nn.relu6, lambda x: np.clip(x, 0, 6), (-3, 9)),
    "sigmoid": (nn.sigmoid, _sigmoid, (-6, 6)),
    "softplus": (nn.softplus, _softplus, (-30, 30)),
    "soft_sign": (nn.soft_sign, lambda x: x / (np.abs(x) + 1), (-4, 4)),
    "silu": (nn.silu, lambda x: x * _sigmoid(x), (-5, 5)),
    "swish": (nn.swish, lambda x: x * _sigmoid(x), (-5, 5)),
    "gelu_tanh": (nn.gelu, lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi)
                                                           * (x + 0.044715 * x ** 3))), (-4, 4)),
    "gelu_erf": (partial(nn.gelu, approximate=False),
                 lambda x: x * (1 + erf(x / np.sqrt(2))) / 2, (-4, 4)),
    "elu": (nn.elu, lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0))), (-4, 4)),
    "elu_alpha": (partial(nn.elu, alpha=0.5),
                  lambda x: np.where(x > 0, x, 0.5 * np.expm1(np.minimum(x, 0))), (-4, 4)),
    "celu": (partial(nn.celu, alpha=2.0),
             lambda x: np.maximum(x, 0) + 2.0 * np.expm1(np.minimum(x, 0) / 2.0), (-4, 4)),
    "selu": (nn.selu, lambda x: SELU_L * np.where(x > 0, x, SELU_A * np.expm1(np.minimum(x, 0))),
             (-4, 4)),
    "leaky_relu": (partial(nn.leaky_relu, negative_slope=0.2),
                   lambda x: np.where(x >= 0, x, 0.2 * x), (-3, 3)),
    "hard_tanh": (nn.hard_tanh, lambda x: np.clip(x, -1, 1), (-3, 3)),
    "hard_sigmoid": (nn.hard_sigmoid, lambda x: np.clip(x + 3, 0, 6) / 6, (-5, 5)),
    "hard_swish": (nn.hard_swish, lambda x: x * np.clip(x + 3, 0, 6) / 6, (-5, 5)),
    "log_sigmoid": (nn.log_sigmoid, lambda x: -_softplus(-x), (-20, 20)),
    "squareplus": (nn.squareplus, lambda x: (x + np.sqrt(x * x + 4)) / 2, (-4, 4)),
    "mish": (nn.mish, lambda x: x * np.tanh(_softplus(x)), (-4, 4)),
    "sparse_plus": (nn.sparse_plus,
                    lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4)), (-3, 3)),
    "sparse_sigmoid": (nn.sparse_sigmoid, lambda x: np.clip(x + 1, 0, 2) / 2, (-3, 3)),
    "log1mexp": (nn.log1mexp, lambda x: np.log(-np.expm1(-x)), (0.05, 5)),
    "tanh": (nn.tanh, np.tanh, (-3, 3)),
    "identity": (nn.identity, lambda x: x, (-3, 3)),
}
AXIS = {   # name -> (function, reference) over an f[3, 5] input, along the last axis
    "softmax": (nn.softmax, _softmax),
    "softmax_axis0": (partial(nn.softmax, axis=0), partial(_softmax, axis=0)),
    "log_softmax": (nn.log_softmax, lambda x: x - _lse(x, -1, keepdims=True)),
    "logsumexp": (partial(nn.logsumexp, axis=-1), partial(_lse, axis=-1)),
    "logsumexp_all": (nn.logsumexp, _lse),
    "logmeanexp": (partial(nn.logmeanexp, axis=1), lambda x: _lse(x, 1) - np.log(5)),
    "standardize": (nn.standardize, lambda x: (x - x.mean(-1, keepdims=True))
                    / np.sqrt(x.var(-1, keepdims=True) + 1e-5)),
    "glu": (nn.glu, lambda x: x[:, :2] * _sigmoid(x[:, 2:4]) if x.shape[1] == 4 else None),
}


def _points(low, high, n=11, seed=0):
    x = np.linspace(low, high, n)
    kink = (x % 1 == 0) & (x != 0)           # keep central differences off the kinks
    return (x + 0.013 * kink).astype(np.float32)


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_value_jit_vmap(name):
    fn, ref, (lo, hi) = ELEMENTWISE[name]
    x = _points(lo, hi)
    want = ref(x.astype(np.float64))
    got = np.asarray(fn(x))
    assert got.dtype == np.float32 and got.shape == x.shape
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(np.asarray(plugax.jit(fn)(x)), got, rtol=1e-6, atol=1e-6)
    batch = np.stack([x, x[::-1]])
    np.testing.assert_allclose(np.asarray(plugax.vmap(fn)(batch)),
                               np.stack([np.asarray(fn(r)) for r in batch]), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_grad_matches_finite_differences(name):
    fn, ref, (lo, hi) = ELEMENTWISE[name]
    x = _points(lo, hi).astype(np.float64) + 0.031
    with x64():
        got = np.asarray(plugax.vmap(plugax.grad(fn))(x))
        want = numeric_grad(lambda v: np.sum(ref(v)), x)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(AXIS))
def test_axis_functions_value_grad_jit_vmap(name):
    fn, ref = AXIS[name]
    x = np.random.RandomState(1).randn(3, 4 if name == "glu" else 5)
    np.testing.assert_allclose(np.asarray(fn(x.astype(np.float32))), ref(x), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(plugax.jit(fn)(x.astype(np.float32))),
                               np.asarray(fn(x.astype(np.float32))), rtol=1e-6, atol=1e-6)
    batch = np.stack([x, 2 * x]).astype(np.float32)
    np.testing.assert_allclose(np.asarray(plugax.vmap(fn)(batch)),
                               np.stack([np.asarray(fn(r)) for r in batch]), rtol=1e-5, atol=1e-6)
    w = np.random.RandomState(2).randn(*np.shape(ref(x)))
    with x64():
        got = np.asarray(plugax.grad(lambda v: plugax.numpy.sum(fn(v) * w))(x))
    want = numeric_grad(lambda v: np.sum(ref(v) * w), x)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_custom_derivatives_at_the_kinks_are_jaxs():
    assert float(plugax.grad(nn.relu)(0.0)) == 0.0
    assert [float(plugax.grad(nn.relu6)(v)) for v in (0.0, 6.0, 3.0)] == [0.0, 0.0, 1.0]
    assert float(plugax.grad(nn.softplus)(-np.inf)) == 0.0
    g = plugax.grad(lambda x: nn.logsumexp(x))(np.array([0.0, -np.inf], np.float32))
    np.testing.assert_array_equal(np.asarray(g), [1.0, 0.0])


def test_softmax_where_and_logsumexp_b_and_sign():
    x = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 4.0]], np.float32)
    keep = np.array([[True, False, True], [True, True, False]])
    got = np.asarray(nn.softmax(x, where=keep))
    want = np.where(keep, np.exp(np.where(keep, x, -np.inf)), 0)
    np.testing.assert_allclose(got, want / want.sum(-1, keepdims=True), rtol=1e-6)
    assert np.all(np.asarray(nn.log_softmax(x, where=keep))[~keep] == -np.inf)
    b = np.array([1.0, -2.0, 0.5], np.float32)
    out, sign = nn.logsumexp(x[0], b=b, return_sign=True)
    total = np.sum(b * np.exp(x[0].astype(np.float64)))
    np.testing.assert_allclose([float(out), float(sign)], [np.log(abs(total)), np.sign(total)],
                               rtol=1e-6)
    assert np.isnan(float(nn.logsumexp(np.zeros(2), b=np.array([1.0, -2.0]))))


def test_one_hot_matches_jax():
    got = np.asarray(nn.one_hot(np.array([0, 2, 5, -1]), 3))
    np.testing.assert_array_equal(got, [[1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]])
    assert got.dtype == np.float32
    by_axis0 = nn.one_hot(np.array([1, 0]), 3, axis=0, dtype=np.int32)
    np.testing.assert_array_equal(np.asarray(by_axis0), [[0, 1], [1, 0], [0, 0]])
    jitted = plugax.jit(lambda i: nn.one_hot(i, 4))(np.array([3, 1]))
    np.testing.assert_array_equal(np.asarray(jitted), [[0, 0, 0, 1], [0, 1, 0, 0]])


def _attention_reference(q, k, v, causal):
    logits = np.einsum("btnh,bsnh->bnts", q, k) / np.sqrt(q.shape[-1])
    if causal:
        logits = np.where(np.tril(np.ones(logits.shape[-2:], bool)), logits, -1e30)
    return np.einsum("bnts,bsnh->btnh", _softmax(logits), v)


@pytest.mark.parametrize("causal", [False, True])
def test_dot_product_attention_matches_the_formula(causal):
    rng = np.random.RandomState(0)
    q, k, v = (rng.randn(2, 4, 2, 8) for _ in range(3))
    got = nn.dot_product_attention(*(a.astype(np.float32) for a in (q, k, v)), is_causal=causal)
    np.testing.assert_allclose(np.asarray(got), _attention_reference(q, k, v, causal),
                               rtol=1e-4, atol=1e-5)
    grouped = nn.dot_product_attention(q.astype(np.float32), k[:, :, :1].astype(np.float32),
                                       v[:, :, :1].astype(np.float32))
    ref = _attention_reference(q, np.repeat(k[:, :, :1], 2, 2), np.repeat(v[:, :, :1], 2, 2),
                               False)
    np.testing.assert_allclose(np.asarray(grouped), ref, rtol=1e-4, atol=1e-5)


def test_errors_name_the_mistake():
    with pytest.raises(ValueError, match="glu: axis -1 .* odd size 3"):
        nn.glu(np.ones((2, 3)))
    with pytest.raises(ValueError, match="Unknown algorithm 'slow'"):
        nn.standardize(np.ones(3), algorithm="slow")
    with pytest.raises(ValueError, match="3 query heads cannot be grouped over 2"):
        nn.dot_product_attention(np.ones((1, 2, 3, 4)), np.ones((1, 2, 2, 4)),
                                 np.ones((1, 2, 2, 4)))
