"""Partial evaluation: compute what is known now, stage out what is not.

Known values never become tracers here: they are ordinary values (concrete
arrays or tracers of enclosing transformations) and binds on them go to the
parent trace, i.e. they are *evaluated* — which is why Python control flow on
primal values keeps working under `grad`. Only values that depend on unknown
inputs are `PartialEvalTracer`s; each holds the jaxpr atom (Var or Literal)
that names it. Staging a primitive appends its equation to the trace's list
right away, in creation order (a topological order); at the end, equations
no output needs are dropped. (This replaces a graph of per-tracer recipes that
was walked and sorted at the end: appending as we go is the same order, cheaper.)
The trace holds equations and Vars, never its tracers, and forgets them when it
ends, so no reference cycle keeps dead tracers alive.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..core import trace as core
from ..core.array import Array
from ..core.avals import ShapedArray, get_aval, register_aval_handler
from ..core.rules import RuleContext, abstract_eval, abstract_eval_cache, partial_eval_rules
from ..jaxpr.ir import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var
from .custom_calls import custom_vjp_call_p
from .staging import staged_custom_vjp_call

__all__ = ["PartialEvalTrace", "PartialEvalTracer", "partial_eval_flat", "dce_closed_jaxpr"]


PARTIAL_EVAL_CTX = RuleContext("partial_eval")


class PartialEvalTracer(core.Tracer):
    """An unknown value: `atom` is its Var (or the Literal/constvar of a known value
    that `instantiate_const` made into a staged operand)."""

    __slots__ = ("_aval", "atom")

    def __init__(self, trace: "PartialEvalTrace", aval: ShapedArray, atom: Var | Literal):
        self._trace = trace
        self._aval = aval
        self.atom = atom

    @property
    def aval(self) -> ShapedArray:
        return self._aval

    # read by rules on every tangent they combine: one attribute read, not two
    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)
    weak_type = property(lambda self: self._aval.weak_type)


register_aval_handler(PartialEvalTracer, lambda t: t._aval)


class PartialEvalTrace(core.Trace):
    def __init__(self, created_at: str | None = None) -> None:
        self.eqns: list[JaxprEqn] = []           # staged, in creation order
        self.constvars: dict[int, Var] = {}     # id(known value) -> its constvar
        self.constvals: list[Any] = []          # those values, in the same order
        self.created_at = created_at or core.user_frame()

    def new_arg(self, aval: ShapedArray) -> PartialEvalTracer:
        return PartialEvalTracer(self, aval, Var(aval))

    def is_unknown(self, x: Any) -> bool:
        return type(x) is PartialEvalTracer and x._trace is self

    def instantiate_const(self, x: Any) -> PartialEvalTracer:
        if self.is_unknown(x):
            return x
        aval = get_aval(x)
        return PartialEvalTracer(self, aval, self._const_atom(x, aval))

    def _const_atom(self, val: Any, aval: ShapedArray) -> Var | Literal:
        """A known operand of a staged equation: scalars inline as Literals (as the
        jaxpr-building trace writes them), anything else one constvar per value."""
        if not aval.shape and _is_literal(val):
            return Literal(val, aval)
        var = self.constvars.get(id(val))
        if var is None:   # constvals keeps `val` alive, so its id stays unique
            var = self.constvars[id(val)] = Var(aval)
            self.constvals.append(val)
        return var

    def process_primitive(self, primitive: core.Primitive, args: tuple, params: dict) -> Any:
        for x in args:
            if type(x) is PartialEvalTracer and x._trace is self:
                break
        else:   # all known: evaluate
            parent = self.parent
            if type(parent) is core.EvalTrace:   # bind_known's common case, inlined
                return parent.process_primitive(primitive, args, params)
            return self.bind_known(primitive, args, params)
        rule = partial_eval_rules.get(primitive)
        if rule is not None:
            return rule(PARTIAL_EVAL_CTX, self, *args, **params)
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
        atoms, avals_in = [], []
        for x in args:
            if type(x) is PartialEvalTracer and x._trace is self:
                atoms.append(x.atom)
                avals_in.append(x._aval)
            else:
                aval = get_aval(x)
                atoms.append(self._const_atom(x, aval))
                avals_in.append(aval)
        if primitive.multiple_results:
            out = abstract_eval(primitive, avals_in, params, "partial evaluation")
        else:   # the common case: abstract_eval's cache lookup, inlined (same key)
            key = [primitive]
            for a in avals_in:
                key.append(a._sig)
            if params:
                key += params.items()
            try:   # a miss or an unhashable param: abstract_eval decides
                out = abstract_eval_cache[tuple(key)]
            except (KeyError, TypeError):
                out = abstract_eval(primitive, avals_in, params, "partial evaluation")
            var = Var(out)
            self.eqns.append(_new_eqn(JaxprEqn, (atoms, [var], primitive, params)))
            return PartialEvalTracer(self, out, var)
        outvars = [Var(a) for a in out]
        self.eqns.append(_new_eqn(JaxprEqn, (atoms, outvars, primitive, params)))
        return [PartialEvalTracer(self, v.aval, v) for v in outvars]

    # A custom-derivative call on known inputs belongs to the enclosing trace, rule and
    # all: it is a primal computation there, and a JVP trace further out (grad of grad,
    # where the inner linearization's primal work is the outer one's program) must see
    # the call itself, not the body, to use the rule. On unknown inputs (partial
    # evaluation only ever builds linear functions: the unknowns are tangents) a
    # custom_jvp function is just staged (its jvp rule is not needed for a function
    # that is only applied or transposed, as in JAX), and a custom_vjp call is staged
    # as one equation: applying it runs the function; transposing it raises, as in JAX,
    # since `bwd` is a VJP at a primal point, not the transpose of a linear map.
    def process_custom_jvp_call(self, fun, jvp, args: list) -> list:
        if any(self.is_unknown(x) for x in args):
            return fun(*args)
        return self._known_call(lambda t: t.process_custom_jvp_call(fun, jvp, args))

    def process_custom_vjp_call(self, fun, fwd, bwd, args: list) -> list:
        if any(self.is_unknown(x) for x in args):
            operands, params = staged_custom_vjp_call(fun, fwd, bwd, args)
            return self.stage(custom_vjp_call_p, operands, params)
        return self._known_call(lambda t: t.process_custom_vjp_call(fun, fwd, bwd, args))

    def _known_call(self, process: Callable) -> list:
        state = core._state
        state.trace = parent = self.parent
        try:
            return process(parent)
        finally:
            state.trace = self

    def to_jaxpr(self, tracers_in: list, tracers_out: list, dce: bool = True) -> ClosedJaxpr:
        """The staged equations `tracers_out` need, as a jaxpr over `tracers_in`; the
        known values they use are its consts (the residuals). `dce=False` keeps every
        staged equation and const (for a caller that only runs the jaxpr backwards,
        where dead equations receive no cotangent and cost nothing)."""
        jaxpr = Jaxpr(self.constvars.values(), [t.atom for t in tracers_in], self.eqns,
                      [t.atom for t in tracers_out])
        closed = ClosedJaxpr(jaxpr, self.constvals)
        return dce_closed_jaxpr(closed) if dce else closed

    def invalidate(self) -> None:
        """Forget the staged equations once the trace ends (its jaxpr owns them now):
        their params may hold user closures (custom_vjp's bwd) that reach this trace's
        tracers, and through them the trace: a cycle only the GC would free."""
        super().invalidate()
        self.eqns, self.constvars, self.constvals = [], {}, []

    def describe(self) -> str:
        return "PartialEvalTrace"


def dce_closed_jaxpr(closed: ClosedJaxpr) -> ClosedJaxpr:
    """`closed` without the equations no output needs, and without unused consts."""
    jaxpr = closed.jaxpr
    live = {v for v in jaxpr.outvars if type(v) is Var}
    kept = []
    for eqn in reversed(jaxpr.eqns):   # backwards: keep what a live value needs
        for v in eqn.outvars:
            if v in live:
                break
        else:
            continue
        kept.append(eqn)
        for x in eqn.invars:   # a loop, not a generator: this runs for every eqn
            if type(x) is Var:
                live.add(x)
    kept.reverse()
    used = [(v, val) for v, val in zip(jaxpr.constvars, closed.consts) if v in live]
    return ClosedJaxpr(Jaxpr([v for v, _ in used], jaxpr.invars, kept, jaxpr.outvars),
                       [val for _, val in used])


def partial_eval_flat(fun: Callable[..., Sequence[Any]], known: Sequence[Any],
                      unknown_avals: Sequence[ShapedArray],
                      created_at: str | None = None,
                      dce: bool = True) -> tuple[list, ClosedJaxpr, list]:
    """Run `fun(*known, *unknowns)`.

    Returns the outputs (known values, or None where unknown), a ClosedJaxpr
    computing the unknown outputs from the unknown inputs (its consts are the
    residuals), and a mask of which outputs are unknown. With `dce=False` the
    jaxpr keeps equations no output needs (see `to_jaxpr`).
    """
    trace = PartialEvalTrace(created_at)
    with core.new_trace_context(trace):
        tracers_in = [trace.new_arg(a) for a in unknown_avals]
        outs = list(fun(*known, *tracers_in))
        unknown_mask = [trace.is_unknown(o) for o in outs]
        tracers_out = [o for o in outs if trace.is_unknown(o)]
        closed = trace.to_jaxpr(tracers_in, tracers_out, dce)
    known_outs = [None if unk else o for o, unk in zip(outs, unknown_mask)]
    return known_outs, closed, unknown_mask


_new_eqn = tuple.__new__   # JaxprEqn(...) without the NamedTuple's Python-level __new__


def _is_literal(val: Any) -> bool:
    """Scalars are written inline, as the jaxpr-building trace does."""
    return type(val) in (bool, int, float, complex) or (
        isinstance(val, (np.ndarray, np.generic, Array)) and val.shape == ())
