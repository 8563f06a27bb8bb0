"""Key paths: where each leaf sits in its pytree (`[0]['w'].bias`).

Why: programs that name parameters (weight decay only on kernels, a log line
per layer) walk a tree with the path of every leaf, as `jax.tree_util`'s
`*_with_path` functions give it. A path is a tuple of keys, one per level:
`SequenceKey` for tuples and lists, `DictKey` for dicts, `GetAttrKey` for
namedtuples and dataclasses, `FlattenedIndexKey` for other registered nodes
(unless they were registered with keys).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Hashable

from . import core
from .core import PyTreeDef, _node_type, register_pytree_node, tree_flatten, tree_unflatten

__all__ = ["SequenceKey", "DictKey", "GetAttrKey", "FlattenedIndexKey", "KeyEntry", "KeyPath",
           "keystr", "tree_flatten_with_path", "tree_leaves_with_path", "tree_map_with_path",
           "register_pytree_with_keys", "register_pytree_with_keys_class"]


@dataclass(frozen=True)
class SequenceKey:
    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"


@dataclass(frozen=True)
class DictKey:
    key: Hashable

    def __str__(self) -> str:
        return f"[{self.key!r}]"


@dataclass(frozen=True)
class GetAttrKey:
    name: str

    def __str__(self) -> str:
        return f".{self.name}"


@dataclass(frozen=True)
class FlattenedIndexKey:
    key: int

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


KeyEntry = Any
KeyPath = tuple

# node type -> function(x) -> the keys of x's children, for nodes registered with keys
_keyed: dict[type, Callable[[Any], list]] = {}


def keystr(keys: KeyPath, *, simple: bool = False, separator: str = "") -> str:
    """A path as text, `[0]['w'].bias` (with `simple`, the bare keys: `0/w/bias`)."""
    if not simple:
        return separator.join(str(k) for k in keys)
    return separator.join(str(getattr(k, f))
                          for k in keys for f in ("idx", "key", "name") if hasattr(k, f))


def _child_keys(x: Any, meta: Any, n: int) -> list:
    ty = type(x)
    if ty in _keyed:
        return _keyed[ty](x)
    if ty in (tuple, list):
        return [SequenceKey(i) for i in range(n)]
    if ty is dict:
        return [DictKey(k) for k in meta]
    if isinstance(x, tuple) and hasattr(ty, "_fields"):
        return [GetAttrKey(f) for f in ty._fields]
    fields = core._dataclass_fields.get(ty)
    if fields is not None:
        return [GetAttrKey(f) for f in fields]
    return [FlattenedIndexKey(i) for i in range(n)]


def tree_flatten_with_path(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                           ) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """((path, leaf) for every leaf, treedef), leaves in `tree_flatten`'s order."""
    out: list[tuple[KeyPath, Any]] = []
    _walk(tree, (), out, is_leaf)
    return out, tree_flatten(tree, is_leaf)[1]


def _walk(x: Any, path: tuple, out: list, is_leaf: Callable | None) -> None:
    node = None if is_leaf is not None and is_leaf(x) else _node_type(x)
    if node is None:
        out.append((path, x))
        return
    meta, children = node.to_iterable(x)
    children = list(children)
    for key, child in zip(_child_keys(x, meta, len(children)), children):
        _walk(child, (*path, key), out, is_leaf)


def tree_leaves_with_path(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                          ) -> list[tuple[KeyPath, Any]]:
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(f: Callable, tree: Any, *rest: Any,
                       is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """`f(path, leaf, *others)` for every leaf (the extra trees as in `tree_map`)."""
    pairs, treedef = tree_flatten_with_path(tree, is_leaf)
    others = [core.flatten_up_to(treedef, r, "tree_map_with_path") for r in rest]
    return tree_unflatten(treedef, [f(p, x, *xs) for (p, x), *xs in
                                    zip(pairs, *others)] if rest else
                          [f(p, x) for p, x in pairs])


def register_pytree_with_keys(ty: type, flatten_with_keys: Callable,
                              unflatten: Callable, flatten: Callable | None = None) -> None:
    """Like `register_pytree_node`, with `flatten_with_keys(x) -> (((key, child), ...), aux)`
    giving the key of each child for paths."""
    def plain(x: Any) -> tuple:
        pairs, aux = flatten_with_keys(x)
        return [c for _, c in pairs], aux
    register_pytree_node(ty, flatten or plain, unflatten)
    _keyed[ty] = lambda x: [k for k, _ in flatten_with_keys(x)[0]]


def register_pytree_with_keys_class(cls: type) -> type:
    """Class decorator: `cls.tree_flatten_with_keys()` and `cls.tree_unflatten(aux, children)`."""
    register_pytree_with_keys(cls, lambda x: x.tree_flatten_with_keys(), cls.tree_unflatten,
                              getattr(cls, "tree_flatten", None))
    return cls
