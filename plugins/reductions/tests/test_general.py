"""reduce_xor and cumlogsumexp (general.py): values against NumPy and against results
recorded from jax 0.10.2 (the constants below); the primitives' rules with the authors'
kit (jvp against central differences, vmap against a loop, jit, lowering). (lax.reduce
is tested with the control-flow family, which owns it: test_folds.py.)"""
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


def test_cumlogsumexp_matches_jax():
    jit = getattr(plugax, "jit", None)   # the xla_call plugin, when loaded
    for fn in [lax.cumlogsumexp] + ([jit(lax.cumlogsumexp, static_argnums=(1, 2))] if jit
                                    else []):
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
