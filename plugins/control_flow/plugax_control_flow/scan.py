"""The `scan` primitive: a loop of known length over the leading axis of arrays.

``carry_out, ys = scan[jaxpr length reverse num_consts num_carry ...] *consts *init *xs``
where ``jaxpr: (*consts, *carry, *x) -> (*carry, *y)``. Because the trip count
is static, every iteration's residuals can be stacked, which makes scan the
reverse-differentiable loop: partial evaluation and transpose live in
`scan_ad.py`; evaluation, typing, jvp and vmap here.
"""
from __future__ import annotations

import numpy as np

from plugax.extend import (Primitive, ShapedArray, Zero, batch_jaxpr, broadcast_batched,
                           format_operands, get_aval, jvp_jaxpr, moveaxis, tangent_aval)

from .common import (fixpoint, join_weak, materialize, permute_invars, permute_outvars,
                     run_closed, same_type, split)
from . import eager
from .eager import compiled_loop

__all__ = ["scan_p", "scan_impl", "scan_abstract_eval", "scan_jvp", "scan_vmap"]

scan_p = Primitive("scan", multiple_results=True)


def scan_impl(ctx, *args, jaxpr, length, reverse, num_consts, num_carry, **params):
    # compiled once per signature, as JAX does (eager.py); step by step only where not
    outs = compiled_loop(scan_p, jaxpr, args, dict(
        params, jaxpr=jaxpr, length=length, reverse=reverse, num_consts=num_consts,
        num_carry=num_carry), work=eager.loop_work(length, jaxpr))
    if outs is not None:
        return outs
    return interpret_scan(args, jaxpr, length, reverse, num_consts, num_carry)


def interpret_scan(args, jaxpr, length, reverse, num_consts, num_carry):
    """The per-step interpreter: the body's jaxpr evaluated once per step on NumPy values."""
    consts, carry, xs = split(args, num_consts, num_carry)
    y_avals = jaxpr.out_avals[num_carry:]
    ys = [np.empty((length, *a.shape), a.dtype) for a in y_avals]
    for step in range(length):
        i = length - 1 - step if reverse else step
        outs = run_closed(jaxpr, *consts, *carry, *[x[i] for x in xs])
        carry = outs[:num_carry]
        for y, out in zip(ys, outs[num_carry:]):
            y[i] = out
    return [*carry, *ys]


def scan_abstract_eval(ctx, *avals, jaxpr, length, num_consts, num_carry, linear, **_):
    consts, carry, xs = split(avals, num_consts, num_carry)
    if len(linear) != len(avals):
        raise TypeError(f"scan: linear has {len(linear)} entries for {len(avals)} operands")
    bad_xs = [x for x in xs if not x.shape or x.shape[0] != length]
    if bad_xs:
        raise TypeError(f"scan: every scanned operand needs a leading axis of length "
                        f"{length}, got ({format_operands(bad_xs)})")
    x_avals = [ShapedArray(x.shape[1:], x.dtype, x.weak_type) for x in xs]
    ins = [*consts, *carry, *x_avals]
    if len(jaxpr.in_avals) != len(ins) or not all(map(same_type, jaxpr.in_avals, ins)):
        raise TypeError(f"scan: the body takes ({format_operands(jaxpr.in_avals)}) but gets "
                        f"({format_operands(ins)}) (consts, carry, slices of xs)")
    carry_out, ys = jaxpr.out_avals[:num_carry], jaxpr.out_avals[num_carry:]
    if len(carry_out) != len(carry) or not all(map(same_type, carry_out, carry)):
        raise TypeError(f"scan: the body returns a carry of ({format_operands(carry_out)}) for an "
                        f"input carry of ({format_operands(carry)})")
    stacked = [ShapedArray((length, *y.shape), y.dtype, y.weak_type) for y in ys]
    return [*join_weak(carry, carry_out), *stacked]



def _params(params: dict, **changes) -> dict:
    return {**params, **changes}


