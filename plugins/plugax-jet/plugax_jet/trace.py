"""The jet interpreter: tracers carry a primal and its truncated Taylor series.

Modelled on plugax's JVPTrace (a transformation's trace is plain plugin code,
built from `plugax.extend` alone). Inside this module a series is a list of
*Taylor coefficients* ``[x_1, ..., x_K]`` of ``x(t) = x_0 + x_1 t + ... + x_K t^K``
(JAX's jet converts from and to derivative scaling at its boundary, so do we:
see frontend.py), because the rules are then plain polynomial arithmetic.

A whole series that is known to be zero is the sentinel `zero_series`: a
tracer never holds one (`box` returns the bare primal, as JVPTrace does for a
`Zero` tangent), so a primitive none of whose operands carry a series is just
evaluated one level out, and constants cost nothing.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from plugax.extend import (ClosedJaxpr, RuleContext, ShapedArray, Trace, Tracer, eval_jaxpr,
                           get_aval, missing_rule, new_trace_context, rule_kinds, trace_state,
                           trace_to_jaxpr, zeros_like_aval)

__all__ = ["JetTrace", "JetTracer", "jet_flat", "jet_jaxpr_fun", "trace_jet_jaxpr",
           "zero_series", "zero_term", "instantiate_series", "JET_CTX"]


class _ZeroSeries:
    """Every term of a series is zero (a constant, a comparison's result, an argmax)."""

    def __repr__(self) -> str:
        return "zero_series"


class _ZeroTerm:
    """One term of a series is zero; accepted in `jet`'s input, like `zero_series`."""

    def __repr__(self) -> str:
        return "zero_term"


zero_series = _ZeroSeries()
zero_term = _ZeroTerm()

JET_CTX = RuleContext("jet")


def instantiate_series(x: Any, series: Any, order: int) -> list:
    """`series` as a list of `order` arrays (zeros where symbolic), typed like `x`."""
    if series is not zero_series and all(t is not zero_term for t in series):
        return list(series)
    zero = zeros_like_aval(_term_aval(get_aval(x)))   # one immutable array, shared
    if series is zero_series:
        return [zero] * order
    return [zero if t is zero_term else t for t in series]


def _term_aval(aval: ShapedArray) -> ShapedArray:
    return ShapedArray(aval.shape, aval.dtype, False)


class JetTracer(Tracer):
    # shape/dtype/weak_type copied from the primal: front ends read them constantly
    __slots__ = ("primal", "terms", "shape", "dtype", "weak_type")

    def __init__(self, trace: "JetTrace", primal: Any, terms: list):
        self._trace = trace
        self.primal = primal
        self.terms = terms
        aval = get_aval(primal)
        self.shape, self.dtype, self.weak_type = aval.shape, aval.dtype, aval.weak_type

    @property
    def aval(self) -> ShapedArray:
        return get_aval(self.primal)

    def to_concrete_value(self) -> Any:
        p = self.primal
        return p.to_concrete_value() if isinstance(p, Tracer) else p

    def __repr__(self) -> str:
        return f"JetTracer({self.aval.str_short()}, order {len(self.terms)})"


class JetTrace(Trace):
    """Interprets each primitive with its `jet` rule, one level inside its parent."""

    def __init__(self, order: int):
        self.order = order

    def to_primal_series(self, x: Any) -> tuple[Any, Any]:
        if type(x) is JetTracer and x._trace is self:
            return x.primal, x.terms
        return x, zero_series

    def box(self, primal: Any, series: Any) -> Any:
        """A tracer for (primal, series), or the bare primal if the series is zero."""
        if series is zero_series:
            return primal
        return JetTracer(self, primal, list(series))

    def process_primitive(self, primitive: Any, args: tuple, params: dict) -> Any:
        primals, series, ours = [], [], False
        for x in args:
            p, s = self.to_primal_series(x)
            primals.append(p)
            series.append(s)
            ours = ours or s is not zero_series
        state = trace_state
        state.trace = parent = self.parent
        try:
            if not ours:   # nothing carries a series: evaluate one level out
                return parent.process_primitive(primitive, args, params)
            rule = jet_rules().get(primitive)
            if rule is None:
                raise missing_rule(primitive, "jet",
                                   "jet (Taylor-mode differentiation, plugax-jet)")
            if not getattr(rule, "symbolic_zeros", False):
                series = [instantiate_series(p, s, self.order) for p, s in zip(primals, series)]
            primal_out, series_out = rule(JET_CTX, primals, series, **params)
        finally:
            state.trace = self
        if primitive.multiple_results:
            for s in series_out:
                self._check_order(primitive, s)
            return [self.box(p, s) for p, s in zip(primal_out, series_out)]
        self._check_order(primitive, series_out)
        return self.box(primal_out, series_out)

    def _check_order(self, primitive: Any, series: Any) -> None:
        if series is not zero_series and len(series) != self.order:
            raise AssertionError(f"the jet rule of primitive '{primitive}' returned "
                                 f"{len(series)} series terms; the jet has order {self.order}")

    # custom_jvp / custom_vjp functions: the inherited `process_custom_*_call` runs the
    # function itself under this trace, as JAX's jet does (a first-order rule says nothing
    # about higher-order terms).

    def describe(self) -> str:
        return f"JetTrace(order {self.order})"


def jet_rules() -> dict:
    """The `jet` rule table (defined by plugin.py when plugax-jet loads)."""
    return rule_kinds["jet"].table


def jet_flat(fun: Callable[..., Sequence[Any]], primals: Sequence[Any], series: Sequence[Any],
             order: int) -> tuple[list, list]:
    """Run flat `fun` on (primal, series) pairs; output series may be `zero_series`."""
    trace = JetTrace(order)
    with new_trace_context(trace):
        ins = [trace.box(p, s) for p, s in zip(primals, series)]
        outs = fun(*ins)
        pairs = [trace.to_primal_series(o) for o in outs]
    return [p for p, _ in pairs], [s for _, s in pairs]


def jet_jaxpr_fun(closed: ClosedJaxpr, order: int) -> Callable:
    """`closed` as ``f(primals, series) -> (primals_out, series_out)`` under jet."""
    def fun(primals: Sequence[Any], series: Sequence[Any]) -> tuple[list, list]:
        return jet_flat(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs),
                        primals, series, order)
    return fun


