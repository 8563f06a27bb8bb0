"""What the structural primitives share: error messages, checked impls, linear rules.

Every structural primitive is linear (in its array operands) and moves or sums
data without other arithmetic, so its jvp applies the primitive to the
tangents and its transpose is another structural primitive. These builders
state that once.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ..core.avals import ShapedArray
from ..core.trace import Primitive
from ..errors import ShapeError
from ..interpreters.ad_util import Zero, instantiate, is_undefined_primal

__all__ = ["shape_error", "checked_impl", "linear_jvp", "unary_transpose"]


def shape_error(prim: Primitive | str, avals: Sequence[ShapedArray], problem: str,
                fix: str, **params: Any) -> ShapeError:
    """A ShapeError naming the primitive, its operand types, its params and the fix."""
    shown_params = " ".join(f"{k}={params[k]}" for k in sorted(params))
    operands = ", ".join(a.str_short() for a in avals)
    return ShapeError(f"primitive '{prim}' {problem}; got operand(s) ({operands})"
                      + (f" with {shown_params}" if shown_params else "") + f". Fix: {fix}")


def checked_impl(impl: Callable, abstract_eval: Callable) -> Callable:
    """An impl rule (`impl(*arrays, **params)`, plain NumPy) that first runs abstract_eval.

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
        return impl(*args, **params)
    impl_rule.__name__ = getattr(impl, "__name__", "impl")
    return impl_rule


def linear_jvp(prim: Primitive) -> Callable:
    """jvp of a primitive linear in all its operands jointly: apply it to the tangents."""
    def jvp(ctx, primals, tangents, **params):
        ans = prim.bind(*primals, **params)
        if all(type(t) is Zero for t in tangents):
            return ans, Zero.from_value(ans)
        return ans, prim.bind(*map(instantiate, tangents), **params)
    jvp.__name__ = f"{prim.name}_jvp"
    return jvp


def unary_transpose(ct_rule: Callable) -> Callable:
    """transpose rule of a one-operand linear primitive from `ct_rule(ct, aval, **params)`."""
    def transpose(ctx, ct, x, **params):
        return [ct_rule(ct, x.aval, **params) if is_undefined_primal(x) else None]
    transpose.__name__ = ct_rule.__name__
    return transpose
