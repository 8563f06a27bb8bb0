"""Building jaxprs by tracing: every bind under this trace becomes an equation.

Values that are not this trace's tracers become constants of the jaxpr:
scalars inline as Literals, everything else (arrays, or tracers of enclosing
transformations) hoisted to constvars whose values are returned alongside.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..core import trace as core
from ..core.array import Array
from ..core.avals import ShapedArray, get_aval
from ..core.rules import abstract_eval
from ..errors import UnexpectedTracerError
from ..jaxpr.ir import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var, close_over_nothing
from .custom_calls import custom_jvp_call_p, custom_vjp_call_p

__all__ = ["JaxprTrace", "JaxprTracer", "trace_to_jaxpr"]

_python_scalars = (bool, int, float, complex)


class JaxprTracer(core.Tracer):
    # `_var`, not `var`: a slot named like an Array method would hide the method that
    # the reductions family installs on every tracer (`x.var()` under jit)
    __slots__ = ("_var",)

    def __init__(self, trace: "JaxprTrace", var: Var):
        self._trace = trace
        self._var = var

    @property
    def aval(self) -> ShapedArray:
        return self._var.aval


class JaxprTrace(core.Trace):
    def __init__(self) -> None:
        self.eqns: list[JaxprEqn] = []
        self.invars: list[Var] = []
        self.constvars: dict[int, Var] = {}
        self.constvals: list[Any] = []
        self.created_at = core.user_frame()

    def new_arg(self, aval: ShapedArray) -> JaxprTracer:
        var = Var(aval)
        self.invars.append(var)
        return JaxprTracer(self, var)

    def to_atom(self, x: Any) -> Var | Literal:
        if isinstance(x, JaxprTracer) and x._trace is self:
            return x._var
        if type(x) in _python_scalars:
            return Literal(x)
        if isinstance(x, (np.generic, np.ndarray, Array)) and np.ndim(x) == 0 \
                and not isinstance(x, core.Tracer):
            return Literal(x, get_aval(x))
        var = self.constvars.get(id(x))
        if var is None and isinstance(x, core.Tracer) and x._trace.dead:
            raise UnexpectedTracerError(
                f"Encountered an unexpected tracer: {x!r} escaped the transformation that "
                f"created it ({x._trace.describe()} at {getattr(x._trace, 'created_at', '?')}) "
                f"and is used in a later trace.")
        if var is None:
            var = self.constvars[id(x)] = Var(get_aval(x))
            self.constvals.append(x)
        return var

    def process_primitive(self, primitive: core.Primitive, args: tuple, params: dict) -> Any:
        atoms = [self.to_atom(x) for x in args]
        out = abstract_eval(primitive, [a.aval for a in atoms], params, "tracing to a jaxpr")
        avals = out if primitive.multiple_results else [out]
        outvars = [Var(a) for a in avals]
        self.eqns.append(JaxprEqn(atoms, outvars, primitive, params))
        tracers = [JaxprTracer(self, v) for v in outvars]
        return tracers if primitive.multiple_results else tracers[0]

    def to_jaxpr(self, outs: Sequence[Any]) -> ClosedJaxpr:
        outvars = [self.to_atom(x) for x in outs]
        jaxpr = Jaxpr(list(self.constvars.values()), self.invars, self.eqns, outvars)
        return ClosedJaxpr(jaxpr, self.constvals)

    def process_custom_jvp_call(self, fun, jvp, args: list) -> list:
        """Stage the call with its rule attached, so a later jvp still uses the rule."""
        call_jaxpr, consts = self._trace_call(fun, args)
        jvp_with_consts = _drop_consts(jvp, len(consts))
        return self.process_primitive(custom_jvp_call_p, (*consts, *args), dict(
            call_jaxpr=call_jaxpr, jvp=jvp_with_consts, name=_name_of(fun)))

    def process_custom_vjp_call(self, fun, fwd, bwd, args: list) -> list:
        operands, params = staged_custom_vjp_call(fun, fwd, bwd, args)
        return self.process_primitive(custom_vjp_call_p, operands, params)

    def _trace_call(self, fun, args: list) -> tuple[ClosedJaxpr, list]:
        return _trace_call(fun, args)

    def describe(self) -> str:
        return "DynamicJaxprTrace"


def trace_to_jaxpr(fun: Callable[..., Sequence[Any]],
                   in_avals: Sequence[ShapedArray]) -> ClosedJaxpr:
    """Trace flat `fun` on abstract inputs; closed-over values become consts."""
    trace = JaxprTrace()
    with core.new_trace_context(trace):
        tracers = [trace.new_arg(a) for a in in_avals]
        outs = fun(*tracers)
        return trace.to_jaxpr(list(outs))


def _trace_call(fun, args: list) -> tuple[ClosedJaxpr, list]:
    """Trace `fun`; closed-over values become leading inputs (constants of the call)."""
    closed = trace_to_jaxpr(fun, [get_aval(a) for a in args])
    return ClosedJaxpr(close_over_nothing(closed.jaxpr), []), list(closed.consts)


def staged_custom_vjp_call(fun, fwd, bwd, args: list) -> tuple[list, dict]:
    """Operands and params of a `custom_vjp_call` equation for a call of `fun`.

    The operands are the values `fun` closes over, then `args`; `fwd` and `bwd`
    keep seeing only `args` (and give the closed-over values zero cotangents)."""
    call_jaxpr, consts = _trace_call(fun, args)
    n = len(consts)
    return [*consts, *args], dict(call_jaxpr=call_jaxpr, fwd=lambda *xs: fwd(*xs[n:]),
                                  bwd=_pad_cts(bwd, consts), name=_name_of(fun))


def _name_of(fun: Any) -> str:
    return getattr(fun, "__name__", "fun")


def _drop_consts(jvp: Callable, n: int) -> Callable:
    """The user's rule sees only its own arguments; closed-over values are constants."""
    if n == 0:
        return jvp
    def rule(primals: list, tangents: list) -> tuple:
        return jvp(primals[n:], tangents[n:])
    return rule


def _pad_cts(bwd: Callable, consts: list) -> Callable:
    """Cotangents for closed-over constants are zero (they are not differentiated)."""
    if not consts:
        return bwd
    from .ad_util import Zero, tangent_aval
    def rule(res: list, cts: list) -> list:
        return [Zero(tangent_aval(get_aval(c))) for c in consts] + list(bwd(res, cts))
    return rule
