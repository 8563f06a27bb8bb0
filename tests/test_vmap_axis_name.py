"""The kernel's named vmap axes (vmap(axis_name=)): the names in scope and their sizes
(plugax.extend.named_axis_size), nested and restored after errors, and the batching
rule of a primitive that names the axis running even on unbatched operands. A kernel
test: its primitive is a toy collective defined here."""
from __future__ import annotations

import numpy as np
import pytest

import plugax
from plugax.extend import (Primitive, RuleSet, ShapedArray, declare_collective, get_aval,
                           named_axis_size, reduce_sum)
from plugax.testing import scoped_plugin

# how many members the named axis has, per member
count_p = declare_collective(Primitive("toy_count"))


def _vmap(ctx, args, dims, *, axes):
    (x,), (d,) = args, dims
    if ctx.axis_name not in axes:
        return count_p.bind(x, axes=axes), d
    shape = get_aval(x).shape if d is not None else (ctx.axis_size,) + get_aval(x).shape
    return reduce_sum(np.ones(shape, np.float32), (0 if d is None else d,)), None


from plugax.extend import hookimpl  # noqa: E402


class ToyCollective:
    @hookimpl
    def plugax_plugin_info(self):
        from plugax.extend import PluginInfo
        return PluginInfo(name="toy-collective")

    @hookimpl
    def plugax_primitive_rules(self):
        return [RuleSet(count_p, impl=lambda ctx, x, axes: np.asarray(named_axis_size(axes[0]),
                                                                          np.float32),
                        abstract_eval=lambda ctx, a, axes: ShapedArray(a.shape, np.float32),
                        batching=_vmap)]


def test_names_in_scope_and_their_sizes():
    seen = {}

    def inner(x):
        seen["i"], seen["j"] = named_axis_size("i"), named_axis_size("j")
        return x
    plugax.vmap(plugax.vmap(inner, axis_name="i"), axis_name="j")(np.ones((2, 3)))
    assert seen == {"i": 3, "j": 2}
    with pytest.raises(NameError, match="unbound axis name: i"):
        named_axis_size("i")       # nothing leaks out of the vmaps


def test_names_are_dropped_after_an_error():
    def fail(x):
        raise RuntimeError("boom")
    with pytest.raises(RuntimeError):
        plugax.vmap(fail, axis_name="k")(np.ones(2))
    with pytest.raises(NameError):
        named_axis_size("k")


def test_only_collectives_run_their_rule_unbatched():
    """reduce_sum's `axes=(0,)` is not an axis name, even under vmap(axis_name=0)."""
    out = plugax.vmap(lambda x: reduce_sum(np.ones((2, 3), np.float32), (0,)), axis_name=0)(
        np.ones(4))
    np.testing.assert_array_equal(out, np.full((4, 3), 2.0))


def test_unhashable_axis_name_is_refused():
    with pytest.raises(TypeError, match="hashable"):
        plugax.vmap(lambda x: x, axis_name=["i"])(np.ones(2))


def test_a_rule_naming_the_axis_runs_for_unbatched_operands():
    with scoped_plugin(ToyCollective()):
        # the operand is not batched, yet the count sees the whole axis
        out = plugax.vmap(lambda x: count_p.bind(np.float32(0), axes=("i",)),
                          axis_name="i")(np.ones(4, np.float32))
        np.testing.assert_array_equal(out, [4, 4, 4, 4])
        # a batched operand of another axis's vmap passes through to the named one
        out = plugax.vmap(plugax.vmap(lambda x: count_p.bind(x, axes=("j",)), axis_name="i"),
                          axis_name="j")(np.ones((2, 3), np.float32))
        np.testing.assert_array_equal(out, np.full((2, 3), 2.0))


def test_named_axes_binds_names_without_a_vmap():
    """shard_map traces its body so: the mesh axes are in scope, innermost wins, and
    they are gone after the block, also after an error."""
    from plugax.extend import named_axes
    with named_axes([("x", 4), ("y", 2)]):
        assert (named_axis_size("x"), named_axis_size("y")) == (4, 2)
        with named_axes([("x", 3)]):
            assert named_axis_size("x") == 3
        assert named_axis_size("x") == 4
        seen = []
        plugax.vmap(lambda t: seen.append(named_axis_size("y")) or t, axis_name="y")(np.ones(5))
        assert seen == [5] and named_axis_size("y") == 2
    with pytest.raises(NameError):
        named_axis_size("x")
    with pytest.raises(RuntimeError):
        with named_axes([("z", 2)]):
            raise RuntimeError("boom")
    with pytest.raises(NameError):
        named_axis_size("z")
