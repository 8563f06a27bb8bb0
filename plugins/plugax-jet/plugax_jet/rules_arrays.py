"""Jet rules for the shape, reductions and dot families' primitives.

Every structural op is linear in its array operand (indices and predicates
stay at their primal), so it applies to each term; a sum too. A max picks a
location from the primal and follows that element's series. dot_general is
bilinear: the Cauchy product of the two series, with dot_general as the
product. Primitives without a cheap recurrence (products and running
extrema) get their rule from their jvp rule (`rule_from_jvp`).
"""
from __future__ import annotations

from typing import Callable

import plugax.numpy as pnp
from plugax.extend import Primitive

from .generic import bilinear_rule, linear_rule, rule_from_jvp, zero_rule

__all__ = ["MAKERS"]


def _chooser(prim: Primitive):
    """reduce_max / reduce_min: the mean of the series over the positions equal to
    the result (one position unless there are ties), as the jvp rule does."""
    def rule(ctx, primals, series, *, axes):
        (x,) = primals
        out = prim.bind(x, axes=axes)
        mask = x == pnp.expand_dims(out, tuple(axes))
        count = pnp.sum(mask, axis=tuple(axes)).astype(out.dtype)
        return out, [pnp.sum(pnp.where(mask, t, 0), axis=tuple(axes)).astype(out.dtype) / count
                     for t in series[0]]
    return rule


STRUCTURAL = ("broadcast_in_dim", "reshape", "transpose", "squeeze", "expand_dims", "rev",
              "slice", "pad", "concatenate", "split", "dynamic_slice", "dynamic_update_slice", "gather",
              "scatter-add", "copy")

MAKERS: dict[str, Callable[[Primitive], Callable]] = {
    **{name: linear_rule for name in (*STRUCTURAL, "reduce_sum", "cumsum")},
    # stop_gradient: no series flows through it (JAX's jet: defzero(stop_gradient_p));
    # logsumexp and softmax subtract a stop_gradient'ed max, which cancels exactly
    **{name: zero_rule for name in ("argmax", "argmin", "reduce_and", "reduce_or",
                                    "stop_gradient")},
    "reduce_max": _chooser,
    "reduce_min": _chooser,
    **{name: rule_from_jvp for name in ("reduce_prod", "cumprod", "cummax", "cummin")},
    "dot_general": bilinear_rule,
}
