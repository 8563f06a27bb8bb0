"""Forward-mode differentiation: tracers carry a primal and a tangent.

Tangents may be symbolic `Zero`s; a primitive whose inputs all have zero
tangents is not differentiated at all, just evaluated one level out.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ..core import trace as core
from ..core.array import Array, as_array
from ..core.device_types import device_array_types
from ..core.avals import ShapedArray, register_aval_handler
from ..core.rules import JVP_CTX, jvp_rules, missing_rule
from .ad_util import Zero, instantiate, primal_aval, zero_like
from .custom_calls import linearize_custom_vjp

__all__ = ["JVPTrace", "JVPTracer", "jvp_flat"]


class JVPTracer(core.Tracer):
    # shape, dtype and weak_type are the primal's, copied as plain attributes: the
    # numpy front ends read them on every operation, far more often than tracers
    # are made
    __slots__ = ("primal", "tangent", "shape", "dtype", "weak_type")

    def __init__(self, trace: "JVPTrace", primal: Any, tangent: Any):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent
        self.shape = primal.shape
        self.dtype = primal.dtype
        self.weak_type = primal.weak_type

    @property
    def aval(self) -> ShapedArray:
        return primal_aval(self)

    def to_concrete_value(self) -> Any:
        p = self.primal
        return p.to_concrete_value() if isinstance(p, core.Tracer) else p


register_aval_handler(JVPTracer, primal_aval)


class JVPTrace(core.Trace):
    def __init__(self, created_at: str | None = None) -> None:
        self.created_at = created_at or core.user_frame()

    def to_primal_tangent(self, x: Any) -> tuple[Any, Any]:
        if type(x) is JVPTracer and x._trace is self:
            return x.primal, x.tangent
        return x, zero_like(x)

    def process_primitive(self, primitive: core.Primitive, args: tuple, params: dict) -> Any:
        # A JVPTracer never holds a Zero tangent (`box` returns the bare primal then),
        # so "some operand is ours" is "some tangent is nonzero". One pass splits the
        # operands; constant Arrays get their (shared) symbolic zero tangent right away,
        # other constants (scalars, outer tracers) once we know they are needed.
        primals, tangents, ours, others = [], [], False, False
        for x in args:
            if type(x) is JVPTracer and x._trace is self:
                primals.append(x.primal)
                tangents.append(x.tangent)
                ours = True
            elif type(x) is Array or type(x) in device_array_types:
                primals.append(x)
                tangents.append(zero_like(x))
            else:
                primals.append(x)
                tangents.append(None)
                others = True
        state = core._state
        state.trace = parent = self.parent
        try:
            if not ours:   # nothing to differentiate: evaluate one level out
                return parent.process_primitive(primitive, args, params)
            if others:
                for i, t in enumerate(tangents):
                    if t is None:
                        tangents[i] = zero_like(primals[i])
            rule = jvp_rules.get(primitive)
            if rule is None:
                raise missing_rule(primitive, "jvp", "jvp (forward-mode differentiation)")
            primal_out, tangent_out = rule(JVP_CTX, primals, tangents, **params) if params \
                else rule(JVP_CTX, primals, tangents)
        finally:
            state.trace = self
        if primitive.multiple_results:
            return [self.box(p, t) for p, t in zip(primal_out, tangent_out)]
        if type(tangent_out) is Zero:
            return primal_out
        if type(primal_out) is not Array:
            return self.box(primal_out, tangent_out)
        return JVPTracer(self, primal_out, tangent_out)

    def box(self, primal: Any, tangent: Any) -> Any:
        """A tracer for (primal, tangent), or the bare primal if the tangent is zero.

        Primals are Arrays or tracers (a Python scalar becomes a weak Array), so the
        tracer's dtype/shape/weak_type are plain attribute reads."""
        if type(tangent) is Zero:
            return primal
        if type(primal) is not Array and not isinstance(primal, (core.Tracer, Array)):
            primal = as_array(primal)
        return JVPTracer(self, primal, tangent)

    def _unbox_all(self, args: list) -> tuple[list, list, bool]:
        pairs = [self.to_primal_tangent(x) for x in args]
        primals, tangents = [p for p, _ in pairs], [t for _, t in pairs]
        return primals, tangents, all(type(t) is Zero for t in tangents)

    def process_custom_jvp_call(self, fun, jvp, args: list) -> list:
        """Run the user's jvp rule one level out instead of differentiating `fun`."""
        primals, tangents, all_zero = self._unbox_all(args)
        state = core._state
        state.trace = self.parent
        try:
            if all_zero:
                return self.parent.process_custom_jvp_call(fun, jvp, primals)
            p_out, t_out = jvp(primals, [instantiate(t) for t in tangents])
        finally:
            state.trace = self
        return [self.box(p, t) for p, t in zip(p_out, t_out)]

    def process_custom_vjp_call(self, fun, fwd, bwd, args: list) -> list:
        """Primal outputs from `fwd`; the tangent is a custom_lin eqn transposed by `bwd`."""
        primals, tangents, all_zero = self._unbox_all(args)
        state = core._state
        state.trace = self.parent
        try:
            if all_zero:
                return self.parent.process_custom_vjp_call(fun, fwd, bwd, primals)
            outs, t_out = linearize_custom_vjp(fwd, bwd, primals, tangents)
        finally:
            state.trace = self
        return [self.box(p, t) for p, t in zip(outs, t_out)]

    def describe(self) -> str:
        return "JVPTrace"


def jvp_flat(fun: Callable[..., Sequence[Any]], primals: Sequence[Any],
             tangents: Sequence[Any], created_at: str | None = None) -> tuple[list, list]:
    """Run `fun` on primal-tangent pairs; tangents out may be `Zero`.

    `created_at` (the user's call site, for escaped-tracer errors) is passed by
    callers that already know it, to save a walk up the stack."""
    trace = JVPTrace(created_at)
    with core.new_trace_context(trace):
        ins = [trace.box(p, t) for p, t in zip(primals, tangents)]
        outs = fun(*ins)
        pairs = [trace.to_primal_tangent(o) for o in outs]
    return [p for p, _ in pairs], [t for _, t in pairs]
