"""The `cond` primitive: run one of several branch jaxprs, chosen by an int32 index.

``outs = cond[branches=(b0, b1, ...)] index *operands``; every branch takes all
operands (closed-over values included) and returns outputs of one type. `cond`
and `switch` both bind it; a boolean predicate becomes index 0 (false) or 1.

Each transformation transforms every branch the same way, so that the
branches keep identical signatures: jvp (output tangents nonzero in any
branch are materialised in all), vmap (a batched index turns the cond into a
`select_n` over all branches' results), partial evaluation (residuals of all
branches are joined) and transpose (each branch transposed).
"""
from __future__ import annotations

import numpy as np

import plugax.lax as lax
from plugax.extend import (ClosedJaxpr, Jaxpr, Primitive, RuleSet, Var, Zero, batch_jaxpr,
                           format_operands, is_undefined_primal, jvp_jaxpr, moveaxis,
                           partial_eval_jaxpr, tangent_aval, transpose_jaxpr)

from .common import closed_call, materialize, retrace, run_closed, same_type, zeros_of

__all__ = ["cond_p", "RULES"]

cond_p = Primitive("cond", multiple_results=True)


def _impl(ctx, index, *operands, branches):
    i = int(np.clip(index, 0, len(branches) - 1))
    return run_closed(branches[i], *operands)


def _abstract_eval(ctx, index_aval, *operand_avals, branches):
    if index_aval.shape != () or index_aval.dtype != np.int32:
        raise TypeError(f"cond: the branch index must be a scalar int32, got "
                        f"{index_aval.str_short()}")
    for i, branch in enumerate(branches):
        if len(branch.in_avals) != len(operand_avals) or not all(
                map(same_type, branch.in_avals, operand_avals)):
            raise TypeError(f"cond: branch {i} takes ({format_operands(branch.in_avals)}) but the "
                            f"operands are ({format_operands(operand_avals)})")
        if len(branch.out_avals) != len(branches[0].out_avals) or not all(
                map(same_type, branch.out_avals, branches[0].out_avals)):
            raise TypeError(f"cond: branch {i} returns ({format_operands(branch.out_avals)}) but "
                            f"branch 0 returns ({format_operands(branches[0].out_avals)})")
    # Branches may differ in weak types; as in JAX, the outputs take branch 0's
    # (which branch runs is data, so the type cannot depend on it)
    return list(branches[0].out_avals)



# --- jvp -------------------------------------------------------------------------------
def _jvp(ctx, primals, tangents, *, branches):
    index, operands = primals[0], primals[1:]
    nonzeros = [type(t) is not Zero for t in tangents[1:]]
    firsts = [jvp_jaxpr(b, nonzeros) for b in branches]
    out_nz = [any(nz) for nz in zip(*[f[1] for f in firsts])]
    jvp_branches = tuple(j if nz == out_nz else jvp_jaxpr(b, nonzeros, out_nz)[0]
                         for b, (j, nz) in zip(branches, firsts))
    nz_tangents = [t for t in tangents[1:] if type(t) is not Zero]
    outs = cond_p.bind(index, *operands, *nz_tangents, branches=jvp_branches)
    n = len(out_nz)
    primals_out, nz_out = outs[:n], iter(outs[n:])
    tangents_out = [next(nz_out) if nz else Zero(tangent_aval(a))
                    for nz, a in zip(out_nz, branches[0].out_avals)]
    return primals_out, tangents_out


# --- vmap ------------------------------------------------------------------------------
def _vmap(ctx, args, dims, *, branches):
    size = ctx.axis_size
    index, index_dim = args[0], dims[0]
    operands = [x if d is None else moveaxis(x, d, 0) for x, d in zip(args[1:], dims[1:])]
    batched = [d is not None for d in dims[1:]]
    if index_dim is not None:
        return _select_branches(size, moveaxis(index, index_dim, 0), operands, batched, branches)
    firsts = [batch_jaxpr(b, size, batched) for b in branches]
    out_b = [any(bs) for bs in zip(*[f[1] for f in firsts])]
    batched_branches = tuple(j if bs == out_b else batch_jaxpr(b, size, batched, out_b)[0]
                             for b, (j, bs) in zip(branches, firsts))
    outs = cond_p.bind(index, *operands, branches=batched_branches)
    return outs, [0 if b else None for b in out_b]


