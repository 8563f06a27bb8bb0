"""Constructors that make a primitive family short to write.

Most primitives fall into a few shapes: unary elementwise (`defvectorized`),
n-ary elementwise with lax's scalar broadcasting (`defbroadcasting`), linear
ones (`deflinear`), and ones whose derivative is a sum of per-argument terms
(`defjvp`). Each helper builds the rules once; the family only states what is
particular to each primitive.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..core.array import Array, shared_constant
from ..core.avals import ShapedArray, format_operands, get_aval
from ..core.rules import all_weak, first_weak
from ..core.trace import Primitive, Tracer
from ..errors import ShapeError
from ..interpreters.ad_util import Zero, instantiate
from ..interpreters.batching import broadcast_batched, moveaxis
from ..structural import add_tangents, broadcast_in_dim
from .ruleset import RuleSet

__all__ = ["all_weak", "first_weak", "standard_abstract_eval", "defvectorized", "defbroadcasting", "defjvp",
           "deflinear", "vectorized_vmap", "broadcasting_vmap", "broadcasting_shape",
           "same_dtypes", "scalar_like"]


def standard_abstract_eval(prim: Primitive, shape_rule: Callable, dtype_rule: Callable,
                           weak_type_rule: Callable = all_weak) -> Callable:
    """abstract_eval split JAX-style into shape, dtype and weak-type rules."""
    def abstract_eval(ctx, *avals: ShapedArray, **params: Any) -> ShapedArray:
        shape = shape_rule(*avals, **params)
        dtype = dtype_rule(*avals, **params)
        weak = weak_type_rule([a.weak_type for a in avals], **params)[0]
        return ShapedArray(shape, dtype, weak)
    abstract_eval.__name__ = f"{prim.name}_abstract_eval"
    return abstract_eval


def same_dtypes(prim: Primitive, allowed: Callable[[np.dtype], bool] | None = None,
                kinds: str = "") -> Callable:
    """dtype rule: all operands share one dtype (weak types aside), optionally restricted."""
    def dtype_rule(*avals: ShapedArray, **params: Any) -> np.dtype:
        dtypes_in = {a.dtype for a in avals}
        if len(dtypes_in) > 1:
            raise ShapeError(f"primitive '{prim}' requires operands of one dtype, got "
                             f"({format_operands(avals)}); convert with "
                             f"plugax.lax.convert_element_type or use plugax.numpy, "
                             f"which promotes")
        dtype = avals[0].dtype
        if allowed is not None and not allowed(dtype):
            raise ShapeError(f"primitive '{prim}' does not accept dtype {dtype.name}"
                             f"{' (it needs ' + kinds + ')' if kinds else ''}; "
                             f"got ({format_operands(avals)})")
        return dtype
    return dtype_rule


def broadcasting_shape(prim: Primitive) -> Callable:
    """Shape rule of lax elementwise ops: equal shapes, except rank-0 operands broadcast."""
    def shape_rule(*avals: ShapedArray, **params: Any) -> tuple:
        shapes = {a.shape for a in avals if a.shape != ()}
        if len(shapes) > 1:
            raise ShapeError(f"primitive '{prim}' requires operands of equal shapes (or "
                             f"rank-0 scalars), got ({format_operands(avals)}); use "
                             f"plugax.numpy, which broadcasts")
        return shapes.pop() if shapes else ()
    return shape_rule


def vectorized_vmap(prim: Primitive) -> Callable:
    """vmap of a unary elementwise op: apply it, the batch axis stays where it is."""
    def vmap_rule(ctx, args, dims, **params):
        return prim.bind(args[0], **params), dims[0]
    return vmap_rule


def broadcasting_vmap(prim: Primitive) -> Callable:
    """vmap of an n-ary elementwise op: batch axes to the front, then apply."""
    def vmap_rule(ctx, args, dims, **params):
        avals = [get_aval(x) for x in args]
        unbatched = [a.shape[:d] + a.shape[d + 1:] if d is not None else a.shape
                     for a, d in zip(avals, dims)]
        out_shape = max(unbatched, key=len)
        moved = []
        for x, d, shape in zip(args, dims, unbatched):
            if d is None:
                moved.append(x if shape == () else broadcast_batched(x, ctx.axis_size, 0))
                continue
            x = moveaxis(x, d, 0)
            if shape != out_shape:  # a batched scalar meets a non-scalar operand
                x = broadcast_in_dim(x, (ctx.axis_size,) + out_shape, (0,))
            moved.append(x)
        return prim.bind(*moved, **params), 0
    return vmap_rule


def defjvp(prim: Primitive, *partials: Callable | None,
           fix_term: Callable[[Any, Any], Any] | None = None) -> Callable:
    """jvp rule from one function per argument: `partial(g, ans, *primals, **params)`.

    Each returns that argument's contribution to the output tangent; None marks
    an argument the output does not depend on differentiably. With no partials
    at all, `defjvp(prim)` is the jvp of a piecewise-constant primitive (floor,
    sign, comparisons, argmax): its tangent is a symbolic zero. `fix_term(term,
    ans)`, if given, adjusts each contribution of an n-ary primitive before they
    are summed (the elementwise family broadcasts rank-0 contributions with it).
    """
    if len(partials) == 1 and partials[0] is not None:
        (partial,) = partials

        def jvp(ctx, primals, tangents, **params):   # one operand (sin, exp, ...): no loop
            ans = prim.bind(*primals, **params)
            t = tangents[0]
            if type(t) is Zero:
                return ans, Zero.from_value(ans)
            return ans, partial(t, ans, *primals, **params)
    else:
        def jvp(ctx, primals, tangents, **params):
            ans = prim.bind(*primals, **params)
            out = None   # no Zero is built unless every contribution is zero
            for fn, t in zip(partials, tangents):
                if fn is not None and type(t) is not Zero:
                    term = fn(t, ans, *primals, **params)
                    if fix_term is not None:
                        term = fix_term(term, ans)
                    out = term if out is None else add_tangents(out, term)
            return ans, Zero.from_value(ans) if out is None else out
    jvp.__name__ = f"{prim.name}_jvp"
    return jvp


def deflinear(prim: Primitive) -> Callable:
    """jvp rule of an op linear in all its operands jointly: apply it to the tangents."""
    def jvp(ctx, primals, tangents, **params):
        ans = prim.bind(*primals, **params)
        return ans, prim.bind(*map(instantiate, tangents), **params)
    jvp.__name__ = f"{prim.name}_jvp"
    jvp.linear_in = "all"   # linear in every operand: the tape derives a vjp from transpose
    return jvp


def defvectorized(prim: Primitive, impl: Callable, *, dtype_rule: Callable | None = None,
                  weak_type: Callable = all_weak, **rules: Any) -> RuleSet:
    """RuleSet of a unary elementwise primitive; `impl(x, **params)` is a NumPy function.
    `weak_type(weak_flags, **params) -> [bool]` decides the result's weak type."""
    dtype_rule = dtype_rule or same_dtypes(prim)
    return RuleSet(
        prim,
        impl=lambda ctx, x, **params: impl(x, **params),
        abstract_eval=standard_abstract_eval(prim, lambda a, **_: a.shape, dtype_rule,
                                             weak_type),
        batching=rules.pop("batching", None) or vectorized_vmap(prim),
        **rules)


