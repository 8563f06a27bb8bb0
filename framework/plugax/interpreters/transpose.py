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
from ..structural import add_tangents
from .ad_util import UndefPrimal, Zero, tangent_aval

__all__ = ["backward_pass"]


def backward_pass(jaxpr: Jaxpr, consts: Sequence[Any], args: Sequence[Any],
                  cts_out: Sequence[Any]) -> list:
    """Cotangents for the `UndefPrimal` entries of `args` (Zero where none flowed).

    The environments are keyed by the Var (and Literal) objects themselves, which
    hash by identity; `linear` maps the variables that depend on the UndefPrimal
    inputs to the UndefPrimal a rule sees for each. This loop runs for every equation
    of every `grad`, so it is written out flat: no helper calls per operand.
    """
    primal_env: dict[Any, Any] = dict(zip(jaxpr.constvars, consts))
    # `linear` maps each variable that depends on the UndefPrimal inputs to the
    # UndefPrimal a rule sees for it: made once per variable, not once per use
    linear: dict = {}
    for v, val in zip(jaxpr.invars, args):
        if type(val) is UndefPrimal:
            linear[v] = val
        else:
            primal_env[v] = val

    linear_eqns = []
    for eqn in jaxpr.eqns:  # forward: evaluate what does not depend on the linear inputs
        for x in eqn.invars:
            if x in linear:   # a Literal never is
                for v in eqn.outvars:
                    linear[v] = UndefPrimal(v.aval)
                linear_eqns.append(eqn)
                break
        else:
            outs = eqn.primitive.bind(*_read_primals(eqn.invars, primal_env, linear),
                                      **eqn.params)
            if not eqn.primitive.multiple_results:
                outs = (outs,)
            primal_env.update(zip(eqn.outvars, outs))

    ct_env: dict[Any, Any] = {}
    for v, ct in zip(jaxpr.outvars, cts_out):
        _write_ct(ct_env, linear, v, ct)
    get_rule = transpose_rules.get
    for eqn in reversed(linear_eqns):
        if eqn.primitive.multiple_results:
            cts = [ct_env.pop(v, None) for v in eqn.outvars]
            if all(ct is None or type(ct) is Zero for ct in cts):
                continue
            ct_arg = [Zero(tangent_aval(v.aval)) if ct is None else ct
                      for v, ct in zip(eqn.outvars, cts)]
        else:
            ct_arg = ct_env.pop(eqn.outvars[0], None)
            if ct_arg is None or type(ct_arg) is Zero:   # nothing flows back
                continue
        rule = get_rule(eqn.primitive)
        if rule is None:
            raise missing_rule(eqn.primitive, "transpose", "reverse-mode differentiation")
        invars = eqn.invars
        operands = []   # _read_primals, inlined: this runs for every equation
        for x in invars:
            if type(x) is Literal:
                operands.append(x.val)
            else:
                u = linear.get(x)
                operands.append(primal_env[x] if u is None else u)
        cts_in = rule(TRANSPOSE_CTX, ct_arg, *operands, **eqn.params)
        for x, ct in zip(invars, cts_in):
            if ct is not None and x in linear:
                prev = ct_env.get(x)
                ct_env[x] = ct if prev is None else add_tangents(prev, ct)
    return [ct_env[v] if v in ct_env else Zero(tangent_aval(v.aval))
            for v, a in zip(jaxpr.invars, args) if type(a) is UndefPrimal]


def _read_primals(atoms: list, primal_env: dict, linear: dict) -> list:
    """The operands a rule sees: literal values, known values, or UndefPrimals."""
    vals = []
    for x in atoms:
        if type(x) is Literal:
            vals.append(x.val)
        else:
            u = linear.get(x)
            vals.append(primal_env[x] if u is None else u)
    return vals


def _write_ct(ct_env: dict, linear: dict, x: Any, ct: Any) -> None:
    if ct is None or x not in linear:
        return
    prev = ct_env.get(x)
    ct_env[x] = ct if prev is None else add_tangents(prev, ct)
