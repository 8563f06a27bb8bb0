"""Pytrees: nested containers whose leaves are arrays.

Transformations work on flat lists of arrays; pytrees let users pass tuples,
lists, dicts, namedtuples and their own registered types instead. Flattening
gives the leaves plus a `PyTreeDef` that can rebuild the container.
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, Hashable, Iterable, NamedTuple, Sequence

import numpy as np

from ..core.array import Array

__all__ = ["PyTreeDef", "register_pytree_node", "register_dataclass", "tree_flatten",
           "tree_unflatten", "tree_map", "tree_leaves", "tree_structure", "treedef_is_leaf",
           "flatten_prefix", "all_leaves"]


class NodeType(NamedTuple):
    name: str
    to_iterable: Callable[[Any], tuple[Hashable, Iterable[Any]]]
    from_iterable: Callable[[Hashable, Iterable[Any]], Any]


_node_types: dict[type, NodeType] = {}


def register_pytree_node(ty: type, flatten: Callable, unflatten: Callable) -> None:
    """`flatten(x) -> (children, aux)`, `unflatten(aux, children) -> x` (JAX's order)."""
    _node_types[ty] = NodeType(ty.__qualname__,
                               lambda x: _swap(flatten(x)), unflatten)


def _swap(pair: tuple) -> tuple:
    children, aux = pair
    return aux, children


def register_dataclass(cls: type, data_fields: Sequence[str] | None = None,
                       meta_fields: Sequence[str] | None = None) -> type:
    """Register a dataclass: `data_fields` are children, `meta_fields` static metadata."""
    if data_fields is None:   # infer: fields marked static (plugax.tree.static) are metadata
        fields = [f for f in dataclasses.fields(cls) if f.init]
        if meta_fields is None:
            meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
        data_fields = [f.name for f in fields if f.name not in meta_fields]
    meta_fields, data_fields = tuple(meta_fields or ()), tuple(data_fields)

    def flatten(x: Any) -> tuple:
        return [getattr(x, n) for n in data_fields], tuple(getattr(x, n) for n in meta_fields)

    def unflatten(meta: tuple, children: Iterable[Any]) -> Any:
        kwargs = dict(zip(meta_fields, meta))
        kwargs.update(zip(data_fields, children))
        return cls(**kwargs)

    register_pytree_node(cls, flatten, unflatten)
    _dataclass_fields[cls] = data_fields
    return cls


# dataclass -> its data fields, so that key paths name them (paths.py)
_dataclass_fields: dict[type, tuple] = {}


class PyTreeDef:
    """The structure of a pytree: a node type, its static metadata, and children."""

    __slots__ = ("node", "meta", "subtrees", "num_leaves", "_hash")

    def __init__(self, node: NodeType | None, meta: Hashable, subtrees: tuple,
                 num_leaves: int | None = None):
        self.node, self.meta, self.subtrees = node, meta, subtrees
        if num_leaves is None:   # flattening knows it already and passes it
            num_leaves = 1 if node is None else sum(c.num_leaves for c in subtrees)
        self.num_leaves = num_leaves
        self._hash = None

    def __eq__(self, other: object) -> bool:
        return (type(other) is PyTreeDef and self.node == other.node
                and self.meta == other.meta and self.subtrees == other.subtrees)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash((self.node and self.node.name, _hashable(self.meta),
                               self.subtrees))
        return self._hash

    def __repr__(self) -> str:
        return f"PyTreeDef({self._show()})"

    # JAX's PyTreeDef methods, for programs that call them
    @property
    def num_nodes(self) -> int:
        return 1 + sum(c.num_nodes for c in self.subtrees)

    def children(self) -> list["PyTreeDef"]:
        return list(self.subtrees)

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        return tree_unflatten(self, leaves)

    def flatten_up_to(self, tree: Any) -> list:
        return flatten_up_to(self, tree)

    def node_data(self) -> tuple | None:
        return None if self.node is None else (self.node, self.meta)

    def _show(self) -> str:
        if self.node is None:
            return "*"
        inner = ", ".join(c._show() for c in self.subtrees)
        if self.node is _NONE_NODE:
            return "None"
        if self.node.name == "tuple":
            return f"({inner}{',' if len(self.subtrees) == 1 else ''})"
        if self.node.name == "list":
            return f"[{inner}]"
        if self.node.name == "dict":
            return "{" + ", ".join(f"{k!r}: {c._show()}"
                                   for k, c in zip(self.meta, self.subtrees)) + "}"
        return f"{self.node.name}({inner})"


def _hashable(meta: Any) -> Any:
    try:
        hash(meta)
        return meta
    except TypeError:
        return repr(meta)


_LEAF = PyTreeDef(None, None, ())
_NONE_NODE = NodeType("None", lambda x: (None, ()), lambda meta, children: None)

# tuples and lists give (meta, children) directly, without register_pytree_node's
# argument-order adapter: they are flattened on every transformation call
_node_types[tuple] = NodeType("tuple", lambda t: (None, t), lambda _, xs: tuple(xs))
_node_types[list] = NodeType("list", lambda lst: (None, lst), lambda _, xs: list(xs))
register_pytree_node(dict,
                     lambda d: ([d[k] for k in sorted(d)], tuple(sorted(d))),
                     lambda keys, xs: dict(zip(keys, xs)))
_node_types[type(None)] = _NONE_NODE


def _node_type(x: Any) -> NodeType | None:
    node = _node_types.get(type(x))
    if node is None and isinstance(x, tuple) and hasattr(type(x), "_fields"):
        node = _namedtuple_node(type(x))
    return node


@functools.lru_cache(maxsize=None)
def _namedtuple_node(ty: type) -> NodeType:
    """One NodeType per namedtuple class, so equal structures give equal treedefs."""
    return NodeType(ty.__qualname__, lambda t: (ty, tuple(t)), lambda cls, xs: cls(*xs))


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list, PyTreeDef]:
    leaves: list[Any] = []
    return leaves, _flatten(tree, leaves, is_leaf)


