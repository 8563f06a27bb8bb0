"""What the structural primitives share: error messages, checked impls, linear rules.

Every structural primitive is linear (in its array operands) and moves or sums
data without other arithmetic, so its jvp applies the primitive to the
tangents and its transpose is another structural primitive. These builders
state that once.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ..core.avals import ShapedArray, format_operands
from ..core.trace import Primitive
from ..errors import ShapeError
from ..interpreters.ad_util import Zero, instantiate, is_undefined_primal

__all__ = ["shape_error", "checked_impl", "linear_jvp", "unary_transpose",
           "axes_removing_batching"]


def shape_error(prim: Primitive | str, avals: Sequence[ShapedArray], problem: str,
                fix: str, **params: Any) -> ShapeError:
    """A ShapeError naming the primitive, its operand types, its params and the fix."""
    shown_params = " ".join(f"{k}={params[k]}" for k in sorted(params))
    return ShapeError(f"primitive '{prim}' {problem}; got operand(s) ({format_operands(avals)})"
                      + (f" with {shown_params}" if shown_params else "") + f". Fix: {fix}")


def checked_impl(impl: Callable, abstract_eval: Callable, *, takes_ctx: bool = False) -> Callable:
    """An impl rule (`impl(*arrays, **params)`, plain NumPy) that first runs abstract_eval.

    With `takes_ctx=True`, `impl(ctx, *arrays, **params)` (an impl that needs the rule
    context); plain NumPy impls skip it, one call layer less on every eager evaluation.

    Eager binds skip abstract_eval, and NumPy would accept bad params silently (a
    non-increasing broadcast_dimensions reshapes fine) or fail with a message about
    its own internals. Each (operand types, params) that passed is remembered, so a
    training loop pays for the check once.
    """
    valid: set = set()

    def impl_rule(ctx, *args, **params):
        if len(args) == 1:   # most structural ops: no generator to build the key
            key = (args[0].shape, args[0].dtype, tuple(params.items()))
        else:
            key = (tuple((a.shape, a.dtype) for a in args), tuple(params.items()))
        try:
            known = key in valid
        except TypeError:    # an unhashable param: check every time
            known, key = False, None
        if not known:
            abstract_eval(ctx, *[ShapedArray(a.shape, a.dtype) for a in args], **params)
            if key is not None and len(valid) < 4096:
                valid.add(key)
        return impl(ctx, *args, **params) if takes_ctx else impl(*args, **params)
    impl_rule.__name__ = getattr(impl, "__name__", "impl")
    return impl_rule


def linear_jvp(prim: Primitive, linear: Sequence[int] | None = None) -> Callable:
    """jvp of a primitive linear in all its operands jointly: apply it to the tangents.

    `linear`: the positions of the operands it is (jointly) linear in, when not all
    (gather's indices, dynamic_slice's starts): the others pass through as primals,
    and if every linear operand's tangent is a symbolic zero, so is the output's.
    """
    if linear is not None:
        jvp = _partly_linear_jvp(prim, tuple(linear))
        jvp.linear_in = tuple(linear)
        return jvp

    def jvp(ctx, primals, tangents, **params):
        ans = prim.bind(*primals, **params)
        if all(type(t) is Zero for t in tangents):
            return ans, Zero.from_value(ans)
        return ans, prim.bind(*map(instantiate, tangents), **params)
    jvp.__name__ = f"{prim.name}_jvp"
    jvp.linear_in = "all"   # the tape derives a vjp from the transpose rule (vjp_tape/rules.py)
    return jvp


def _partly_linear_jvp(prim: Primitive, linear: tuple[int, ...]) -> Callable:
    def jvp(ctx, primals, tangents, **params):
        out = prim.bind(*primals, **params)
        if all(type(tangents[i]) is Zero for i in linear):
            return out, Zero.from_value(out)
        args = [instantiate(t) if i in linear else p
                for i, (p, t) in enumerate(zip(primals, tangents))]
        return out, prim.bind(*args, **params)
    jvp.__name__ = f"{prim.name}_jvp"
    return jvp


def unary_transpose(ct_rule: Callable) -> Callable:
    """transpose rule of a one-operand linear primitive from `ct_rule(ct, aval, **params)`."""
    def transpose(ctx, ct, x, **params):
        return [ct_rule(ct, x.aval, **params) if is_undefined_primal(x) else None]
    transpose.__name__ = ct_rule.__name__
    return transpose


def axes_removing_batching(prim: Primitive, param: str) -> Callable:
    """Batching rule of a one-operand primitive that removes the axes named by `param`
    (reduce_sum's `axes`, squeeze's `dimensions`): renumber them past the batch axis,
    which keeps its place among the remaining axes."""
    def batching(ctx, args, dims, **params):
        d, removed = dims[0], params[param]
        params[param] = tuple(a + (a >= d) for a in removed)
        return prim.bind(args[0], **params), d - sum(a < d for a in removed)
    batching.__name__ = f"{prim.name}_batching"
    return batching
