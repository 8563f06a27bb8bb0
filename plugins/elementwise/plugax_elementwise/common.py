"""Pieces every elementwise rule module shares: dtype classes, shape fixes, rule builders.

Why a module of its own: the four rule modules state only what is particular to
each primitive (its NumPy impl, its derivative); how to make a constant of the
right dtype, how to broadcast a rank-0 tangent contribution, or how to sum a
cotangent back down to a rank-0 operand is the same everywhere. What every family
shares (float dtypes, rank-0 constants `scalar_like`, operand formatting) is the
kernel's, from plugax.extend.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from plugax.extend import (Array, Primitive, ShapedArray, ShapeError, Tracer, UndefPrimal,
                           broadcast_in_dim, broadcasting_shape, broadcasting_vmap, defjvp,
                           float_dtypes, format_operands, get_aval, is_float, reduce_sum,
                           same_dtypes)
from plugax.extend import defbroadcasting as _kernel_defbroadcasting

__all__ = ["is_numeric", "is_int_or_bool", "is_signed_or_float", "is_number", "is_inexact",
           "float_dtype", "numeric_dtype", "number_dtype", "inexact_dtype", "int_or_bool_dtype", "any_dtype",
           "zeros_like", "match_shape", "unbroadcast", "defjvp_bcast",
           "binary_transpose", "type_error", "checked_vmap", "defbroadcasting", "neg_p",
           "defvjp_bcast", "diagonal_rules"]

# neg's Primitive object lives here, below both modules that bind it: arithmetic gives its
# rules, and complex_ops (which arithmetic uses for abs of complex) binds it in transposes.
neg_p = Primitive("neg")


def is_numeric(dtype: np.dtype) -> bool:
    """Integers and floats; lax arithmetic rejects bool (jnp maps it to logic ops)."""
    return dtype.kind in "iuf" or dtype in float_dtypes


def is_number(dtype: np.dtype) -> bool:
    """Integers, floats and complex numbers (lax's `_num`: add, mul, neg, square...)."""
    return dtype.kind == "c" or is_numeric(dtype)


def is_inexact(dtype: np.dtype) -> bool:
    """Floats and complex numbers (lax's `_float | _complex`: exp, log, sin, sqrt...)."""
    return dtype.kind == "c" or dtype in float_dtypes


def is_int_or_bool(dtype: np.dtype) -> bool:
    return dtype.kind in "iub"


def is_signed_or_float(dtype: np.dtype) -> bool:
    return dtype.kind == "i" or dtype in float_dtypes


# dtype rules (operands share one dtype; some primitives restrict which).
def float_dtype(prim: Primitive) -> Callable:
    return same_dtypes(prim, is_float, "a floating-point dtype")


def numeric_dtype(prim: Primitive) -> Callable:
    return same_dtypes(prim, is_numeric, "an integer or floating-point dtype, not bool")


def number_dtype(prim: Primitive) -> Callable:
    return same_dtypes(prim, is_number, "an integer, floating-point or complex dtype, not bool")


def inexact_dtype(prim: Primitive) -> Callable:
    return same_dtypes(prim, is_inexact, "a floating-point or complex dtype")


def int_or_bool_dtype(prim: Primitive) -> Callable:
    return same_dtypes(prim, is_int_or_bool, "an integer or bool dtype")


def any_dtype(prim: Primitive) -> Callable:
    return same_dtypes(prim)


def type_error(prim: Primitive, avals: tuple, problem: str, fix: str) -> ShapeError:
    """A ShapeError naming the primitive, its operand types, the problem and the fix."""
    return ShapeError(f"primitive '{prim}' {problem}; got ({format_operands(avals)}); {fix}")


# batching rules that check the user's operands first
def _unbatched(args: Sequence[Any], dims: Sequence[Any]) -> list[ShapedArray]:
    """The operands' avals as the user passed them: batch axes removed."""
    out = []
    for x, d in zip(args, dims):
        a = get_aval(x)
        shape = a.shape if d is None else a.shape[:d] + a.shape[d + 1:]
        out.append(ShapedArray(shape, a.dtype, a.weak_type))
    return out


def checked_vmap(check: Callable, inner: Callable) -> Callable:
    """The batching rule `inner`, after `check(*unbatched avals)` (a shape rule that
    raises on operands that do not fit): without it, operands of mismatched shapes
    met a broadcast_in_dim the batching rule built, and the error named that
    primitive and the batched shapes, not the user's call."""
    def rule(ctx, args, dims, **params):
        shapes = set()
        for x, d in zip(args, dims):
            shape = get_aval(x).shape
            shapes.add(shape if d is None else shape[:d] + shape[d + 1:])
        if len(shapes - {()}) > 1:    # only a mismatch pays for the avals
            check(*_unbatched(args, dims), **params)
        return inner(ctx, args, dims, **params)
    rule.__name__ = getattr(inner, "__name__", "vmap_rule")
    return rule


def defbroadcasting(prim: Primitive, impl: Callable, **rules: Any) -> Any:
    """The kernel's `defbroadcasting`, with a batching rule that checks the operands'
    shapes as the user passed them (see `checked_vmap`)."""
    rules.setdefault("batching", checked_vmap(broadcasting_shape(prim),
                                              broadcasting_vmap(prim)))
    return _kernel_defbroadcasting(prim, impl, **rules)


# values inside rules
def zeros_like(x: Any) -> Any:
    """Zeros of `x`'s type; a broadcast literal when traced (no array constant)."""
    aval = get_aval(x)
    zero = Array(np.zeros((), aval.dtype))
    return broadcast_in_dim(zero, aval.shape, ()) if aval.shape else zero


def _shape(x: Any) -> tuple:
    """x's shape; Arrays and tracers have it as an attribute (no aval to build)."""
    return x.shape if type(x) is Array or isinstance(x, Tracer) else get_aval(x).shape


def match_shape(t: Any, like: Any) -> Any:
    """Broadcast a rank-0 tangent contribution to the output's shape.

    lax binary ops accept a rank-0 operand next to a full one; a jvp term that
    involves only the rank-0 operand (e.g. `g` alone) is then smaller than the
    output it stands for.
    """
    shape = _shape(like)
    if (t.shape if type(t) is Array or isinstance(t, Tracer) else _shape(t)) == shape:
        return t
    return broadcast_in_dim(t, shape, ())


def unbroadcast(ct: Any, aval: ShapedArray) -> Any:
    """The cotangent of a rank-0 operand that was broadcast: sum over every axis."""
    ct_shape = _shape(ct)
    if ct_shape == aval.shape:
        return ct
    return reduce_sum(ct, tuple(range(len(ct_shape))))


def defjvp_bcast(prim: Primitive, *partials: Callable | None) -> Callable:
    """`defjvp` whose per-operand contributions are broadcast to the output shape (a
    unary primitive's tangent already has it)."""
    return defjvp(prim, *partials, fix_term=match_shape if len(partials) > 1 else None)


def defvjp_bcast(prim: Primitive, *partials: Callable | None) -> Callable:
    """vjp rule (the VJP tape's, top-level reverse mode) from the same per-operand
    partials `defjvp_bcast` takes, for *diagonal* ones only: each must be its tangent
    times a factor (`mul(g, f(ans, x, ...))`, `neg(g)`, `div(g, y)`, `g`), a linear map
    that is its own transpose. The cotangent of operand i is then `partial_i(ct, ...)`,
    summed down where the operand was a broadcast rank-0 value: what transposing the
    jvp gives, without staging it. A partial of another form (select_n, real, conj)
    must not be given here: its primitive keeps the tape's jvp + transpose fallback."""
    def vjp(ctx, primals, wanted, **params):
        ans = prim.bind(*primals, **params)

        def backward(ct):
            return [unbroadcast(fn(ct, ans, *primals, **params), get_aval(x))
                    if w and fn is not None else None
                    for fn, x, w in zip(partials, primals, wanted)]
        return ans, backward
    vjp.__name__ = f"{prim.name}_vjp"
    return vjp


def diagonal_rules(prim: Primitive, *partials: Callable | None) -> dict:
    """`jvp` and `vjp` rules of an elementwise primitive from diagonal partials (see
    `defvjp_bcast`): `RuleSet(prim, **diagonal_rules(prim, ...))`."""
    return {"jvp": defjvp_bcast(prim, *partials), "vjp": defvjp_bcast(prim, *partials)}


def binary_transpose(prim: Primitive, ct_x: Callable | None, ct_y: Callable | None, *,
                     joint: bool = True) -> Callable:
    """transpose rule of a binary op linear in the operand(s) that are UndefPrimal.

    `ct_x(ct, x, y)` / `ct_y(ct, x, y)` give that operand's cotangent at the output's
    shape; it is summed down where the operand was a broadcast rank-0 value. None
    marks an operand the op is not linear in. `joint=False` (mul, div): linear in
    each operand separately, so at most one may be undefined.
    """
    def transpose(ctx, ct, x, y, **params):
        undef_x, undef_y = type(x) is UndefPrimal, type(y) is UndefPrimal
        if (not joint and undef_x and undef_y) or (undef_x and ct_x is None) \
                or (undef_y and ct_y is None):
            raise ShapeError(f"primitive '{prim}' is not linear in the operands "
                             f"transpose was asked to solve for ({x!r}, {y!r})")
        return [unbroadcast(ct_x(ct, x, y), x.aval) if undef_x else None,
                unbroadcast(ct_y(ct, x, y), y.aval) if undef_y else None]
    transpose.__name__ = f"{prim.name}_transpose"
    return transpose
