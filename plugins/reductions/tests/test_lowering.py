"""Lowering rules of the reductions family: jitted (XLA) equals eager (NumPy impl).

Every primitive is checked on every dtype it accepts, all of a primitive's cases
lowered into one module (compiling dominates the cost). Float inputs are small
powers of two and zeros, so sums and products are exact in every precision and
the comparison can be strict whatever order XLA adds in; one float32 case of
random normals checks ordinary rounding. Then the edge cases: empty axes, size-0
axes, NaN/inf and ties for max/min/argmax/argmin (NumPy returns the first NaN,
else the first extremum), and plugax.numpy reductions under px.jit, keepdims
paths included.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import plugax as px
import plugax.numpy as pnp
from plugax.testing import INTS, NUMERIC, check_lowerings, has_lowering, x64
from plugax_reductions.cumulative import cummax_p, cummin_p, cumprod_p, cumsum_p
from plugax_reductions.reduce import (argmax_p, argmin_p, reduce_and_p, reduce_max_p,
                                      reduce_min_p, reduce_or_p, reduce_prod_p, reduce_sum_p)

NUMBER = NUMERIC
REAL = ("bool",) + NUMBER
LOGICAL = ("bool",) + INTS
SHAPE = (3, 4, 5)
ALL_PRIMS = (reduce_sum_p, reduce_prod_p, reduce_max_p, reduce_min_p, reduce_and_p,
             reduce_or_p, argmax_p, argmin_p, cumsum_p, cumprod_p, cummax_p, cummin_p)

jit = getattr(px, "jit", None)
needs_jit = pytest.mark.skipif(jit is None, reason="the xla_call plugin (px.jit) is not loaded")


def draw(dtype, shape=SHAPE, seed=0):
    """Exactly-representable values: floats in {0, +-1/2, +-1, +-2}, small ints, bools."""
    import ml_dtypes
    rng = np.random.default_rng(seed)
    name = np.dtype(dtype).name if dtype != "bfloat16" else "bfloat16"
    if name == "bool":
        return rng.random(shape) < 0.5
    if name in INTS:
        lo = 0 if name.startswith("u") else -3
        return rng.integers(lo, 4, size=shape).astype(name)
    values = rng.choice([0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0], size=shape)
    return values.astype(ml_dtypes.bfloat16 if name == "bfloat16" else name)


def check_dtypes(prim, dtypes, param_sets, shape=SHAPE):
    """`prim` on every dtype, lowered as one module (x64 on). The dtypes take turns
    with the params dicts: XLA compiles each case to its own kernel (tens of ms on
    CPU), so every dtype and every params dict is covered once, not their product."""
    n = max(len(dtypes), len(param_sets))
    with x64():
        check_lowerings([(prim, (draw(dtypes[i % len(dtypes)], shape, seed=i),),
                          param_sets[i % len(param_sets)]) for i in range(n)])


def test_every_primitive_has_a_lowering():
    assert all(has_lowering(p) for p in ALL_PRIMS)


AXES = [dict(axes=(1,)), dict(axes=(0, 2)), dict(axes=()), dict(axes=(0, 1, 2))]


@pytest.mark.parametrize("prim, dtypes", [
    (reduce_sum_p, NUMBER), (reduce_prod_p, NUMBER), (reduce_max_p, REAL),
    (reduce_min_p, REAL), (reduce_and_p, LOGICAL), (reduce_or_p, LOGICAL)], ids=str)
def test_folds_match_impl_for_every_dtype(prim, dtypes):
    check_dtypes(prim, dtypes, AXES)


@pytest.mark.parametrize("prim", [argmax_p, argmin_p], ids=str)
def test_arg_reductions_match_impl_for_every_dtype(prim):
    params = [dict(axes=(a,), index_dtype=np.dtype(i)) for a in (0, 2)
              for i in ("int32", "int64")]
    check_dtypes(prim, REAL, params)


@pytest.mark.parametrize("prim, dtypes", [
    (cumsum_p, NUMBER), (cumprod_p, NUMBER), (cummax_p, NUMBER), (cummin_p, NUMBER)],
    ids=str)   # JAX's cummax/cummin reject bool, like cumsum
def test_cumulative_match_impl_for_every_dtype(prim, dtypes):
    params = [dict(axis=a, reverse=r) for a in (0, 2) for r in (False, True)]
    check_dtypes(prim, dtypes, params)


def test_float32_random_values_round_alike():
    x = np.random.default_rng(1).standard_normal((6, 33)).astype(np.float32)
    check_lowerings([(reduce_sum_p, (x,), dict(axes=(1,))),
                     (reduce_prod_p, (x,), dict(axes=(0,))),
                     (cumsum_p, (x,), dict(axis=1, reverse=False)),
                     (cumsum_p, (x,), dict(axis=1, reverse=True)),
                     (cumprod_p, (x,), dict(axis=0, reverse=False))])


def test_size_zero_axes_give_the_identity():
    """Reducing an empty axis yields 0, 1, lowest, highest, all-ones, zero."""
    cases = []
    with x64():
        for d in ("float32", "int32", "uint8", "bool"):
            x = np.zeros((3, 0, 2), d)
            for prim in (reduce_max_p, reduce_min_p):
                cases.append((prim, (x,), dict(axes=(1,))))
            if d != "bool":
                cases += [(reduce_sum_p, (x,), dict(axes=(1,))),
                          (reduce_prod_p, (x,), dict(axes=(0, 1))),
                          (cumsum_p, (x,), dict(axis=1, reverse=False)),
                          (cummax_p, (x,), dict(axis=0, reverse=True))]
            if d != "float32":
                cases += [(reduce_and_p, (x,), dict(axes=(1,))),
                          (reduce_or_p, (x,), dict(axes=(1, 2)))]
        outs = check_lowerings(cases)
    assert np.asarray(outs[0][0]).tolist() == [[-np.inf] * 2] * 3


def test_nan_and_inf_propagate_like_numpy():
    x = np.array([[1.0, np.nan, 3.0, -np.inf], [np.inf, 2.0, -1.0, 0.0],
                  [-np.inf, -np.inf, -np.inf, -np.inf]], np.float32)
    cases = [(p, (x,), dict(axes=(1,))) for p in (reduce_max_p, reduce_min_p, reduce_sum_p,
                                                   reduce_prod_p)]
    cases += [(p, (x,), dict(axis=1, reverse=r)) for p in (cummax_p, cummin_p, cumsum_p)
              for r in (False, True)]
    with np.errstate(invalid="ignore"):    # the impl's inf * 0 in reduce_prod
        check_lowerings(cases)


ARG_EDGES = [
    [1.0, np.nan, 3.0, np.nan],        # the first NaN wins, for argmax and argmin
    [3.0, 1.0, 3.0, 1.0],              # ties: the first extremum
    [-np.inf, -np.inf, -np.inf, -np.inf],
    [np.inf, np.inf, 2.0, np.nan],
    [0.0, -0.0, 0.0, -0.0],
]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_argmax_argmin_nan_and_tie_semantics(dtype):
    with x64():
        x = np.array(ARG_EDGES, dtype)
        outs = check_lowerings([(p, (x,), dict(axes=(1,), index_dtype=np.dtype(np.int32)))
                                for p in (argmax_p, argmin_p)])
    assert np.asarray(outs[0][0]).tolist() == [1, 0, 0, 3, 0]
    assert np.asarray(outs[1][0]).tolist() == [1, 1, 0, 3, 0]


def test_argmax_of_extreme_integers_and_bools():
    i8 = np.array([[-128, -128, -128], [127, 5, 127], [0, 127, -128]], np.int8)
    b = np.array([[False, False, False], [False, True, True]])
    u = np.array([[0, 0], [255, 255]], np.uint8)
    params = dict(axes=(1,), index_dtype=np.dtype(np.int32))
    check_lowerings([(p, (x,), params) for p in (argmax_p, argmin_p) for x in (i8, b, u)])


@settings(max_examples=8, deadline=None)
@given(st.lists(st.sampled_from([0.0, 1.0, -1.0, 2.0, np.nan, np.inf, -np.inf]),
                min_size=1, max_size=9), st.integers(1, 3))
def test_argmax_argmin_agree_with_numpy_on_any_ties_and_nans(values, rows):
    """Property: with few distinct values (many ties, NaNs, infinities) the compiled
    comparator still finds NumPy's index, whatever order XLA combines in."""
    x = np.array([values] * rows, np.float32)
    x = x * np.arange(1, rows + 1, dtype=np.float32)[:, None]
    params = dict(axes=(1,), index_dtype=np.dtype(np.int32))
    with np.errstate(invalid="ignore"):
        check_lowerings([(argmax_p, (x,), params), (argmin_p, (x,), params)])


