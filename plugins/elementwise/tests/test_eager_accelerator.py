"""The C accelerator of the eager fast path (plugax.extend.eager_op) gives exactly
what the family's Python functions give: same type, same aval (so the same dtype,
shape and weak type) and the same bits, for every accelerated function and operator,
on every float dtype the fast path takes, weak or not, rank 0 to 2. The Python
function is the accelerated one's `__wrapped__`."""
from __future__ import annotations

import operator

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import plugax
import plugax.numpy as xnp
from plugax.core import eager_ops

from plugax_elementwise.methods import METHODS
from plugax_elementwise.numpy_api import NUMPY

pytestmark = pytest.mark.skipif(not eager_ops.accelerated(),
                                reason="the C accelerator is not built")


def _accelerated(table: dict) -> dict:
    return {name: fn for name, fn in table.items() if hasattr(fn, "__wrapped__")
            and type(fn).__name__ == "EagerOp"}


FUNCTIONS = _accelerated(NUMPY)
OPERATORS = _accelerated(METHODS)
DTYPES = [np.float16, np.float32, ml_dtypes.bfloat16]


def test_the_hot_functions_are_accelerated():
    assert {"sin", "cos", "exp", "tanh", "add", "multiply", "subtract"} <= set(FUNCTIONS)
    assert {"__add__", "__mul__", "__sub__", "__truediv__"} <= set(OPERATORS)


def _same(a, b) -> None:
    assert type(a) is type(b) is plugax.Array
    assert a.aval is b.aval
    np.testing.assert_array_equal(np.asarray(a).reshape(-1).view(np.uint8),
                                  np.asarray(b).reshape(-1).view(np.uint8))


def _arity(fn) -> int:
    return fn.__wrapped__.__code__.co_argcount


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(sorted({**FUNCTIONS, **OPERATORS})),
       dtype=st.sampled_from(DTYPES), weak=st.booleans(),
       shape=st.sampled_from([(), (3,), (2, 3)]), seed=st.integers(0, 2**16))
def test_accelerated_equals_python(name, dtype, weak, shape, seed):
    fn = {**FUNCTIONS, **OPERATORS}[name]
    rng = np.random.default_rng(seed)
    args = [plugax.Array(np.asarray(rng.uniform(0.1, 2.0, shape)).astype(dtype), weak)
            for _ in range(_arity(fn))]
    with np.errstate(all="ignore"):
        fn(*args)                      # the first call checks the signature
        _same(fn(*args), fn.__wrapped__(*args))


def test_operators_take_the_fast_path_and_defer_to_others():
    x = xnp.asarray(np.linspace(0.1, 1, 4, dtype=np.float32))
    for op in (operator.add, operator.mul, operator.sub, operator.truediv):
        _same(op(x, x), op(x, x))
    assert (x + 1.0).weak_type is False and (1.0 + x).dtype == np.float32
    assert (x == None) is False   # noqa: E711 (NotImplemented from the Python path)


@pytest.mark.skipif(not hasattr(plugax, "jit"), reason="the xla_call plugin is not loaded")
def test_jit_takes_an_accelerated_function_as_often_as_asked():
    x = np.linspace(0, 1, 3, dtype=np.float32)
    for _ in range(3):   # jaxlib's C++ jit holds a weak reference to the function
        np.testing.assert_allclose(np.asarray(plugax.jit(xnp.sin)(x)), np.sin(x), rtol=1e-6)
