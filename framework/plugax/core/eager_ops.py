"""An elementwise op's eager fast path, in C where the accelerator is built.

`eager_op(fallback, cell, arity)` returns a callable that behaves exactly as
`fallback` (a plugin's Python function with its own eager fast path, such as
plugax.numpy.sin or Array.__add__), with that same fast path run in C first:
on small arrays the Python wrapper around NumPy's ufunc cost as much as the
ufunc itself. `cell` is the plugin's `[numpy_fn or None, signature ids]` for the
primitive; see core/_eager.c for the exact conditions, which are those of the
elementwise family's Python fast path.

The C module is optional (setup.py builds it when a compiler is there): without
it, or with PLUGAX_EAGER_C=0 in the environment at import (core/_accel.py;
core/trace.py configures the module), `eager_op` returns
`fallback` itself and everything runs in Python, with the same results.
"""
from __future__ import annotations

from typing import Callable

from ._accel import accel as _eager

__all__ = ["eager_op", "accelerated"]


def accelerated() -> bool:
    """Whether eager elementwise ops run their fast path in C in this process."""
    return _eager is not None


def eager_op(fallback: Callable, cell: list, arity: int) -> Callable:
    """`fallback` with the eager fast path of a unary (arity 1) or binary (arity 2)
    elementwise op in front, in C; `fallback` itself without the accelerator.
    Attributes (`__name__`, `__doc__`, ...) are `fallback`'s, and `__wrapped__` is
    `fallback`."""
    if _eager is None:
        return fallback
    return _eager.eager_op(fallback, cell, arity)
