"""Operators and methods of `plugax.Array` and every tracer.

`x + y` must be cheap, so the forward operators are built by the same factory as
`plugax.numpy.add` & co. (a fast path straight to the primitive), with one
difference: an operand the math does not know gives NotImplemented, so Python
can try the other operand's reflected method (and `x == None` is False).
`x ** 2` with a Python int uses integer_pow, as in JAX.
"""
from __future__ import annotations

from typing import Any, Callable

from .numpy_api import NUMPY, is_operand, make_binary

__all__ = ["METHODS"]


def _forward(fn: Callable) -> Callable:
    def method(self: Any, other: Any) -> Any:
        return fn(self, other) if is_operand(other) else NotImplemented
    return method


def _reflected(fn: Callable) -> Callable:
    def method(self: Any, other: Any) -> Any:
        return fn(other, self) if is_operand(other) else NotImplemented
    return method


_FAST = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
         "eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
         "gt": "greater", "ge": "greater_equal", "and": "bitwise_and", "or": "bitwise_or",
         "xor": "bitwise_xor"}
_OTHER = {"floordiv": "floor_divide", "mod": "remainder", "pow": "power"}
_REFLECTED = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor")

METHODS: dict[str, Any] = {
    **{f"__{op}__": make_binary(name, defer=True) for op, name in _FAST.items()},
    **{f"__{op}__": _forward(NUMPY[name]) for op, name in _OTHER.items()},
    **{f"__r{op}__": _reflected(NUMPY[{**_FAST, **_OTHER}[op]]) for op in _REFLECTED},
    "__neg__": NUMPY["negative"], "__pos__": lambda self: self, "__abs__": NUMPY["abs"],
    "__invert__": NUMPY["bitwise_not"], "astype": NUMPY["astype"],
    # jax.Array's elementwise methods: x.clip(min, max), x.round(decimals)
    "clip": NUMPY["clip"], "round": NUMPY["round"],
}
