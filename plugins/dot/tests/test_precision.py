"""precision= and preferred_element_type= on every product (issue 15 part 4).

As in JAX, precision only reaches the compiler (XLA's precision_config): values are
those of the call without it, the jaxpr and the lowered module carry it, and reverse
mode keeps it on the transposed products. preferred_element_type is the result dtype.
"""
import numpy as np
import pytest

import plugax
import plugax.lax as lax
import plugax.numpy as jnp
from plugax.testing import check_lowering

rng = np.random.default_rng(0)
X = rng.standard_normal((2, 3)).astype(np.float32)
Y = rng.standard_normal((3, 4)).astype(np.float32)
B = rng.standard_normal((5, 2, 3)).astype(np.float32)
DN = (((1,), (0,)), ((), ()))
HAS_JIT = hasattr(plugax, "jit")   # the xla_call plugin: absent in the dot family's tox env

PRODUCTS = {
    "lax.dot_general": lambda x, y, **kw: lax.dot_general(x, y, DN, **kw),
    "lax.dot": lambda x, y, **kw: lax.dot(x, y, **kw),
    "jnp.dot": lambda x, y, **kw: jnp.dot(x, y, **kw),
    "jnp.matmul": lambda x, y, **kw: jnp.matmul(x, y, **kw),
    "jnp.matmul batched": lambda x, y, **kw: jnp.matmul(B, y, **kw),
    "jnp.einsum": lambda x, y, **kw: jnp.einsum("ij,jk->ik", x, y, **kw),
    "jnp.tensordot": lambda x, y, **kw: jnp.tensordot(x, y, 1, **kw),
    "jnp.inner": lambda x, y, **kw: jnp.inner(x, y.T, **kw),
    "jnp.vdot": lambda x, y, **kw: jnp.vdot(x, y[:, :2].T, **kw),
    "Array.dot": lambda x, y, **kw: jnp.asarray(x).dot(y, **kw),
}


@pytest.mark.parametrize("name", PRODUCTS)
@pytest.mark.parametrize("precision", ["highest", lax.Precision.HIGH,
                                       ("bfloat16", lax.Precision.HIGHEST)])
def test_precision_changes_the_lowering_not_the_values(name, precision):
    f = PRODUCTS[name]
    plain = f(X, Y)
    np.testing.assert_array_equal(f(X, Y, precision=precision), plain)
    jaxpr = str(plugax.make_jaxpr(lambda a, b: f(a, b, precision=precision))(X, Y))
    lhs, rhs = lax.canonicalize_precision(precision)
    assert f"precision=(Precision.{lhs.name}, Precision.{rhs.name})" in jaxpr
    if HAS_JIT:
        text = plugax.jit(lambda a, b: f(a, b, precision=precision)).lower(X, Y).as_text()
        assert f"precision = [{lhs.name}, {rhs.name}]" in text
        check_lowering(lambda a, b: f(a, b, precision=precision), X, Y)


@pytest.mark.parametrize("name", PRODUCTS)
def test_preferred_element_type_is_the_result_dtype(name):
    f = PRODUCTS[name]
    # jax gives float16 here for every product, computing in float32 and rounding once
    out = f(X, Y, preferred_element_type=jnp.float16)
    assert out.dtype == np.float16
    np.testing.assert_allclose(out, np.asarray(f(X, Y), np.float16), rtol=1e-3, atol=1e-3)
    if HAS_JIT:
        check_lowering(lambda a, b: f(a, b, preferred_element_type=np.float16), X, Y)


def test_integer_products_widen():
    i8 = np.arange(6, dtype=np.int8).reshape(2, 3) * 20
    out = jnp.dot(i8, i8.T, preferred_element_type=jnp.int32)
    assert out.dtype == np.int32      # jax: int32, no int8 overflow
    np.testing.assert_array_equal(out, i8.astype(np.int32) @ i8.T.astype(np.int32))
    assert jnp.dot(i8, i8.T, preferred_element_type=jnp.float32).dtype == np.float32


def test_reverse_mode_keeps_precision_on_both_transposes():
    loss = lambda a, b: jnp.dot(a, b, precision="highest").sum()  # noqa: E731
    jaxpr = str(plugax.make_jaxpr(plugax.grad(loss, argnums=(0, 1)))(X, Y))
    assert jaxpr.count("dot_general[") == 3
    assert jaxpr.count("precision=(Precision.HIGHEST, Precision.HIGHEST)") == 3
    gx, gy = plugax.grad(loss, argnums=(0, 1))(X, Y)
    np.testing.assert_allclose(gx, np.ones((2, 4)) @ Y.T, rtol=1e-6)
    np.testing.assert_allclose(gy, X.T @ np.ones((2, 4)), rtol=1e-6)


def test_precision_values_and_errors():
    P = lax.Precision
    assert P("highest") is P.HIGHEST and P("float32") is P.HIGHEST
    assert P("tensorfloat32") is P.HIGH and P("fastest") is P.DEFAULT
    assert repr(P.HIGH) == "Precision.HIGH" and str(P.HIGH) == "HIGH"
    assert lax.canonicalize_precision(None) is None
    assert lax.canonicalize_precision(("high", P.DEFAULT)) == (P.HIGH, P.DEFAULT)
    with pytest.raises(ValueError, match="unknown precision 'fast-ish'"):
        jnp.dot(X, Y, precision="fast-ish")
    with pytest.raises(ValueError, match="precision argument must be"):
        lax.dot_general(X, Y, DN, precision=(P.HIGH, P.HIGH, P.HIGH))
    with pytest.raises(TypeError):
        lax.dot(X, Y, P.HIGHEST)   # keyword-only, as in jax.lax.dot
