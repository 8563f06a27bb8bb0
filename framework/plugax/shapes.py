"""Computing with types only: `ShapeDtypeStruct` and `eval_shape`.

Why: a program sizes its buffers, or checks a model's output shape, before it
has data, and `lower()` compiles for arguments that exist only as types. Both
trace the function abstractly (no primitive runs), which is what make_jaxpr
does; `eval_shape` returns the output types as JAX does, one
ShapeDtypeStruct per output leaf.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from . import tree_util as tu
from .api import flatten_fun
from .core.array import Array
from .core.avals import ShapedArray, get_aval
from .dtypes import canonicalize_dtype
from .interpreters.staging import trace_to_jaxpr

__all__ = ["ShapeDtypeStruct", "eval_shape", "leaf_aval", "typeof", "canonicalize_axis"]


class ShapeDtypeStruct:
    """A stand-in for an array: only its shape, dtype and weak type matter."""

    __slots__ = ("shape", "dtype", "weak_type")

    def __init__(self, shape: Sequence[int], dtype: Any, weak_type: bool = False, **_: Any):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = weak_type

    @property
    def aval(self) -> ShapedArray:
        return ShapedArray(self.shape, canonicalize_dtype(self.dtype), self.weak_type)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"

    def __eq__(self, other: object) -> bool:
        return (type(other) is ShapeDtypeStruct and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.weak_type))


def leaf_aval(x: Any) -> ShapedArray:
    """The abstract value of one argument leaf (an array, a scalar or a ShapeDtypeStruct)."""
    if type(x) is Array:
        return ShapedArray(x.shape, x.dtype, x.weak_type)
    if isinstance(x, ShapeDtypeStruct):
        return x.aval
    return get_aval(x)


def typeof(x: Any) -> ShapedArray:
    """The abstract value (shape, dtype, weak type) of `x`."""
    return getattr(x, "aval", None) or leaf_aval(x)


def eval_shape(fun: Callable, *args: Any, **kwargs: Any) -> Any:
    """The output types of `fun(*args, **kwargs)`, as ShapeDtypeStructs, without
    computing anything; arguments may be arrays or ShapeDtypeStructs."""
    leaves, in_tree = tu.tree_flatten((args, kwargs))
    flat_fun, out_tree = flatten_fun(lambda a, k: fun(*a, **k), in_tree)
    closed = trace_to_jaxpr(flat_fun, [leaf_aval(x) for x in leaves])
    outs = [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type) for a in closed.out_avals]
    return tu.tree_unflatten(out_tree(), outs)


def canonicalize_axis(axis: int, ndim: int, name: str) -> int:
    """`axis` in range(ndim), counting negative axes from the end as NumPy does; `name`
    (the user's function) heads the error, so a family's message names the call."""
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for an array of rank {ndim}")
    return axis % ndim