def _groups(sizes: Sequence[int] | None, n: int) -> list[list[int]]:
    layout, start = [], 0
    for size in (sizes if sizes is not None else [n]):
        layout.append(list(range(start, start + size)))
        start += size
    return layout


def trace_jet_jaxpr(closed: ClosedJaxpr, order: int, in_series: Sequence[bool],
                    out_series: Sequence[bool], in_groups: Sequence[int] | None = None,
                    out_groups: Sequence[int] | None = None) -> ClosedJaxpr:
    """The jet of `closed` as a jaxpr, what a higher-order primitive binds.

    Inputs come in consecutive groups of sizes `in_groups` (a loop's consts,
    carry, sliced inputs; default: one group), each laid out as its primals
    followed by the `order` terms of each of its inputs flagged in
    `in_series`. Outputs likewise (`out_groups`), every series flagged in
    `out_series` instantiated, so that the layout is fixed whatever the body
    computes (a loop's carry must keep its type).
    """
    avals = list(closed.in_avals)
    layout = _groups(in_groups, len(avals))
    n_out = len(closed.out_avals)
    out_layout = _groups(out_groups, n_out)
    in_avals: list = []
    for idx in layout:
        in_avals += [avals[i] for i in idx]
        in_avals += [_term_aval(avals[i]) for i in idx if in_series[i] for _ in range(order)]
    run = jet_jaxpr_fun(closed, order)

    def fun(*flat: Any) -> list:
        primals: list = [None] * len(avals)
        series: list = [zero_series] * len(avals)
        it = iter(flat)
        for idx in layout:
            for i in idx:
                primals[i] = next(it)
            for i in idx:
                if in_series[i]:
                    series[i] = [next(it) for _ in range(order)]
        p_out, s_out = run(primals, series)
        flat_out: list = []
        for idx in out_layout:
            flat_out += [p_out[j] for j in idx]
            flat_out += [t for j in idx if out_series[j]
                         for t in instantiate_series(p_out[j], s_out[j], order)]
        return flat_out

    return trace_to_jaxpr(fun, in_avals)