# --- jvp -------------------------------------------------------------------------------
def scan_jvp(ctx, primals, tangents, **params):
    jaxpr, nc, ncar = params["jaxpr"], params["num_consts"], params["num_carry"]
    consts, carry, xs = split(primals, nc, ncar)
    ct, carry_t, xs_t = split(tangents, nc, ncar)
    const_nz, xs_nz = [_nz(t) for t in ct], [_nz(t) for t in xs_t]
    n_ys = len(jaxpr.out_avals) - ncar

    def carry_out_nz(nz):
        return jvp_jaxpr(jaxpr, const_nz + nz + xs_nz, nz + [False] * n_ys)[1][:ncar]
    carry_nz = fixpoint(carry_out_nz, [_nz(t) for t in carry_t])
    body, out_nz = jvp_jaxpr(jaxpr, const_nz + carry_nz + xs_nz, carry_nz + [False] * n_ys)
    ys_nz = out_nz[ncar:]
    # jvp order: [consts, carry, xs, const_t, carry_t, xs_t] -> [carry, ys, carry_t, ys_t];
    # scan order: [consts, const_t, carry, carry_t, xs, xs_t] -> [carry, carry_t, ys, ys_t].
    n_in = [nc, ncar, len(xs), sum(const_nz), sum(carry_nz), sum(xs_nz)]
    starts = np.cumsum([0, *n_in])
    order = [r for k in (0, 3, 1, 4, 2, 5) for r in range(starts[k], starts[k + 1])]
    n_out = [ncar, n_ys, sum(carry_nz), sum(ys_nz)]
    ostarts = np.cumsum([0, *n_out])
    oorder = [r for k in (0, 2, 1, 3) for r in range(ostarts[k], ostarts[k + 1])]
    body = permute_outvars(permute_invars(body, order), oorder)
    new_ct = [t for t in ct if _nz(t)]
    new_carry_t = [materialize(t) for t, nz in zip(carry_t, carry_nz) if nz]
    new_xs_t = [t for t in xs_t if _nz(t)]
    args = [*consts, *new_ct, *carry, *new_carry_t, *xs, *new_xs_t]
    linear = (*params["linear"][:nc], *[True] * len(new_ct),
              *params["linear"][nc:nc + ncar], *[True] * len(new_carry_t),
              *params["linear"][nc + ncar:], *[True] * len(new_xs_t))
    outs = scan_p.bind(*args, **_params(params, jaxpr=body, num_consts=nc + len(new_ct),
                                        num_carry=ncar + len(new_carry_t), linear=linear))
    carry_out, carry_t_out, ys, ys_t = split(outs, ncar, len(new_carry_t), n_ys)
    out_avals = scan_abstract_eval(None, *[get_aval(x) for x in primals], **params)
    nz_iter = iter([*carry_t_out, *ys_t])
    tangents_out = [next(nz_iter) if nz else Zero(tangent_aval(a))
                    for nz, a in zip(carry_nz + ys_nz, out_avals)]
    return [*carry_out, *ys], tangents_out


def _nz(t) -> bool:
    return type(t) is not Zero


# --- vmap ------------------------------------------------------------------------------
def scan_vmap(ctx, args, dims, **params):
    """Consts and carries batched at axis 0, scanned operands at axis 1 (0 is the loop)."""
    size = ctx.axis_size
    jaxpr, nc, ncar = params["jaxpr"], params["num_consts"], params["num_carry"]
    const_d, carry_d, xs_d = split(dims, nc, ncar)
    const_b, xs_b = [d is not None for d in const_d], [d is not None for d in xs_d]
    n_ys = len(jaxpr.out_avals) - ncar

    def carry_out_b(b):
        return batch_jaxpr(jaxpr, size, const_b + b + xs_b, b + [False] * n_ys)[1][:ncar]
    carry_b = fixpoint(carry_out_b, [d is not None for d in carry_d])
    body, out_b = batch_jaxpr(jaxpr, size, const_b + carry_b + xs_b, carry_b + [False] * n_ys)
    consts, carry, xs = split(args, nc, ncar)
    consts = [x if d is None else moveaxis(x, d, 0) for x, d in zip(consts, const_d)]
    carry = [_at(x, d, 0, size) if b else x for x, d, b in zip(carry, carry_d, carry_b)]
    xs = [x if d is None else moveaxis(x, d, 1) for x, d in zip(xs, xs_d)]
    outs = scan_p.bind(*consts, *carry, *xs, **_params(params, jaxpr=body))
    return outs, [*[0 if b else None for b in carry_b],
                  *[1 if b else None for b in out_b[ncar:]]]


def _at(x, d, dst, size):
    return broadcast_batched(x, size, dst) if d is None else moveaxis(x, d, dst)
