"""A small Wadler/Lindig-style document printer, the one jaxprs print with.

A `group` prints on one line if its flat form fits in the remaining width (80
columns), else its breaks become newlines. It knows nothing of jaxprs: the
jaxpr layout on top of it lives with the IR (`ir.py`, as in JAX's core), so
the IR prints itself without a printer module that imports the IR back.
"""
from __future__ import annotations

from typing import Sequence

__all__ = ["Doc", "text", "brk", "group", "nest", "concat", "join", "WIDTH"]

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
