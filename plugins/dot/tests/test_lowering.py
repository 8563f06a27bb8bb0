"""Lowering of dot_general: jitted (XLA) equals eager (NumPy impl).

Every dtype (booleans too: NumPy's any-of-ands), every layout of dimension
numbers (plain, batched, several contracting dims, none: an outer product,
size 0), preferred_element_type widening and narrowing, mixed operand dtypes.
Float inputs are multiples of 1/4 so products and sums are exact in every
precision and the comparison holds whatever order XLA accumulates in; one
float32 case of random normals checks ordinary rounding. Then plugax.numpy's
products and einsum under px.jit.
"""
import ml_dtypes
import numpy as np
import pytest

import plugax as px
import plugax.numpy as pnp
from plugax.testing import (ALL_DTYPES, check_lowerings, exact_values, has_lowering, matmul_rtol,
                            x64)
from plugax_dot.dot_general import DotDimensionNumbers, dot_general_p

DTYPES = ALL_DTYPES

jit = getattr(px, "jit", None)
needs_jit = pytest.mark.skipif(jit is None, reason="the xla_call plugin (px.jit) is not loaded")


def draw(dtype, shape, seed=0):
    return exact_values(dtype, shape, seed, ints=(-4, 5), quarters=(-8, 8))


# (lhs shape, rhs shape, ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)))
LAYOUTS = [
    ((3, 4), (4, 5), (((1,), (0,)), ((), ()))),                 # matrix product
    ((2, 3, 4), (2, 5, 4), (((2,), (2,)), ((0,), (0,)))),        # batched, rhs transposed
    ((4, 2, 3), (3, 6, 2), (((2,), (0,)), ((1,), (2,)))),        # batch dims not leading
    ((3, 2, 4), (4, 3, 5), (((0, 2), (1, 0)), ((), ()))),        # two contracting dims
    ((3,), (4,), (((), ()), ((), ()))),                          # outer product
    ((5,), (5,), (((0,), (0,)), ((), ()))),                      # inner product, rank 0 out
    ((3, 0), (0, 2), (((1,), (0,)), ((), ()))),                  # empty contraction: zeros
    ((0, 3), (3, 2), (((1,), (0,)), ((), ()))),                  # empty output
]


def case(lhs_dtype, rhs_dtype, layout, seed, **params):
    lhs_shape, rhs_shape, dims = layout
    return (dot_general_p, (draw(lhs_dtype, lhs_shape, seed), draw(rhs_dtype, rhs_shape, seed + 1)),
            dict(dimension_numbers=DotDimensionNumbers(dims), **params))


def test_dot_general_has_a_lowering():
    assert has_lowering(dot_general_p)


def test_every_dtype_and_layout():
    """Each dtype on two layouts, all layouts covered, in one module."""
    n = 2 * len(DTYPES)
    with x64():
        check_lowerings([case(DTYPES[i % len(DTYPES)], DTYPES[i % len(DTYPES)],
                              LAYOUTS[i % len(LAYOUTS)], i) for i in range(n)])


def test_preferred_element_type_and_mixed_operands():
    pref = lambda d: dict(preferred_element_type=np.dtype(  # noqa: E731
        ml_dtypes.bfloat16 if d == "bfloat16" else d))
    with x64():
        check_lowerings([
            case("int8", "int8", LAYOUTS[0], 0, **pref("int32")),        # widening ints
            case("uint8", "uint8", LAYOUTS[1], 1, **pref("int32")),
            case("bfloat16", "bfloat16", LAYOUTS[0], 2, **pref("float32")),
            case("float16", "float16", LAYOUTS[2], 3, **pref("float32")),
            case("float32", "float32", LAYOUTS[3], 4, **pref("bfloat16")),   # narrowing
            case("int32", "int32", LAYOUTS[0], 5, **pref("float32")),      # int -> float
            case("float64", "float64", LAYOUTS[1], 6, **pref("float32")),
            case("bool", "bool", LAYOUTS[0], 7, **pref("int32")),
            case("int8", "float32", LAYOUTS[0], 8),                         # mixed: promote
            case("bfloat16", "float32", LAYOUTS[3], 9),
            case("uint8", "int16", LAYOUTS[1], 10),
        ])


def test_float32_random_values_round_alike():
    """float32 products agree to 1e-5 on the CPU; on an NVIDIA GPU XLA uses TF32 by
    default, as JAX does (`matmul_rtol`)."""
    rng = np.random.default_rng(11)
    a, b = (rng.standard_normal(s).astype(np.float32) for s in ((4, 64, 16), (4, 16, 32)))
    dims = DotDimensionNumbers((((2,), (1,)), ((0,), (0,))))
    tol = max(1e-5, matmul_rtol(np.float32))
    check_lowerings([(dot_general_p, (a, b), dict(dimension_numbers=dims))],
                    rtol=tol, atol=tol)


# --- plugax.numpy under jit ------------------------------------------------------------
NUMPY_FUNCTIONS = {
    "matmul": lambda x, y: pnp.matmul(x, y),
    "matmul_operator": lambda x, y: x @ y,
    "matmul_vector": lambda x, y: pnp.matmul(x[0, 0], y),
    "dot": lambda x, y: pnp.dot(x[0], y[1]),
    "einsum_batched": lambda x, y: pnp.einsum("bij,bjk->bik", x, y),
    "einsum_contract_all": lambda x, y: pnp.einsum("bij,bjk->", x, y),
    "einsum_trace_like": lambda x, y: pnp.einsum("bij,bji->b", x, pnp.transpose(x, (0, 2, 1))),
    "tensordot": lambda x, y: pnp.tensordot(x, y, axes=([0, 2], [0, 1])),
    "outer": lambda x, y: pnp.outer(x[0, 0], y[0, :, 0]),
}


@needs_jit
@pytest.mark.parametrize("name", list(NUMPY_FUNCTIONS))
def test_numpy_products_jit_equal_eager(name):
    x = pnp.asarray(draw("float32", (2, 3, 4), seed=12))
    y = pnp.asarray(draw("float32", (2, 4, 5), seed=13))
    f = NUMPY_FUNCTIONS[name]
    got, want = np.asarray(jit(f)(x, y)), np.asarray(f(x, y))
    assert (got.shape, got.dtype) == (want.shape, want.dtype)
    np.testing.assert_array_equal(got, want)   # exact: quarter-integer inputs
