"""plugax.numpy's sorting functions against NumPy in float64, from one table:
name -> plugax call -> NumPy reference -> domain. Each row also runs under jit
(equal to eager) and, where it maps over a leading axis, under vmap (equal to a loop)."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import plugax
import plugax.numpy as pnp
from plugax import lax
from plugax.testing import x64

_RNG = np.random.default_rng(0)
NORMAL = _RNG.standard_normal((3, 6))
TIES = _RNG.integers(0, 4, (3, 6)).astype(np.float64)
NANS = NORMAL.copy()
NANS[0, 1], NANS[2, [0, 3]] = np.nan, np.nan
ALL_NAN_ROW = NANS.copy()
ALL_NAN_ROW[1] = np.nan
INTS = _RNG.integers(-3, 3, (4, 5))
EDGES = np.array([-1.0, -0.2, 0.0, 0.5, 0.5, 2.0])
POINTS = _RNG.standard_normal((40, 3))
WEIGHTS = _RNG.uniform(0, 2, (3, 6))
WEIGHTS[0, 2] = 0.0
DOMAINS = {"normal": NORMAL, "ties": TIES, "nans": NANS, "all_nan_row": ALL_NAN_ROW,
           "ints": INTS, "points": POINTS}


def _np_nearest(x, q, **kw):
    """JAX's 'nearest' rounds a fraction of exactly 0.5 down (NumPy rounds half to even)."""
    kw.pop("method")
    lo = np.quantile(x, q, method="lower", **kw)
    hi = np.quantile(x, q, method="higher", **kw)
    n = x.size if kw.get("axis") is None else x.shape[kw["axis"]]
    frac = np.asarray(q) * (n - 1) % 1
    frac = frac.reshape(frac.shape + (1,) * (np.ndim(lo) - frac.ndim))
    return np.where(frac <= 0.5, lo, hi)


def _flat(result):
    """(hist, [edges...]) as one tuple of arrays."""
    return (result[0], *result[1])


def _quiet(fn):
    def run(*a, **k):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # NumPy's all-NaN slice warnings
            return fn(*a, **k)
    return run


