"""Type-checking jaxprs: the IR's invariants, verified (tests run it on every jaxpr)."""
from __future__ import annotations

from typing import Any, NamedTuple

from ..core.avals import ShapedArray
from ..core.rules import ABSTRACT_EVAL_CTX, abstract_eval_rules, missing_rule
from ..errors import PlugaxError, ShapeError
from .ir import ClosedJaxpr, Jaxpr, Literal, Var

__all__ = ["JaxprTypeError", "JaxprType", "typecheck_jaxpr", "check_call_operands"]


class JaxprTypeError(PlugaxError, TypeError):
    """A jaxpr violates an invariant of the IR."""


class JaxprType(NamedTuple):
    in_types: list
    out_types: list

    def __repr__(self) -> str:
        ins = ", ".join(a.str_short() for a in self.in_types)
        outs = ", ".join(a.str_short() for a in self.out_types)
        return f"({ins}) -> ({outs})"


def _same_type(a: ShapedArray, b: ShapedArray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype


def check_call_operands(what: str, closed: ClosedJaxpr, avals: Any) -> None:
    """Raise a ShapeError unless `avals` fit the inputs of the jaxpr a call-like
    primitive runs (same shapes and dtypes; weak types may differ).

    The abstract_eval rule of such a primitive (pjit, custom_jvp_call) answers
    with the jaxpr's output types; without this check it would also accept
    operands the jaxpr cannot take, which only evaluation would then reject.
    `what` names the call in the message, e.g. "primitive 'pjit' (inner)"."""
    expected = closed.in_avals
    if len(avals) == len(expected) and all(map(_same_type, avals, expected)):
        return
    raise ShapeError(f"{what} runs a jaxpr taking "
                     f"({', '.join(a.str_short() for a in expected)}) but got operands "
                     f"({', '.join(a.str_short() for a in avals)})")


def typecheck_jaxpr(jaxpr: Jaxpr | ClosedJaxpr) -> JaxprType:
    """Check binding, single assignment and eqn types; return the jaxpr's type."""
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr = jaxpr.jaxpr
    env: set[int] = set()

    def bind_var(v: Var, where: str) -> None:
        if not isinstance(v, Var):
            raise JaxprTypeError(f"{where}: binder {v!r} is not a Var")
        if id(v) in env:
            raise JaxprTypeError(f"{where}: variable {v!r} is bound twice")
        env.add(id(v))

    def read(x: Any, where: str) -> ShapedArray:
        if isinstance(x, Literal):
            if x.aval.shape != ():
                raise JaxprTypeError(f"{where}: literal {x} is not a scalar")
            return x.aval
        if id(x) not in env:
            raise JaxprTypeError(f"{where}: variable {x!r} is used before it is bound")
        return x.aval

    for v in jaxpr.constvars + jaxpr.invars:
        bind_var(v, "binders")
    for i, eqn in enumerate(jaxpr.eqns):
        where = f"equation {i} ({eqn.primitive})"
        in_avals = [read(x, where) for x in eqn.invars]
        rule = abstract_eval_rules.get(eqn.primitive)
        if rule is None:
            raise missing_rule(eqn.primitive, "abstract_eval", "typecheck_jaxpr")
        out = rule(ABSTRACT_EVAL_CTX, *in_avals, **eqn.params)
        out = out if eqn.primitive.multiple_results else [out]
        if len(out) != len(eqn.outvars):
            raise JaxprTypeError(f"{where}: {len(eqn.outvars)} outvars for {len(out)} results")
        for v, aval in zip(eqn.outvars, out):
            if not _same_type(v.aval, aval):
                raise JaxprTypeError(f"{where}: outvar has type {v.aval.str_short()} but the "
                                     f"primitive produces {aval.str_short()}")
            bind_var(v, where)
    out_types = [read(x, "outvars") for x in jaxpr.outvars]
    return JaxprType([v.aval for v in jaxpr.invars], out_types)
