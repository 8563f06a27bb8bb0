"""The VJP tape: reverse mode at the top level, one backward step per primitive.

Why: `grad` outside any transformation needs no linear jaxpr. Linearizing
(a JVPTrace over a PartialEvalTrace) stages one equation per tangent operation
and then interprets that jaxpr backwards; the tape instead evaluates each
primitive's primal at once and records a closure that pulls a cotangent back
through it (the primitive's `vjp` rule). A primitive without a vjp rule is
taped by linearizing that one application (its jvp rule + partial evaluation),
whose transpose is its backward step (fallback.py), so every primitive works.

Tracers hold the concrete primal and an integer slot; the backward pass is a
list of cotangents indexed by slot. The trace holds its steps, never its
tracers, and the steps' closures hold values, never tracers: no reference
cycle keeps a tracer alive.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ...core import trace as core
from ...core.avals import ShapedArray, get_aval, register_aval_handler
from ...core.rules import VJP_CTX, overridden, vjp_rules
from ...structural import add_tangents
from ..ad_util import Zero, is_differentiable, primal_aval
from .fallback import custom_call_step, linearized_step
from .rules import derived_vjp

__all__ = ["VJPTapeTrace", "VJPTapeTracer"]


class VJPTapeTracer(core.Tracer):
    """A value the output depends on: its primal (an Array) and its cotangent slot.
    shape/dtype/weak_type are copied from the primal, as JVPTracer does (the numpy
    front ends read them on every operation)."""

    __slots__ = ("primal", "slot", "shape", "dtype", "weak_type")

    def __init__(self, trace: "VJPTapeTrace", primal: Any, slot: int):
        self._trace = trace
        self.primal = primal
        self.slot = slot
        self.shape = primal.shape
        self.dtype = primal.dtype
        self.weak_type = primal.weak_type

    @property
    def aval(self) -> ShapedArray:
        return primal_aval(self)

    def to_concrete_value(self) -> Any:
        return self.primal


register_aval_handler(VJPTapeTracer, primal_aval)


class VJPTapeTrace(core.Trace):
    """Evaluates primals on its parent (the EvalTrace) and records backward steps.

    A step is `(backward, in_slots, out)`: `in_slots[i]` is the slot of operand i
    (None for a constant), `out` the output's slot, or a list of slots (None for
    an output no cotangent reaches) for a multiple-results primitive.
    """

    def __init__(self, created_at: str | None = None) -> None:
        self.created_at = created_at or core.user_frame()
        self.steps: list[tuple] = []
        self.n_slots = 0

    def new_input(self, primal: Any) -> VJPTapeTracer:
        slot, self.n_slots = self.n_slots, self.n_slots + 1
        return VJPTapeTracer(self, primal, slot)

    def process_primitive(self, primitive: core.Primitive, args: tuple, params: dict) -> Any:
        # one pass: the primals, each operand's slot (None: a constant) and whether
        # it wants a cotangent; the usual one or two operands are unrolled
        n = len(args)
        if n == 2:
            x, y = args
            wx = type(x) is VJPTapeTracer and x._trace is self
            wy = type(y) is VJPTapeTracer and y._trace is self
            primals = [x.primal if wx else x, y.primal if wy else y]
            slots = [x.slot if wx else None, y.slot if wy else None]
            wanted = [wx, wy]
            ours = wx or wy
        elif n == 1 and type(args[0]) is VJPTapeTracer and args[0]._trace is self:
            x = args[0]
            primals, slots, wanted, ours = [x.primal], [x.slot], [True], True
        else:
            primals, slots, wanted, ours = [], [], [], False
            for x in args:
                if type(x) is VJPTapeTracer and x._trace is self:
                    primals.append(x.primal)
                    slots.append(x.slot)
                    wanted.append(True)
                    ours = True
                else:
                    primals.append(x)
                    slots.append(None)
                    wanted.append(False)
        state = core._state
        state.trace = parent = self.parent
        try:
            if not ours:   # nothing to differentiate: evaluate one level out
                return parent.process_primitive(primitive, args, params)
            rule = vjp_rules.get(primitive)
            if rule is None:   # a linear primitive's is its transpose rule
                rule = derived_vjp(primitive, wanted)
            if rule is None or primitive in overridden:   # (an override: its jvp rule)
                out, backward, boxed = linearized_step(self, primitive, primals, wanted,
                                                        params)
            else:
                out, backward = rule(VJP_CTX, primals, wanted, **params) if params \
                    else rule(VJP_CTX, primals, wanted)
                boxed = None
        finally:
            state.trace = self
        if backward is None:   # no cotangent can flow back (a non-differentiable output)
            return out
        if not primitive.multiple_results:
            slot = self.n_slots
            self.n_slots = slot + 1
            self.steps.append((backward, slots, slot))
            return VJPTapeTracer(self, out, slot)
        return self._box_many(out, backward, slots, boxed)

    def _box_many(self, outs: Sequence[Any], backward: Callable, slots: list,
                  boxed: Sequence[bool] | None) -> list:
        """Tracers for the outputs a cotangent can reach (`boxed`; default: the
        differentiable ones), bare values for the others."""
        out_slots, results = [], []
        for k, o in enumerate(outs):
            if (boxed[k] if boxed is not None else _differentiable(o)):
                out_slots.append(self.n_slots)
                results.append(VJPTapeTracer(self, o, self.n_slots))
                self.n_slots += 1
            else:
                out_slots.append(None)
                results.append(o)
        if any(s is not None for s in out_slots):
            self.steps.append((backward, slots, out_slots))
        return results

    def process_custom_jvp_call(self, fun, jvp, args: list) -> list:
        return self._custom_call(args, lambda t, xs: t.process_custom_jvp_call(fun, jvp, xs))

    def process_custom_vjp_call(self, fun, fwd, bwd, args: list) -> list:
        return self._custom_call(args,
                                 lambda t, xs: t.process_custom_vjp_call(fun, fwd, bwd, xs))

    def _custom_call(self, args: list, process: Callable) -> list:
        """A custom-derivative call: on constants, the parent runs it; otherwise it is
        linearized as one step, so the user's rule is used as on the general path."""
        primals = [x.primal if self._ours(x) else x for x in args]
        wanted = [self._ours(x) for x in args]
        state = core._state
        state.trace = parent = self.parent
        try:
            if not any(wanted):
                return process(parent, primals)
            outs, backward, boxed = custom_call_step(self, process, primals, wanted)
        finally:
            state.trace = self
        slots = [x.slot if w else None for x, w in zip(args, wanted)]
        return self._box_many(outs, backward, slots, boxed)

    def _ours(self, x: Any) -> bool:
        return type(x) is VJPTapeTracer and x._trace is self

    def invalidate(self) -> None:
        """The steps now belong to the vjp function (`TapeLinearized`)."""
        super().invalidate()
        self.steps = []

    def describe(self) -> str:
        return "VJPTapeTrace"


def _differentiable(x: Any) -> bool:
    return is_differentiable(get_aval(x).dtype)


def backward(steps: list, n_slots: int, seeds: Sequence[tuple[int, Any]]) -> list:
    """Run `steps` backwards from `seeds` ((slot, cotangent) pairs); the cotangent of
    every slot (None where none flowed). Accumulates with `add_tangents`, in the
    order the general path's backward_pass would."""
    cts: list = [None] * n_slots
    for slot, ct in seeds:
        prev = cts[slot]
        cts[slot] = ct if prev is None else add_tangents(prev, ct)
    for step_backward, in_slots, out in reversed(steps):
        if type(out) is int:
            ct = cts[out]
            if ct is None:
                continue
            cts[out] = None   # read once: free it as soon as it is pulled back
            cts_in = step_backward(ct)
        else:
            outs = [None if o is None else cts[o] for o in out]
            if all(c is None for c in outs):
                continue
            cts_in = step_backward(outs)
        for s, c in zip(in_slots, cts_in):
            if s is not None and c is not None and type(c) is not Zero:
                prev = cts[s]
                cts[s] = c if prev is None else add_tangents(prev, c)
    return cts