Q = np.array([0.0, 0.1, 0.5, 0.75, 1.0])
# (id, plugax function of x, NumPy reference of x, domain, jittable, vmappable)
TABLE = [
    ("sort", lambda x: pnp.sort(x), lambda x: np.sort(x), "ties", True, True),
    ("sort_axis0_nans", lambda x: pnp.sort(x, axis=0), lambda x: np.sort(x, axis=0), "nans",
     True, False),
    ("sort_flat", lambda x: pnp.sort(x, axis=None), lambda x: np.sort(x, axis=None), "nans",
     True, False),
    ("sort_descending", lambda x: pnp.sort(x, descending=True),
     lambda x: np.flip(np.sort(x), -1), "nans", True, True),
    ("argsort", lambda x: pnp.argsort(x), lambda x: np.argsort(x, kind="stable"), "ties",
     True, True),
    ("argsort_nans_axis0", lambda x: pnp.argsort(x, axis=0),
     lambda x: np.argsort(x, axis=0, kind="stable"), "nans", True, False),
    ("argsort_descending", lambda x: pnp.argsort(x, descending=True),
     lambda x: np.argsort(-x, kind="stable"), "ties", True, True),
    ("lexsort", lambda x: pnp.lexsort((x[0], x[1])), lambda x: np.lexsort((x[0], x[1])),
     "ties", True, False),
    ("lexsort_axis0", lambda x: pnp.lexsort([x[:, :3], x[:, 3:]], axis=0),
     lambda x: np.lexsort([x[:, :3], x[:, 3:]], axis=0), "ties", True, False),
    ("searchsorted_left", lambda x: pnp.searchsorted(EDGES, x),
     lambda x: np.searchsorted(EDGES, x), "ties", True, True),
    ("searchsorted_right", lambda x: pnp.searchsorted(EDGES, x - 1, side="right"),
     lambda x: np.searchsorted(EDGES, x - 1, side="right"), "ties", True, True),
    ("searchsorted_compare_all", lambda x: pnp.searchsorted(EDGES, x, method="compare_all"),
     lambda x: np.searchsorted(EDGES, x), "normal", True, True),
    ("searchsorted_sorter", lambda x: pnp.searchsorted(x[0], x[1], sorter=pnp.argsort(x[0])),
     lambda x: np.searchsorted(x[0], x[1], sorter=np.argsort(x[0])), "ties", True, False),
    ("searchsorted_nans", lambda x: pnp.searchsorted(pnp.sort(x[0]), x[2]),
     lambda x: np.searchsorted(np.sort(x[0]), x[2]), "nans", True, False),
    ("digitize", lambda x: pnp.digitize(x, EDGES[[0, 1, 2, 3, 5]]),
     lambda x: np.digitize(x, EDGES[[0, 1, 2, 3, 5]]), "normal", True, True),
    ("digitize_right_decreasing", lambda x: pnp.digitize(x - 1, EDGES[::-1], right=True),
     lambda x: np.digitize(x - 1, EDGES[::-1], right=True), "ties", True, True),
    ("median", lambda x: pnp.median(x), lambda x: np.median(x), "normal", True, False),
    ("median_axis", lambda x: pnp.median(x, axis=-1, keepdims=True),
     lambda x: np.median(x, axis=-1, keepdims=True), "nans", True, True),
    ("nanmedian", lambda x: pnp.nanmedian(x, axis=-1), _quiet(lambda x: np.nanmedian(x, axis=-1)),
     "all_nan_row", True, True),
    ("percentile", lambda x: pnp.percentile(x, 100 * Q, axis=0),
     lambda x: np.percentile(x, 100 * Q, axis=0), "normal", True, False),
    ("nanpercentile", lambda x: pnp.nanpercentile(x, 30.0),
     lambda x: np.nanpercentile(x, 30.0), "nans", True, False),
    ("quantile_ints", lambda x: pnp.quantile(x, Q, axis=(0, 1)),
     lambda x: np.quantile(x, Q, axis=(0, 1)), "ints", True, False),
    ("nanquantile_keepdims", lambda x: pnp.nanquantile(x, Q, axis=(1,), keepdims=True),
     _quiet(lambda x: np.nanquantile(x, Q, axis=(1,), keepdims=True)), "all_nan_row", True,
     False),
    ("quantile_inverted_cdf_weights",
     lambda x: pnp.quantile(x, Q, axis=1, method="inverted_cdf", weights=WEIGHTS[0]),
     lambda x: np.quantile(x, Q, axis=1, method="inverted_cdf",
                           weights=np.broadcast_to(WEIGHTS[0], x.shape)), "ties", True, False),
    ("nanquantile_inverted_cdf", lambda x: pnp.nanquantile(x, Q, method="inverted_cdf",
                                                           weights=WEIGHTS),
     lambda x: np.nanquantile(x, Q, method="inverted_cdf", weights=WEIGHTS), "nans", True,
     False),
    ("unique", lambda x: pnp.unique(x, True, True, True), lambda x: np.unique(x, True, True, True),
     "ties", False, False),
    ("unique_nans", lambda x: pnp.unique(x), lambda x: np.unique(x), "nans", False, False),
    ("unique_axis0", lambda x: pnp.unique(x[:, :2] > 0, axis=0, return_counts=True),
     lambda x: np.unique(x[:, :2] > 0, axis=0, return_counts=True), "normal", False, False),
    ("unique_size", lambda x: pnp.unique(x, return_counts=True, size=8, fill_value=-1),
     lambda x: tuple(np.pad(r, (0, 8 - len(r)), constant_values=c)
                     for r, c in zip(np.unique(x, return_counts=True), (-1, 0))), "ints",
     True, False),
    ("unique_values", lambda x: pnp.unique_values(x), lambda x: np.unique_values(x), "nans",
     False, False),
    ("unique_counts", lambda x: tuple(pnp.unique_counts(x)),
     lambda x: tuple(np.unique_counts(x)), "ties", False, False),
    ("unique_inverse", lambda x: tuple(pnp.unique_inverse(x)),
     lambda x: tuple(np.unique_inverse(x)), "ints", False, False),
    ("unique_all", lambda x: tuple(pnp.unique_all(x)), lambda x: tuple(np.unique_all(x)),
     "ints", False, False),
    ("histogram", lambda x: pnp.histogram(x, bins=4), lambda x: np.histogram(x, bins=4),
     "normal", True, False),
    ("histogram_edges_weights_density",
     lambda x: pnp.histogram(x, bins=EDGES[[0, 2, 3, 5]], weights=x ** 2, density=True),
     lambda x: np.histogram(x, bins=EDGES[[0, 2, 3, 5]], weights=x ** 2, density=True),
     "normal", True, False),
    ("histogram_range", lambda x: pnp.histogram(x, bins=3, range=(0.0, 2.0)),
     lambda x: np.histogram(x, bins=3, range=(0.0, 2.0)), "ties", True, False),
    ("histogramdd", lambda x: _flat(pnp.histogramdd(x, bins=[2, 3, EDGES[[0, 2, 5]]])),
     lambda x: _flat(np.histogramdd(x, bins=[2, 3, EDGES[[0, 2, 5]]])), "points", True, False),
    ("histogramdd_weights_density_range",
     lambda x: _flat(pnp.histogramdd(x, bins=3, weights=x[:, 0] ** 2, density=True,
                                     range=[(-1, 1), None, (0, 2)])),
     lambda x: _flat(np.histogramdd(x, bins=3, weights=x[:, 0] ** 2, density=True,
                                    range=[(-1, 1), None, (0, 2)])), "points", True, False),
    ("histogram2d", lambda x: pnp.histogram2d(x[:, 0], x[:, 1], bins=[3, 4]),
     lambda x: np.histogram2d(x[:, 0], x[:, 1], bins=[3, 4]), "points", True, False),
    ("histogram2d_edges", lambda x: pnp.histogram2d(x[:, 0], x[:, 1], bins=EDGES),
     lambda x: np.histogram2d(x[:, 0], x[:, 1], bins=EDGES), "points", True, False),
    ("histogram_bin_edges", lambda x: pnp.histogram_bin_edges(x, bins=5),
     lambda x: np.histogram_bin_edges(x, bins=5), "normal", True, False),
]
for m in ("linear", "lower", "higher", "midpoint", "nearest"):
    ref = _np_nearest if m == "nearest" else np.quantile
    TABLE.append((f"quantile_{m}", lambda x, m=m: pnp.quantile(x, Q, axis=1, method=m),
                  lambda x, m=m, ref=ref: ref(x, Q, axis=1, method=m), "ties", True, False))


