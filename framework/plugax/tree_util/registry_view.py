"""`default_registry` and `flatten_one_level_with_keys`, as jax.tree_util has them.

JAX exposes its pytree registry as an object (`default_registry`) for libraries
that flatten with it directly; plugax's registry is the module-level table in
`core`, so the object here is a view whose methods are the module's functions:
registering through it is registering for every plugax transformation.
"""
from __future__ import annotations

from typing import Any, Callable, Hashable, Iterable, Sequence

from . import core
from .core import PyTreeDef, _node_type
from .paths import KeyEntry, _child_keys, register_pytree_with_keys, tree_flatten_with_path

__all__ = ["flatten_one_level_with_keys", "default_registry", "PyTreeRegistry"]


def flatten_one_level_with_keys(tree: Any) -> tuple[Iterable[tuple[KeyEntry, Any]], Hashable]:
    """(((key, child), ...), metadata) of one node, as jax.tree_util's; a leaf raises
    ValueError."""
    node = _node_type(tree)
    if node is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    meta, children = node.to_iterable(tree)
    children = tuple(children)
    keys = _child_keys(tree, meta, len(children))
    return tuple(zip(keys, children)), meta


class PyTreeRegistry:
    """The registry plugax's transformations flatten with (there is one)."""

    def flatten(self, tree: Any, leaf_predicate: Callable[[Any], bool] | None = None
                ) -> tuple[list, PyTreeDef]:
        return core.tree_flatten(tree, leaf_predicate)

    def flatten_one_level(self, tree: Any) -> tuple[Iterable, Hashable] | None:
        node = _node_type(tree)
        if node is None:
            return None
        meta, children = node.to_iterable(tree)
        return tuple(children), meta

    def flatten_one_level_with_keys(self, tree: Any) -> tuple[Iterable, Hashable]:
        return flatten_one_level_with_keys(tree)

    def flatten_with_path(self, tree: Any, leaf_predicate: Callable | None = None
                          ) -> tuple[list, PyTreeDef]:
        return tree_flatten_with_path(tree, leaf_predicate)

    def is_node(self, type: type) -> bool:
        """Whether instances of `type` are pytree nodes (not leaves)."""
        return type in core._node_types or (issubclass(type, tuple)
                                            and hasattr(type, "_fields"))

    def register_node(self, type: type, to_iterable: Callable, from_iterable: Callable,
                      to_iterable_with_keys: Callable | None = None) -> None:
        if to_iterable_with_keys is None:
            core.register_pytree_node(type, to_iterable, from_iterable)
        else:
            register_pytree_with_keys(type, to_iterable_with_keys, from_iterable, to_iterable)

    def register_dataclass_node(self, type: type, data_fields: Sequence[str],
                                meta_fields: Sequence[str], /) -> None:
        core.register_dataclass(type, list(data_fields), list(meta_fields))


default_registry = PyTreeRegistry()
