"""Convolution workloads (issue 15 part 3), exec'd into bench.py's namespace.

A 2-D NHWC convolution, batch 32, 28x28, 3x3 kernel, 32 -> 32 channels, SAME
padding, under jit: its forward pass, and `grad` of a sum of squares w.r.t. the
input and the kernel. Both libraries emit the same stablehlo.convolution ops
(the gradient as the same two transposed convolutions), so the times should
match.
"""

import importlib

import numpy as np


def _conv_problem(impl: str):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 28, 28, 32)).astype(np.float32)
    w = (rng.standard_normal((3, 3, 32, 32)) / 17).astype(np.float32)
    lax = importlib.import_module(f"{impl}.lax")

    def conv(x, w):
        return lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return conv, device_array(impl, x), device_array(impl, w)


@workload("jit_conv2d", unit="ms", targets={"jax": 1.05})
def jit_conv2d(impl: str) -> float:
    """jit conv_general_dilated NHWC f32[32,28,28,32] * HWIO f32[3,3,32,32], SAME."""
    conv, x, w = _conv_problem(impl)
    f = jit_fn(impl)(conv)
    block(impl, f(x, w))
    return best_per_call(lambda: block(impl, f(x, w)), repeat=5)


@workload("jit_conv2d_grad", unit="ms", targets={"jax": 1.05})
def jit_conv2d_grad(impl: str) -> float:
    """jit(grad) of sum(conv(x, w) ** 2) w.r.t. x and w (the same conv as jit_conv2d)."""
    conv, x, w = _conv_problem(impl)
    lib = importlib.import_module(impl)
    f = jit_fn(impl)(lib.grad(lambda x, w: (conv(x, w) ** 2).sum(), argnums=(0, 1)))
    block(impl, f(x, w))
    return best_per_call(lambda: block(impl, f(x, w)), repeat=5)
