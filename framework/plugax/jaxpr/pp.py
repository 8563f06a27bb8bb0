"""Printing jaxprs exactly as JAX does.

A small Wadler/Lindig-style document printer: a `group` prints on one line if
its flat form fits in the remaining width (80 columns), else its breaks become
newlines. The jaxpr layout on top of it follows JAX's, so printed jaxprs can be
compared with JAX's character for character.
"""
from __future__ import annotations

import itertools
from typing import Any, Iterator, Sequence

__all__ = ["pp_toplevel_jaxpr", "Doc", "text", "brk", "group", "nest", "concat", "join"]

WIDTH = 80


class Doc:
    __slots__ = ()

    def __add__(self, other: "Doc") -> "Doc":
        return Concat([self, other])

    def format(self, width: int = WIDTH) -> str:
        return _format(self, width)


class Text(Doc):
    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


class Concat(Doc):
    __slots__ = ("children",)

    def __init__(self, children: Sequence[Doc]):
        self.children = list(children)


class Brk(Doc):
    __slots__ = ("text",)

    def __init__(self, text: str = " "):
        self.text = text


class Group(Doc):
    __slots__ = ("child",)

    def __init__(self, child: Doc):
        self.child = child


class Nest(Doc):
    __slots__ = ("n", "child")

    def __init__(self, n: int, child: Doc):
        self.n, self.child = n, child


def text(s: str) -> Doc:
    return Text(s)


def brk(s: str = " ") -> Doc:
    return Brk(s)


def group(d: Doc) -> Doc:
    return Group(d)


def nest(n: int, d: Doc) -> Doc:
    return Nest(n, d)


def concat(ds: Sequence[Doc]) -> Doc:
    return Concat(ds)


def join(sep: Doc, ds: Sequence[Doc]) -> Doc:
    ds = list(ds)
    out: list[Doc] = []
    for i, d in enumerate(ds):
        if i:
            out.append(sep)
        out.append(d)
    return Concat(out)


_FLAT, _BREAK = 0, 1


def _fits(doc: Doc, width: int) -> bool:
    """Does `doc`, printed flat, take at most `width` columns? (Only the group itself.)"""
    stack = [doc]
    while stack and width >= 0:
        d = stack.pop()
        if type(d) is Text or type(d) is Brk:
            width -= len(d.text)
        elif type(d) is Concat:
            stack.extend(reversed(d.children))
        else:
            stack.append(d.child)
    return width >= 0


def _format(doc: Doc, width: int) -> str:
    out: list[str] = []
    column = 0
    stack: list[tuple[int, int, Doc]] = [(0, _BREAK, doc)]
    while stack:
        indent, mode, d = stack.pop()
        kind = type(d)
        if kind is Text:
            out.append(d.text)
            column += len(d.text)
        elif kind is Concat:
            stack.extend((indent, mode, c) for c in reversed(d.children))
        elif kind is Brk:
            if mode == _BREAK:
                out.append("\n" + " " * indent)
                column = indent
            else:
                out.append(d.text)
                column += len(d.text)
        elif kind is Nest:
            stack.append((indent + d.n, mode, d.child))
        elif kind is Group:
            flat = mode == _FLAT or _fits(d.child, width - column)
            stack.append((indent, _FLAT if flat else _BREAK, d.child))
    return "".join(out)


# --- jaxprs ------------------------------------------------------------------

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
        from .ir import DropVar, Literal
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
    from .ir import ClosedJaxpr, Jaxpr
    return isinstance(v, (Jaxpr, ClosedJaxpr))


def _pp_param_value(v: Any, ctx: _Context) -> Doc:
    from .ir import ClosedJaxpr
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


def _pp_eqn(eqn: Any, ctx: _Context) -> Doc:
    lhs = _pp_vars(eqn.outvars, ctx, shapes=True)
    rhs = [text(eqn.primitive.name), _pp_params(eqn.params, ctx),
           text(" ") + _pp_vars(eqn.invars, ctx)]
    return concat([lhs, text(" = "), *rhs]) if eqn.outvars else concat(rhs)


def _pp_jaxpr(jaxpr: Any, ctx: _Context) -> Doc:
    constvars = _pp_vars(jaxpr.constvars, ctx, shapes=True)
    invars = _pp_vars(jaxpr.invars, ctx, shapes=True)
    eqns = join(brk("; "), [_pp_eqn(e, ctx) for e in jaxpr.eqns])
    outvars = concat([text("("), _pp_vars(jaxpr.outvars, ctx, separator=","),
                      text(")" if len(jaxpr.outvars) != 1 else ",)")])
    return group(nest(2, concat([
        text("{ lambda "), constvars, text("; "), invars, text(". let"),
        nest(2, brk() + eqns), brk(), text("in "), outvars])) + text(" }"))


def _unused_outvars(jaxpr: Any) -> set:
    from .ir import Var
    used = {id(v) for v in jaxpr.outvars if isinstance(v, Var)}
    unused = set()
    for eqn in reversed(jaxpr.eqns):
        unused.update(id(v) for v in eqn.outvars if id(v) not in used)
        used.update(id(v) for v in eqn.invars if isinstance(v, Var))
    return unused


def pp_toplevel_jaxpr(jaxpr: Any, width: int = WIDTH) -> str:
    """Print a jaxpr; unused top-level eqn outputs print as `_`, as in JAX."""
    return _pp_jaxpr(jaxpr, _Context(_unused_outvars(jaxpr))).format(width)
