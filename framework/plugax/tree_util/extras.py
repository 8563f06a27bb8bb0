"""The rest of `jax.tree_util`: reductions over leaves, transposing nested trees,
registering classes, `Partial`, and one-level views of a node.

Each is a few lines over core.py's flatten/unflatten; they are here, apart,
because the kernel's transformations never need them and users of JAX's
tree_util do.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Iterable

from .core import (PyTreeDef, _node_type, _node_types, flatten_up_to, register_pytree_node,
                   tree_flatten, tree_leaves, tree_structure, tree_unflatten)

__all__ = ["tree_reduce", "tree_reduce_associative", "tree_all", "tree_transpose",
           "tree_broadcast", "treedef_children", "treedef_tuple", "flatten_one_level",
           "is_tree_node", "register_pytree_node_class", "register_static", "Partial"]

_NO_INITIALIZER = object()


def tree_reduce(function: Callable, tree: Any, initializer: Any = _NO_INITIALIZER,
                is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """`functools.reduce(function, leaves[, initializer])`."""
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _NO_INITIALIZER:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_reduce_associative(operation: Callable, tree: Any, *,
                            identity: Any = _NO_INITIALIZER,
                            is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Reduce with an associative `operation`, pairing leaves as a balanced tree."""
    leaves = tree_leaves(tree, is_leaf)
    if not leaves:
        if identity is _NO_INITIALIZER:
            raise TypeError("tree_reduce_associative of a tree with no leaves needs identity=")
        return identity
    while len(leaves) > 1:
        pairs = [operation(a, b) for a, b in zip(leaves[::2], leaves[1::2])]
        leaves = pairs + (leaves[-1:] if len(leaves) % 2 else [])
    return leaves[0]


def tree_all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    return all(tree_leaves(tree, is_leaf))


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None,
                   pytree_to_transpose: Any) -> Any:
    """An outer tree of inner trees as an inner tree of outer trees
    (`[(1, 2), (3, 4)]` -> `([1, 3], [2, 4])`)."""
    outer = flatten_up_to(outer_treedef, pytree_to_transpose, "tree_transpose")
    if inner_treedef is None:
        inner_treedef = tree_structure(outer[0])
    inner = [flatten_up_to(inner_treedef, x, "tree_transpose") for x in outer]
    columns = [tree_unflatten(outer_treedef, list(col)) for col in zip(*inner)]
    return tree_unflatten(inner_treedef, columns)


def tree_broadcast(prefix_tree: Any, full_tree: Any,
                   is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """`prefix_tree` with each leaf repeated over the subtree of `full_tree` it covers."""
    prefix_leaves, prefix_def = tree_flatten(prefix_tree, is_leaf)
    subtrees = flatten_up_to(prefix_def, full_tree, "tree_broadcast")
    expanded = [tree_unflatten(tree_structure(sub), [leaf] * tree_structure(sub).num_leaves)
                for leaf, sub in zip(prefix_leaves, subtrees)]
    return tree_unflatten(prefix_def, expanded)


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    return list(treedef.subtrees)


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The treedef of a tuple whose elements have `treedefs`."""
    return PyTreeDef(_node_types[tuple], None, tuple(treedefs))


def flatten_one_level(tree: Any) -> tuple[list, Any]:
    """(children, metadata) of one node; a leaf raises ValueError, as in JAX."""
    node = _node_type(tree)
    if node is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    meta, children = node.to_iterable(tree)
    return list(children), meta


def is_tree_node(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    return not (is_leaf is not None and is_leaf(tree)) and _node_type(tree) is not None


def register_pytree_node_class(cls: type) -> type:
    """Class decorator: `x.tree_flatten() -> (children, aux)` and the classmethod
    `cls.tree_unflatten(aux, children)`, JAX's protocol."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def register_static(cls: type) -> type:
    """Register `cls` as a node with no children: its instances are structure, not
    leaves (hashable metadata that jit keys on)."""
    register_pytree_node(cls, lambda x: ((), x), lambda x, _: x)
    return cls


class Partial(functools.partial):
    """`functools.partial` as a pytree: the function is structure, the bound
    arguments are children, so a Partial can be passed to and returned from
    jitted and transformed functions."""

    def __new__(cls, func: Callable, *args: Any, **kw: Any) -> "Partial":
        if isinstance(func, functools.partial):   # flatten nested partials, as JAX does
            args, kw = (*func.args, *args), {**func.keywords, **kw}
            func = func.func
        return super().__new__(cls, func, *args, **kw)


register_pytree_node(Partial, lambda p: ((p.args, p.keywords), p.func),
                     lambda func, xs: Partial(func, *xs[0], **xs[1]))
