"""Set operations on 1-D arrays: against NumPy in float64 (sizes not given), and
against JAX's recorded outputs for `size=` / `fill_value=` padding (jax 0.10.2),
eagerly and under jit; without `size` under jit they raise ConcretizationTypeError."""
import numpy as np
import pytest

import plugax
import plugax.numpy as pnp
from plugax.testing import x64

A = np.array([5, 1, 3, 3, 7, 1, 9])
B = np.array([3, 9, 9, 2, 1, 8])
F = np.array([2.0, np.nan, 1.0, 4.0])
G = np.array([np.nan, 4.0, 0.5])
PAIRS = {"ints": (A, B), "floats_nan": (F, G), "disjoint": (A, np.array([100])),
         "swapped": (B, A), "2d": (A[:6].reshape(2, 3), B.reshape(3, 2))}


def _same(got, want):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


NUMPY_ROWS = {
    "isin": (lambda a, b: pnp.isin(a, b), lambda a, b: np.isin(a, b)),
    "isin_invert": (lambda a, b: pnp.isin(a, b, invert=True),
                    lambda a, b: np.isin(a, b, invert=True)),
    "isin_binary_search": (lambda a, b: pnp.isin(a, b, method="binary_search"),
                           lambda a, b: np.isin(a, b)),
    "union1d": (pnp.union1d, np.union1d),
    "setdiff1d": (pnp.setdiff1d, np.setdiff1d),
    "intersect1d": (pnp.intersect1d, np.intersect1d),
    "intersect1d_indices": (lambda a, b: pnp.intersect1d(a, b, return_indices=True),
                            lambda a, b: np.intersect1d(a, b, return_indices=True)),
    "setxor1d": (pnp.setxor1d, np.setxor1d),
}


@pytest.mark.parametrize("pair", sorted(PAIRS))
@pytest.mark.parametrize("name", sorted(NUMPY_ROWS))
def test_against_numpy(name, pair):
    fn, ref = NUMPY_ROWS[name]
    a, b = PAIRS[pair]
    with x64():
        _same(fn(a, b), ref(a, b))
        if name.startswith("isin"):
            _same(plugax.jit(fn)(a, b), ref(a, b))


# (call, pair) -> JAX's output, recorded
RECORDED = [
    (lambda a, b: pnp.union1d(a, b, size=12), "ints", [1, 2, 3, 5, 7, 8, 9] + [1] * 5),
    (lambda a, b: pnp.setdiff1d(a, b, size=6), "ints", [5, 7, 0, 0, 0, 0]),
    (lambda a, b: pnp.setdiff1d(a, b, size=2, fill_value=-1), "floats_nan", [1.0, 2.0]),
    (lambda a, b: pnp.setdiff1d(a, b, size=6), "floats_nan", [1.0, 2.0, np.nan, 0, 0, 0]),
    (lambda a, b: pnp.intersect1d(a, b, size=5), "ints", [1, 3, 9, 1, 1]),
    (lambda a, b: pnp.intersect1d(a, b, size=5), "disjoint", [0, 0, 0, 0, 0]),
    (lambda a, b: pnp.intersect1d(a, b, return_indices=True, size=5), "ints",
     ([1, 3, 9, 1, 1], [1, 2, 6, 7, 7], [4, 0, 1, 6, 6])),
    (lambda a, b: pnp.intersect1d(a, b, size=4, fill_value=7), "floats_nan",
     [4.0, 7.0, 7.0, 7.0]),
    (lambda a, b: pnp.setxor1d(a, b, size=9), "ints", [2, 5, 7, 8, 2, 2, 2, 2, 2]),
    (lambda a, b: pnp.setxor1d(a, b), "floats_nan", [0.5, 1.0, 2.0, np.nan, np.nan]),
    (lambda a, b: pnp.setxor1d(a, b, size=9), "floats_nan",
     [0.5, 1.0, 2.0] + [np.nan] * 6),
    (lambda a, b: pnp.setxor1d(a, b, size=4), "swapped", [2, 5, 7, 8]),
]


@pytest.mark.parametrize("i", range(len(RECORDED)))
def test_size_and_fill_match_jax(i):
    fn, pair, want = RECORDED[i]
    a, b = PAIRS[pair]
    want = tuple(np.array(w) for w in want) if isinstance(want, tuple) else np.array(want)
    with x64():
        _same(fn(a, b), want)
        if i != 9:                                  # the one row without size=
            _same(plugax.jit(fn)(a, b), want)


def test_without_size_under_jit_is_a_concretization_error():
    for fn in (pnp.setdiff1d, pnp.intersect1d, pnp.setxor1d, pnp.union1d):
        with pytest.raises(plugax.ConcretizationTypeError, match="size"):
            plugax.jit(fn)(A, B)


def test_vmap_with_size_matches_a_loop():
    rows = np.array([[1, 2, 2, 5], [5, 5, 0, 3], [9, 8, 7, 1]])
    got = plugax.vmap(lambda r: pnp.setdiff1d(r, B, size=3, fill_value=-1))(rows)
    for r, g in zip(rows, np.asarray(got)):
        want = np.setdiff1d(r, B)[:3]
        np.testing.assert_array_equal(g, np.pad(want, (0, 3 - len(want)), constant_values=-1))


def test_dtypes_follow_jax():
    u = np.array([4, 0, 1], np.uint8)
    assert pnp.setdiff1d(u, A.astype(np.int32)).dtype == np.uint8     # ar1's dtype
    assert pnp.union1d(u, A.astype(np.int32)).dtype == np.int32
    assert pnp.intersect1d(A, B, return_indices=True)[1].dtype == np.int32
    with x64():
        assert pnp.intersect1d(A, B, return_indices=True)[1].dtype == np.int64
