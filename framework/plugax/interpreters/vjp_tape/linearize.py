"""Reverse mode on the tape: when it applies, and the linearization `vjp` and `grad` use.

`vjp`, `grad` and `value_and_grad` use `tape_linearize_flat` in place of
`linearize_flat` when `tape_applies()`: no transformation is running in this
thread and no override block is open (the EvalTrace is current). Under jit, vmap,
an outer derivative or an override, they take the general path, whose linear
jaxpr those transformations need (or whose rules an override may change).
"""
from __future__ import annotations

import os
from typing import Any, Callable, Sequence

from ...core import trace as core
from ...core.array import Array, as_array
from ...core.avals import ShapedArray, get_aval
from ..ad_util import Zero, is_differentiable, tangent_aval
from .trace import VJPTapeTrace, VJPTapeTracer, backward

__all__ = ["VJPTapeTrace", "VJPTapeTracer", "TapeLinearized", "tape_applies",
           "tape_linearize_flat"]


# PLUGAX_VJP_TAPE=0 at import: reverse mode always takes the general path (to compare
# the two, or to rule the tape out when chasing a bug)
_ENABLED = os.environ.get("PLUGAX_VJP_TAPE", "1") != "0"


def tape_applies() -> bool:
    """Whether reverse mode may run on the tape: the plain EvalTrace is current (no
    enclosing transformation, `override`, `disable_jit` or compile-time block)."""
    return _ENABLED and core._state.trace is core.eval_trace


class TapeLinearized:
    """What `linearize_flat` returns, for a taped function: the primal outputs and
    `transpose`, which pulls output cotangents back to the inputs (any number of
    times; `vjp`'s function may be called again, or under vmap for jacrev)."""

    def __init__(self, primals_out: list, out_slots: list, steps: list, n_slots: int,
                 in_slots: list, in_avals: list[ShapedArray]):
        self.primals_out = primals_out
        self.out_slots = out_slots       # per main output: its slot, or None
        self.steps = steps
        self.n_slots = n_slots
        self.in_slots = in_slots         # per input: its slot, or None (not differentiable)
        self.in_avals = in_avals

    def compact(self) -> "TapeLinearized":
        """Nothing to drop: a step no output needs receives no cotangent."""
        return self

    def transpose(self, cts: Sequence[Any]) -> list:
        seeds = [(s, ct) for s, ct in zip(self.out_slots, cts)
                 if s is not None and ct is not None and type(ct) is not Zero]
        found = backward(self.steps, self.n_slots, seeds) if seeds else None
        out = []
        for s, aval in zip(self.in_slots, self.in_avals):
            ct = None if s is None or found is None else found[s]
            out.append(Zero(tangent_aval(aval)) if ct is None else ct)
        return out


def _as_primal(p: Any) -> Any:
    """An input as the tape tracer's primal: an Array (or a device array), as JVPTrace
    boxes it, so a tracer's shape/dtype/weak_type are plain attribute reads."""
    if type(p) is Array or isinstance(p, (core.Tracer, Array)):
        return p
    return as_array(p)


def tape_linearize_flat(fun: Callable, primals: Sequence[Any], aux: Any = None,
                        site: str | None = None) -> TapeLinearized:
    """`linearize_flat` on the tape: run flat `fun` once on tape tracers for the
    differentiable inputs. With `aux` (a `flatten_fun_aux` store), the trailing outputs
    are auxiliary: returned as values, never differentiated."""
    in_avals = [get_aval(p) for p in primals]
    trace = VJPTapeTrace(site or core.user_frame())
    with core.new_trace_context(trace):
        ins, in_slots = [], []
        for p, aval in zip(primals, in_avals):
            if is_differentiable(aval.dtype):
                t = trace.new_input(_as_primal(p))
                ins.append(t)
                in_slots.append(t.slot)
            else:
                ins.append(p)
                in_slots.append(None)
        outs = list(fun(*ins))
        n_main = len(outs) if aux is None else aux.n_main
        primals_out, out_slots = [], []
        for k, o in enumerate(outs):
            ours = type(o) is VJPTapeTracer and o._trace is trace
            primals_out.append(o.primal if ours else o)
            if k < n_main:
                out_slots.append(o.slot if ours else None)
        steps = trace.steps
    return TapeLinearized(primals_out, out_slots, steps, trace.n_slots, in_slots, in_avals)
