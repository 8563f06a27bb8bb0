"""tree_util.default_registry (a view of plugax's one pytree registry) and
flatten_one_level_with_keys, against tree_flatten_with_path and JAX's documented
results."""
import collections
import dataclasses

import pytest

import plugax.tree_util as tu

Point = collections.namedtuple("Point", "x y")


@pytest.mark.parametrize("tree", [{"b": [2, 3], "a": 1}, (1, [2]), [4, 5], Point(1, 2)],
                         ids=["dict", "tuple", "list", "namedtuple"])
def test_flatten_one_level_with_keys_gives_the_first_level_of_the_paths(tree):
    pairs, meta = tu.flatten_one_level_with_keys(tree)
    children, meta_plain = tu.flatten_one_level(tree)
    assert [c for _, c in pairs] == list(children) and meta == meta_plain
    first_keys = []
    for path, _ in tu.tree_flatten_with_path(tree)[0]:
        if path[0] not in first_keys:
            first_keys.append(path[0])
    assert [k for k, _ in pairs] == first_keys


def test_flatten_one_level_with_keys_of_a_leaf_raises():
    assert tu.flatten_one_level_with_keys({"a": 1})[0] == ((tu.DictKey("a"), 1),)
    with pytest.raises(ValueError, match="can't tree-flatten type"):
        tu.flatten_one_level_with_keys(1.0)


def test_default_registry_is_the_registry_transformations_use():
    r = tu.default_registry
    assert r.flatten({"a": [1, 2]}) == tu.tree_flatten({"a": [1, 2]})
    assert r.is_node(list) and r.is_node(Point) and not r.is_node(int)
    assert r.flatten_one_level(3) is None

    class Box:
        def __init__(self, v, tag):
            self.v, self.tag = v, tag

    r.register_node(Box, lambda b: ((b.v,), b.tag), lambda tag, ch: Box(ch[0], tag))
    out = tu.tree_map(lambda x: x * 2, {"k": Box(3, "t")})
    assert out["k"].v == 6 and out["k"].tag == "t" and r.is_node(Box)

    @dataclasses.dataclass
    class Pair:
        a: float
        name: str

    r.register_dataclass_node(Pair, ["a"], ["name"])
    leaves, treedef = r.flatten(Pair(1.5, "p"))
    assert leaves == [1.5] and tu.tree_unflatten(treedef, [2.5]) == Pair(2.5, "p")
    paths, _ = r.flatten_with_path([Pair(1.0, "q")])
    assert paths == [((tu.SequenceKey(0), tu.GetAttrKey("a")), 1.0)]
