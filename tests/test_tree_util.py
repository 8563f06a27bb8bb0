"""Pytrees: flatten/unflatten round trips, tree_map, and vmap-style prefixes."""
from __future__ import annotations

import collections
import dataclasses

import numpy as np
import pytest
from hypothesis import given, strategies as st

import plugax
from plugax import tree_util as tu

Point = collections.namedtuple("Point", "x y")


@dataclasses.dataclass
class Particle:
    pos: object
    vel: object
    name: str = "p"


tu.register_dataclass(Particle, data_fields=["pos", "vel"], meta_fields=["name"])


class Box:
    """A user type registered by hand: two children and a static label."""

    def __init__(self, a, b, label):
        self.a, self.b, self.label = a, b, label

    def __eq__(self, other):
        return (type(other) is Box and (self.a, self.b, self.label)
                == (other.a, other.b, other.label))


tu.register_pytree_node(Box, lambda box: ((box.a, box.b), box.label),
                        lambda label, children: Box(*children, label))


ROUND_TRIPS = [
    ((1, 2, 3), [1, 2, 3]),
    ([1, (2, 3)], [1, 2, 3]),
    ({"b": 1, "a": 2, "c": (3, 4)}, [2, 1, 3, 4]),  # dicts flatten in sorted key order
    (None, []),
    ((None, 1, [None]), [1]),
    (Point(1, (2, 3)), [1, 2, 3]),
    (Particle(1, [2, 3], name="q"), [1, 2, 3]),
    (Box(1, {"z": 2, "y": 3}, "lbl"), [1, 3, 2]),
    (5, [5]),
    ((), []),
    ({}, []),
]


@pytest.mark.parametrize("tree,leaves", ROUND_TRIPS, ids=lambda v: repr(v)[:30])
def test_round_trip(tree, leaves):
    flat, treedef = tu.tree_flatten(tree)
    assert flat == leaves
    assert treedef.num_leaves == len(leaves)
    rebuilt = tu.tree_unflatten(treedef, flat)
    assert rebuilt == tree and type(rebuilt) is type(tree)
    assert tu.tree_structure(rebuilt) == treedef
    assert hash(tu.tree_structure(rebuilt)) == hash(treedef)


def test_dict_unflattens_with_sorted_keys():
    rebuilt = tu.tree_unflatten(tu.tree_structure({"b": 0, "a": 0}), ["A", "B"])
    assert rebuilt == {"a": "A", "b": "B"} and list(rebuilt) == ["a", "b"]


def test_namedtuple_and_dataclass_keep_their_types():
    p = tu.tree_map(lambda v: v * 10, Point(1, 2))
    assert type(p) is Point and p == Point(10, 20)
    q = tu.tree_map(lambda v: v + 1, Particle(1, 2, name="keep"))
    assert type(q) is Particle and (q.pos, q.vel, q.name) == (2, 3, "keep")


def test_structures_compare_by_shape_not_by_leaves():
    assert tu.tree_structure(Point(1, 2)) == tu.tree_structure(Point("a", "b"))
    assert tu.tree_structure((1, 2)) != tu.tree_structure([1, 2])
    assert tu.tree_structure((1, 2)) != tu.tree_structure(Point(1, 2))
    assert tu.tree_structure({"a": 1}) != tu.tree_structure({"b": 1})
    assert tu.tree_structure(Particle(1, 2, "x")) != tu.tree_structure(Particle(1, 2, "y"))
    assert tu.tree_structure(Box(1, 2, "x")) != tu.tree_structure(Box(1, 2, "y"))
    assert tu.tree_structure(None) != tu.tree_structure(1)


def test_treedef_repr():
    assert repr(tu.tree_structure({"b": 1, "a": (2,)})) == "PyTreeDef({'a': (*,), 'b': *})"
    assert repr(tu.tree_structure([None, 1])) == "PyTreeDef([None, *])"


def test_leaf_predicates():
    assert tu.treedef_is_leaf(tu.tree_structure(1.0))
    assert not tu.treedef_is_leaf(tu.tree_structure((1.0,)))
    assert tu.all_leaves([1, np.zeros(3), "s"]) and not tu.all_leaves([1, (2,)])
    leaves, treedef = tu.tree_flatten([(1, 2), (3,)], is_leaf=lambda x: isinstance(x, tuple))
    assert leaves == [(1, 2), (3,)] and treedef.num_leaves == 2


def test_tree_map_several_trees():
    a = {"x": (1, 2), "y": [3]}
    b = {"x": (10, 20), "y": [30]}
    c = {"y": [300], "x": (100, 200)}
    assert tu.tree_map(lambda p, q, r: p + q + r, a, b, c) == \
        {"x": (111, 222), "y": [333]}


@pytest.mark.parametrize("other", [
    (1, 2, 3), [1, 2], {"x": 1, "y": 2}, Point(1, 2),
])
def test_tree_map_structure_mismatch(other):
    with pytest.raises(ValueError, match="structures differ") as info:
        tu.tree_map(lambda a, b: a, (1, 2), other)
    assert "(*, *)" in str(info.value)


