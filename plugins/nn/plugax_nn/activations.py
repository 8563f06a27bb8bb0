"""Activation functions, as `jax.nn` defines them.

Each is a few plugax.numpy operations: this family defines no primitive, so
every transformation (jvp, vmap, grad, jit) comes from the families below it.
Where JAX gives a function a custom derivative, so does this file, for the
same reason: relu's derivative at 0 is 0 (not the 0.5 that differentiating
`maximum` would give), relu6's is 0 at both kinks, and log1mexp's is stable.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import plugax
import plugax.numpy as pnp
from plugax import lax

__all__ = ["relu", "relu6", "sigmoid", "softplus", "soft_sign", "silu", "swish", "gelu", "elu",
           "celu", "selu", "leaky_relu", "hard_tanh", "hard_sigmoid", "hard_silu", "hard_swish",
           "log_sigmoid", "glu", "squareplus", "mish", "sparse_plus", "sparse_sigmoid",
           "log1mexp", "identity", "tanh"]


@plugax.custom_jvp
def relu(x: Any) -> Any:
    """max(x, 0), with derivative 0 at 0 (as JAX: see arXiv:2106.05507)."""
    return pnp.maximum(x, 0)


relu.defjvps(lambda g, ans, x: pnp.where(x > 0, g, pnp.zeros_like(g)))


@plugax.custom_jvp
def relu6(x: Any) -> Any:
    """min(max(x, 0), 6), with derivative 0 at both kinks."""
    return pnp.minimum(pnp.maximum(x, 0), 6.0)


relu6.defjvps(lambda g, ans, x: pnp.where((x > 0) & (x < 6), g, pnp.zeros_like(g)))


def identity(x: Any) -> Any:
    return pnp.asarray(x)


def tanh(x: Any) -> Any:
    return pnp.tanh(x)


def sigmoid(x: Any) -> Any:
    return lax.logistic(x)


def softplus(x: Any) -> Any:
    """log(1 + exp(x)), computed without overflow."""
    return pnp.logaddexp(x, 0.0)


def soft_sign(x: Any) -> Any:
    return x / (pnp.abs(x) + 1)


def silu(x: Any) -> Any:
    return x * sigmoid(x)


swish = silu


def log_sigmoid(x: Any) -> Any:
    return -softplus(-x)


def gelu(x: Any, approximate: bool = True) -> Any:
    """x * Phi(x): the tanh approximation by default, the exact erf form otherwise."""
    x = pnp.asarray(x)
    if approximate:
        cdf = 0.5 * (1.0 + pnp.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
        return x * cdf
    return x * (lax.erf(x / np.sqrt(2)) + 1) / 2


def elu(x: Any, alpha: Any = 1.0) -> Any:
    safe = pnp.where(x > 0, 0.0, x)      # expm1 of large x would overflow in the unused branch
    return pnp.where(x > 0, x, alpha * pnp.expm1(safe))


def celu(x: Any, alpha: Any = 1.0) -> Any:
    return pnp.maximum(x, 0.0) + alpha * pnp.expm1(pnp.minimum(x, 0.0) / alpha)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(x: Any) -> Any:
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


def leaky_relu(x: Any, negative_slope: Any = 1e-2) -> Any:
    return pnp.where(x >= 0, x, negative_slope * x)


def hard_tanh(x: Any) -> Any:
    return pnp.where(x > 1, 1.0, pnp.where(x < -1, -1.0, x))


def hard_sigmoid(x: Any) -> Any:
    return relu6(x + 3.0) / 6.0


def hard_silu(x: Any) -> Any:
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def glu(x: Any, axis: int = -1) -> Any:
    """Gated linear unit: the first half of `axis` times sigmoid of the second."""
    x = pnp.asarray(x)
    size = x.shape[axis]
    if size % 2:
        raise ValueError(f"glu: axis {axis} of an array of shape {x.shape} has odd size "
                         f"{size}; it must split into two halves")
    axis = axis % x.ndim
    head = (slice(None),) * axis
    return x[(*head, slice(0, size // 2))] * sigmoid(x[(*head, slice(size // 2, size))])


def squareplus(x: Any, b: Any = 4) -> Any:
    x = pnp.asarray(x)
    return (x + pnp.sqrt(x ** 2 + b)) / 2


def mish(x: Any) -> Any:
    return x * pnp.tanh(softplus(x))


def sparse_plus(x: Any) -> Any:
    x = pnp.asarray(x)
    return pnp.where(x <= -1.0, 0.0, pnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def sparse_sigmoid(x: Any) -> Any:
    return 0.5 * pnp.clip(x + 1.0, 0.0, 2.0)


@plugax.custom_jvp
def log1mexp(x: Any) -> Any:
    """log(1 - exp(-x)) for x > 0, accurate for small and large x."""
    x = pnp.asarray(x)
    small = x < np.log(2)
    return pnp.where(small, pnp.log(-pnp.expm1(-x)), pnp.log1p(-pnp.exp(-x)))


log1mexp.defjvps(lambda g, ans, x: g / pnp.expm1(x))
