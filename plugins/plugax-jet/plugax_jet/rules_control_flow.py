"""Jet rules for higher-order primitives: pjit, cond, while, scan.

Each transforms its body *as a jaxpr* (`trace_jet_jaxpr`: evaluate the body
under a JetTrace, stage it out again) and binds the same primitive on the
primals followed by the series terms, so a jitted function stays one
compiled call and a loop stays a loop:

- pjit: the body's jet, series of floating inputs and outputs appended.
- cond: every branch gets the same jet layout (all output series
  instantiated, so the branches agree); the index has no series.
- while: the carry gains the series of its floating parts; the predicate
  reads only the primals (it cannot depend on the series).
- scan: consts, carry and sliced inputs each gain their series; so do the
  stacked outputs.

The custom-derivative calls (custom_jvp_call, custom_vjp_call) need no rule
here: they give an `expand` (their body), from which the jet Transformation
derives one (derive.py), which is also what JAX's jet does: run the function.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from plugax.extend import ClosedJaxpr, Primitive, eval_jaxpr, trace_to_jaxpr

from .generic import is_float
from .trace import trace_jet_jaxpr, zero_series

__all__ = ["MAKERS"]


def _float_aval(aval: Any) -> bool:
    return aval.dtype.kind in "fc" or aval.dtype.name == "bfloat16"


def _with_series(values: Sequence[Any], series: Sequence[list], flags: Sequence[bool]) -> list:
    """values, then the terms of each flagged one: a group of a higher-order layout."""
    return [*values, *[t for s, f in zip(series, flags) if f for t in s]]


def _split_out(outs: Sequence[Any], flags: Sequence[bool], order: int) -> tuple[list, list]:
    """The inverse of `_with_series` for one output group."""
    n = len(flags)
    primals, rest = list(outs[:n]), iter(outs[n:])
    return primals, [[next(rest) for _ in range(order)] if f else zero_series for f in flags]


def _pjit(prim: Primitive) -> Callable:
    def rule(ctx, primals, series, *, jaxpr: ClosedJaxpr, **params):
        order = len(series[0])
        flags = [is_float(p) for p in primals]
        out_flags = [_float_aval(a) for a in jaxpr.out_avals]
        body = trace_jet_jaxpr(jaxpr, order, flags, out_flags)
        outs = prim.bind(*_with_series(primals, series, flags), jaxpr=body, **params)
        return _split_out(outs, out_flags, order)
    return rule


def _cond(prim: Primitive) -> Callable:
    def rule(ctx, primals, series, *, branches: Sequence[ClosedJaxpr], **params):
        order = len(series[0])
        index, ops, ops_series = primals[0], primals[1:], series[1:]
        flags = [is_float(p) for p in ops]
        out_flags = [_float_aval(a) for a in branches[0].out_avals]
        new = tuple(trace_jet_jaxpr(b, order, flags, out_flags) for b in branches)
        outs = prim.bind(index, *_with_series(ops, ops_series, flags), branches=new, **params)
        return _split_out(outs, out_flags, order)
    return rule


def _while(prim: Primitive) -> Callable:
    def rule(ctx, primals, series, *, cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr,
             cond_nconsts: int, body_nconsts: int, **params):
        order = len(series[0])
        nc, nb = cond_nconsts, body_nconsts
        cconsts, bconsts, carry = primals[:nc], primals[nc:nc + nb], primals[nc + nb:]
        bseries, cseries = series[nc:nc + nb], series[nc + nb:]
        bflags, cflags = [is_float(p) for p in bconsts], [is_float(p) for p in carry]
        body = trace_jet_jaxpr(body_jaxpr, order, [*bflags, *cflags], cflags,
                               in_groups=[nb, len(carry)], out_groups=[len(carry)])
        bgroup = _with_series(bconsts, bseries, bflags)
        # the predicate sees the primal carry only; the series ride along unread
        n_cond_in = nc + len(carry)
        carry_series_avals = list(body.in_avals)[len(bgroup) + len(carry):]
        cond = trace_to_jaxpr(
            lambda *xs: eval_jaxpr(cond_jaxpr.jaxpr, cond_jaxpr.consts, *xs[:n_cond_in]),
            [*cond_jaxpr.in_avals, *carry_series_avals])
        outs = prim.bind(*cconsts, *bgroup, *_with_series(carry, cseries, cflags),
                         cond_jaxpr=cond, body_jaxpr=body, cond_nconsts=nc,
                         body_nconsts=len(bgroup), **params)
        return _split_out(outs, cflags, order)
    return rule


def _scan(prim: Primitive) -> Callable:
    def rule(ctx, primals, series, *, jaxpr: ClosedJaxpr, num_consts: int, num_carry: int,
             linear: Sequence[bool], **params):
        order = len(series[0])
        nk, ncar = num_consts, num_carry
        groups = [(primals[:nk], series[:nk]), (primals[nk:nk + ncar], series[nk:nk + ncar]),
                  (primals[nk + ncar:], series[nk + ncar:])]
        flags = [[is_float(p) for p in ps] for ps, _ in groups]
        y_flags = [_float_aval(a) for a in jaxpr.out_avals[ncar:]]
        body = trace_jet_jaxpr(jaxpr, order, [f for fs in flags for f in fs],
                               [*flags[1], *y_flags],
                               in_groups=[len(ps) for ps, _ in groups],
                               out_groups=[ncar, len(y_flags)])
        operands = [_with_series(ps, ss, fs) for (ps, ss), fs in zip(groups, flags)]
        flat = [x for group in operands for x in group]
        outs = prim.bind(*flat, jaxpr=body, num_consts=len(operands[0]),
                         num_carry=len(operands[1]), linear=(False,) * len(flat), **params)
        n_carry_out = ncar + order * sum(flags[1])
        carry, carry_series = _split_out(outs[:n_carry_out], flags[1], order)
        ys, ys_series = _split_out(outs[n_carry_out:], y_flags, order)
        return [*carry, *ys], [*carry_series, *ys_series]
    return rule


MAKERS: dict[str, Callable[[Primitive], Callable]] = {
    "pjit": _pjit, "cond": _cond, "while": _while, "scan": _scan,
}
