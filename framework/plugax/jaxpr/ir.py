"""The jaxpr IR: typed, first-order, in A-normal form.

Invariants (checked by `typecheck_jaxpr`): every Var is bound exactly once
(as a constvar, an invar or an eqn outvar) before it is used; every eqn's
outvar avals equal what the primitive's abstract_eval rule gives for its
inputs; Literals are scalars.

A jaxpr prints as JAX prints it (`str(jaxpr)`), character for character: the
layout is at the end of this module, written with the document printer of
`pp.py`, which knows nothing of jaxprs.
"""
from __future__ import annotations

import itertools
from typing import Any, Iterator, NamedTuple, Sequence

import numpy as np

from ..core.avals import ShapedArray, get_aval
from .pp import WIDTH, Doc, brk, concat, group, join, nest, text

__all__ = ["Var", "DropVar", "Literal", "Atom", "JaxprEqn", "Jaxpr", "ClosedJaxpr",
           "close_over_nothing", "pp_toplevel_jaxpr"]


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


def close_over_nothing(jaxpr: Jaxpr) -> Jaxpr:
    """The same program with its constvars turned into leading invars.

    Staging a call (custom_jvp/vjp, scan, cond bodies) hoists closed-over
    values to constvars; a primitive's params must hold a jaxpr that closes
    over nothing, with those values passed as ordinary operands instead."""
    return Jaxpr([], [*jaxpr.constvars, *jaxpr.invars], jaxpr.eqns, jaxpr.outvars)


# --- printing: JAX's jaxpr layout on the document printer of pp.py -------------

def _names() -> Iterator[str]:
    for n in itertools.count():
        s = ""
        while not s or n:
            n, i = divmod(n, 26)
            s = chr(97 + i) + s
        yield s


class _Context:
    """Variable names, globally unique across nested jaxprs, assigned in print order."""

    def __init__(self, drop: set):
        self.fresh = _names()
        self.names: dict[int, str] = {}
        self.drop = drop

    def name(self, v: Any) -> str:
        if isinstance(v, Literal):
            return str(v)
        if isinstance(v, DropVar) or id(v) in self.drop:
            return "_"
        name = self.names.get(id(v))
        if name is None:
            name = self.names[id(v)] = next(self.fresh)
        return name


def _pp_vars(vs: Sequence[Any], ctx: _Context, separator: str = "",
             shapes: bool = False) -> Doc:
    items = [text(ctx.name(v) + (":" + v.aval.str_short() if shapes else "")) for v in vs]
    return nest(2, group(join(text(separator) + group(brk()), items)))


def _is_jaxpr(v: Any) -> bool:
    return isinstance(v, (Jaxpr, ClosedJaxpr))


def _pp_param_value(v: Any, ctx: _Context) -> Doc:
    if type(v) is tuple and v and all(_is_jaxpr(j) for j in v):
        docs = [_pp_jaxpr(j.jaxpr if isinstance(j, ClosedJaxpr) else j, ctx) for j in v]
        return group(concat([nest(2, concat([text("("), brk(""), join(brk(), docs)])),
                             brk(""), text(")")]))
    if _is_jaxpr(v):
        return _pp_jaxpr(v.jaxpr if isinstance(v, ClosedJaxpr) else v, ctx)
    return text(str(v))


def _pp_params(params: dict, ctx: _Context) -> Doc:
    if not params:
        return concat([])
    keys = sorted(params, key=lambda k: (k != "name", k))  # a call's name first, as JAX
    pairs = [text(f"{k}=") + _pp_param_value(params[k], ctx) for k in keys]
    return group(concat([nest(2, concat([text("["), brk(""), join(brk(), pairs)])),
                         brk(""), text("]")]))


def _pp_eqn(eqn: JaxprEqn, ctx: _Context) -> Doc:
    lhs = _pp_vars(eqn.outvars, ctx, shapes=True)
    rhs = [text(eqn.primitive.name), _pp_params(eqn.params, ctx),
           text(" ") + _pp_vars(eqn.invars, ctx)]
    return concat([lhs, text(" = "), *rhs]) if eqn.outvars else concat(rhs)


def _pp_jaxpr(jaxpr: Jaxpr, ctx: _Context) -> Doc:
    constvars = _pp_vars(jaxpr.constvars, ctx, shapes=True)
    invars = _pp_vars(jaxpr.invars, ctx, shapes=True)
    eqns = join(brk("; "), [_pp_eqn(e, ctx) for e in jaxpr.eqns])
    outvars = concat([text("("), _pp_vars(jaxpr.outvars, ctx, separator=","),
                      text(")" if len(jaxpr.outvars) != 1 else ",)")])
    return group(nest(2, concat([
        text("{ lambda "), constvars, text("; "), invars, text(". let"),
        nest(2, brk() + eqns), brk(), text("in "), outvars])) + text(" }"))


def _unused_outvars(jaxpr: Jaxpr) -> set:
    used = {id(v) for v in jaxpr.outvars if isinstance(v, Var)}
    unused = set()
    for eqn in reversed(jaxpr.eqns):
        unused.update(id(v) for v in eqn.outvars if id(v) not in used)
        used.update(id(v) for v in eqn.invars if isinstance(v, Var))
    return unused


def pp_toplevel_jaxpr(jaxpr: Jaxpr, width: int = WIDTH) -> str:
    """Print a jaxpr; unused top-level eqn outputs print as `_`, as in JAX."""
    return _pp_jaxpr(jaxpr, _Context(_unused_outvars(jaxpr))).format(width)
