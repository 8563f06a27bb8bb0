"""Transposition: run a linear jaxpr backwards, from output cotangents to input ones.

Inputs we solve for are `UndefPrimal`s; everything computable from the others
(residuals) is evaluated forwards first. Cotangents are accumulated per
variable and may be symbolic `Zero`s; an equation whose output cotangents are
all zero is skipped, so nothing is materialised for unused inputs.
"""
from __future__ import annotations

from typing import Any, Sequence

from ..core.rules import TRANSPOSE_CTX, missing_rule, transpose_rules
from ..jaxpr.ir import Jaxpr, Literal
from .ad_util import UndefPrimal, Zero, add_tangents, tangent_aval

__all__ = ["backward_pass"]


def backward_pass(jaxpr: Jaxpr, consts: Sequence[Any], args: Sequence[Any],
                  cts_out: Sequence[Any]) -> list:
    """Cotangents for the `UndefPrimal` entries of `args` (Zero where none flowed)."""
    primal_env: dict[int, Any] = {}
    linear: set[int] = set()

    def read_primal(x: Any) -> Any:
        if type(x) is Literal:
            return x.val
        return UndefPrimal(x.aval) if id(x) in linear else primal_env[id(x)]

    for v, val in zip(jaxpr.constvars, consts):
        primal_env[id(v)] = val
    for v, val in zip(jaxpr.invars, args):
        if type(val) is UndefPrimal:
            linear.add(id(v))
        else:
            primal_env[id(v)] = val

    linear_eqns = []
    for eqn in jaxpr.eqns:  # forward: evaluate what does not depend on the linear inputs
        if any(type(x) is not Literal and id(x) in linear for x in eqn.invars):
            linear.update(id(v) for v in eqn.outvars)
            linear_eqns.append(eqn)
        else:
            outs = eqn.primitive.bind(*[read_primal(x) for x in eqn.invars], **eqn.params)
            outs = outs if eqn.primitive.multiple_results else [outs]
            for v, val in zip(eqn.outvars, outs):
                primal_env[id(v)] = val

    ct_env: dict[int, Any] = {}

    def write_ct(x: Any, ct: Any) -> None:
        if ct is None or type(x) is Literal or id(x) not in linear:
            return
        ct_env[id(x)] = add_tangents(ct_env[id(x)], ct) if id(x) in ct_env else ct

    for v, ct in zip(jaxpr.outvars, cts_out):
        write_ct(v, ct)
    for eqn in reversed(linear_eqns):
        cts = [ct_env.pop(id(v), None) for v in eqn.outvars]
        if all(ct is None or type(ct) is Zero for ct in cts):
            continue
        rule = transpose_rules.get(eqn.primitive)
        if rule is None:
            raise missing_rule(eqn.primitive, "transpose", "reverse-mode differentiation")
        primals = [read_primal(x) for x in eqn.invars]
        if eqn.primitive.multiple_results:
            ct_arg = [Zero(tangent_aval(v.aval)) if ct is None else ct
                      for v, ct in zip(eqn.outvars, cts)]
        else:
            ct_arg = cts[0]
        cts_in = rule(TRANSPOSE_CTX, ct_arg, *primals, **eqn.params)
        for x, ct in zip(eqn.invars, cts_in):
            write_ct(x, ct)
    return [ct_env.get(id(v), Zero(tangent_aval(v.aval)))
            for v, a in zip(jaxpr.invars, args) if type(a) is UndefPrimal]
