"""Reverse mode for `scan`: partial evaluation and transposition.

Partial evaluation splits the body into a known scan (run now) and an unknown
scan (staged). Which carries are unknown is a fixpoint: a carry is unknown if
its initial value is, or if the body makes it depend on something unknown.
Every value the unknown body needs from the known one (a residual) is
returned by the known scan as an extra stacked output, one slice per
iteration, and fed to the unknown scan as an extra scanned operand, except
residuals that are known consts or scanned operands themselves: those are
passed to the unknown scan as they are (a const stays a const).

Transposition runs the loop backwards: a scan in the opposite direction over
the transposed body, whose carry holds the carries' cotangents and running
sums of the consts' cotangents, and whose outputs are the cotangents of the
scanned operands.
"""
from __future__ import annotations

from plugax.extend import (ClosedJaxpr, Jaxpr, ShapedArray, add_tangents,
                           get_aval, is_undefined_primal, partial_eval_jaxpr,
                           tangent_aval, trace_to_jaxpr, transpose_jaxpr)

from .common import closed_call, fixpoint, materialize, permute_invars, split, zeros_of
from .scan import scan_p

__all__ = ["scan_partial_eval", "scan_transpose"]


# --- partial evaluation ----------------------------------------------------------------
def scan_partial_eval(ctx, trace, *args, **params):
    jaxpr, nc, ncar = params["jaxpr"], params["num_consts"], params["num_carry"]
    n_ys = len(jaxpr.out_avals) - ncar
    const_uk, carry_uk, xs_uk = split([trace.is_unknown(x) for x in args], nc, ncar)

    def split_body(uk):
        return partial_eval_jaxpr(jaxpr, const_uk + uk + xs_uk, uk + [False] * n_ys)
    carry_uk = fixpoint(lambda uk: split_body(uk)[2][:ncar], carry_uk)
    known, unknown, out_uk, num_res = split_body(carry_uk)
    unknowns = const_uk + carry_uk + xs_uk
    if all(unknowns):
        return trace.stage(scan_p, list(args), params)
    consts, carry, xs = split(args, nc, ncar)
    k_consts, k_carry, k_xs = ([x for x, u in zip(group, uk) if not u]
                               for group, uk in ((consts, const_uk), (carry, carry_uk),
                                                 (xs, xs_uk)))
    n_known = out_uk.count(False)
    sources = _residual_sources(known, n_known, len(k_consts), len(k_carry))
    known_outs = trace.bind_known(scan_p, [*k_consts, *k_carry, *k_xs], {
        **params, "jaxpr": _without_forwarded(known, n_known, sources),
        "num_consts": len(k_consts), "num_carry": len(k_carry),
        "linear": (False,) * (len(k_consts) + len(k_carry) + len(k_xs))})
    known_vals, computed = known_outs[:n_known], iter(known_outs[n_known:])
    if not any(out_uk):
        return known_vals
    u_consts, u_carry, u_xs = ([x for x, u in zip(group, uk) if u]
                               for group, uk in ((consts, const_uk), (carry, carry_uk),
                                                 (xs, xs_uk)))
    const_res = [r for r, src in enumerate(sources) if src[0] == "const"]
    stacked_res = [r for r, src in enumerate(sources) if src[0] != "const"]
    n_before = len(u_consts) + len(u_carry)
    body = permute_invars(unknown, [*const_res, *range(num_res, num_res + n_before),
                                    *stacked_res,
                                    *range(num_res + n_before, len(unknown.in_avals))])
    res_consts = [k_consts[sources[r][1]] for r in const_res]
    res_xs = [k_xs[sources[r][1]] if sources[r][0] == "xs" else next(computed)
              for r in stacked_res]
    staged_args = [*res_consts, *u_consts, *u_carry, *res_xs, *u_xs]
    staged = trace.stage(scan_p, staged_args, {
        **params, "jaxpr": body, "num_consts": len(res_consts) + len(u_consts),
        "num_carry": len(u_carry), "linear": (False,) * len(staged_args)})
    known_iter, staged_iter = iter(known_vals), iter(staged)
    return [next(staged_iter) if u else next(known_iter) for u in out_uk]