def defbroadcasting(prim: Primitive, impl: Callable, *, dtype_rule: Callable | None = None,
                    weak_type: Callable = all_weak, **rules: Any) -> RuleSet:
    """RuleSet of an n-ary elementwise primitive with lax's scalar broadcasting."""
    dtype_rule = dtype_rule or same_dtypes(prim)
    abstract_eval = standard_abstract_eval(prim, broadcasting_shape(prim), dtype_rule, weak_type)
    # no operand check in the impl: eager evaluation runs abstract_eval first, so
    # NumPy never sees operands it would quietly broadcast or promote
    return RuleSet(
        primitive=prim,
        impl=lambda ctx, *args, **params: impl(*args, **params),
        abstract_eval=abstract_eval,
        batching=rules.pop("batching", None) or broadcasting_vmap(prim),
        **rules)


def scalar_like(like: Any, value: Any, weak_type: bool = True) -> Array:
    """A rank-0 constant `value` with `like`'s dtype (an array or tracer), for
    use inside rules.

    It traces as an inline literal and never changes the dtype of the operation it
    enters (a bare Python float would be f64 under x64 and clash with an f32 operand);
    lax ops broadcast rank-0 operands. Weak by default, so it leaves the result's weak
    type to the other operands; `weak_type=False` where the result must be strong
    (a reduction's identity). Shared (`shared_constant`): rules ask for the same few
    constants (a derivative's 2 or 1/2) on every call."""
    dtype = like.dtype if type(like) is Array or isinstance(like, Tracer) else \
        get_aval(like).dtype
    return shared_constant(value, dtype, weak_type)