def _check(got, want):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, (g.shape, w.shape)
        if w.dtype.kind in "iub":
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("row", TABLE, ids=[r[0] for r in TABLE])
def test_against_numpy_float64(row):
    _, fn, ref, domain, jittable, vmappable = row
    x = DOMAINS[domain]
    with x64():
        _check(fn(x), ref(x))
        if jittable:
            _check(plugax.jit(fn)(x), ref(x))
        if vmappable:
            _check(plugax.vmap(fn)(x), tuple(np.stack(r) for r in zip(
                *[ref(r) if isinstance(ref(r), tuple) else (ref(r),) for r in x])))


def test_index_dtypes_follow_jax():
    assert pnp.argsort(NORMAL).dtype == np.int32
    assert pnp.argsort(NORMAL, dtype=np.int16).dtype == np.int16
    assert pnp.searchsorted(EDGES, NORMAL).dtype == np.int32
    assert lax.top_k(NORMAL, 2)[1].dtype == np.int32
    assert pnp.median(INTS).dtype == np.float32 and pnp.median(NORMAL.astype(np.float32)).dtype \
        == np.float32
    assert not pnp.median(INTS).weak_type and not pnp.quantile(INTS, 0.5).weak_type
    with x64():
        assert pnp.argsort(NORMAL).dtype == np.int64
        assert pnp.unique(INTS, return_index=True)[1].dtype == np.int64


