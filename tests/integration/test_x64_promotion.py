"""Integer and bool arrays promoted to a float under x64, as JAX 0.10.2 does it.

JAX maps integers of up to 32 bits (and bools) to float32 where a float is needed
(sin, sqrt, mean, true division), 64-bit integers to float64, whatever x64 says;
Python floats (weak) still give float64 under x64. The table was recorded from
jax 0.10.2 with jax_enable_x64=True.
"""
import numpy as np
import pytest

import plugax
import plugax.numpy as pnp
from plugax.testing import x64

OPS = {
    "x / 2": lambda x: x / 2, "x * 2.5": lambda x: x * 2.5, "sin": pnp.sin, "mean": pnp.mean,
    "x + f32": lambda x: x + pnp.ones(2, pnp.float32),
    "x + f16": lambda x: x + pnp.ones(2, pnp.float16), "sqrt": pnp.sqrt,
}
JAX_X64 = {   # dtype -> result dtype of each op above, in order
    "int8": "float32 float64 float32 float32 float32 float16 float32",
    "int16": "float32 float64 float32 float32 float32 float16 float32",
    "int32": "float32 float64 float32 float32 float32 float16 float32",
    "int64": "float64 float64 float64 float64 float32 float16 float64",
    "uint8": "float32 float64 float32 float32 float32 float16 float32",
    "uint32": "float32 float64 float32 float32 float32 float16 float32",
    "uint64": "float64 float64 float64 float64 float32 float16 float64",
    "bool": "float64 float64 float32 float32 float32 float16 float32",
}


@pytest.mark.parametrize("dtype", sorted(JAX_X64))
def test_inexact_promotion_under_x64_matches_jax(dtype):
    with x64():
        x = pnp.ones(2, dtype=dtype)
        got = [str(op(x).dtype) for op in OPS.values()]
        jitted = [str(plugax.jit(op)(x).dtype) for op in OPS.values()]
    assert got == JAX_X64[dtype].split()
    assert jitted == got


def test_without_x64_everything_is_float32():
    x = pnp.ones(2, dtype=np.int32)
    assert {str(op(x).dtype) for name, op in OPS.items() if name != "x + f16"} == {"float32"}
