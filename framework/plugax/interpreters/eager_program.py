"""A jaxpr prepared once for many eager evaluations (e.g. `linearize`'s linear function).

`eval_jaxpr` rebuilds a dict environment and binds every equation on each call,
which is right when a transformation is watching. When none is (`is_eager()`),
the same jaxpr can run as a flat list of steps over numbered slots, each handed
straight to the eval trace: no environment dict, no `bind` dispatch. The
result is the same as `eval_jaxpr`'s; under a transformation `run` falls back
to it, so the program stays traceable.
"""
from __future__ import annotations

from typing import Any, Sequence

from ..core.trace import eval_trace, is_eager
from ..jaxpr.interpret import eval_jaxpr
from ..jaxpr.ir import Jaxpr, Literal

__all__ = ["EagerProgram"]


class EagerProgram:
    """`jaxpr` closed over `consts`, compiled to (primitive, params, in slots, out slots)."""

    __slots__ = ("jaxpr", "consts", "template", "n_args", "arg_start", "steps", "out_slots")

    def __init__(self, jaxpr: Jaxpr, consts: Sequence[Any]):
        self.jaxpr, self.consts = jaxpr, list(consts)
        slot_of: dict[Any, int] = {}
        template: list[Any] = []

        def new_slot(var: Any, value: Any = None) -> int:
            slot_of[var] = len(template)
            template.append(value)
            return slot_of[var]

        def slot(atom: Any) -> int:
            if type(atom) is Literal:   # each literal gets a slot holding its value
                template.append(atom.val)
                return len(template) - 1
            return slot_of[atom]

        for v, c in zip(jaxpr.constvars, self.consts):
            new_slot(v, c)
        self.arg_start = len(template)
        self.n_args = len(jaxpr.invars)
        for v in jaxpr.invars:
            new_slot(v)
        self.steps = []
        for eqn in jaxpr.eqns:
            ins = tuple(slot(x) for x in eqn.invars)
            outs = tuple(new_slot(v) for v in eqn.outvars)
            self.steps.append((eqn.primitive, eqn.params, ins,
                               outs if eqn.primitive.multiple_results else outs[0]))
        self.out_slots = [slot(x) for x in jaxpr.outvars]
        self.template = template

    def run(self, args: Sequence[Any]) -> list:
        if not is_eager():
            return eval_jaxpr(self.jaxpr, self.consts, *args)
        if len(args) != self.n_args:
            raise TypeError(f"the jaxpr takes {self.n_args} arguments, got {len(args)}")
        env = self.template[:]
        env[self.arg_start:self.arg_start + self.n_args] = args
        process = eval_trace.process_primitive
        for primitive, params, ins, outs in self.steps:
            out = process(primitive, [env[i] for i in ins], params)
            if type(outs) is int:
                env[outs] = out
            else:
                for i, val in zip(outs, out):
                    env[i] = val
        return [env[i] for i in self.out_slots]
