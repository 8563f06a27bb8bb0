"""Lowering jaxprs to StableHLO modules, one equation at a time through the rule tables.

The walk mirrors `eval_jaxpr`: an environment maps each jaxpr variable to its
MLIR value, and each equation's lowering rule turns input values into output
values. A primitive without a rule for the platform falls back to its
platform-independent rule (key ``"default"`` in a RuleSet's `lowering`; a
primitive given only by an `expand` decomposition gets one derived from it, see
loader/derive.py); otherwise the error names the primitive and its plugin.
What each rule returns is checked against the equation's output avals
(checks.py) before the walk goes on.

`ModuleContext` is the walk's state, and it is what a rule's context hands a
sub-computation to (`ctx.lower_jaxpr`, `ctx.call_jaxpr`): the walk imports the
rule's view (context.py), and the view only calls the object it was given.
"""
from __future__ import annotations

import itertools
import re
from typing import Any, Sequence

import numpy as np

from ..core import rules as R
from ..core.avals import ShapedArray
from ..jaxpr.ir import ClosedJaxpr, Jaxpr, Literal
from .checks import checked_results
from .context import LoweringRuleContext
from .mlir import dense_attr, dialects, ir_type, make_context

__all__ = ["lower_jaxpr_to_module", "jaxpr_subcomp", "lower_closed_jaxpr", "call_function",
           "lowering_rule", "LoweredModule", "ModuleContext"]


class ModuleContext:
    """State shared by every rule lowering into one module: the module and its functions."""

    def __init__(self, module: Any, platform: str):
        self.module = module
        self.platform = platform
        self.dialects = dialects()
        self.functions: dict[tuple, str] = {}   # (id(jaxpr), name) -> emitted symbol name
        self._keep_alive: list[Any] = []        # jaxprs whose ids key `functions`
        self._used = {"main"}
        self._counter = itertools.count(1)
        self._types: dict[tuple, Any] = {}      # (shape, dtype) -> MLIR type, for checks
        self.host_callbacks: list[Any] = []     # Python callables the custom calls index
        self._tokens: list[tuple[Any, Any]] = []  # (block, last ordered-callback token)

    def fresh_name(self, base: str) -> str:
        """A function symbol not yet used in this module (`inner`, `inner_1`, ...)."""
        name = base
        while name in self._used:
            name = f"{base}_{next(self._counter)}"
        self._used.add(name)
        return name

    def ir_type(self, aval: Any) -> Any:
        """`ir_type(aval)`, cached: MLIR types belong to this module's context."""
        key = (aval.shape, aval.dtype)
        t = self._types.get(key)
        if t is None:
            t = self._types[key] = ir_type(aval)
        return t

    def ordered_token(self) -> Any:
        """The token the next ordered host callback of the current block takes (see
        host_callback.py): the previous one's, or a fresh `after_all` (one chain per
        block: a value of one region cannot flow into another)."""
        block = self.dialects.ir.InsertionPoint.current.block
        for b, token in self._tokens:
            if b == block:
                return token
        return self.dialects.hlo.after_all([])

    def set_ordered_token(self, token: Any) -> None:
        block = self.dialects.ir.InsertionPoint.current.block
        self._tokens = [(b, t) for b, t in self._tokens if b != block] + [(block, token)]

    def lower_jaxpr(self, closed: ClosedJaxpr, args: Sequence[Any]) -> list:
        """`closed` emitted inline at the current insertion point (`ctx.lower_jaxpr`)."""
        return lower_closed_jaxpr(self, closed, args)

    def call_jaxpr(self, closed: ClosedJaxpr, name: str, args: Sequence[Any]) -> list:
        """`closed` called as a private function, emitted once (`ctx.call_jaxpr`)."""
        return call_function(self, closed, name, args)


class LoweredModule:
    """A StableHLO module and the types of its entry function; `host_callbacks` are
    the Python callables its host-callback custom calls index (host_callback.py)."""

    def __init__(self, text: str, in_avals: list[ShapedArray], out_avals: list[ShapedArray],
                 host_callbacks: Sequence[Any] = ()):
        self.text = text
        self.in_avals = in_avals
        self.out_avals = out_avals
        self.host_callbacks = list(host_callbacks)


def lowering_rule(primitive: Any, platform: str) -> Any:
    """The rule that lowers `primitive` for `platform` (its own, else the "default" one)."""
    return _find_rule(primitive, platform)[0]


def _find_rule(primitive: Any, platform: str) -> tuple[Any, str]:
    """The rule, and the key it was found under (`platform` or "default"), which the
    result check needs to name where the rule came from."""
    rule = R.lowering_rules.get(platform, {}).get(primitive)
    if rule is not None:
        return rule, platform
    rule = R.lowering_rules.get("default", {}).get(primitive)
    if rule is None:
        raise R.missing_rule(primitive, f"lowering (platform '{platform}')", "jit")
    return rule, "default"


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
        rule, key = _find_rule(eqn.primitive, module.platform)
        avals_out = [v.aval for v in eqn.outvars]
        ctx = LoweringRuleContext(module, eqn.primitive, [x.aval for x in eqn.invars],
                                  avals_out)
        outs = rule(ctx, *[read(x) for x in eqn.invars], **eqn.params)
        outs = checked_results(outs, eqn.primitive, key, avals_out, module.ir_type)
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
    return LoweredModule(text, list(closed.in_avals), list(closed.out_avals),
                         mctx.host_callbacks)