def test_histogram_count_dtypes_follow_jax():
    """JAX counts 1-D histograms in floats (weights of ones like the data), the n-D ones
    in the default integer type (a bincount)."""
    assert pnp.histogram(NORMAL)[0].dtype == np.float32
    assert pnp.histogram2d(POINTS[:, 0], POINTS[:, 1])[0].dtype == np.int32
    assert pnp.histogramdd(POINTS, weights=POINTS[:, 0])[0].dtype == np.float32


def test_top_k():
    x = np.array([[1.0, 3.0, 3.0, -np.inf, np.nan, 2.0], [0.0, -0.0, 5.0, 5.0, 5.0, 1.0]])
    for out in (lax.top_k(x, 4), plugax.jit(lambda v: lax.top_k(v, 4))(x)):
        np.testing.assert_array_equal(out[1], [[4, 1, 2, 5], [2, 3, 4, 5]])   # ties: lower first
        np.testing.assert_array_equal(out[0], np.take_along_axis(x, np.asarray(out[1]), 1))
    vals, idx = lax.top_k(x, 2, axis=0)
    np.testing.assert_array_equal(idx, [[0, 0, 1, 1, 0, 0], [1, 1, 0, 0, 1, 1]])
    with pytest.raises(ValueError, match="k must be in"):
        lax.top_k(x, 7)
    batched = plugax.vmap(lambda v: lax.top_k(v, 3))(x)
    for i in range(2):
        np.testing.assert_array_equal(batched[1][i], lax.top_k(x[i], 3)[1])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_top_k_total_order_is_jax(dtype):
    """XLA's TOTALORDER, as JAX's top_k: NaN > inf > 0.0 > -0.0 > -inf > -NaN
    (recorded from jax 0.10.2)."""
    x = np.array([-np.nan, -0.0, 0.0, -np.inf, 0.0, 1.0, np.nan, -0.0], np.float32)
    want = [6, 5, 2, 4, 1, 7, 3, 0]
    with x64():
        x = x.astype(dtype)
        for vals, idx in (lax.top_k(x, 8), plugax.jit(lambda v: lax.top_k(v, 8))(x)):
            np.testing.assert_array_equal(idx, want)
            assert vals.dtype == x.dtype and idx.dtype == np.int32
            np.testing.assert_array_equal(np.signbit(np.asarray(vals).astype(np.float32)),
                                          np.signbit(x[want].astype(np.float32)))


def test_approx_max_and_min_k_are_exact():
    x = np.array([[3.0, 1.0, 2.0, 1.0, np.nan, -np.inf]], np.float32)
    for f in (lambda v: lax.approx_max_k(v, 3), plugax.jit(lambda v: lax.approx_max_k(v, 3))):
        vals, idx = f(x)
        np.testing.assert_array_equal(idx, [[4, 0, 2]])
        np.testing.assert_array_equal(vals, [[np.nan, 3.0, 2.0]])
    for f in (lambda v: lax.approx_min_k(v, 3), plugax.jit(lambda v: lax.approx_min_k(v, 3))):
        vals, idx = f(x)
        np.testing.assert_array_equal(idx, [[5, 1, 3]])           # ties: lower index first
        np.testing.assert_array_equal(vals, [[-np.inf, 1.0, 1.0]])
    vals, idx = lax.approx_min_k(x.T, 2, reduction_dimension=0)
    np.testing.assert_array_equal(idx, [[5], [1]])


