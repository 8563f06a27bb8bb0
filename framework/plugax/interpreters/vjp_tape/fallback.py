"""The tape's fallback: one application linearized by the general machinery.

Why: the `vjp` rule kind is optional. A primitive without one (a plugin's
primitive, control flow, a call) and a custom_jvp / custom_vjp call are taped
by linearizing just that application, its tape operands being the inputs (jvp
rule + partial evaluation, as `linearize` does for a whole function); the
linear jaxpr's transpose is the step's backward function. The result is what
the general path computes, rule for rule.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ...core import trace as core
from ...core.avals import get_aval
from ..ad_util import Zero, tangent_aval
from ..linearize import linearize_flat

__all__ = ["linearized_step", "custom_call_step"]


def linearized_step(trace: Any, primitive: core.Primitive, primals: list,
                    wanted: Sequence[bool], params: dict) -> tuple[Any, Any, list | None]:
    """`(out, backward, boxed)` for `primitive` applied to `primals`, linearized in the
    operands that are `wanted`. `backward` is None when no cotangent can reach an
    operand (every output tangent is a known zero); `boxed` says, per output of a
    multiple-results primitive, whether a cotangent can flow from it."""
    def call(args: list) -> list:
        out = primitive.bind(*args, **params)
        return list(out) if primitive.multiple_results else [out]

    outs, backward, boxed = _linearized(trace, call, primals, wanted)
    if primitive.multiple_results:
        return outs, backward, boxed
    return outs[0], (backward if boxed[0] else None), None


def custom_call_step(trace: Any, process: Callable, primals: list,
                     wanted: Sequence[bool]) -> tuple[list, Any, list]:
    """A custom_jvp / custom_vjp call as one linearized step: `process(trace, args)`
    hands the call to the (JVP) trace current inside the linearization."""
    return _linearized(trace, lambda args: list(process(core.current_trace(), args)),
                       primals, wanted)


def _linearized(trace: Any, call: Callable[[list], list], primals: list,
                wanted: Sequence[bool]) -> tuple[list, Any, list]:
    idx = [i for i, w in enumerate(wanted) if w]
    n_in = len(primals)

    def flat(*xs: Any) -> list:
        args = list(primals)
        for i, x in zip(idx, xs):
            args[i] = x
        return call(args)

    lin = linearize_flat(flat, [primals[i] for i in idx], site=trace.created_at)
    outs = lin.primals_out
    out_avals = [get_aval(o) for o in outs]

    def backward(ct: Any) -> list:
        cts = ct if type(ct) is list else [ct]
        cts = [Zero(tangent_aval(a)) if c is None else c for c, a in zip(cts, out_avals)]
        full: list = [None] * n_in
        for i, c in zip(idx, lin.transpose(cts)):
            full[i] = c
        return full

    boxed = list(lin.unknown_mask)
    return outs, (backward if any(boxed) else None), boxed
