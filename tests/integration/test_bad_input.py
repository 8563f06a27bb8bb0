"""Bad input gets an error naming the mistake, never a silent answer (issue 14, part 1:
the examples its probe found). Each case returned a value before; JAX raises on each.
Where JAX defines a result instead (integer division and remainder by zero), eager and
jit give JAX's result, recorded from jax 0.10.2."""
import numpy as np
import pytest

import plugax
import plugax.lax as lax
import plugax.numpy as pnp

F32 = np.float32


CASES = {
    "vjp cotangent of the wrong shape": (
        lambda: plugax.vjp(lambda x: x * 2, np.ones(3, F32))[1](np.ones(4, F32)),
        ValueError, "got f32[4], but expected f32[3]"),
    "vjp cotangent of the wrong dtype": (
        lambda: plugax.vjp(lambda x: x * 2, np.ones(3, F32))[1](np.ones(3, np.int32)),
        ValueError, "got i32[3], but expected f32[3]"),
    "integer_pow with a float exponent": (
        lambda: lax.integer_pow(np.ones(3, F32), 2.5),
        TypeError, "needs a Python int exponent y, got 2.5"),
    "asarray(None)": (lambda: pnp.asarray(None), ValueError, "None is not a valid value"),
    "a string array": (lambda: pnp.asarray(np.array(["a", "b"])), TypeError,
                       "(strings)"),
    "an object array": (lambda: pnp.asarray(np.array([1, "a"], dtype=object)), TypeError,
                        "(Python objects)"),
    "an object array into a primitive": (
        lambda: lax.add(np.array([1, None], dtype=object), np.ones(2, F32)), TypeError,
        "hold booleans and numbers"),
    "a datetime array": (lambda: pnp.sum(np.array(["2020-01-01"], dtype="datetime64[D]")),
                         TypeError, "(datetimes)"),
    "vmap out_axes beyond the result's rank": (
        lambda: plugax.vmap(lambda x: x * 2, out_axes=5)(np.ones((2, 3), F32)),
        ValueError, "axis 5 is out of bounds for array of dimension 2"),
    "vmap out_axes below the result's rank": (
        lambda: plugax.vmap(lambda x: x * 2, out_axes=-3)(np.ones((2, 3), F32)),
        ValueError, "axis -3 is out of bounds for array of dimension 2"),
    "jit static_argnums beyond the parameters": (
        lambda: plugax.jit(lambda x: x * 2, static_argnums=5), ValueError,
        "has static_argnums=(5,), but only accepts 1 positional argument"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_raises_naming_the_mistake(name):
    fn, error, fragment = CASES[name]
    with pytest.raises(error) as info:
        fn()
    assert fragment in str(info.value)
    assert plugax.core.trace.current_trace() is plugax.core.trace.eval_trace
    # and the next call works
    assert float(plugax.jit(lambda x: x + 1)(1.0)) == 2.0


def test_object_and_string_arrays_are_refused_under_jit_and_grad_too():
    bad = np.array(["a"])
    with pytest.raises(TypeError, match="strings"):
        plugax.jit(lambda x: x)(bad)
    with pytest.raises(TypeError, match="strings"):
        plugax.grad(lambda x: x)(bad)


def test_valid_neighbours_of_the_bad_cases_still_work():
    ct = plugax.vjp(lambda x: x * 2, np.ones(3, F32))[1](np.ones(3, F32))[0]
    np.testing.assert_array_equal(ct, 2 * np.ones(3))
    assert float(plugax.vjp(lambda x: x * 2, 1.0)[1](1.0)[0]) == 2.0   # a Python scalar ct
    np.testing.assert_array_equal(lax.integer_pow(np.full(2, 3, F32), np.int64(2)), [9, 9])
    assert plugax.vmap(lambda x: x * 2, out_axes=-1)(np.ones((2, 3), F32)).shape == (3, 2)
    assert plugax.jit(lambda x, *rest: x, static_argnums=3)(1.0) == 1.0   # *args may take it
    assert pnp.asarray(np.zeros(2, dtype=plugax.dtypes.float0)).dtype == plugax.dtypes.float0


# jax 0.10.2: jnp.asarray(v) // 0 and % 0, for v in (7, -7, 0), int32 and uint32
JAX_DIV_BY_ZERO = {("int32", 7): (-2, 0), ("int32", -7): (-2, 0), ("int32", 0): (-1, 0),
                   ("uint32", 7): (4294967295, 0)}


@pytest.mark.parametrize("dtype, value", list(JAX_DIV_BY_ZERO))
def test_integer_division_by_zero_gives_jaxs_result_eagerly_and_under_jit(dtype, value):
    x = pnp.asarray(np.array(value, dtype))
    want = JAX_DIV_BY_ZERO[(dtype, value)]
    for f in (lambda a: (a // 0, a % 0), plugax.jit(lambda a: (a // 0, a % 0))):
        q, r = f(x)
        assert (int(q), int(r)) == want
        assert q.dtype == r.dtype == np.dtype(dtype)


def test_remainder_by_zero_keeps_the_weak_type():
    a = pnp.asarray(7)                  # a weakly typed int32, as in JAX
    assert a.weak_type and (a % 0).weak_type and (a % 3).weak_type and (a // 0).weak_type


def test_an_eager_result_that_cannot_fit_in_memory_fails_at_once():
    # JAX fails in 0.07 s (XLA cannot allocate the buffer); NumPy would build a zero-stride
    # view and sum 10**12 elements for minutes
    with pytest.raises(plugax.ResourceExhaustedError, match="RESOURCE_EXHAUSTED.*GiB") as info:
        pnp.sum(pnp.zeros((10**6, 10**6)))
    assert isinstance(info.value, MemoryError) and "test_bad_input.py" in str(info.value)
    # tracing is abstract: the same program stages fine, and small ones still run
    assert "broadcast_in_dim" in str(plugax.make_jaxpr(lambda: pnp.zeros((10**6, 10**6)))())
    assert float(pnp.sum(pnp.ones((300, 300)))) == 90000.0


@pytest.mark.parametrize("make", [
    lambda a: pnp.outer(a, a),                         # dot_general
    lambda a: pnp.dot(a[:, None], a[None, :]),
    lambda a: plugax.lax.broadcast_in_dim(a, (a.shape[0], a.shape[0]), (1,)),
], ids=["outer", "dot", "broadcast_in_dim"])
def test_any_eager_primitive_whose_result_cannot_fit_fails_at_once(make):
    """The check is the kernel's, on every eager primitive's output aval, not only
    broadcast's: the bytes are known before the impl rule runs."""
    a = np.ones(10**6, np.float32)
    with pytest.raises(plugax.ResourceExhaustedError, match=r"RESOURCE_EXHAUSTED: \w+ to "
                                                            r"float32\[1000000, 1000000\]"):
        make(a)
    assert float(pnp.sum(make(np.ones(3, np.float32)))) > 0    # the next call works
