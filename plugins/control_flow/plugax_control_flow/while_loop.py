"""The `while` primitive: ``carry = body(carry)`` while ``cond(carry)``.

``outs = while[cond_jaxpr cond_nconsts body_jaxpr body_nconsts] *cond_consts
*body_consts *init``. The trip count is known only at run time, so there are
no per-iteration residuals to keep: forward mode (jvp) and batching work,
partial evaluation is forward only (known carries computed now, the whole loop
staged for the unknown ones), and reverse mode raises an error pointing to
`scan` / `fori_loop` with static bounds.
"""
from __future__ import annotations

import numpy as np

import plugax.lax as lax
from plugax.extend import (PlugaxError, Primitive, RuleSet, Zero, batch_jaxpr,
                           broadcast_batched, format_operands, jvp_jaxpr, moveaxis,
                           partial_eval_jaxpr, tangent_aval, trace_to_jaxpr)

from .common import (closed_call, fixpoint, join_weak, materialize, permute_invars,
                     run_closed, same_type, split, with_ignored_invars)
from . import eager
from .eager import compiled_loop

__all__ = ["while_p", "RULES"]

while_p = Primitive("while", multiple_results=True)


def _impl(ctx, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    # The trip count is unknown: interpret while that is cheap (eager.INTERPRET_BUDGET
    # equation-steps), then compile the rest of the loop from the current carry, once
    # per signature as JAX does (eager.py). The predicate is never evaluated twice for
    # one carry, so callbacks in cond_fun run exactly as often as interpreted.
    cconsts, bconsts, carry = split(args, cond_nconsts, body_nconsts)
    params = dict(cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr, cond_nconsts=cond_nconsts,
                  body_nconsts=body_nconsts)
    per_step = eager.loop_work(1, cond_jaxpr, body_jaxpr)
    steps, tried = 0, False
    while True:
        if not tried and steps * per_step >= eager.INTERPRET_BUDGET:
            tried = True
            outs = compiled_loop(while_p, body_jaxpr, (*cconsts, *bconsts, *carry), params)
            if outs is not None:
                return outs
        if not run_closed(cond_jaxpr, *cconsts, *carry)[0]:
            return carry
        carry = run_closed(body_jaxpr, *bconsts, *carry)
        steps += 1


def _abstract_eval(ctx, *avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cconsts, bconsts, carry = split(avals, cond_nconsts, body_nconsts)
    for name, jaxpr, consts in (("cond_jaxpr", cond_jaxpr, cconsts),
                                ("body_jaxpr", body_jaxpr, bconsts)):
        ins = [*consts, *carry]
        if len(jaxpr.in_avals) != len(ins) or not all(map(same_type, jaxpr.in_avals, ins)):
            raise TypeError(f"while: {name} takes ({format_operands(jaxpr.in_avals)}) but gets "
                            f"({format_operands(ins)})")
    outs = body_jaxpr.out_avals
    if len(outs) != len(carry) or not all(map(same_type, outs, carry)):
        raise TypeError(f"while: body_jaxpr returns ({format_operands(outs)}) for a carry of "
                        f"({format_operands(carry)})")
    pred = cond_jaxpr.out_avals
    if len(pred) != 1 or pred[0].shape != () or pred[0].dtype != np.bool_:
        raise TypeError(f"while: cond_jaxpr must return one bool[], got ({format_operands(pred)})")
    return join_weak(carry, outs)



# --- jvp -------------------------------------------------------------------------------
def _jvp(ctx, primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cconsts, bconsts, carry = split(primals, cond_nconsts, body_nconsts)
    _, bconst_t, carry_t = split(tangents, cond_nconsts, body_nconsts)
    bconst_nz = [type(t) is not Zero for t in bconst_t]
    carry_nz = fixpoint(lambda nz: jvp_jaxpr(body_jaxpr, bconst_nz + nz, nz)[1],
                         [type(t) is not Zero for t in carry_t])
    body_jvp, _ = jvp_jaxpr(body_jaxpr, bconst_nz + carry_nz, carry_nz)
    nb, nc, nbt = len(bconsts), len(carry), sum(bconst_nz)
    # jvp inputs: [bconsts, carry, bconst tangents, carry tangents]; while wants the
    # tangents of the consts among the consts.
    order = [*range(nb), *range(nb + nc, nb + nc + nbt), *range(nb, nb + nc),
             *range(nb + nc + nbt, len(body_jvp.in_avals))]
    body_jvp = permute_invars(body_jvp, order)
    carry_t_avals = [tangent_aval(a) for a, nz in zip(body_jaxpr.out_avals, carry_nz) if nz]
    cond_jvp = with_ignored_invars(cond_jaxpr, carry_t_avals)
    outs = while_p.bind(*cconsts, *bconsts, *[t for t in bconst_t if type(t) is not Zero],
                        *carry, *[materialize(t) for t, nz in zip(carry_t, carry_nz) if nz],
                        cond_jaxpr=cond_jvp, body_jaxpr=body_jvp, cond_nconsts=cond_nconsts,
                        body_nconsts=nb + nbt)
    primals_out, nz_out = outs[:nc], iter(outs[nc:])
    return primals_out, [next(nz_out) if nz else Zero(tangent_aval(a))
                         for nz, a in zip(carry_nz, body_jaxpr.out_avals)]


# --- vmap ------------------------------------------------------------------------------
def _vmap(ctx, args, dims, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    size = ctx.axis_size
    args = [x if d is None else moveaxis(x, d, 0) for x, d in zip(args, dims)]
    cc_b, bc_b, carry_b = split([d is not None for d in dims], cond_nconsts, body_nconsts)
    carry_b = fixpoint(lambda b: batch_jaxpr(body_jaxpr, size, bc_b + b, b)[1], carry_b)
    _, (pred_b,) = batch_jaxpr(cond_jaxpr, size, cc_b + carry_b)
    if pred_b:
        carry_b = [True] * len(carry_b)
    body_b, _ = batch_jaxpr(body_jaxpr, size, bc_b + carry_b, carry_b)
    cond_b, _ = batch_jaxpr(cond_jaxpr, size, cc_b + carry_b)
    cconsts, bconsts, carry = split(args, cond_nconsts, body_nconsts)
    carry = [broadcast_batched(x, size, 0) if b and d is None else x
             for x, b, d in zip(carry, carry_b, dims[cond_nconsts + body_nconsts:])]
    if pred_b:
        body_b = _masked_body(cond_b, body_b, len(cconsts))
        cond_b = _any_cond(cond_b)
        bconsts = [*cconsts, *bconsts]
    outs = while_p.bind(*cconsts, *bconsts, *carry, cond_jaxpr=cond_b, body_jaxpr=body_b,
                        cond_nconsts=len(cconsts), body_nconsts=len(bconsts))
    return outs, [0 if b else None for b in carry_b]


def _any_cond(cond_b):
    """Keep looping while any example's predicate holds."""
    return trace_to_jaxpr(lambda *xs: [lax.reduce_or(closed_call(cond_b, *xs)[0], (0,))],
                          cond_b.in_avals)


def _masked_body(cond_b, body_b, n_cc: int):
    """Advance only the examples whose predicate still holds; the others keep their carry."""
    def body(*args):
        cconsts, bconsts_carry = args[:n_cc], args[n_cc:]
        carry = bconsts_carry[len(bconsts_carry) - len(body_b.out_avals):]
        pred = closed_call(cond_b, *cconsts, *carry)[0]
        new = closed_call(body_b, *bconsts_carry)
        return [lax.select_n(_broadcast_pred(pred, n.shape), c, n) for n, c in zip(new, carry)]
    avals = [*cond_b.in_avals[:n_cc], *body_b.in_avals]
    return trace_to_jaxpr(body, avals)


def _broadcast_pred(pred, shape):
    return pred if len(shape) == 1 else lax.broadcast_in_dim(pred, shape, (0,))


# --- partial evaluation (forward only) -------------------------------------------------
def _partial_eval(ctx, trace, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    """Known carries by a while over the known parts; the rest by staging the whole loop."""
    params = dict(cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr, cond_nconsts=cond_nconsts,
                  body_nconsts=body_nconsts)
    cc_uk, bc_uk, carry_uk = split([trace.is_unknown(x) for x in args], cond_nconsts,
                                   body_nconsts)
    carry_uk = fixpoint(lambda uk: partial_eval_jaxpr(body_jaxpr, bc_uk + uk, uk)[2],
                         carry_uk)
    cond_deps = partial_eval_jaxpr(cond_jaxpr, cc_uk + carry_uk)[2][0]
    if cond_deps or all(carry_uk):
        return trace.stage(while_p, list(args), params)
    cconsts, bconsts, carry = split(args, cond_nconsts, body_nconsts)
    known_body = _known_part(body_jaxpr, bc_uk + carry_uk)
    known_cond = _known_part(cond_jaxpr, cc_uk + carry_uk)
    kc = [x for x, u in zip(cconsts, cc_uk) if not u]
    kb = [x for x, u in zip(bconsts, bc_uk) if not u]
    kcarry = [x for x, u in zip(carry, carry_uk) if not u]
    known = iter(trace.bind_known(while_p, [*kc, *kb, *kcarry], dict(
        cond_jaxpr=known_cond, body_jaxpr=known_body, cond_nconsts=len(kc),
        body_nconsts=len(kb))))
    staged = trace.stage(while_p, list(args), params)
    return [s if u else next(known) for s, u in zip(staged, carry_uk)]


def _known_part(closed, unknowns):
    """`closed` restricted to its known inputs and known outputs (no residuals needed)."""
    known, _, out_uk, _ = partial_eval_jaxpr(closed, unknowns)
    n_known = out_uk.count(False)
    return trace_to_jaxpr(lambda *xs: closed_call(known, *xs)[:n_known], known.in_avals)


def _transpose(ctx, cts, *args, **params):
    raise PlugaxError(
        "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop "
        "with dynamic (traced) bounds: the number of iterations is unknown until run "
        "time, so the values to differentiate through cannot be saved. Use lax.scan, or "
        "lax.fori_loop with static (Python int) bounds, which is a scan.")


RULES = [RuleSet(primitive=while_p, impl=_impl, abstract_eval=_abstract_eval, jvp=_jvp,
                 batching=_vmap, partial_eval=_partial_eval, transpose=_transpose)]
