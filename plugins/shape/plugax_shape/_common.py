"""What every shape primitive shares: error messages, axis handling, rule builders.

Shape primitives move data around without doing arithmetic, so they share a
lot: the output has the operand's dtype and weak type, the primitive is linear
in its array operand(s), and its jvp applies the same primitive to the
tangents. `defshape` captures that for the one-operand primitives; the others
use `linear_jvp` directly.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from plugax import dtypes
from plugax.extend import (Array, Primitive, RuleSet, ShapedArray, ShapeError, Tracer, Zero,
                           broadcast_batched, broadcast_in_dim, canonicalize_dtype, deflinear,
                           instantiate, is_undefined_primal, moveaxis)

__all__ = ["shape_error", "canonical_axis", "canonical_axes", "defshape", "linear_jvp",
           "unary_transpose", "zeros", "index_dtype_ok", "checked", "to_front", "lowering_of",
           "normalized_indices"]


def _shown(avals: Sequence[ShapedArray]) -> str:
    return ", ".join(a.str_short() for a in avals)


def shape_error(prim: Primitive | str, avals: Sequence[ShapedArray], problem: str,
                fix: str, **params: Any) -> ShapeError:
    """A ShapeError naming the primitive, its operand types, its params and the fix."""
    shown_params = " ".join(f"{k}={params[k]}" for k in sorted(params))
    return ShapeError(f"primitive '{prim}' {problem}; got operand(s) ({_shown(avals)})"
                      + (f" with {shown_params}" if shown_params else "") + f". Fix: {fix}")


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
                   impl=checked(impl, abstract_eval, takes_ctx=False),
                   abstract_eval=abstract_eval, jvp=deflinear(prim), batching=batching,
                   transpose=transpose,
                   lowering=lowering_of(prim))


def lowering_of(prim: Primitive) -> dict[str, Callable]:
    """The RuleSet `lowering` entry of `prim` (platform-independent, from lowering.py)."""
    from .lowering import LOWERINGS
    return {"default": LOWERINGS[prim.name]}


def checked(impl: Callable, abstract_eval: Callable, *, takes_ctx: bool = True) -> Callable:
    """impl that first runs abstract_eval, so eager calls get the same clear ShapeError.

    `impl(ctx, *operands, **params)`, or a plain NumPy `impl(*operands, **params)`
    with `takes_ctx=False` (one call layer less on every eager evaluation).

    Each (operand shapes and dtypes, params) that passed is remembered, so repeated
    eager calls (a training loop) pay for the check once.

    NumPy would often accept bad params silently (a non-increasing
    broadcast_dimensions reshapes fine) or fail with a message about its own
    internals; the shape rules are cheap next to the NumPy work.
    """
    valid: set = set()   # (operand types, params) seen to pass: checked once each

    def checked_impl(ctx, *args, **params):
        # impl operands are NumPy arrays or scalars: both have shape and dtype
        if len(args) == 1:   # most shape ops: no generator to build the key
            key = (args[0].shape, args[0].dtype, tuple(params.items()))
        else:
            key = (tuple((a.shape, a.dtype) for a in args), tuple(params.items()))
        try:
            known = key in valid
        except TypeError:   # an unhashable param: just check every time
            known, key = False, None
        if not known:
            abstract_eval(ctx, *[ShapedArray(a.shape, a.dtype) for a in args], **params)
            if key is not None and len(valid) < 4096:
                valid.add(key)
        return impl(ctx, *args, **params) if takes_ctx else impl(*args, **params)
    checked_impl.__name__ = getattr(impl, "__name__", "impl")
    return checked_impl


def unary_transpose(ct_rule: Callable) -> Callable:
    """transpose rule of a one-operand linear primitive from `ct_rule(ct, aval, **params)`."""
    def transpose(ctx, ct, x, **params):
        return [ct_rule(ct, x.aval, **params) if is_undefined_primal(x) else None]
    transpose.__name__ = ct_rule.__name__
    return transpose


def linear_jvp(prim: Primitive, linear: Sequence[int]) -> Callable:
    """jvp of a primitive linear (jointly) in the operands at positions `linear`.

    The other operands (integer indices) pass through as primals. If every
    linear operand has a symbolic-zero tangent, so does the output.
    """
    linear = tuple(linear)

    def jvp(ctx, primals, tangents, **params):
        out = prim.bind(*primals, **params)
        if all(type(tangents[i]) is Zero for i in linear):
            return out, Zero.from_value(out)
        args = [instantiate(t) if i in linear else p
                for i, (p, t) in enumerate(zip(primals, tangents))]
        return out, prim.bind(*args, **params)
    jvp.__name__ = f"{prim.name}_jvp"
    return jvp


def to_front(x: Any, d: int | None, size: int) -> Any:
    """Batch axis to position 0, materialising it (broadcast) for an unbatched value."""
    return broadcast_batched(x, size, 0) if d is None else moveaxis(x, d, 0)


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
        value.dtype if value.dtype.kind in "iu" and value.size else dtypes.default_int_dtype())))
