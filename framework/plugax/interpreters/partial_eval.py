"""Partial evaluation: compute what is known now, stage out what is not.

Known values never become tracers here: they are ordinary values (concrete
arrays or tracers of enclosing transformations) and binds on them go to the
parent trace, i.e. they are *evaluated* — which is why Python control flow on
primal values keeps working under `grad`. Only values that depend on unknown
inputs are `PartialEvalTracer`s; each points at the recipe that makes it, and
recipes point back at their outputs through weak references only, so no
reference cycles keep dead tracers alive.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple, Sequence
from itertools import count
from weakref import ref

import numpy as np

from ..core import trace as core
from ..core.array import Array
from ..core.avals import ShapedArray, get_aval, register_aval_handler
from ..core.rules import ABSTRACT_EVAL_CTX, abstract_eval_rules, missing_rule, \
    partial_eval_rules
from ..errors import UnexpectedTracerError
from ..jaxpr.ir import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var

__all__ = ["PartialEvalTrace", "PartialEvalTracer", "partial_eval_flat", "LambdaBinding",
           "ConstRecipe", "EqnRecipe", "toposort", "dce_jaxpr"]


_recipe_order = count()


class LambdaBinding(NamedTuple):
    """Recipe of an unknown input of the staged jaxpr."""


class ConstRecipe(NamedTuple):
    """Recipe of a known value used by staged computation: becomes a constvar."""
    val: Any


class EqnRecipe:
    """Recipe of staged primitive application; outputs held weakly."""

    __slots__ = ("primitive", "tracers_in", "params", "avals_out", "tracer_refs_out", "order")

    def __init__(self, primitive, tracers_in, params, avals_out, tracer_refs_out):
        self.primitive, self.tracers_in, self.params = primitive, tracers_in, params
        self.avals_out, self.tracer_refs_out = avals_out, tracer_refs_out
        # creation order is a topological order (inputs exist before their users), so
        # the staged jaxpr sorts by it instead of running a graph sort
        self.order = next(_recipe_order)


class PartialEvalTracer(core.Tracer):
    __slots__ = ("_aval", "recipe")

    def __init__(self, trace: "PartialEvalTrace", aval: ShapedArray, recipe: Any):
        self._trace = trace
        self._aval = aval
        self.recipe = recipe

    @property
    def aval(self) -> ShapedArray:
        return self._aval


register_aval_handler(PartialEvalTracer, lambda t: t._aval)


class PartialEvalTrace(core.Trace):
    def __init__(self) -> None:
        self.created_at = core.user_frame()

    def new_arg(self, aval: ShapedArray) -> PartialEvalTracer:
        return PartialEvalTracer(self, aval, LambdaBinding())

    def is_unknown(self, x: Any) -> bool:
        return type(x) is PartialEvalTracer and x._trace is self

    def instantiate_const(self, x: Any) -> PartialEvalTracer:
        if self.is_unknown(x):
            return x
        return PartialEvalTracer(self, get_aval(x), ConstRecipe(x))

    def process_primitive(self, primitive: core.Primitive, args: tuple, params: dict) -> Any:
        for x in args:
            if type(x) is PartialEvalTracer and x._trace is self:
                break
        else:
            return self.bind_known(primitive, args, params)
        rule = partial_eval_rules.get(primitive)
        if rule is not None:
            return rule(self, *args, **params)
        return self.stage(primitive, args, params)

    def bind_known(self, primitive: core.Primitive, args: Sequence[Any], params: dict) -> Any:
        """Evaluate now, one level out: the known half of a partially evaluated primitive."""
        parent = self.parent
        if type(parent) is core.EvalTrace:
            # the common case (grad outside any other transformation): evaluating needs
            # no current-trace switch, since impl rules do not bind
            return parent.process_primitive(primitive, args, params)
        state = core._state
        state.trace = self.parent
        try:
            return primitive.bind(*args, **params)
        finally:
            state.trace = self

    def stage(self, primitive: core.Primitive, args: Sequence[Any], params: dict) -> Any:
        """Record `primitive` as a staged equation whose outputs are unknown."""
        tracers_in, avals_in = [], []
        for x in args:
            t = x if type(x) is PartialEvalTracer and x._trace is self \
                else self.instantiate_const(x)
            tracers_in.append(t)
            avals_in.append(t._aval)
        rule = abstract_eval_rules.get(primitive)
        if rule is None:
            raise missing_rule(primitive, "abstract_eval", "partial evaluation")
        out = rule(ABSTRACT_EVAL_CTX, *avals_in, **params)
        if not primitive.multiple_results:   # the common case, without the lists
            t = PartialEvalTracer(self, out, None)
            t.recipe = EqnRecipe(primitive, tracers_in, params, [out], [ref(t)])
            return t
        avals = list(out)
        outs = [PartialEvalTracer(self, a, None) for a in avals]
        recipe = EqnRecipe(primitive, tracers_in, params, avals, [ref(t) for t in outs])
        for t in outs:
            t.recipe = recipe
        return outs

    def describe(self) -> str:
        return "PartialEvalTrace"


def partial_eval_flat(fun: Callable[..., Sequence[Any]], known: Sequence[Any],
                      unknown_avals: Sequence[ShapedArray]) -> tuple[list, ClosedJaxpr, list]:
    """Run `fun(*known, *unknowns)`.

    Returns the outputs (known values, or None where unknown), a ClosedJaxpr
    computing the unknown outputs from the unknown inputs (its consts are the
    residuals), and a mask of which outputs are unknown.
    """
    trace = PartialEvalTrace()
    with core.new_trace_context(trace):
        tracers_in = [trace.new_arg(a) for a in unknown_avals]
        outs = list(fun(*known, *tracers_in))
        unknown_mask = [trace.is_unknown(o) for o in outs]
        tracers_out = [o for o in outs if trace.is_unknown(o)]
        closed = tracers_to_jaxpr(tracers_in, tracers_out)
    known_outs = [None if unk else o for o, unk in zip(outs, unknown_mask)]
    return known_outs, closed, unknown_mask


def tracers_to_jaxpr(tracers_in: list, tracers_out: list) -> ClosedJaxpr:
    """The recipes reachable from `tracers_out` as a jaxpr, equations in creation order;
    ConstRecipes become constvars (in order of first use) or inline literals."""
    var_of: dict[int, Var] = {id(t): Var(t._aval) for t in tracers_in}
    recipes: dict[int, EqnRecipe] = {}
    seen: set[int] = set()
    stack = list(tracers_out)
    while stack:   # reachability only: the order comes from EqnRecipe.order
        t = stack.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        recipe = t.recipe
        if type(recipe) is EqnRecipe:
            recipes[id(recipe)] = recipe
            stack.extend(recipe.tracers_in)
        elif type(recipe) is LambdaBinding and id(t) not in var_of:
            raise UnexpectedTracerError(f"{t!r} is an input of a different partial evaluation")
    const_vars: dict[int, Var] = {}
    consts: list[Any] = []

    def atom(t: PartialEvalTracer) -> Any:
        var = var_of.get(id(t))
        if var is None:   # a known value: the first use makes its constvar or literal
            val = t.recipe.val
            if _is_literal(val):
                var = Literal(val, t._aval)
            else:
                var = const_vars.get(id(val))
                if var is None:
                    var = const_vars[id(val)] = Var(t._aval)
                    consts.append(val)
            var_of[id(t)] = var
        return var

    eqns: list[JaxprEqn] = []
    for recipe in sorted(recipes.values(), key=_creation_order):
        invars = [atom(x) for x in recipe.tracers_in]
        outvars = [Var(a) for a in recipe.avals_out]
        for tref, v in zip(recipe.tracer_refs_out, outvars):
            t = tref()
            if t is not None:
                var_of[id(t)] = v
        eqns.append(JaxprEqn(invars, outvars, recipe.primitive, recipe.params))
    jaxpr = Jaxpr(list(const_vars.values()), [var_of[id(t)] for t in tracers_in], eqns,
                  [atom(t) for t in tracers_out])
    return ClosedJaxpr(jaxpr, consts)


def _creation_order(recipe: EqnRecipe) -> int:
    return recipe.order


def _is_literal(val: Any) -> bool:
    """Scalars are written inline, as the jaxpr-building trace does."""
    return type(val) in (bool, int, float, complex) or (
        isinstance(val, (np.ndarray, np.generic, Array)) and val.shape == ())


def toposort(out_nodes: list, parents: Callable[[Any], list]) -> list:
    """Nodes reachable from `out_nodes`, every node after all of its parents."""
    order: list[Any] = []
    visited: set[int] = set()
    for root in out_nodes:
        stack = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
                continue
            if id(node) in visited:
                continue
            visited.add(id(node))
            stack.append((node, True))
            for p in reversed(parents(node)):
                if id(p) not in visited:
                    stack.append((p, False))
    return order


def dce_jaxpr(jaxpr: Jaxpr, used_outputs: Sequence[bool] | None = None) -> Jaxpr:
    """Drop equations whose outputs nobody uses (primitives here have no effects)."""
    outvars = [v for v, used in zip(jaxpr.outvars, used_outputs or [True] * len(jaxpr.outvars))
               if used]
    live = {id(v) for v in outvars if isinstance(v, Var)}
    kept = []
    for eqn in reversed(jaxpr.eqns):
        if any(id(v) in live for v in eqn.outvars):
            kept.append(eqn)
            live.update(id(v) for v in eqn.invars if isinstance(v, Var))
    return Jaxpr(jaxpr.constvars, jaxpr.invars, kept[::-1], outvars)