def test_long_cumulative_axis_uses_every_doubling_round():
    """Lengths that are not powers of two exercise the last partial round."""
    x = np.random.default_rng(2).integers(-5, 6, size=(2, 37)).astype(np.int32)
    check_lowerings([(p, (x,), dict(axis=1, reverse=r)) for p, r in
                     ((cumsum_p, False), (cumprod_p, True), (cummax_p, True), (cummin_p, False))])


# --- plugax.numpy under jit ------------------------------------------------------------
NUMPY_FUNCTIONS = {
    "sum": lambda x: pnp.sum(x),
    "sum_axes_keepdims": lambda x: pnp.sum(x, axis=(0, 2), keepdims=True),
    "mean_keepdims": lambda x: pnp.mean(x, axis=-1, keepdims=True),
    "mean": lambda x: pnp.mean(x, axis=1),
    "max": lambda x: pnp.max(x, axis=1),
    "min_keepdims": lambda x: pnp.min(x, axis=0, keepdims=True),
    "argmax": lambda x: pnp.argmax(x, axis=-1),
    "argmax_keepdims": lambda x: pnp.argmax(x, axis=1, keepdims=True),
    "argmin_flat": lambda x: pnp.argmin(x),
    "cumsum": lambda x: pnp.cumsum(x, axis=1),
    "cumsum_flat": lambda x: pnp.cumsum(x),
    "cumprod": lambda x: pnp.cumprod(x, axis=-1),
    "prod": lambda x: pnp.prod(x, axis=2),
    "any_all": lambda x: (pnp.any(x > 0, axis=1), pnp.all(x > -1, axis=(0, 1))),
    "std": lambda x: pnp.std(x, axis=0),
}


def assert_jit_equals_eager(f, *args):
    """px.jit(f) and f agree on every output: shape, dtype, values."""
    as_tuple = lambda out: out if isinstance(out, tuple) else (out,)  # noqa: E731
    for got, want in zip(as_tuple(jit(f)(*args)), as_tuple(f(*args)), strict=True):
        got, want = np.asarray(got), np.asarray(want)
        assert (got.shape, got.dtype) == (want.shape, want.dtype)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@needs_jit
@pytest.mark.parametrize("name", list(NUMPY_FUNCTIONS))
def test_numpy_reductions_jit_equal_eager(name):
    x = np.random.default_rng(3).standard_normal(SHAPE).astype(np.float32)
    assert_jit_equals_eager(NUMPY_FUNCTIONS[name], x)
