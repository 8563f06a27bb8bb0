"""The dot family's lax extras (lax_extra.py): batch_matmul, ragged_dot,
ragged_dot_general, and the dot types. Values against results recorded from jax 0.10.2
(below) and NumPy; the compositions with the authors' kit (jvp against central
differences for both operands, vmap against a loop, jit)."""
import numpy as np
import pytest

import plugax
import plugax.lax as lax
from plugax.testing import check_primitive

# recorded with jax 0.10.2 (ragged_dot of LHS, RHS with group sizes [2, 0, 4]; the
# ragged-contracting ragged_dot_general of LHS2, RHS2 with group sizes [2, 3])
RAGGED = [[0.18557700514793396, -0.6791419982910156], [-0.010956999845802784, -0.8225859999656677], [1.1330430507659912, -0.8910239934921265], [-0.9112489819526672, 0.1682790070772171], [-1.1737480163574219, -1.332800030708313], [-0.5484619736671448, -0.049306999891996384], [0.0, 0.0]]
RAGGED_C = [[[1.9696249961853027, -0.292822003364563, -0.18240900337696075], [0.3491849899291992, -0.11157099902629852, 0.08489900082349777]], [[-1.9094699621200562, 1.1191999912261963, 0.07890699803829193], [-3.8526370525360107, 2.463347911834717, -0.7341309785842896]]]
LHS = [[0.1257302165031433, -0.13210485875606537, 0.6404226422309875], [0.10490011423826218, -0.5356693863868713, 0.3615950644016266], [1.3040000200271606, 0.9470809698104858, -0.7037352323532104], [-1.2654215097427368, -0.6232744455337524, 0.04132597893476486], [-2.32503080368042, -0.218791663646698, -1.2459110021591187], [-0.7322673797607422, -0.5442590117454529, -0.3163001537322998], [0.4116305410861969, 1.042513370513916, -0.12853465974330902]]
RHS = [[[1.3664634227752686, -0.6651946902275085], [0.35151007771492004, 0.9034701585769653], [0.0940122976899147, -0.7434992790222168]], [[-0.9217253923416138, -0.4577258229255676], [0.22019512951374054, -1.0096181631088257], [-0.20917557179927826, -0.15922501683235168]], [[0.5408455729484558, 0.21465912461280823], [0.35537269711494446, -0.6538286209106445], [-0.12961363792419434, 0.7839754819869995]]]
LHS2 = [[1.4934310913085938, -1.2590655088424683, 1.5139237642288208, 1.3458753824234009, 0.7813113927841187], [0.2644556164741516, -0.31392282247543335, 1.4580206871032715, 1.9602583646774292, 1.8016349077224731]]
RHS2 = [[1.3151037693023682, 0.3573804199695587, -1.2083185911178589], [-0.004454133100807667, 0.6564749479293823, -1.2883614301681519], [0.39512205123901367, 0.42986369132995605, 0.6960427165031433], [-1.1841179132461548, -0.661702573299408, -0.4364352524280548], [-1.169801950454712, 1.7393678426742554, -0.49591073393821716]]


def _jitted(fn, **kwargs):
    """`fn` under jit when the xla_call plugin (plugax.jit) is loaded; this family's own
    test environment loads fewer plugins, and then the eager checks run alone."""
    jit = getattr(plugax, "jit", None)
    return fn if jit is None else jit(fn, **kwargs)


def test_ragged_dot_matches_jax():
    lhs, rhs = np.array(LHS, np.float32), np.array(RHS, np.float32)
    sizes = np.array([2, 0, 4], np.int32)
    for fn in (lax.ragged_dot, _jitted(lax.ragged_dot)):
        np.testing.assert_allclose(fn(lhs, rhs, sizes), RAGGED, rtol=1e-5, atol=1e-6)
    check_primitive(lambda a, b: lax.ragged_dot(a, b, sizes), lhs, rhs)
    # the group sizes may be traced (and vmapped)
    np.testing.assert_allclose(plugax.vmap(lambda s: lax.ragged_dot(lhs, rhs, s))(
        np.stack([sizes, np.array([7, 0, 0], np.int32)]))[1], lhs @ rhs[0], rtol=1e-5)


def test_ragged_dot_general_contracting_matches_jax():
    dn = lax.RaggedDotDimensionNumbers((((1,), (0,)), ((), ())), (1,), ())
    lhs, rhs = np.array(LHS2, np.float32), np.array(RHS2, np.float32)
    sizes = np.array([2, 3], np.int32)
    np.testing.assert_allclose(lax.ragged_dot_general(lhs, rhs, sizes, dn), RAGGED_C,
                               rtol=1e-5, atol=1e-6)
    check_primitive(lambda a, b: lax.ragged_dot_general(a, b, sizes, dn), lhs, rhs)
    with pytest.raises(NotImplementedError, match="group_offset"):
        lax.ragged_dot(lhs, rhs, sizes, group_offset=np.int32(0))


