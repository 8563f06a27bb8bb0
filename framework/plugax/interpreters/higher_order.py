"""Whole-jaxpr transformations, the building blocks of higher-order primitives' rules.

A primitive that carries jaxprs in its params (`pjit`, `cond`, `while`,
`scan`) transforms by transforming those jaxprs: its jvp rule needs the jvp of
its body *as a jaxpr*, its vmap rule the batched body, and so on. Each
function here gets that by the same trick as Autodidax part 3: evaluate the
jaxpr with `eval_jaxpr` under the transformation's trace, and stage the result
out again with `trace_to_jaxpr`. So a higher-order primitive reuses every
first-order rule there is, and nested higher-order primitives recurse for free.
"""
from __future__ import annotations

from typing import Any, Sequence

from ..core import trace as core
from ..core.avals import ShapedArray
from ..jaxpr.interpret import eval_jaxpr
from ..jaxpr.ir import ClosedJaxpr, close_over_nothing
from .ad_util import UndefPrimal, Zero, instantiate as instantiate_zero, tangent_aval
from .batching import BatchTrace, bdim_at_front, rule_axis_name
from .jvp import jvp_flat
from .partial_eval import partial_eval_flat
from .staging import trace_to_jaxpr
from .transpose import backward_pass

__all__ = ["jvp_jaxpr", "batch_jaxpr", "partial_eval_jaxpr", "transpose_jaxpr"]


def _flags(value: bool | Sequence[bool], n: int) -> list[bool]:
    return [value] * n if isinstance(value, bool) else list(value)


def jvp_jaxpr(closed: ClosedJaxpr, nonzeros: Sequence[bool],
              instantiate: bool | Sequence[bool] = False) -> tuple[ClosedJaxpr, list[bool]]:
    """The jvp of `closed` as a jaxpr: ``(*primals, *nonzero_tangents) -> (*primals_out,
    *nonzero_tangents_out)``, and which output tangents are nonzero.

    Tangents known to be zero are neither inputs nor outputs, so zeros are
    never materialised across the primitive boundary; `instantiate` forces an
    output tangent to be present (as zeros) when the caller needs a fixed layout.
    """
    n_out = len(closed.out_avals)
    inst = _flags(instantiate, n_out)
    in_avals = closed.in_avals
    tangent_avals = [tangent_aval(a) for a, nz in zip(in_avals, nonzeros) if nz]
    out_nonzeros: list[bool] = []

    def fun(*args: Any) -> list:
        primals, nz_tangents = args[:len(in_avals)], iter(args[len(in_avals):])
        tangents = [next(nz_tangents) if nz else Zero(tangent_aval(a))
                    for a, nz in zip(in_avals, nonzeros)]
        p_out, t_out = jvp_flat(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs),
                                primals, tangents)
        out_nonzeros[:] = [type(t) is not Zero or i for t, i in zip(t_out, inst)]
        return [*p_out, *[instantiate_zero(t) for t, nz in zip(t_out, out_nonzeros) if nz]]

    return trace_to_jaxpr(fun, [*in_avals, *tangent_avals]), out_nonzeros


def batch_jaxpr(closed: ClosedJaxpr, axis_size: int, in_batched: Sequence[bool],
                instantiate: bool | Sequence[bool] = False) -> tuple[ClosedJaxpr, list[bool]]:
    """The batched `closed`, batch axes at 0 on both sides, and which outputs are batched.

    `instantiate` forces an output to be batched (broadcast along the new
    axis) when the caller needs, e.g., every loop carry batched alike.
    """
    inst = _flags(instantiate, len(closed.out_avals))
    in_avals = [ShapedArray((axis_size, *a.shape), a.dtype, a.weak_type) if b else a
                for a, b in zip(closed.in_avals, in_batched)]
    out_batched: list[bool] = []

    name = rule_axis_name()   # the body belongs to the same (possibly named) vmap axis

    def fun(*args: Any) -> list:
        trace = BatchTrace(axis_size, name)
        with core.new_trace_context(trace):
            ins = [trace.box(x, 0 if b else None) for x, b in zip(args, in_batched)]
            outs = eval_jaxpr(closed.jaxpr, closed.consts, *ins)
            vals_dims = [trace.to_val_dim(o) for o in outs]
        out_batched[:] = [d is not None or i for (_, d), i in zip(vals_dims, inst)]
        return [bdim_at_front(v, d, axis_size) if b else v
                for (v, d), b in zip(vals_dims, out_batched)]

    return trace_to_jaxpr(fun, in_avals), out_batched


def partial_eval_jaxpr(closed: ClosedJaxpr, unknowns: Sequence[bool],
                       instantiate: bool | Sequence[bool] = False
                       ) -> tuple[ClosedJaxpr, ClosedJaxpr, list[bool], int]:
    """Split `closed` into what known inputs determine and what must wait.

    Returns ``(known, unknown, out_unknowns, num_res)``: `known` maps the known
    inputs to ``[*known_outputs, *residuals]``; `unknown` maps ``[*residuals,
    *unknown_inputs]`` to the unknown outputs. `instantiate` makes a known
    output unknown anyway (it then travels as a residual), for callers whose
    layout must not depend on what happened to be known.
    """
    n_out = len(closed.out_avals)
    inst = _flags(instantiate, n_out)
    known_avals = [a for a, u in zip(closed.in_avals, unknowns) if not u]
    unknown_avals = [a for a, u in zip(closed.in_avals, unknowns) if u]
    result: dict[str, Any] = {}

    def run(*args: Any) -> list:
        known, unknown = iter(args[:len(known_avals)]), iter(args[len(known_avals):])
        full = [next(unknown) if u else next(known) for u in unknowns]
        outs = eval_jaxpr(closed.jaxpr, closed.consts, *full)
        trace = core.current_trace()
        return [trace.instantiate_const(o) if i else o for o, i in zip(outs, inst)]

    def known_fun(*known_args: Any) -> list:
        outs, unknown_closed, out_unknowns = partial_eval_flat(run, known_args, unknown_avals)
        result["unknown"], result["out_unknowns"] = unknown_closed, out_unknowns
        residuals = unknown_closed.consts
        return [*[o for o in outs if o is not None], *residuals]

    known_closed = trace_to_jaxpr(known_fun, known_avals)
    unknown = result["unknown"]
    num_res = len(unknown.consts)
    unknown_jaxpr = close_over_nothing(unknown.jaxpr)
    return known_closed, ClosedJaxpr(unknown_jaxpr, []), result["out_unknowns"], num_res


def transpose_jaxpr(closed: ClosedJaxpr, linear: Sequence[bool]) -> ClosedJaxpr:
    """The transpose of `closed` in its `linear` inputs, as a jaxpr:
    ``(*nonlinear_inputs, *output_cotangents) -> cotangents of the linear inputs``.

    Cotangents come out instantiated (zeros where none flowed), because a
    jaxpr's outputs have fixed types.
    """
    in_avals = closed.in_avals
    res_avals = [a for a, lin in zip(in_avals, linear) if not lin]
    ct_avals = [tangent_aval(a) for a in closed.out_avals]

    def fun(*args: Any) -> list:
        res, cts = iter(args[:len(res_avals)]), args[len(res_avals):]
        primals = [UndefPrimal(a) if lin else next(res) for a, lin in zip(in_avals, linear)]
        cts_in = backward_pass(closed.jaxpr, closed.consts, primals, list(cts))
        return [instantiate_zero(ct) for ct in cts_in]

    return trace_to_jaxpr(fun, [*res_avals, *ct_avals])