def _select_branches(size, index, operands, batched, branches):
    """A per-example index: run every branch, then pick each example's result."""
    index = lax.clamp(np.int32(0), index, np.int32(len(branches) - 1))
    results = [closed_call(batch_jaxpr(b, size, batched, True)[0], *operands)
               for b in branches]
    outs = []
    for cases in zip(*results):
        shape = cases[0].shape
        which = lax.broadcast_in_dim(index, shape, (0,)) if len(shape) > 1 else index
        outs.append(lax.select_n(which, *cases))
    return outs, [0] * len(outs)


# --- partial evaluation ----------------------------------------------------------------
def _partial_eval(ctx, trace, index, *operands, branches):
    """Known outputs now (by a cond over the known operands), unknown ones staged.

    Each known branch returns its own residuals and zeros in the slots of the
    other branches' residuals, so all known branches have one signature and
    the staged cond receives every residual whichever branch ran.
    """
    params = dict(branches=branches)
    if trace.is_unknown(index):
        return trace.stage(cond_p, [index, *operands], params)
    unknowns = [trace.is_unknown(x) for x in operands]
    splits = [partial_eval_jaxpr(b, unknowns) for b in branches]
    out_uk = [any(u) for u in zip(*[s[2] for s in splits])]
    splits = [s if s[2] == out_uk else partial_eval_jaxpr(b, unknowns, out_uk)
              for b, s in zip(branches, splits)]
    n_known = out_uk.count(False)
    res_avals = [s[0].out_avals[n_known:] for s in splits]
    known_branches = tuple(_with_all_residuals(s[0], n_known, res_avals, i)
                           for i, s in enumerate(splits))
    known_ops = [x for x, u in zip(operands, unknowns) if not u]
    known_out = trace.bind_known(cond_p, [index, *known_ops], dict(branches=known_branches))
    known_vals, residuals = known_out[:n_known], known_out[n_known:]
    if not any(out_uk):
        return known_vals
    unknown_branches = tuple(_taking_all_residuals(s[1], res_avals, i)
                             for i, s in enumerate(splits))
    unknown_ops = [x for x, u in zip(operands, unknowns) if u]
    unknown_out = iter(trace.stage(cond_p, [index, *residuals, *unknown_ops],
                                   dict(branches=unknown_branches)))
    known_iter = iter(known_vals)
    return [next(unknown_out) if u else next(known_iter) for u in out_uk]


def _with_all_residuals(known: ClosedJaxpr, n_known: int, res_avals: list, i: int):
    def fun(*args):
        outs = closed_call(known, *args)
        res = [outs[n_known:] if j == i else [zeros_of(a) for a in avals]
               for j, avals in enumerate(res_avals)]
        return [*outs[:n_known], *[r for rs in res for r in rs]]
    return retrace(known, fun)


def _taking_all_residuals(unknown: ClosedJaxpr, res_avals: list, i: int) -> ClosedJaxpr:
    jaxpr = unknown.jaxpr
    n_res = len(res_avals[i])
    res_vars = [jaxpr.invars[:n_res] if j == i else [Var(a) for a in avals]
                for j, avals in enumerate(res_avals)]
    invars = [*[v for vs in res_vars for v in vs], *jaxpr.invars[n_res:]]
    return ClosedJaxpr(Jaxpr(jaxpr.constvars, invars, jaxpr.eqns, jaxpr.outvars),
                       unknown.consts)


# --- transpose -------------------------------------------------------------------------
def _transpose(ctx, cts, index, *operands, branches):
    if is_undefined_primal(index):
        raise TypeError("cond: cannot transpose with respect to the branch index")
    linear = [is_undefined_primal(x) for x in operands]
    residuals = [x for x, lin in zip(operands, linear) if not lin]
    cts = [materialize(ct) for ct in cts]
    transposed = tuple(transpose_jaxpr(b, linear) for b in branches)
    cts_in = iter(cond_p.bind(index, *residuals, *cts, branches=transposed))
    return [None, *[next(cts_in) if lin else None for lin in linear]]


RULES = [RuleSet(primitive=cond_p, impl=_impl, abstract_eval=_abstract_eval, jvp=_jvp,
                 batching=_vmap, partial_eval=_partial_eval, transpose=_transpose)]
