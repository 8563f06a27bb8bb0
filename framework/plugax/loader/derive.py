"""Rules derived from a primitive's `expand` decomposition.

A plugin may describe a primitive as a composition of other primitives. Any
rule it does not give is then obtained by running that composition under the
corresponding interpreter: evaluation, abstract tracing, jvp, vmap, lowering
(the composition is traced to a jaxpr and that is lowered inline). Reverse mode
needs nothing extra: linearizing the expansion only ever stages the *other*
primitives, whose transpose rules already exist.
"""
from __future__ import annotations

from functools import partial
from typing import Any

from ..core import rules as R
from ..core.array import Array
from ..core.avals import ShapedArray
from .ruleset import RuleSet

__all__ = ["derive_missing_rules"]


def _as_list(out: Any, multiple: bool) -> list:
    return list(out) if multiple else [out]


def _derived_impl(expand, ctx, *args, **params):
    out = expand(*[Array(a) for a in args], **params)
    return [o._value for o in out] if isinstance(out, (list, tuple)) else out._value


def _derived_abstract_eval(prim, expand, ctx, *avals, **params):
    from ..interpreters.staging import trace_to_jaxpr
    closed = trace_to_jaxpr(
        lambda *xs: _as_list(expand(*xs, **params), prim.multiple_results), avals)
    outs = [ShapedArray(a.shape, a.dtype, a.weak_type) for a in closed.out_avals]
    return outs if prim.multiple_results else outs[0]


def _derived_jvp(prim, expand, ctx, primals, tangents, **params):
    from ..interpreters.jvp import jvp_flat
    fun = lambda *xs: _as_list(expand(*xs, **params), prim.multiple_results)
    p_out, t_out = jvp_flat(fun, primals, tangents)
    return (p_out, t_out) if prim.multiple_results else (p_out[0], t_out[0])


def _derived_vmap(prim, expand, ctx, args, dims, **params):
    from ..interpreters.batching import all_front, vmap_flat
    fun = lambda *xs: _as_list(expand(*xs, **params), prim.multiple_results)
    outs = vmap_flat(fun, ctx.axis_size, dims, args, out_dims=all_front())
    return (outs, [0] * len(outs)) if prim.multiple_results else (outs[0], 0)


def _derived_lowering(prim, expand, ctx, *args, **params):
    return ctx.lower_fun(lambda *xs: expand(*xs, **params), *args,
                         multiple_results=prim.multiple_results)


def derive_missing_rules(rulesets: list[RuleSet]) -> None:
    for rs in rulesets:
        if rs.expand is None:
            continue
        prim, expand = rs.primitive, rs.expand
        derived = {"impl": partial(_derived_impl, expand),
                   "abstract_eval": partial(_derived_abstract_eval, prim, expand),
                   "jvp": partial(_derived_jvp, prim, expand),
                   "vmap": partial(_derived_vmap, prim, expand)}
        tables = R.all_tables()
        for kind, rule in derived.items():
            if prim not in tables[kind]:
                tables[kind][prim] = rule
                R.rule_origin[(prim, kind)] = "derived"
        if not any(prim in table for table in R.lowering_rules.values()):
            R.lowering_rules.setdefault("default", {})[prim] = partial(_derived_lowering, prim,
                                                                       expand)
            R.rule_origin[(prim, "lowering:default")] = "derived"