def test_batch_matmul():
    a = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    b = np.random.default_rng(1).standard_normal((2, 4, 5)).astype(np.float32)
    np.testing.assert_allclose(lax.batch_matmul(a, b), a @ b, rtol=1e-5)
    check_primitive(lax.batch_matmul, a, b)
    with pytest.raises(ValueError, match="same ndim"):
        lax.batch_matmul(a[0], b)


def test_dot_types_as_jax():
    assert lax.DotAlgorithmPreset.F32_F32_F32.name == "F32_F32_F32"
    assert len(lax.DotAlgorithmPreset) == 16
    algo = lax.DotAlgorithm(np.float32, np.float32, np.float32)
    assert algo.lhs_component_count == 1 and not algo.allow_imprecise_accumulation
    x = np.ones((2, 2), np.float32)
    for precision in (lax.DotAlgorithmPreset.BF16_BF16_F32, algo):
        np.testing.assert_array_equal(lax.dot(x, x, precision=precision), 2 * x)
    assert lax.AccuracyMode.HIGHEST.value == 1
    with pytest.raises(ValueError, match="non-negative"):
        lax.Tolerance(atol=-1.0)
    assert lax.Tolerance(rtol=1e-3).rtol == 1e-3


def test_scaled_dot_matches_jax_to_bfloat16():
    rng = np.random.default_rng(0)
    lhs = rng.standard_normal((3, 8)).astype(np.float32)
    rhs = rng.standard_normal((8, 2)).astype(np.float32)
    ls = rng.uniform(0.5, 2, (3, 2)).astype(np.float32)
    rs = rng.uniform(0.5, 2, (2, 2)).astype(np.float32)
    # recorded with jax 0.10.2 (bfloat16, its default result type)
    expected = [[-0.1806640625, 2.34375], [0.99609375, -2.078125], [-0.181640625, 3.484375]]
    for fn in (lax.scaled_dot, _jitted(lax.scaled_dot)):
        out = fn(lhs, rhs, lhs_scale=ls, rhs_scale=rs)
        assert out.dtype.name == "bfloat16"
        np.testing.assert_allclose(np.asarray(out, np.float32), expected, rtol=1e-2, atol=1e-2)
    exact = (lhs * np.repeat(ls, 4, 1)) @ (rhs * np.repeat(rs, 4, 0))
    np.testing.assert_allclose(lax.scaled_dot(lhs, rhs, lhs_scale=ls, rhs_scale=rs,
                                              preferred_element_type=np.float32), exact,
                               rtol=1e-5)
    with pytest.raises(TypeError, match="multiple"):
        lax.scaled_dot(lhs, rhs, lhs_scale=ls[:, :1].repeat(3, 1), rhs_scale=rs)


def test_ragged_dot_general_with_batch_dimensions_matches_jax():
    """The three modes with a batch dimension; values recorded with jax 0.10.2 in
    ragged_batch_jax.json (group sizes per batch entry and shared)."""
    import json
    from pathlib import Path
    rec = {k: np.array(v, np.float32) for k, v in json.loads(
        (Path(__file__).parent / "ragged_batch_jax.json").read_text()).items()}
    sizes = np.array([[2, 1, 2], [0, 4, 1]], np.int32)
    rows = lax.RaggedDotDimensionNumbers((((2,), (2,)), ((0,), (1,))), (1,), (0,))
    np.testing.assert_allclose(lax.ragged_dot_general(rec["L1"], rec["R1"], sizes, rows),
                               rec["O1"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(lax.ragged_dot_general(rec["L1"], rec["R1"], sizes[0], rows),
                               rec["O1s"], rtol=1e-5, atol=1e-5)
    contracting = lax.RaggedDotDimensionNumbers((((2,), (1,)), ((0,), (0,))), (2,), ())
    out = lax.ragged_dot_general(rec["L2"], rec["R2"], np.array([[2, 3], [4, 1]], np.int32),
                                 contracting)
    np.testing.assert_allclose(out, rec["O2"], rtol=1e-5, atol=1e-5)
    batch = lax.RaggedDotDimensionNumbers((((2,), (1,)), ((0,), (0,))), (0,), ())
    np.testing.assert_allclose(lax.ragged_dot_general(rec["L3"], rec["R3"],
                                                      np.array([1, 2], np.int32), batch),
                               rec["O3"], rtol=1e-5, atol=1e-5)
    check_primitive(lambda a, b: lax.ragged_dot_general(a, b, sizes, rows), rec["L1"],
                    rec["R1"])
