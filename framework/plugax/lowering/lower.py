"""Lowering jaxprs to StableHLO modules, one equation at a time through the rule tables.

The walk mirrors `eval_jaxpr`: an environment maps each jaxpr variable to its
MLIR value, and each equation's lowering rule turns input values into output
values. A primitive without a rule for the platform falls back to its
platform-independent rule (key ``"default"`` in a RuleSet's `lowering`; a
primitive given only by an `expand` decomposition gets one derived from it, see
loader/derive.py); otherwise the error names the primitive and its plugin.
"""
from __future__ import annotations

import re
from typing import Any, Sequence

import numpy as np

from ..core import rules as R
from ..core.avals import ShapedArray
from ..jaxpr.ir import ClosedJaxpr, Jaxpr, Literal
from .context import LoweringRuleContext, ModuleContext
from .mlir import dense_attr, dialects, ir_type, make_context

__all__ = ["lower_jaxpr_to_module", "jaxpr_subcomp", "lower_closed_jaxpr", "call_function",
           "lowering_rule", "LoweredModule"]


class LoweredModule:
    """A StableHLO module and the types of its entry function."""

    def __init__(self, text: str, in_avals: list[ShapedArray], out_avals: list[ShapedArray]):
        self.text = text
        self.in_avals = in_avals
        self.out_avals = out_avals


def lowering_rule(primitive: Any, platform: str) -> Any:
    rule = R.lowering_rules.get(platform, {}).get(primitive) \
        or R.lowering_rules.get("default", {}).get(primitive)
    if rule is None:
        raise R.missing_rule(primitive, f"lowering (platform '{platform}')", "jit")
    return rule


def jaxpr_subcomp(module: ModuleContext, jaxpr: Jaxpr, consts: Sequence[Any],
                  args: Sequence[Any]) -> list:
    """Emit `jaxpr`'s equations at the current insertion point; returns its output values."""
    hlo = module.dialects.hlo
    env: dict[int, Any] = {}

    def read(x: Any) -> Any:
        if type(x) is Literal:
            return hlo.constant(dense_attr(np.asarray(x.val, x.aval.dtype)))
        return env[id(x)]

    for v, val in zip(jaxpr.constvars, consts):
        env[id(v)] = val
    for v, val in zip(jaxpr.invars, args):
        env[id(v)] = val
    for eqn in jaxpr.eqns:
        rule = lowering_rule(eqn.primitive, module.platform)
        ctx = LoweringRuleContext(module, eqn.primitive, [x.aval for x in eqn.invars],
                                  [v.aval for v in eqn.outvars])
        outs = rule(ctx, *[read(x) for x in eqn.invars], **eqn.params)
        outs = _as_values(outs, eqn.primitive, len(eqn.outvars))
        for v, val in zip(eqn.outvars, outs):
            env[id(v)] = val
    return [read(x) for x in jaxpr.outvars]


def lower_closed_jaxpr(module: ModuleContext, closed: ClosedJaxpr, args: Sequence[Any]) -> list:
    """Emit `closed` inline: its consts as dense constants, then its equations."""
    hlo = module.dialects.hlo
    # in the jaxpr's dtype: a closed-over NumPy int64 array is typed i32 while x64 is off
    consts = [hlo.constant(dense_attr(np.asarray(c, v.aval.dtype)))
              for v, c in zip(closed.jaxpr.constvars, closed.consts)]
    return jaxpr_subcomp(module, closed.jaxpr, consts, list(args))


def _as_values(outs: Any, primitive: Any, n: int) -> list:
    if not primitive.multiple_results and not isinstance(outs, (list, tuple)):
        outs = [outs]
    outs = [o.result if hasattr(o, "result") and not hasattr(o, "type") else o for o in outs]
    if len(outs) != n:
        raise TypeError(f"the lowering rule of '{primitive}' returned {len(outs)} values "
                        f"for {n} outputs")
    return outs


def _emit_function(module: ModuleContext, closed: ClosedJaxpr, name: str,
                   public: bool) -> Any:
    d = module.dialects
    in_types = [ir_type(a) for a in closed.in_avals]
    out_types = [ir_type(a) for a in closed.out_avals]
    fn = d.func.FuncOp(name, d.ir.FunctionType.get(in_types, out_types),
                       ip=d.ir.InsertionPoint(module.module.body))
    fn.attributes["sym_visibility"] = d.ir.StringAttr.get("public" if public else "private")
    entry = fn.add_entry_block()
    with d.ir.InsertionPoint(entry):
        d.func.ReturnOp(lower_closed_jaxpr(module, closed, list(entry.arguments)))
    return fn


def call_function(module: ModuleContext, closed: ClosedJaxpr, name: str,
                  args: Sequence[Any]) -> list:
    """Call `closed` as a private function of the module, emitted once per jaxpr."""
    d = module.dialects
    key = (id(closed.jaxpr), name)
    symbol = module.functions.get(key)
    if symbol is None:
        symbol = module.fresh_name(_symbol(name))
        _emit_function(module, closed, symbol, public=False)  # at module level, not here
        module.functions[key] = symbol
        module._keep_alive.append(closed)  # its id keys `functions`: keep it from reuse
    out_types = [ir_type(a) for a in closed.out_avals]
    call = d.func.CallOp(out_types, d.ir.FlatSymbolRefAttr.get(symbol), list(args))
    return list(call.results)


def _symbol(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", name) or "fn"


def lower_jaxpr_to_module(closed: ClosedJaxpr, name: str, platform: str) -> LoweredModule:
    """A module `@jit_<name>` whose public `main` computes `closed`."""
    context = make_context()
    d = dialects()
    with context, d.ir.Location.unknown(context):
        module = d.ir.Module.create()
        module.operation.attributes["sym_name"] = d.ir.StringAttr.get(f"jit_{_symbol(name)}")
        mctx = ModuleContext(module, platform)
        _emit_function(mctx, closed, "main", public=True)
        text = module.operation.get_asm(enable_debug_info=False)
    return LoweredModule(text, list(closed.in_avals), list(closed.out_avals))
