"""The general gather / scatter primitives: the kit's checks (values via the impl,
jvp vs finite differences, transpose by the dot-product test, vmap vs a loop for
every batch-axis placement, jit vs eager) on JAX-style dimension numbers, values vs
a plain NumPy loop in float64, and lowering vs impl."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import plugax
import plugax.lax as lax
from plugax_shape.indexing import take_params
from plugax.testing import (DEFAULT_RULES, check_lowerings, check_primitive, plugin_cases,
                            rand)
from plugax_shape.gather_scatter import (GatherDimensionNumbers as G, GatherScatterMode as M,
                                         ScatterDimensionNumbers as S, gather_p, scatter_add_p,
                                         scatter_max_p, scatter_min_p, scatter_mul_p, scatter_p)

ALL = (*DEFAULT_RULES, "transpose")
fast = settings(max_examples=8, deadline=None, derandomize=True)
VMAP = {"max_placements": 12}


def gparams(dn, sizes, mode=M.CLIP, fill_value=None):
    return dict(dimension_numbers=dn, slice_sizes=sizes, indices_are_sorted=False,
                unique_indices=False, mode=mode, fill_value=fill_value)


def sparams(dn, mode=M.FILL_OR_DROP, unique=False):
    return dict(dimension_numbers=dn, indices_are_sorted=False, unique_indices=unique, mode=mode)


def loop_gather(x, idx, dn, sizes, mode, fill):
    """The definition, one index vector at a time (float64)."""
    batch = idx.shape[:-1]
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    window = [z for d, z in enumerate(sizes) if d not in dropped]
    out = np.empty(batch + tuple(window), np.float64)
    for b in np.ndindex(batch):
        start = np.zeros(x.ndim, int)
        for k, d in enumerate(dn.start_index_map):
            start[d] = idx[b + (k,)]
        for od, sd in zip(dn.operand_batching_dims, dn.start_indices_batching_dims):
            start[od] = b[sd]
        hi = np.array(x.shape) - np.array(sizes)
        ok = ((start >= 0) & (start <= hi)).all()
        start = np.clip(start, 0, hi)
        win = x[tuple(slice(s, s + z) for s, z in zip(start, sizes))].reshape(window)
        out[b] = win if ok or mode is not M.FILL_OR_DROP else fill
    nb = len(batch)
    return np.moveaxis(out, range(nb, nb + len(window)), dn.offset_dims)


# (operand shape, indices, dnums, slice sizes): the layouts NumPy indexing, take,
# take_along_axis and the vmap rules produce, plus windows larger than one element
CASES = [
    ((5,), [[1], [4], [1]], G((), (0,), (0,)), (1,)),
    ((4, 3), [[0], [3], [2]], G((1,), (0,), (0,)), (1, 3)),
    ((4, 3), [[0, 2], [3, 1]], G((), (0, 1), (0, 1)), (1, 1)),
    ((4, 5), [[1, 2], [0, 3], [2, 0]], G((1,), (0,), (0, 1)), (1, 2)),
    ((3, 4, 2), [[[1], [2]], [[0], [3]], [[3], [3]]], G((2,), (1,), (1,), (0,), (0,)),
     (1, 1, 2)),
    ((4, 3), [[2], [0]], G((0, 1), (), (0,)), (2, 3)),
    ((2, 3, 4), [[[1, 0]], [[2, 3]]], G((), (1, 2), (1, 2), (0,), (0,)), (1, 1, 1)),
]


@pytest.mark.parametrize("shape, idx, dn, sizes", CASES)
def test_gather_kit_and_values(shape, idx, dn, sizes):
    x, idx = rand(shape), np.asarray(idx, np.int32)
    check_primitive(gather_p, x, idx, rules=ALL, linear_argnums=0, vmap_options=VMAP,
                    lowering=True, **gparams(dn, sizes))
    got = lax.gather(x.astype(np.float64), idx, dn, sizes, mode="clip")
    np.testing.assert_allclose(got, loop_gather(x.astype(np.float64), idx, dn, sizes, M.CLIP,
                                                0))


@pytest.mark.parametrize("mode", [M.CLIP, M.FILL_OR_DROP, M.PROMISE_IN_BOUNDS])
def test_gather_out_of_range_modes_and_lowering(mode):
    x = rand((5, 3)).astype(np.float64)
    idx = np.array([[-1], [2], [7], [4]], np.int32)
    dn, sizes = G((1,), (0,), (0,)), (1, 2)
    want = loop_gather(x, idx, dn, sizes, mode, -5.0)
    got = lax.gather(x, idx, dn, sizes, mode=mode, fill_value=-5.0)
    np.testing.assert_array_equal(got, want)
    check_lowerings([(gather_p, (x.astype(np.float32), idx), gparams(dn, sizes, mode, -5.0))])


def loop_scatter(op, x, idx, upd, dn, mode):
    """The definition: each update window combined in order, dropped windows skipped."""
    out = x.astype(np.float64).copy()
    scatter_axes = [d for d in range(upd.ndim) if d not in dn.update_window_dims]
    u = np.moveaxis(upd, scatter_axes, range(len(scatter_axes)))
    dropped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    wins = iter(upd.shape[d] for d in dn.update_window_dims)
    sizes = [1 if d in dropped else next(wins) for d in range(x.ndim)]
    for b in np.ndindex(idx.shape[:-1]):
        start = np.zeros(x.ndim, int)
        for k, d in enumerate(dn.scatter_dims_to_operand_dims):
            start[d] = idx[b + (k,)]
        for od, sd in zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims):
            start[od] = b[sd]
        hi = np.array(x.shape) - np.array(sizes)
        if mode is M.CLIP:
            start = np.clip(start, 0, hi)
        elif not ((start >= 0) & (start <= hi)).all():
            continue
        where = tuple(slice(s, s + z) for s, z in zip(start, sizes))
        new = u[b].reshape(out[where].shape)
        out[where] = {"scatter": lambda a, c: c, "scatter-add": np.add,
                      "scatter-mul": np.multiply, "scatter-min": np.minimum,
                      "scatter-max": np.maximum}[op](out[where], new)
    return out


SCATTERS = [  # (operand shape, indices, dnums, updates shape)
    ((5,), [[1], [4], [1], [9]], S((), (0,), (0,)), (4,)),
    ((4, 3), [[0], [3], [0]], S((1,), (0,), (0,)), (3, 3)),
    ((4, 5), [[1, 2], [0, 3], [-1, 0]], S((1,), (0,), (0, 1)), (3, 2)),
    ((3, 4, 2), [[[1], [2]], [[0], [3]], [[3], [3]]], S((2,), (1,), (1,), (0,), (0,)),
     (3, 2, 2)),
]
PRIMS = [scatter_p, scatter_add_p, scatter_mul_p, scatter_min_p, scatter_max_p]


@pytest.mark.parametrize("prim", PRIMS, ids=lambda p: p.name)
@pytest.mark.parametrize("shape, idx, dn, ushape", SCATTERS)
def test_scatter_values_match_a_loop(prim, shape, idx, dn, ushape):
    x, upd, idx = rand(shape), rand(ushape, seed=2), np.asarray(idx, np.int32)
    for mode in (M.FILL_OR_DROP, M.CLIP):
        got = prim.bind(x.astype(np.float64), idx, upd.astype(np.float64), **sparams(dn, mode))
        np.testing.assert_allclose(got, loop_scatter(prim.name, x, idx, upd, dn, mode),
                                   rtol=1e-6)   # plugax computes in float32 (x64 off)
    check_lowerings([(prim, (x, idx, upd), sparams(dn, mode)) for mode in (M.FILL_OR_DROP,
                                                                            M.CLIP)])


@pytest.mark.parametrize("shape, idx, dn, ushape", SCATTERS)
def test_scatter_add_kit(shape, idx, dn, ushape):
    x, upd, idx = rand(shape), rand(ushape, seed=2), np.asarray(idx, np.int32)
    check_primitive(scatter_add_p, x, idx, upd, rules=ALL, linear_argnums=(0, 2),
                    vmap_options=VMAP, lowering=True, **sparams(dn))


def test_scatter_mul_transposes_in_its_operand():
    x, idx, upd = rand((5, 2)), np.array([[3], [0], [3]], np.int32), rand((3, 2), seed=1)
    check_primitive(scatter_mul_p, x, idx, upd, rules=("transpose",), linear_argnums=0,
                    **sparams(S((1,), (0,), (0,))))


def test_scatter_with_unique_indices_is_linear():
    x, idx, upd = rand((5, 2)), np.array([[3], [0]], np.int32), rand((2, 2), seed=1)
    check_primitive(scatter_p, x, idx, upd, rules=ALL, linear_argnums=(0, 2),
                    vmap_options=VMAP, **sparams(S((1,), (0,), (0,)), unique=True))


@pytest.mark.parametrize("prim", [scatter_p, scatter_mul_p, scatter_min_p, scatter_max_p],
                         ids=lambda p: p.name)
def test_nonlinear_scatters_jvp_and_vmap(prim):
    """Repeated indices for scatter (the id trick) and min/max (ties averaged, here none);
    scatter-mul's updates need unique indices, as in JAX."""
    x, upd = rand((5, 2)), rand((3, 2), seed=1)
    unique = prim is scatter_mul_p
    idx = np.array([[3], [0], [1 if unique else 3]], np.int32)
    check_primitive(prim, x, idx, upd, rules=("jvp", "vmap", "jit", "grad"), vmap_options=VMAP,
                    **sparams(S((1,), (0,), (0,)), unique=unique))