def _flatten(x: Any, leaves: list, is_leaf: Callable | None) -> PyTreeDef:
    """Append `x`'s leaves to `leaves`. Written as plain loops, without generators or
    a helper call per leaf: every grad/jvp/vmap call flattens its inputs and outputs."""
    node = None
    if is_leaf is None or not is_leaf(x):
        node = _node_types.get(type(x))
        if node is None and isinstance(x, tuple):   # maybe a namedtuple
            node = _node_type(x)
    if node is None:
        leaves.append(x)
        return _LEAF
    start = len(leaves)
    meta, children = node.to_iterable(x)
    defs = []
    for c in children:
        if is_leaf is None and type(c) in _LEAF_TYPES:   # the common leaf, no recursion
            leaves.append(c)
            defs.append(_LEAF)
        else:
            defs.append(_flatten(c, leaves, is_leaf))
    return PyTreeDef(node, meta, tuple(defs), len(leaves) - start)


# types that are always leaves, checked before the recursive call for each child
_LEAF_TYPES = frozenset({Array, np.ndarray, int, float, bool, complex})


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise ValueError(f"tree_unflatten: {treedef} has {treedef.num_leaves} leaves, "
                         f"got {len(leaves)}")
    return _unflatten(treedef, iter(leaves))


def _unflatten(treedef: PyTreeDef, leaves: Any) -> Any:
    if treedef.node is None:
        return next(leaves)
    children = []
    for c in treedef.subtrees:   # leaves inline: no call per leaf
        children.append(next(leaves) if c.node is None else _unflatten(c, leaves))
    return treedef.node.from_iterable(treedef.meta, children)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list:
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    return tree_flatten(tree, is_leaf)[1]


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    return treedef.node is None


def all_leaves(xs: Iterable[Any], is_leaf: Callable[[Any], bool] | None = None) -> bool:
    return all(_node_type(x) is None or (is_leaf is not None and is_leaf(x)) for x in xs)


def tree_map(f: Callable, tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """`f` applied leafwise. Each of `rest` has `tree`'s structure, or `tree`'s
    structure as a prefix (a leaf of `tree` then meets a whole subtree), as in JAX."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return tree_unflatten(treedef, [f(x) for x in leaves])
    others = [flatten_up_to(treedef, r, "tree_map") for r in rest]
    return tree_unflatten(treedef, [f(*xs) for xs in zip(leaves, *others)])


def flatten_up_to(treedef: PyTreeDef, tree: Any, what: str = "flatten_up_to") -> list:
    """The subtrees of `tree` at the leaves of `treedef` (`tree` must have `treedef`
    as a prefix of its structure)."""
    out: list[Any] = []
    _up_to(treedef, tree, out, what, "")
    return out


def _up_to(treedef: PyTreeDef, x: Any, out: list, what: str, path: str) -> None:
    if treedef.node is None:
        out.append(x)
        return
    node = _node_type(x)
    meta, children = node.to_iterable(x) if node is not None else (None, ())
    children = list(children)
    if node is None or node.name != treedef.node.name or len(children) != len(
            treedef.subtrees) or _hashable(meta) != _hashable(treedef.meta):
        raise ValueError(f"{what}: structures differ at {path or 'the root'}: expected "
                         f"{treedef}, got {x!r} (each extra tree must have the first "
                         f"tree's structure, or that structure as a prefix)")
    for i, (c, sub) in enumerate(zip(children, treedef.subtrees)):
        _up_to(sub, c, out, what, f"{path}[{i}]")


def flatten_prefix(prefix: Any, treedef: PyTreeDef, what: str) -> list:
    """Broadcast a pytree prefix (like vmap's in_axes) to the leaves of `treedef`.

    A leaf of `prefix` (including None) applies to the whole subtree under it.
    """
    out: list[Any] = []
    _broadcast_prefix(prefix, treedef, out, what, "")
    return out


def _broadcast_prefix(prefix: Any, treedef: PyTreeDef, out: list, what: str, path: str) -> None:
    node = _node_type(prefix) if prefix is not None else None
    if node is None:
        out.extend([prefix] * treedef.num_leaves)
        return
    meta, children = node.to_iterable(prefix)
    children = list(children)
    if treedef.node is None or node.name != treedef.node.name or len(children) != len(
            treedef.subtrees) or (node.name == "dict" and meta != treedef.meta):
        raise ValueError(f"{what} specification must be a tree prefix of the corresponding "
                         f"value; got {what} {prefix!r} at position {path or 'root'} for a "
                         f"value with structure {treedef}")
    for i, (p, sub) in enumerate(zip(children, treedef.subtrees)):
        _broadcast_prefix(p, sub, out, what, f"{path}[{i}]")
