"""Symbolic zeros and undefined primals: the vocabulary of differentiation rules.

`Zero(aval)` stands for a tangent or cotangent that is known to be zero. It is
never materialised unless a rule asks (`instantiate`), so `grad` of a function
with many unused inputs allocates nothing for them. Adding tangents needs a
primitive (`add_any`), so `add_tangents` lives with it in `plugax.structural`.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes
from ..core.array import Array
from ..core.avals import ShapedArray, get_aval

__all__ = ["primal_aval", "Zero", "zero_like", "UndefPrimal", "is_undefined_primal", "instantiate", "zeros_like_aval",
           "tangent_aval", "is_differentiable"]


class Zero:
    """A symbolic zero (co)tangent of type `aval`."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    @staticmethod
    def from_value(x: Any) -> "Zero":
        return zero_like(x)

    def __repr__(self) -> str:
        return f"Zero({self.aval.str_short()})"


class UndefPrimal:
    """A placeholder for the linear input a transpose rule solves for."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self) -> str:
        return f"UndefPrimal({self.aval.str_short()})"


_array_zeros: dict[tuple, Zero] = {}


def primal_aval(t: Any) -> ShapedArray:
    """The aval of a tracer that holds its primal value (`t.primal`): JVPTracer and the
    VJP tape's tracer. One slot read when the primal is an Array."""
    p = t.primal
    return p._aval if type(p) is Array else get_aval(p)


def zero_like(x: Any) -> Zero:
    """The symbolic zero tangent of value `x`.

    Every differentiated primitive needs one for each operand that is a constant
    (data, literals, closed-over arrays), so for Arrays one Zero per (shape, dtype)
    is shared (Zeros are immutable) instead of building an aval and a Zero each time.
    """
    if type(x) is not Array:
        return Zero(tangent_aval(get_aval(x)))
    key = (x.shape, x.dtype)
    zero = _array_zeros.get(key)
    if zero is None:
        zero = Zero(tangent_aval(get_aval(x)))
        if len(_array_zeros) < 1024:
            _array_zeros[key] = zero
    return zero


def is_undefined_primal(x: Any) -> bool:
    return type(x) is UndefPrimal


_INEXACT = frozenset({dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64,
                      dtypes.complex64, dtypes.complex128})


def is_differentiable(dtype: np.dtype) -> bool:
    # a set lookup first: this runs for every tangent, and the general test compares
    # the dtype with each float dtype in turn
    return dtype in _INEXACT or dtypes.issubdtype_inexact(dtype)


def tangent_aval(aval: ShapedArray) -> ShapedArray:
    """Integers and booleans have float0 tangents (no gradient), like JAX."""
    if is_differentiable(aval.dtype):
        return aval.update(weak_type=False) if aval.weak_type else aval
    return ShapedArray(aval.shape, dtypes.float0, False)


def zeros_like_aval(aval: ShapedArray) -> Array:
    return Array(np.zeros(aval.shape, aval.dtype), False)


def instantiate(t: Any) -> Any:
    """A real array for a possibly symbolic zero."""
    return zeros_like_aval(t.aval) if type(t) is Zero else t

