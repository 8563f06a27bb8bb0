"""The primitives a custom_jvp / custom_vjp call becomes when a trace must record it.

They live here, below the interpreters, because the interpreters bind them
(staging records `custom_jvp_call` / `custom_vjp_call`, a JVP trace emits
`custom_lin`); their rules and the user-facing `custom_jvp` / `custom_vjp`
live above, in `plugax.custom_derivatives`, which registers them. So the
interpreters never reach up into the front end that uses them.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ..core import trace as core
from .ad_util import Zero, tangent_aval

__all__ = ["custom_jvp_call_p", "custom_vjp_call_p", "custom_lin_p", "linearize_custom_vjp"]

custom_jvp_call_p = core.Primitive("custom_jvp_call", multiple_results=True)
custom_vjp_call_p = core.Primitive("custom_vjp_call", multiple_results=True)
custom_lin_p = core.Primitive("custom_lin", multiple_results=True)


def linearize_custom_vjp(fwd: Callable, bwd: Callable, primals: Sequence[Any],
                         tangents: Sequence[Any]) -> tuple[list, list]:
    """The jvp of a custom_vjp call, run one level out: primal outputs from `fwd`, and
    output tangents from a `custom_lin` equation whose transpose calls `bwd`.

    Only the tangents that are not symbolic zeros are operands: a zero tangent
    (a constant's, or an integer input's float0) materialised here would be a
    residual of the linear function, and a float0 array cannot reach a compiled
    call. `nonzeros` says which inputs they belong to."""
    outs, res = fwd(*primals)
    out_avals = tuple(tangent_aval(core.get_aval(o)) for o in outs)
    nonzeros = tuple(type(t) is not Zero for t in tangents)
    t_out = custom_lin_p.bind(*res, *[t for t in tangents if type(t) is not Zero],
                              num_res=len(res), bwd=bwd, out_avals=out_avals,
                              nonzeros=nonzeros)
    return list(outs), list(t_out)
