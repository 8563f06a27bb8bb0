"""What every shape primitive shares: axis handling, rule builders.

Shape primitives move data around without doing arithmetic, so they share a
lot: the output has the operand's dtype and weak type, the primitive is linear
in its array operand(s), and its jvp applies the same primitive to the
tangents. `defshape` captures that for the one-operand primitives; the others
use `linear_jvp` directly. The builders the kernel's own structural primitives use
(`shape_error`, `checked_impl`, `linear_jvp`, `unary_transpose`) come from
plugax.extend, so shape errors read the same whichever side defines the primitive.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from plugax.extend import (Array, Primitive, RuleSet, ShapedArray, Tracer, broadcast_batched,
                           broadcast_in_dim, canonicalize_dtype, checked_impl,
                           default_int_dtype, deflinear, moveaxis)

__all__ = ["canonical_axis", "canonical_axes", "defshape", "zeros", "index_dtype_ok",
           "lowering_of", "normalized_indices"]


def canonical_axis(axis: int, ndim: int, what: str = "axis") -> int:
    """A non-negative axis, with NumPy's negative counting; IndexError-like message if bad."""
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{what} {axis} is out of bounds for an array of rank {ndim}")
    return axis % ndim


def canonical_axes(axes: Any, ndim: int, what: str = "axis") -> tuple[int, ...]:
    axes = (axes,) if isinstance(axes, (int, np.integer)) else tuple(axes)
    out = tuple(canonical_axis(a, ndim, what) for a in axes)
    if len(set(out)) != len(out):
        raise ValueError(f"repeated {what} in {axes}")
    return out


def index_dtype_ok(aval: ShapedArray) -> bool:
    return aval.dtype.kind in "iu"


def defshape(prim: Primitive, impl: Callable, shape_rule: Callable, *,
             transpose: Callable, batching: Callable) -> RuleSet:
    """RuleSet of a one-operand shape primitive.

    `impl(x, **params)` is NumPy; `shape_rule(aval, **params)` returns the output
    shape or raises; dtype and weak type pass through. The primitive is linear
    in its operand, so its jvp applies it to the tangent.
    """
    def abstract_eval(ctx, aval: ShapedArray, **params: Any) -> ShapedArray:
        return ShapedArray(shape_rule(aval, **params), aval.dtype, aval.weak_type)

    return RuleSet(primitive=prim,
                   impl=checked_impl(impl, abstract_eval),
                   abstract_eval=abstract_eval, jvp=deflinear(prim), batching=batching,
                   transpose=transpose,
                   lowering=lowering_of(prim))


def lowering_of(prim: Primitive) -> dict[str, Callable]:
    """The RuleSet `lowering` entry of `prim` (platform-independent, from lowering.py)."""
    from .lowering import LOWERINGS
    return {"default": LOWERINGS[prim.name]}


def zeros(shape: Sequence[int], dtype: Any) -> Any:
    """A zero array that stays one `broadcast_in_dim` of a literal when traced."""
    return broadcast_in_dim(Array(np.zeros((), dtype)), tuple(shape), ())


def normalized_indices(indices: Any, size: int) -> Any:
    """Negative indices count from the end, as in NumPy (traced: lt/add/select_n, as JAX).

    Here, not in numpy_api, because the lax-level slicing rules need it too."""
    if isinstance(indices, Tracer):
        import plugax.lax as lax
        dtype = indices.aval.dtype
        if dtype.kind == "u":
            return indices
        zero, n = Array(np.zeros((), dtype), True), Array(np.asarray(size, dtype), True)
        return lax.select_n(lax.lt(indices, zero), indices, lax.add(indices, n))
    value = np.asarray(indices)
    if value.dtype.kind not in "iu":
        raise TypeError(f"indices must be integers, got dtype {value.dtype}")
    return Array(np.where(value < 0, value + size, value).astype(canonicalize_dtype(
        value.dtype if value.dtype.kind in "iu" and value.size else default_int_dtype())))