def test_scatter_mul_nonunique_updates_grad_raises_like_jax():
    f = lambda u: lax.scatter_mul(np.ones(3, np.float32), np.array([[1], [1]], np.int32), u,
                                  S((), (0,), (0,))).sum()
    with pytest.raises(NotImplementedError, match="unique_indices"):
        plugax.grad(f)(np.ones(2, np.float32))


@fast
@given(st.data())
def test_take_like_gathers_any_layout(data):
    """Hypothesis over operand rank, axis, index shape: gather == np.take, and the kit."""
    rank = data.draw(st.integers(1, 3))
    shape = tuple(data.draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank)))
    axis = data.draw(st.integers(0, rank - 1))
    ishape = tuple(data.draw(st.lists(st.integers(1, 3), max_size=2)))
    idx = np.random.default_rng(rank * 7 + axis).integers(0, shape[axis], ishape)
    x = rand(shape)
    np.testing.assert_array_equal(lax.gather(x, idx.astype(np.int32), axis),
                                  np.take(x, idx, axis))
    check_primitive(gather_p, x, idx.astype(np.int32)[..., None], rules=ALL, linear_argnums=0,
                    vmap_options=VMAP, **take_params(shape, idx.ndim, axis))


def test_front_end_names_exist():
    for name in ("gather", "scatter", "scatter_add", "scatter_mul", "scatter_min",
                 "scatter_max", "dynamic_slice", "dynamic_slice_in_dim",
                 "dynamic_index_in_dim", "dynamic_update_slice", "dynamic_update_slice_in_dim",
                 "dynamic_update_index_in_dim", "GatherDimensionNumbers",
                 "ScatterDimensionNumbers", "GatherScatterMode"):
        assert hasattr(lax, name), name
    assert lax.GatherScatterMode.from_any("fill") is M.FILL_OR_DROP
    with pytest.raises(ValueError, match="Unknown gather mode"):
        lax.GatherScatterMode.from_any("wrap")


def test_errors_name_the_primitive_and_the_fix():
    with pytest.raises(plugax.ShapeError, match="gather.*index vector"):
        lax.gather(rand((3,)), np.zeros((2, 2), np.int32), G((), (0,), (0,)), (1,))
    with pytest.raises(plugax.ShapeError, match="scatter-mul.*dtype"):
        lax.scatter_mul(rand((3,)), np.zeros((2, 1), np.int32), np.ones(2, np.int32),
                        S((), (0,), (0,)))


@pytest.mark.parametrize("case", plugin_cases("shape"))
def test_declared_cases(case):
    """The cases the family declares for the conformance kit pass it here too."""
    case.check()