def test_partition_outputs_are_jax():
    """Recorded from jax 0.10.2 (JAX's order within each side is its own; we match it)."""
    x = np.array([6, 8, 4, 3, 1, 9, 7, 5, 2, 3])
    np.testing.assert_array_equal(pnp.partition(x, 4), [1, 2, 3, 3, 4, 9, 8, 7, 6, 5])
    np.testing.assert_array_equal(pnp.argpartition(x, 4), [4, 8, 3, 9, 2, 0, 1, 5, 6, 7])
    y = np.array([[3.0, np.nan, 1.0, 2.0, -np.nan, 0.0], [5.0, 5.0, 1.0, 1.0, 0.0, 2.0]],
                 np.float32)
    for f in (lambda v: pnp.argpartition(v, 2), plugax.jit(lambda v: pnp.argpartition(v, 2)),
              plugax.vmap(lambda v: pnp.argpartition(v, 2))):
        np.testing.assert_array_equal(f(y), [[4, 5, 2, 0, 1, 3], [4, 2, 3, 0, 1, 5]])
    np.testing.assert_array_equal(pnp.partition(y, 0, axis=0),
                                  [[3, 5, 1, 1, np.nan, 0], [5, np.nan, 1, 2, 0, 2]])
    u = np.array([3, 0, 2, 1], np.uint8)
    np.testing.assert_array_equal(pnp.partition(u, 1), [0, 1, 3, 2])
    np.testing.assert_array_equal(pnp.argpartition(u, 1), [1, 3, 0, 2])


@pytest.mark.parametrize("kth", [0, 2, -1])
def test_partition_and_argpartition(kth):
    for x in (TIES, NORMAL, INTS):
        with x64():
            p = np.asarray(pnp.partition(x, kth, axis=1))
            ip = np.asarray(pnp.argpartition(x, kth, axis=1))
            pivot = np.sort(x, axis=1)[:, kth]
            np.testing.assert_array_equal(p[:, kth], pivot)
            np.testing.assert_array_equal(np.take_along_axis(x, ip, 1)[:, kth], pivot)
            assert np.all(p[:, :kth % x.shape[1]] <= pivot[:, None])
            assert np.all(p[:, kth % x.shape[1] + 1:] >= pivot[:, None])
            np.testing.assert_array_equal(np.sort(p, 1), np.sort(x, 1))
            np.testing.assert_array_equal(np.sort(ip, 1), np.tile(np.arange(x.shape[1]),
                                                                  (x.shape[0], 1)))


def test_array_methods():
    x = pnp.asarray(TIES)
    np.testing.assert_array_equal(x.sort(axis=0), np.sort(TIES, axis=0))
    np.testing.assert_array_equal(x.argsort(descending=True), pnp.argsort(x, descending=True))
    np.testing.assert_array_equal(pnp.sort(x[0]).searchsorted(1.0),
                                  np.searchsorted(np.sort(TIES[0]), 1.0))
    kth = np.asarray(x.argpartition(2))
    np.testing.assert_array_equal(np.take_along_axis(TIES, kth, 1)[:, 2], np.sort(TIES)[:, 2])
    assert plugax.jit(lambda v: v.sort())(x).shape == TIES.shape


def test_unique_needs_size_under_jit():
    with pytest.raises(plugax.ConcretizationTypeError, match="size argument"):
        plugax.jit(pnp.unique)(INTS)
    vals = plugax.vmap(lambda r: pnp.unique(r, size=3))(INTS)      # per-row, padded
    for row, got in zip(INTS, np.asarray(vals)):
        u = np.unique(row)[:3]
        np.testing.assert_array_equal(got, np.pad(u, (0, 3 - len(u)), constant_values=u[0]))
    with pytest.raises(ValueError, match="fill_value must be specified"):
        pnp.unique(np.zeros(0), size=2)


def test_inverted_cdf_bad_weights_give_nan_as_jax():
    """A row with a negative weight is NaN (JAX; NumPy raises); recorded from jax 0.10.2."""
    x = np.array([[0.0, 3.0, 2.0, 2.0], [1.0, 0.0, 3.0, np.nan]])
    w = np.array([[1.0, 1.0, 0.5, 1.0], [1.0, 1.0, 1.0, 1.0]])
    with x64():
        got = pnp.nanquantile(x, np.array([0.2, 0.9]), axis=1, method="inverted_cdf",
                              weights=w)
        np.testing.assert_array_equal(got, [[0.0, 0.0], [3.0, 3.0]])
        w[1, 0] = -1.0
        got = plugax.jit(lambda a, b: pnp.nanquantile(a, 0.5, axis=1, method="inverted_cdf",
                                                      weights=b))(x, w)
        np.testing.assert_array_equal(got, [2.0, np.nan])


