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
    """Cotangents for the `UndefPrimal` entries of `args` (Zero where none flowed).

    The environments are keyed by the Var (and Literal) objects themselves, which
    hash by identity: no id() calls on this hot path.
    """
    primal_env: dict[Any, Any] = dict(zip(jaxpr.constvars, consts))
    linear: set = set()
    for v, val in zip(jaxpr.invars, args):
        if type(val) is UndefPrimal:
            linear.add(v)
        else:
            primal_env[v] = val

    def read_primal(x: Any) -> Any:
        if type(x) is Literal:
            return x.val
        return UndefPrimal(x.aval) if x in linear else primal_env[x]

    linear_eqns = []
    for eqn in jaxpr.eqns:  # forward: evaluate what does not depend on the linear inputs
        for x in eqn.invars:
            if x in linear:   # a Literal never is
                linear.update(eqn.outvars)
                linear_eqns.append(eqn)
                break
        else:
            outs = eqn.primitive.bind(*[read_primal(x) for x in eqn.invars], **eqn.params)
            if not eqn.primitive.multiple_results:
                outs = (outs,)
            primal_env.update(zip(eqn.outvars, outs))

    ct_env: dict[Any, Any] = {}

    def write_ct(x: Any, ct: Any) -> None:
        if ct is None or x not in linear:
            return
        prev = ct_env.get(x)
        ct_env[x] = ct if prev is None else add_tangents(prev, ct)

    for v, ct in zip(jaxpr.outvars, cts_out):
        write_ct(v, ct)
    for eqn in reversed(linear_eqns):
        cts = [ct_env.pop(v, None) for v in eqn.outvars]
        for ct in cts:
            if ct is not None and type(ct) is not Zero:
                break
        else:   # every output cotangent is zero: nothing flows back
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
    return [ct_env[v] if v in ct_env else Zero(tangent_aval(v.aval))
            for v, a in zip(jaxpr.invars, args) if type(a) is UndefPrimal]
