"""Pytrees: nested containers whose leaves are arrays (JAX's `jax.tree_util`).

Transformations work on flat lists of arrays; pytrees let users pass tuples,
lists, dicts, namedtuples, dataclasses and their own registered types
instead. `core` flattens and rebuilds them (what every transformation call
uses), `paths` names where each leaf sits, `extras` has the rest of JAX's
tree_util. `plugax.tree` offers the same under JAX's short names.
"""
from __future__ import annotations

from .core import (NodeType, PyTreeDef, all_leaves, flatten_prefix, flatten_up_to,
                   register_dataclass, register_pytree_node, tree_flatten, tree_leaves, tree_map,
                   tree_structure, tree_unflatten, treedef_is_leaf)
from .extras import (Partial, flatten_one_level, is_tree_node, register_pytree_node_class,
                     register_static, tree_all, tree_broadcast, tree_reduce,
                     tree_reduce_associative, tree_transpose, treedef_children, treedef_tuple)
from .paths import (DictKey, FlattenedIndexKey, GetAttrKey, KeyEntry, KeyPath, SequenceKey,
                    keystr, register_pytree_with_keys, register_pytree_with_keys_class,
                    tree_flatten_with_path, tree_leaves_with_path, tree_map_with_path)
from .registry_view import default_registry, flatten_one_level_with_keys

__all__ = ["PyTreeDef", "register_pytree_node", "register_dataclass", "tree_flatten",
           "tree_unflatten", "tree_map", "tree_leaves", "tree_structure", "treedef_is_leaf",
           "flatten_prefix", "flatten_up_to", "all_leaves", "Partial", "flatten_one_level",
           "is_tree_node", "register_pytree_node_class", "register_static", "tree_all",
           "tree_broadcast", "tree_reduce", "tree_reduce_associative", "tree_transpose",
           "treedef_children", "treedef_tuple", "DictKey", "FlattenedIndexKey", "GetAttrKey",
           "KeyEntry", "KeyPath", "SequenceKey", "keystr", "register_pytree_with_keys",
           "register_pytree_with_keys_class", "tree_flatten_with_path", "tree_leaves_with_path",
           "tree_map_with_path", "default_registry", "flatten_one_level_with_keys"]
