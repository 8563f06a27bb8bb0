"""Builders for `vjp` rules: ``vjp(ctx, primals, wanted, **params) -> (out, backward)``.

Why builders: most primitives' vjp rule is fixed by rules they already have. A
linear primitive's backward step is its transpose rule (`linear_vjp`); a
piecewise-constant one has none (`zero_vjp`). Written from those rules, a vjp
rule pulls cotangents back exactly as jvp + partial evaluation + transpose would
(the same primitives, in the same order), only without staging.

`wanted[i]` says whether operand i needs a cotangent (it depends on the
differentiated inputs); `backward(ct)` returns one entry per operand, None for
those not wanted. `backward` None means no cotangent can flow back at all.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ...core.array import Array
from ...core.avals import get_aval
from ...core.rules import TRANSPOSE_CTX, jvp_rules, missing_rule, transpose_rules
from ...core.trace import Primitive
from ..ad_util import UndefPrimal, tangent_aval

__all__ = ["linear_vjp", "zero_vjp", "transpose_backward", "derived_vjp"]


def transpose_backward(prim: Primitive, primals: Sequence[Any], wanted: Sequence[bool],
                       params: dict, joint: bool = True) -> Callable[[Any], list]:
    """The backward function of a primitive linear in its wanted operands: its transpose
    rule, called with an `UndefPrimal` of each wanted operand's tangent type (as the
    general path's backward_pass calls it). `joint=False` (mul, dot_general: linear
    in each operand separately): one call per wanted operand, the others given."""
    def backward(ct: Any) -> list:
        rule = transpose_rules.get(prim)
        if rule is None:
            raise missing_rule(prim, "transpose", "reverse-mode differentiation")
        if joint:
            args = [UndefPrimal(tangent_aval(_aval(p))) if w else p
                    for p, w in zip(primals, wanted)]
            return rule(TRANSPOSE_CTX, ct, *args, **params)
        cts: list = [None] * len(primals)
        for i, w in enumerate(wanted):
            if w:
                args = list(primals)
                args[i] = UndefPrimal(tangent_aval(_aval(args[i])))
                cts[i] = rule(TRANSPOSE_CTX, ct, *args, **params)[i]
        return cts
    return backward


def _aval(x: Any) -> Any:
    return x._aval if type(x) is Array else get_aval(x)


def linear_vjp(prim: Primitive, *, joint: bool = True) -> Callable:
    """vjp rule of a primitive linear in its operands (jointly, or with `joint=False`
    in each separately): evaluate it, and transpose it backwards."""
    def vjp(ctx, primals, wanted, **params):
        out = prim.bind(*primals, **params)
        return out, transpose_backward(prim, primals, wanted, params, joint)
    vjp.__name__ = f"{prim.name}_vjp"
    return vjp


def zero_vjp(prim: Primitive) -> Callable:
    """vjp rule of a piecewise-constant primitive (floor, sign, comparisons): its
    output carries no cotangent back, as its jvp (`defjvp(prim)`) gives a zero tangent."""
    def vjp(ctx, primals, wanted, **params):
        return prim.bind(*primals, **params), None
    vjp.__name__ = f"{prim.name}_vjp"
    return vjp


# (primitive, its jvp rule) -> the vjp derived from it, or None: a jvp rule that is
# replaced (a plugin's override, a rebuilt registry) gets a new entry
_derived: dict[tuple, Callable | None] = {}


def derived_vjp(prim: Primitive, wanted: Sequence[bool]) -> Callable | None:
    """A vjp rule for a primitive that declares none but whose jvp rule says it is
    linear (`deflinear`, `linear_jvp`: the rule's `linear_in` is "all" or the linear
    operands' positions) and which has a transpose rule: evaluate, and transpose
    backwards, as `linear_vjp` does. None where that does not apply (a wanted operand
    the primitive is not linear in): the tape then linearizes the application."""
    jvp = jvp_rules.get(prim)
    key = (prim, jvp)
    try:
        rule = _derived[key]
    except KeyError:
        linear_in = getattr(jvp, "linear_in", None)
        rule = None
        if linear_in is not None and prim in transpose_rules:
            rule = linear_vjp(prim)
            rule.linear_in = linear_in
        _derived[key] = rule
    if rule is None or rule.linear_in == "all":
        return rule
    return rule if all(i in rule.linear_in for i, w in enumerate(wanted) if w) else None