def _residual_sources(known: ClosedJaxpr, n_known: int, n_consts: int, n_carry: int) -> list:
    """Where each residual comes from: ("const", k) or ("xs", k) when the known body just
    forwards its k-th known const or scanned operand, else ("computed", None).

    A forwarded const is loop-invariant: the unknown scan takes it as a const
    instead of a stack of `length` copies; a forwarded scanned operand is
    passed as it is instead of being re-stacked.
    """
    position = {id(v): k for k, v in enumerate(known.jaxpr.invars)}
    sources = []
    for v in known.jaxpr.outvars[n_known:]:
        k = position.get(id(v))
        if k is not None and k < n_consts:
            sources.append(("const", k))
        elif k is not None and k >= n_consts + n_carry:
            sources.append(("xs", k - n_consts - n_carry))
        else:
            sources.append(("computed", None))
    return sources


def _without_forwarded(known: ClosedJaxpr, n_known: int, sources: list) -> ClosedJaxpr:
    """The known body returning only the residuals it computes."""
    j = known.jaxpr
    outvars = [*j.outvars[:n_known], *[v for v, src in zip(j.outvars[n_known:], sources)
                                       if src[0] == "computed"]]
    return ClosedJaxpr(Jaxpr(j.constvars, j.invars, j.eqns, outvars), known.consts)


# --- transpose -------------------------------------------------------------------------
def scan_transpose(ctx, cts, *args, **params):
    """Cotangents of a scan linear in its UndefPrimal consts and xs and in its carries.

    Carries are treated as linear whatever they are (a tangent carry may start
    as known zeros); non-UndefPrimal consts and xs are residuals.
    """
    jaxpr, nc, ncar = params["jaxpr"], params["num_consts"], params["num_carry"]
    consts, carry, xs = split(args, nc, ncar)
    const_lin = [is_undefined_primal(x) for x in consts]
    xs_lin = [is_undefined_primal(x) for x in xs]
    res_consts = [x for x, lin in zip(consts, const_lin) if not lin]
    res_xs = [x for x, lin in zip(xs, xs_lin) if not lin]
    lin_const_avals = [tangent_aval(x.aval) for x in consts if is_undefined_primal(x)]
    ct_body = transpose_jaxpr(jaxpr, const_lin + [True] * ncar + xs_lin)
    cts = [materialize(ct) for ct in cts]
    ct_carry, ct_ys = cts[:ncar], cts[ncar:]
    body = _transposed_body(ct_body, res_consts, res_xs, lin_const_avals, ct_carry, ct_ys)
    acc = [zeros_of(a) for a in lin_const_avals]
    n_in = len(res_consts) + len(acc) + ncar + len(ct_ys) + len(res_xs)
    outs = scan_p.bind(*res_consts, *acc, *ct_carry, *ct_ys, *res_xs, **{
        **params, "jaxpr": body, "num_consts": len(res_consts),
        "num_carry": len(acc) + ncar, "reverse": not params["reverse"],
        "linear": (False,) * n_in})
    ct_consts, ct_init, ct_xs = split(outs, len(acc), ncar)
    ct_consts, ct_xs = iter(ct_consts), iter(ct_xs)
    return [*[next(ct_consts) if lin else None for lin in const_lin],
            *[ct if is_undefined_primal(x) else None for x, ct in zip(carry, ct_init)],
            *[next(ct_xs) if lin else None for lin in xs_lin]]


def _transposed_body(ct_body, res_consts, res_xs, lin_const_avals, ct_carry, ct_ys):
    """(res_consts; acc, ct_carry; ct_y, res_x) -> (acc + ct_consts, ct_carry_in; ct_x)."""
    n_rc, n_acc, n_car, n_y = len(res_consts), len(lin_const_avals), len(ct_carry), len(ct_ys)

    def body(*args):
        rc, acc, ctc, cty, rx = split(args, n_rc, n_acc, n_car, n_y)
        outs = closed_call(ct_body, *rc, *rx, *ctc, *cty)
        ct_lc, ct_carry_in, ct_x = split(outs, n_acc, n_car)
        return [*[add_tangents(a, c) for a, c in zip(acc, ct_lc)], *ct_carry_in, *ct_x]

    avals = [*map(get_aval, res_consts), *lin_const_avals, *map(get_aval, ct_carry),
             *[_unstacked(get_aval(y)) for y in ct_ys], *[_unstacked(get_aval(x)) for x in res_xs]]
    return trace_to_jaxpr(body, avals)


def _unstacked(aval: ShapedArray) -> ShapedArray:
    return ShapedArray(aval.shape[1:], aval.dtype, aval.weak_type)