def test_tree_map_extra_trees_may_have_the_first_as_a_prefix():
    # as JAX 0.10.2: a leaf of the first tree meets a whole subtree (None included)
    assert tu.tree_map(lambda a, b: (a, b), (1, 2), (1, (2,))) == ((1, 1), (2, (2,)))
    assert tu.tree_map(lambda a, b: (a, b), (1, 2), (None, 2)) == ((1, None), (2, 2))


def test_unflatten_wrong_leaf_count():
    with pytest.raises(ValueError, match="has 2 leaves, got 3"):
        tu.tree_unflatten(tu.tree_structure((1, 2)), [1, 2, 3])


# --- hypothesis: arbitrary nesting ------------------------------------------------------

leaf = st.one_of(st.integers(), st.floats(allow_nan=False), st.text(max_size=3))
keys = st.text(min_size=1, max_size=4)
trees = st.recursive(
    st.one_of(leaf, st.none()),
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.lists(children, max_size=4).map(tuple),
        st.dictionaries(keys, children, max_size=4),
        st.tuples(children, children).map(lambda t: Point(*t)),
        st.tuples(children, children).map(lambda t: Particle(t[0], t[1], "h")),
    ),
    max_leaves=25)


@given(trees)
def test_hypothesis_round_trip(tree):
    leaves, treedef = tu.tree_flatten(tree)
    assert len(leaves) == treedef.num_leaves
    assert all(tu.treedef_is_leaf(tu.tree_structure(x)) for x in leaves)
    assert tu.tree_unflatten(treedef, leaves) == tree
    assert tu.tree_structure(tu.tree_unflatten(treedef, leaves)) == treedef


@given(trees)
def test_hypothesis_tree_map_identity_and_counting(tree):
    assert tu.tree_map(lambda x: x, tree) == tree
    counter = iter(range(10_000))
    numbered = tu.tree_map(lambda x: next(counter), tree)
    assert tu.tree_leaves(numbered) == list(range(len(tu.tree_leaves(tree))))
    assert tu.tree_structure(numbered) == tu.tree_structure(tree)
    pairs = tu.tree_map(lambda a, b: (a, b), tree, numbered)
    assert tu.tree_leaves(pairs) == [v for i, x in enumerate(tu.tree_leaves(tree))
                                     for v in (x, i)]
    assert tu.tree_leaves(tu.tree_map(lambda a, b: b, tree, numbered)) == \
        tu.tree_leaves(numbered)


# --- flatten_prefix: vmap's in_axes ------------------------------------------------------

@pytest.mark.parametrize("prefix,tree,expected", [
    (0, ((1, 2), {"a": 3}), [0, 0, 0]),
    (None, ((1, 2), 3), [None, None, None]),
    ((0, None), ((1, 2), 3), [0, 0, None]),
    ((None, 1), ((1, 2), [3, 4]), [None, None, 1, 1]),
    (((0, 1), 2), ((1, 2), 3), [0, 1, 2]),
    ({"a": 0, "b": None}, {"b": (1, 2), "a": 3}, [0, None, None]),
    ((Point(0, 1),), (Point(1, [2, 3]),), [0, 1, 1]),
    ((0, None), ((), 3), [None]),
])
def test_flatten_prefix(prefix, tree, expected):
    assert tu.flatten_prefix(prefix, tu.tree_structure(tree), "vmap in_axes") == expected


@pytest.mark.parametrize("prefix,tree,where,sub", [
    ((0, 0), (1, 2, 3), "root", "(*, *, *)"),
    ((0, (0, 0)), (1, (2, 3, 4)), "[1]", "(*, *, *)"),
    (((0,),), (1,), "[0]", "*"),
    ({"a": 0}, {"b": 1}, "root", "{'b': *}"),
    ([0, 0], (1, 2), "root", "(*, *)"),
    (Point(0, 0), (1, 2), "root", "(*, *)"),
])
def test_flatten_prefix_rejects_non_prefix(prefix, tree, where, sub):
    with pytest.raises(ValueError) as info:
        tu.flatten_prefix(prefix, tu.tree_structure(tree), "vmap in_axes")
    message = str(info.value)
    assert "vmap in_axes specification must be a tree prefix" in message
    # The message points at the offending sub-prefix and the structure found there.
    assert f"at position {where}" in message
    assert message.endswith(f"for a value with structure PyTreeDef({sub})")


def test_vmap_reports_a_non_prefix_in_axes():
    x = np.zeros((3, 2), np.float32)
    with pytest.raises(ValueError, match="vmap in_axes specification must be a tree prefix"):
        plugax.vmap(lambda t: t, in_axes=((0, 0),))(x)
    with pytest.raises(ValueError, match="vmap in_axes has 2 entries"):
        plugax.vmap(lambda t: t, in_axes=(0, 0))(x)
    assert plugax.core.trace.current_trace() is plugax.core.trace.eval_trace
