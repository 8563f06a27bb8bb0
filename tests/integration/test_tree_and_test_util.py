"""plugax.tree / plugax.tree_util against JAX's documented behaviour, and
plugax.test_util.check_grads catching a wrong custom rule."""
import collections
import dataclasses

import numpy as np
import pytest

import plugax
import plugax.numpy as pnp
import plugax.tree_util as tu
from plugax.test_util import check_grads

Point = collections.namedtuple("Point", "x y")


def test_tree_map_accepts_extra_trees_with_the_first_as_prefix():
    assert plugax.tree.map(lambda a, b: a + b, [1, 2], [3, 4]) == [4, 6]
    assert plugax.tree.map(lambda a, b: (a, b), [1, 2], [(3,), {"k": 4}]) == [(1, (3,)), (2, {"k": 4})]
    with pytest.raises(ValueError, match="structures differ"):
        plugax.tree.map(lambda a, b: a, [1, 2], [1, 2, 3])
    assert plugax.tree.map(lambda x: x * 2, [1, (2, 3)], is_leaf=lambda x: isinstance(x, tuple)) \
        == [2, (2, 3, 2, 3)]


def test_key_paths_name_every_kind_of_node():
    tree = {"w": [1, Point(2, 3)], "b": None, "c": (4,)}
    got = [(tu.keystr(p), leaf) for p, leaf in plugax.tree.leaves_with_path(tree)]
    # JAX 0.10.2 prints these paths
    assert got == [("['c'][0]", 4), ("['w'][0]", 1), ("['w'][1].x", 2), ("['w'][1].y", 3)]
    doubled = plugax.tree.map_with_path(lambda p, x: (tu.keystr(p, simple=True, separator="/"), x),
                                        {"a": [5]})
    assert doubled == {"a": [("a/0", 5)]}


def test_dataclass_static_fields_and_pytree_classes():
    @tu.register_dataclass
    @dataclasses.dataclass
    class Op:
        x: object
        name: str = plugax.tree.static(default="add")

    leaves, treedef = plugax.tree.flatten(Op(pnp.ones(2)))
    assert len(leaves) == 1 and plugax.tree.unflatten(treedef, [7]).name == "add"
    assert tu.keystr(plugax.tree.leaves_with_path(Op(1.0))[0][0]) == ".x"

    @tu.register_pytree_node_class
    class Box:
        def __init__(self, v, tag):
            self.v, self.tag = v, tag

        def tree_flatten(self):
            return (self.v,), self.tag

        @classmethod
        def tree_unflatten(cls, tag, children):
            return cls(*children, tag)

    out = plugax.jit(lambda b: Box(b.v * 2, b.tag))(Box(pnp.ones(2), "t"))
    assert out.tag == "t" and np.allclose(np.asarray(out.v), 2)
    assert tu.keystr(plugax.tree.leaves_with_path(Box(1, "t"))[0][0]) == "[<flat index 0>]"


def test_reduce_all_transpose_broadcast_and_one_level():
    assert plugax.tree.reduce(lambda a, b: a + b, [1, (2, 3)]) == 6
    assert plugax.tree.reduce(lambda a, b: a + b, [], 5) == 5
    with pytest.raises(TypeError):
        plugax.tree.reduce(lambda a, b: a + b, [])
    assert plugax.tree.reduce_associative(lambda a, b: a + b, [1, 2, 3, 4, 5]) == 15
    assert plugax.tree.all([1, 0]) is False and plugax.tree.all([]) is True
    outer, inner = tu.tree_structure([0, 0]), tu.tree_structure((0, 0, 0))
    assert plugax.tree.transpose(outer, inner, [(1, 2, 3), (4, 5, 6)]) == ([1, 4], [2, 5], [3, 6])
    assert plugax.tree.broadcast([1, {"a": 2}], [(3, 4), {"a": [5, 6]}]) == [(1, 1), {"a": [2, 2]}]
    assert tu.flatten_one_level({"b": 1, "a": [2]}) == ([[2], 1], ("a", "b"))
    with pytest.raises(ValueError, match="can't tree-flatten"):
        tu.flatten_one_level(3)
    td = tu.treedef_tuple([tu.tree_structure(1), tu.tree_structure([1, 2])])
    assert str(td) == "PyTreeDef((*, [*, *]))" and td.num_leaves == 3 and td.num_nodes == 5
    assert [str(c) for c in tu.treedef_children(tu.tree_structure([1, (2, 3)]))] == \
        ["PyTreeDef(*)", "PyTreeDef((*, *))"]
    assert tu.tree_structure([1, (2, 3)]).flatten_up_to([[5], ({"k": 1}, 3)]) == [[5], {"k": 1}, 3]


def test_partial_is_a_pytree_that_crosses_jit():
    add = tu.Partial(lambda a, b: a + b, pnp.ones(2))
    assert len(tu.tree_leaves(add)) == 1
    np.testing.assert_allclose(np.asarray(plugax.jit(lambda p, y: p(y))(add, 1.0)), [2.0, 2.0])
    nested = tu.Partial(tu.Partial(lambda a, b, c: a + b + c, 1.0), 2.0)
    assert nested(3.0) == 6.0 and len(tu.tree_leaves(nested)) == 2


@pytest.mark.parametrize("modes", [("fwd",), ("rev",), ("fwd", "rev", "lin")])
def test_check_grads_passes_on_correct_derivatives(modes):
    check_grads(lambda x, y: pnp.sum(pnp.tanh(x) * y ** 2),
                (np.full(3, 0.3, np.float32), np.arange(3.0, dtype=np.float32)), order=2,
                modes=modes)


@pytest.mark.parametrize("modes", [("fwd",), ("rev",)])
def test_check_grads_catches_a_wrong_custom_rule(modes):
    @plugax.custom_jvp
    def bad_sin(x):
        return pnp.sin(x)

    bad_sin.defjvp(lambda p, t: (pnp.sin(p[0]), 2 * pnp.cos(p[0]) * t[0]))
    with pytest.raises(AssertionError, match="JVP tangent|VJP cotangent projection"):
        check_grads(bad_sin, (np.float32(0.5),), order=1, modes=modes)


def test_check_grads_catches_a_wrong_second_derivative():
    """A rule whose first derivative is right but whose tangent map has the wrong
    derivative: order=1 passes, order=2 must fail."""
    from plugax import lax

    @plugax.custom_jvp
    def cube(x):
        return x ** 3

    cube.defjvp(lambda p, t: (p[0] ** 3, 3 * lax.stop_gradient(p[0]) ** 2 * t[0]))
    check_grads(cube, (np.float32(1.5),), order=1, modes=("fwd", "rev"))
    with pytest.raises(AssertionError):
        check_grads(cube, (np.float32(1.5),), order=2, modes=("fwd",))