def test_unique_of_empty_inputs_is_jax():
    """Shapes and values recorded from jax 0.10.2."""
    def shapes(r):
        return [np.asarray(x).shape for x in (r if isinstance(r, tuple) else (r,))]
    e = np.zeros(0)
    assert shapes(pnp.unique(e, True, True, True)) == [(0,)] * 4
    vals, *_ = pnp.unique(e, True, True, True, size=3, fill_value=5)
    np.testing.assert_array_equal(vals, [5.0, 5.0, 5.0])
    assert shapes(pnp.unique(np.zeros((2, 0)), True, True, True)) == [(0,), (0,), (2, 0), (0,)]
    r = pnp.unique(np.zeros((2, 0)), True, True, True, axis=0)        # two equal empty rows
    assert shapes(r) == [(1, 0), (1,), (2,), (1,)]
    np.testing.assert_array_equal(r[3], [2])
    assert shapes(pnp.unique(np.zeros((0, 2)), True, True, True, axis=0)) == [(0, 2)] + \
        [(0,)] * 3


def test_errors():
    with pytest.raises(TypeError, match="'kind' argument to sort"):
        pnp.sort(NORMAL, kind="quicksort")
    with pytest.raises(ValueError, match="invalid value for keyword 'side'"):
        pnp.searchsorted(EDGES, 0.0, side="middle")
    with pytest.raises(ValueError, match="a should be 1-dimensional"):
        pnp.searchsorted(NORMAL, 0.0)
    with pytest.raises(ValueError, match="method can only be"):
        pnp.quantile(NORMAL, 0.5, method="weibull")
    with pytest.raises(NotImplementedError, match="Only method 'inverted_cdf' supports"):
        pnp.quantile(NORMAL, 0.5, weights=NORMAL)
    with pytest.raises(ValueError, match="Weights shape"):
        pnp.quantile(NORMAL, 0.5, axis=1, method="inverted_cdf", weights=np.ones(3))
    with pytest.raises(ValueError, match="q must be have rank <= 1"):
        pnp.quantile(NORMAL, np.ones((2, 2)) / 2)
    with pytest.raises(ValueError, match="kth=6 is out of bounds"):
        pnp.partition(NORMAL, 6)


_POOL = st.sampled_from([np.nan, -0.0, 0.0, 1.0, -1.0, 2.5, np.inf, -np.inf, 1.0, 2.5])


@settings(max_examples=20, derandomize=True, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data())
def test_hypothesis_argsort_and_quantiles(shape, data):
    """Random shapes, axes and q over values full of ties, NaNs and infinities."""
    n = int(np.prod(shape))
    x = np.array(data.draw(st.lists(_POOL, min_size=n, max_size=n))).reshape(shape)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    q = data.draw(st.sampled_from([0.0, 0.3, 0.5, 1.0]))
    finite = np.where(np.isfinite(x), x, 7.0)      # quantiles of infinities give inf - inf
    with x64():
        np.testing.assert_array_equal(pnp.argsort(x, axis=axis),
                                      np.argsort(x, axis=axis, kind="stable"))
        no_nan = np.nan_to_num(x)                  # descending ties: input order, as JAX
        np.testing.assert_array_equal(pnp.argsort(no_nan, axis=axis, descending=True),
                                      np.argsort(-no_nan, axis=axis, kind="stable"))
        np.testing.assert_allclose(pnp.quantile(finite, q, axis=axis),
                                   np.quantile(finite, q, axis=axis), rtol=1e-12)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = np.nanquantile(np.where(np.isinf(x), 7.0, x), q, axis=axis)
        np.testing.assert_allclose(pnp.nanquantile(np.where(np.isinf(x), 7.0, x), q, axis=axis),
                                   want, rtol=1e-12)
