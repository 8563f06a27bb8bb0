"""check_vjp: the dot-product test of a `vjp` rule against the jvp rule.

Why against the jvp rule: a vjp rule is an optional fast path of reverse mode at
the top level (the VJP tape); the general path transposes the jvp. The two must
agree, and <ct, J t> == sum_i <vjp(ct)_i, t_i> (J t from the jvp rule, random
tangents t and cotangent ct) holds only if the vjp's backward function is the
transpose of that jvp. The primal outputs must agree too. Computed in float64.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..core.array import Array
from ..core.avals import get_aval
from ..core.rules import JVP_CTX, VJP_CTX, jvp_rules, vjp_rules
from ..core.trace import Primitive
from ..interpreters.ad_util import Zero, instantiate
from .failures import VJPMismatch, fail
from .transpose import _dot, _random_like, _show
from .values import Target, is_differentiable, to_float64, x64

__all__ = ["check_vjp"]


def check_vjp(prim: Primitive, *args: Any, argnums: Sequence[int] | int | None = None,
              rtol: float = 1e-6, atol: float = 1e-9, seed: int = 0, **params: Any) -> None:
    """Assert that `prim`'s vjp rule gives the jvp rule's primal output and pulls back
    cotangents as the jvp's transpose: <ct, jvp(t)> == sum_i <vjp(ct)_i, t_i>, for
    random tangents of the operands in `argnums` (default: every floating one)."""
    target = Target(prim, params)
    with x64():
        xs = [to_float64(a) for a in args]
        nums = _argnums(argnums, xs)
        report = lambda what, details: fail(VJPMismatch, target.name, what, xs, params,
                                            details)
        rule, jvp = vjp_rules.get(prim), jvp_rules.get(prim)
        if rule is None or jvp is None:
            report("a vjp rule is checked against the jvp rule; both must be registered",
                   f"vjp: {rule is not None}, jvp: {jvp is not None}")
        rng = np.random.default_rng(seed)
        tangents = [Array(_random_like(rng, np.asarray(x))) if i in nums
                    else Zero.from_value(x) for i, x in enumerate(xs)]
        want_out, t_out = jvp(JVP_CTX, xs, tangents, **params)
        out, backward = rule(VJP_CTX, xs, [i in nums for i in range(len(xs))], **params)
        _same_outputs(report, prim, out, want_out)
        outs = list(out) if prim.multiple_results else [out]
        t_outs = list(t_out) if prim.multiple_results else [t_out]
        cts = [Array(_random_like(rng, np.asarray(o))) for o in outs]
        lhs = sum(_dot(c, instantiate(t)) for c, t in zip(cts, t_outs) if type(t) is not Zero)
        if backward is None:
            if lhs != 0:
                report("the vjp rule says no cotangent flows back, but the jvp's tangent "
                       "is not zero", f"<ct, jvp(t)> = {lhs:.10g}")
            return
        cts_in = backward(cts if prim.multiple_results else cts[0])
        if not isinstance(cts_in, (list, tuple)) or len(cts_in) != len(xs):
            report("backward must return a list with one entry per operand", f"got {cts_in!r}")
        rhs = 0.0
        for i in nums:
            c = cts_in[i]
            if c is None or type(c) is Zero:
                continue
            got, want = get_aval(c), get_aval(tangents[i])
            if got.shape != want.shape or got.dtype != want.dtype:
                report(f"cotangent of x{i} has the wrong type",
                       f"got {got.str_short()}, the tangent is {want.str_short()}")
            rhs += _dot(c, tangents[i])
        err, scale = abs(lhs - rhs), max(abs(lhs), abs(rhs))
        if err > atol + rtol * scale:
            report("backward is not the transpose of the jvp",
                   f"<ct, jvp(t)> = {lhs:.10g} but <vjp(ct), t> = {rhs:.10g}: abs error "
                   f"{err:.3g} (rtol={rtol:g}, atol={atol:g}; random t and ct, seeded; "
                   f"ct is {', '.join(_show(c) for c in cts)})")


def _argnums(argnums: Sequence[int] | int | None, xs: list) -> list[int]:
    if argnums is None:
        return [i for i, x in enumerate(xs) if is_differentiable(x)]
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    return sorted({i % len(xs) for i in nums})


def _same_outputs(report: Any, prim: Primitive, out: Any, want: Any) -> None:
    outs = list(out) if prim.multiple_results else [out]
    wants = list(want) if prim.multiple_results else [want]
    for o, w in zip(outs, wants):
        if get_aval(o) != get_aval(w) or not np.array_equal(np.asarray(o), np.asarray(w),
                                                           equal_nan=True):
            report("its primal output differs from the jvp rule's",
                   f"got {_show(o)}, the jvp rule gives {_show(w)}")
