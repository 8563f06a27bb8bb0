"""The kernel's structural primitives, with no family loaded (`plugax.structural`).

vmap, jvp, grad and the Jacobians only move and sum data with these, so they work on
a test's toy primitives alone; the `plugax.lax` functions of the same names are the
kernel's.
"""
import numpy as np
import pytest

import plugax
import plugax.lax as lax
from plugax import structural as S
from plugax.extend import Array, ShapeError, Zero, add_tangents, get_primitive


def test_the_structural_primitives_are_the_kernels_and_reach_plugax_lax():
    for name in ("add_any", "broadcast_in_dim", "reduce_sum", "reshape", "transpose",
                 "convert_element_type"):
        assert plugax.registry.primitives_by_name[name] is get_primitive(name)
        assert plugax.registry._definers[name].name == "structural"
    assert lax.broadcast_in_dim is S.broadcast_in_dim and lax.reduce_sum is S.reduce_sum
    assert lax.reshape_p is S.reshape_p and not hasattr(lax, "add_any")   # as in JAX


def test_vmap_of_a_toy_primitive_moves_and_materialises_batch_axes(toy):
    x = np.arange(6.0).reshape(2, 3)
    y = np.ones(2)
    out = plugax.vmap(lambda a, b: toy.add_p.bind(a, b), in_axes=(1, None), out_axes=1)(x, y)
    np.testing.assert_allclose(out, x + 1)
    jaxpr = str(plugax.make_jaxpr(plugax.vmap(lambda a, b: toy.add_p.bind(a, b),
                                              in_axes=(1, None)))(x, y))
    assert "transpose[permutation=(1, 0)]" in jaxpr and "broadcast_in_dim" in jaxpr


def test_jacfwd_of_several_inputs_uses_only_kernel_primitives(toy):
    x, y = np.array([0.1, 0.2, 0.3]), np.array([[0.5], [0.7]])
    jx, jy = plugax.jacfwd(lambda a, b: toy.sin(a), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(jx, np.diag(np.cos(x)), rtol=1e-6)
    assert jy.shape == (3, 2, 1) and not np.asarray(jy).any()


def test_a_backward_pass_sums_cotangents_with_add_any():
    x = np.array([1.0, 2.0, 3.0], np.float32)
    twice = lambda x: (lax.reduce_sum(x, (0,)), lax.reduce_sum(lax.reshape(x, (3, 1)), (0, 1)))
    _, pullback = plugax.vjp(twice, x)
    ct = (np.float32(1.0), np.float32(2.0))
    np.testing.assert_array_equal(pullback(ct)[0], [3.0, 3.0, 3.0])
    eqns = plugax.make_jaxpr(pullback)(ct).jaxpr.eqns
    assert sorted(e.primitive.name for e in eqns) == ["add_any", "broadcast_in_dim",
                                                      "broadcast_in_dim", "reshape"]
    assert eqns[-1].primitive.name == "add_any"   # the two cotangents of x, summed


def test_jacrev_of_several_outputs():
    x = np.arange(6.0).reshape(2, 3)
    f = lambda x: (lax.transpose(x, (1, 0)), lax.reduce_sum(x, (1,)))
    jt, js = plugax.jacrev(f)(x)
    assert jt.shape == (3, 2, 2, 3) and js.shape == (2, 2, 3)
    np.testing.assert_array_equal(js, np.repeat(np.eye(2)[:, :, None], 3, axis=2))
    np.testing.assert_array_equal(np.asarray(jt)[1, 0], np.eye(6).reshape(6, 2, 3)[1])


def test_add_tangents_uses_add_any_and_keeps_symbolic_zeros():
    a = Array(np.ones(3, np.float32))
    zero = Zero(plugax.ShapedArray((3,), np.float32))
    assert add_tangents(zero, a) is a and add_tangents(a, zero) is a
    jaxpr = plugax.make_jaxpr(lambda u, v: add_tangents(u, v))(a, a)
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["add_any"]
    np.testing.assert_array_equal(S.add_any(a, a), [2, 2, 2])


def test_add_any_refuses_tangents_of_different_types():
    with pytest.raises(ShapeError, match="primitive 'add_any' adds tangents of one shape and "
                                         "dtype only.*f32\\[3\\], i32\\[3\\]"):
        plugax.make_jaxpr(S.add_any)(np.ones(3, np.float32), np.ones(3, np.int32))


def test_add_any_batches_with_one_unbatched_operand():
    x, y = np.arange(6.0).reshape(3, 2), np.array([10.0, 20.0, 30.0])
    out = plugax.vmap(S.add_any, in_axes=(1, None))(x, y)
    np.testing.assert_array_equal(out, x.T + y[None, :])


def test_convert_element_type_follows_xla_and_differentiates_between_floats():
    x = np.array([1.7, -2.5, np.nan, 1e10], np.float32)
    np.testing.assert_array_equal(lax.convert_element_type(x, np.int32),
                                  [1, -2, 0, np.iinfo(np.int32).max])
    g = plugax.grad(lambda v: lax.reduce_sum(lax.convert_element_type(v, np.float16), (0,)))(
        np.ones(2, np.float32))
    assert g.dtype == np.float32 and np.all(np.asarray(g) == 1)


def test_structural_errors_name_the_primitive_and_the_fix():
    with pytest.raises(ShapeError, match="primitive 'reshape' cannot change the size 6 to 4"):
        lax.reshape(np.ones((2, 3)), (4,))
    with pytest.raises(ShapeError, match="primitive 'reduce_sum' does not accept dtype bool"):
        lax.reduce_sum(np.ones(2, bool), (0,))


def test_split_and_concatenate_are_a_transpose_pair_checked_by_the_kit():
    from plugax.testing import check_primitive, check_transpose
    x = np.arange(15.0, dtype=np.float32).reshape(5, 3)
    parts = S.split(x, (2, 0, 3), 0)
    assert [p.shape for p in parts] == [(2, 3), (0, 3), (3, 3)]
    np.testing.assert_array_equal(np.asarray(S.concatenate(parts, 0)), x)
    check_primitive(S.split_p, x, sizes=(2, 3), axis=0, linear_argnums=0)
    check_primitive(S.concatenate_p, x[:2], x[2:], dimension=0, linear_argnums=(0, 1))
    check_transpose(S.split_p, x.T, sizes=(1, 4), axis=1, linear_argnums=0)
    with pytest.raises(ShapeError, match="primitive 'split'.*add up"):
        S.split(x, (2, 2), 0)


def test_jacfwd_of_several_leaves_evaluates_the_function_once(toy):
    calls = []

    def f(p):
        calls.append(1)
        return {"y": toy.sin(p["a"]), "z": toy.sin(p["b"])}

    params = {"a": np.array([0.1, 0.2], np.float32), "b": np.array([0.3, 0.4, 0.5], np.float32)}
    jac = plugax.jacfwd(f)(params)
    assert len(calls) == 1          # one vmap over the stacked basis, cut apart by split
    np.testing.assert_allclose(jac["y"]["a"], np.diag(np.cos(params["a"])), rtol=1e-6)
    np.testing.assert_allclose(jac["z"]["b"], np.diag(np.cos(params["b"])), rtol=1e-6)
    assert jac["y"]["b"].shape == (2, 3) and not np.asarray(jac["y"]["b"]).any()
    assert jac["z"]["a"].shape == (3, 2) and not np.asarray(jac["z"]["a"]).any()
