"""The jaxpr IR: typed, first-order, in A-normal form.

Invariants (checked by `typecheck_jaxpr`): every Var is bound exactly once
(as a constvar, an invar or an eqn outvar) before it is used; every eqn's
outvar avals equal what the primitive's abstract_eval rule gives for its
inputs; Literals are scalars.
"""
from __future__ import annotations

from typing import Any, NamedTuple, Sequence

import numpy as np

from ..core.avals import ShapedArray, get_aval

__all__ = ["Var", "DropVar", "Literal", "Atom", "JaxprEqn", "Jaxpr", "ClosedJaxpr"]


class Var:
    """A variable of a jaxpr. Identity is the variable: two Vars are never equal."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self) -> str:
        return f"Var({self.aval.str_short()})"


class DropVar(Var):
    """An output binder whose value nobody reads; prints as `_`."""

    __slots__ = ()


class Literal:
    """A scalar constant written inline in an equation."""

    __slots__ = ("val", "aval")

    def __init__(self, val: Any, aval: ShapedArray | None = None):
        self.val = val
        self.aval = aval if aval is not None else get_aval(val)

    def __str__(self) -> str:
        return str(np.asarray(self.val).item())

    def __repr__(self) -> str:
        return f"Literal({self})"


Atom = Var | Literal


class JaxprEqn(NamedTuple):
    """`outvars = primitive[params] invars`."""

    invars: list
    outvars: list
    primitive: Any
    params: dict

    def replace(self, **changes: Any) -> "JaxprEqn":
        return self._replace(**changes)


class Jaxpr:
    """A closed-over-nothing program: `{ lambda constvars ; invars . let eqns in outvars }`."""

    __slots__ = ("constvars", "invars", "eqns", "outvars", "__weakref__")

    def __init__(self, constvars: Sequence[Var], invars: Sequence[Var],
                 eqns: Sequence[JaxprEqn], outvars: Sequence[Atom]):
        self.constvars = list(constvars)
        self.invars = list(invars)
        self.eqns = list(eqns)
        self.outvars = list(outvars)

    @property
    def in_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.invars]

    @property
    def out_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.outvars]

    def __str__(self) -> str:
        from .pp import pp_toplevel_jaxpr
        return pp_toplevel_jaxpr(self)

    __repr__ = __str__


class ClosedJaxpr:
    """A Jaxpr together with the values of its constvars."""

    __slots__ = ("jaxpr", "consts", "__weakref__")

    def __init__(self, jaxpr: Jaxpr, consts: Sequence[Any]):
        if len(consts) != len(jaxpr.constvars):
            raise ValueError(f"ClosedJaxpr: {len(jaxpr.constvars)} constvars but "
                             f"{len(consts)} consts")
        self.jaxpr = jaxpr
        self.consts = list(consts)

    in_avals = property(lambda self: self.jaxpr.in_avals)
    out_avals = property(lambda self: self.jaxpr.out_avals)
    eqns = property(lambda self: self.jaxpr.eqns)

    def __str__(self) -> str:
        return str(self.jaxpr)

    __repr__ = __str__
