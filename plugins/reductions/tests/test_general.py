"""lax.reduce with a user computation, reduce_xor and cumlogsumexp (general.py).

Values against NumPy and against results recorded from jax 0.10.2 (the constants
below); the primitives' rules with the authors' kit (jvp against central differences,
vmap against a loop, jit, lowering); `reduce` as a composition with the same kit."""
import numpy as np
import pytest

import plugax
import plugax.lax as lax
import plugax.numpy as jnp
from plugax.testing import check_primitive
from plugax_reductions.general import cumlogsumexp_p, reduce_xor_p

X = np.array([[0.5, -1., 2.], [1.5, 0.25, -3.]], np.float32)
V = np.array([0., 1., -np.inf, 2., -1.], np.float32)
# recorded with jax 0.10.2
CUMLSE = [0.0, 1.3132617473602295, 1.3132617473602295, 2.4076061248779297, 2.440189838409424]
CUMLSE_REV = [2.440189838409424, 2.3490123748779297, 2.0485873222351074, 2.0485873222351074,
              -1.0]
CUMLSE_GRAD = [1.4254931211471558, 3.874891996383667, 0.0, 4.571379661560059, 0.128234401345253]
FOLD = [2.0, 0.375, -7.0]


def test_cumlogsumexp_matches_jax():
    for fn in (lax.cumlogsumexp, plugax.jit(lax.cumlogsumexp, static_argnums=(1, 2))):
        np.testing.assert_allclose(fn(V, 0, False), CUMLSE, rtol=1e-6)
        np.testing.assert_allclose(fn(V, 0, True), CUMLSE_REV, rtol=1e-6)
    grad = plugax.grad(lambda v: (lax.cumlogsumexp(v) * jnp.arange(5.)).sum())(V)
    np.testing.assert_allclose(grad, CUMLSE_GRAD, rtol=1e-5)


@pytest.mark.parametrize("axis, reverse", [(0, False), (1, True), (2, False)])
def test_cumlogsumexp_rules(axis, reverse):
    x = np.random.default_rng(axis).standard_normal((2, 3, 4)).astype(np.float32)
    check_primitive(cumlogsumexp_p, x, axis=axis, reverse=reverse, lowering=True)
    expected = np.logaddexp.accumulate(np.flip(x, axis) if reverse else x, axis=axis)
    np.testing.assert_allclose(lax.cumlogsumexp(x, axis, reverse),
                               np.flip(expected, axis) if reverse else expected, rtol=1e-6)
    with pytest.raises(ValueError, match="out of bounds"):
        lax.cumlogsumexp(x, 3)


def test_reduce_xor():
    ints = np.array([[1, 2, 3], [7, 8, 9]], np.int32)
    np.testing.assert_array_equal(lax.reduce_xor(ints, (1,)), [0, 6])      # JAX's values
    np.testing.assert_array_equal(lax.reduce_xor(np.array([[True, False], [True, True]]), (0,)),
                                  [False, True])
    np.testing.assert_array_equal(lax.reduce_xor(np.zeros((0, 2), np.uint8), (0,)), [0, 0])
    check_primitive(reduce_xor_p, ints, axes=(0,), lowering=True)
    check_primitive(reduce_xor_p, np.array([[1, 5], [3, 3]], np.uint8), axes=(0, 1),
                    lowering=True)
    with pytest.raises(Exception, match="reduce_xor"):
        lax.reduce_xor(X, (0,))


@pytest.mark.parametrize("computation, init, reduction", [
    (lax.add, 0.0, "reduce_sum"), (lambda a, b: a * b, 1.0, "reduce_prod"),
    (lax.max, -np.inf, "reduce_max"), (lax.min, np.inf, "reduce_min")])
def test_reduce_recognises_monoids_as_jax(computation, init, reduction):
    jaxpr = str(plugax.make_jaxpr(lambda x: lax.reduce(x, init, computation, (0,)))(X))
    assert reduction in jaxpr and "scan" not in jaxpr
    np.testing.assert_allclose(lax.reduce(X, init, computation, (0,)),
                               getattr(lax, reduction)(X, (0,)))


def test_reduce_folds_other_computations_as_jax():
    fold = lambda x: lax.reduce(x, np.float32(1.), lambda a, b: a * b + 0.5, (0,))  # noqa: E731
    np.testing.assert_allclose(fold(X), FOLD)   # (JAX's gradient of this non-associative
    # computation differentiates a tree-shaped reduction, not the value's; see docs/faq.md)
    lse = lambda x: lax.reduce(x, -np.inf, jnp.logaddexp, (1,))  # noqa: E731
    x64 = X.astype(np.float64)
    np.testing.assert_allclose(lse(X), np.logaddexp.reduce(x64, axis=1), rtol=1e-6)
    softmax = np.exp(x64 - np.logaddexp.reduce(x64, axis=1, keepdims=True))
    np.testing.assert_allclose(plugax.grad(lambda x: lse(x).sum())(X), softmax, rtol=1e-6)
    check_primitive(fold, X)
    check_primitive(lse, X)
    # a non-identity init is applied once, as JAX does on CPU
    np.testing.assert_allclose(lax.reduce(X, 1.0, lax.add, (0,)), X.sum(0) + 1)
    # pytrees of operands: JAX's recorded values
    mx, total = lax.reduce((X, np.arange(6).reshape(2, 3)), (np.float32(-np.inf), 0),
                           lambda a, b: (jnp.maximum(a[0], b[0]), a[1] + b[1]), (1,))
    np.testing.assert_allclose(mx, [2.0, 1.5])
    np.testing.assert_array_equal(total, [3, 12])
    pair = lambda x: lax.reduce((x, x), (0.0, 1.0),  # noqa: E731
                                lambda a, b: (a[0] + b[0], a[1] * b[1]), (0, 1))
    check_primitive(lambda x: pair(x)[1], X)


def test_reduce_errors():
    with pytest.raises(TypeError, match="same tree structure"):
        lax.reduce((X, X), 0.0, lax.add, (0,))
    with pytest.raises(TypeError, match="scalars"):
        lax.reduce(X, np.zeros(3, np.float32), lambda a, b: a + b * 2, (0,))
