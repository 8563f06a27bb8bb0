"""Running a jaxpr by binding its equations under the current trace.

Because it uses `bind`, this interpreter is itself traceable: evaluating a
jaxpr under jvp, vmap or another jaxpr trace transforms it.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from .ir import ClosedJaxpr, Jaxpr, Literal

__all__ = ["eval_jaxpr", "jaxpr_as_fun"]


def eval_jaxpr(jaxpr: Jaxpr, consts: Sequence[Any], *args: Any) -> list:
    if len(args) != len(jaxpr.invars):
        raise TypeError(f"eval_jaxpr: the jaxpr takes {len(jaxpr.invars)} arguments, "
                        f"got {len(args)}")
    env: dict[int, Any] = {}

    def read(x: Any) -> Any:
        return x.val if type(x) is Literal else env[id(x)]

    for v, val in zip(jaxpr.constvars, consts):
        env[id(v)] = val
    for v, val in zip(jaxpr.invars, args):
        env[id(v)] = val
    for eqn in jaxpr.eqns:
        outs = eqn.primitive.bind(*[read(x) for x in eqn.invars], **eqn.params)
        if not eqn.primitive.multiple_results:
            outs = [outs]
        for v, val in zip(eqn.outvars, outs):
            env[id(v)] = val
    return [read(x) for x in jaxpr.outvars]


def jaxpr_as_fun(closed: ClosedJaxpr) -> Callable[..., list]:
    return lambda *args: eval_jaxpr(closed.jaxpr, closed.consts, *args)
