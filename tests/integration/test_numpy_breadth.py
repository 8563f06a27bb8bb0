"""NumPy functions added for breadth (issue 16): one table, name -> arguments, each
checked against NumPy in float64, under jit against eager, and (where the function
is differentiable in its first argument) grad against central differences.

They are compositions of existing primitives (shape: numpy_layout.py, elementwise:
numpy_extra.py, reductions: numpy_stats.py), so these checks are the whole story.
"""
from __future__ import annotations

import numpy as np
import pytest

import plugax
import plugax.numpy as pnp
from plugax.testing import numeric_grad, x64

R = np.random.RandomState(0)
X = R.randn(3, 4)
V = R.randn(5)
W = R.randn(3, 4)
NANS = np.array([[1., np.nan, 3., 4.], [np.nan, 2., .5, -1.], [5., 6., np.nan, 8.]])
SPECIAL = np.array([-3.5, -0.0, 0.0, 0.5, 2.5, np.inf, -np.inf, np.nan])
OTHER = np.array([1.0, -2.0, 3.0, -np.inf, np.nan, 2.0, -1.0, 0.5])

# name -> (args, kwargs, differentiable in args[0])
TABLE = {
    "vstack": (([V, V],), {}, False), "hstack": (([X, W],), {}, False),
    "dstack": (([X, W],), {}, False), "column_stack": (([V, V],), {}, False),
    "split": ((X, 2), {"axis": 1}, False), "array_split": ((X, 3), {"axis": 1}, False),
    "tile": ((X, (2, 1, 2)), {}, True), "repeat": ((X, [1, 0, 2]), {"axis": 0}, True),
    "flip": ((X,), {}, True), "fliplr": ((X,), {}, True), "flipud": ((X,), {}, True),
    "roll": ((X, (1, -2)), {"axis": (0, 1)}, True), "rot90": ((X, 3), {}, True),
    "atleast_3d": ((V,), {}, True), "atleast_1d": ((X[0, 0],), {}, True),
    "atleast_2d": ((V,), {}, True), "hsplit": ((X, 2), {}, False), "vsplit": ((X, [1]), {}, False),
    "dsplit": ((X[:, :, None].repeat(4, 2), 2), {}, False), "identity": ((3,), {}, False),
    "indices": (((2, 3),), {}, False), "tri": ((3, 4, 1), {}, False),
    "degrees": ((X,), {}, True), "radians": ((X,), {}, True), "fix": ((SPECIAL,), {}, False), "diag": ((V, -1), {}, True), "diagonal": ((X, 1), {}, True),
    "diagflat": ((X[:2, :2],), {}, True), "tril": ((X, -1), {}, True), "triu": ((X, 1), {}, True),
    "meshgrid": ((V, V[:3]), {"indexing": "ij"}, False), "append": ((X, W), {"axis": 0}, True),
    "logaddexp": ((X, W), {}, True), "logaddexp2": ((X, W), {}, True), "hypot": ((X, W), {}, True),
    "deg2rad": ((X,), {}, True), "rad2deg": ((X,), {}, True), "copysign": ((X, W), {}, True),
    "fmax": ((SPECIAL, OTHER), {}, False), "fmin": ((SPECIAL, OTHER), {}, False),
    "fmod": ((X * 3, 1.5), {}, False), "nan_to_num": ((SPECIAL,), {}, False),
    "isneginf": ((SPECIAL,), {}, False), "isposinf": ((SPECIAL,), {}, False),
    "signbit": ((SPECIAL,), {}, False), "reciprocal": ((X + 3,), {}, True),
    "trunc": ((SPECIAL,), {}, False), "rint": ((X * 3,), {}, False),
    "nansum": ((NANS,), {"axis": 1}, False), "nanprod": ((NANS,), {"axis": 0}, False),
    "nanmax": ((NANS,), {"axis": 1}, False), "nanmin": ((NANS,), {}, False),
    "nanargmax": ((NANS,), {"axis": 1}, False), "nanargmin": ((NANS,), {"axis": 0}, False),
    "nanmean": ((NANS,), {"axis": 1}, False), "nanvar": ((NANS,), {"axis": 0}, False),
    "nanstd": ((NANS,), {"ddof": 1}, False), "count_nonzero": ((X > 0,), {"axis": 1}, False),
    "average": ((X,), {"axis": 1, "weights": np.arange(1., 5.)}, True),
    "ptp": ((X,), {"axis": 0}, False), "trace": ((X,), {"offset": 1}, True),
    "diff": ((X,), {"n": 2, "axis": 1}, True), "ediff1d": ((V,), {"to_begin": V[:1]}, True),
    "cov": ((X,), {}, True), "corrcoef": ((X,), {"rowvar": False}, True),
    "polyval": ((V[:4], X), {}, True), "kron": ((X[:2, :3], W[:3, :2]), {}, True),
    "cross": ((R.randn(4, 3), R.randn(4, 3)), {}, True), "interp": ((X, np.sort(V), V), {}, True),
}


# results that depend on the float width (nan_to_num's default is the dtype's largest)
F32_REFERENCE = {"nan_to_num"}


def _as_list(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _call(name, args, kwargs, dtype=np.float32):
    cast = [a.astype(dtype) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else
            ([b.astype(dtype) if isinstance(b, np.ndarray) else b for b in a]
             if isinstance(a, list) else a) for a in args]
    return getattr(pnp, name)(*cast, **kwargs)


@pytest.mark.parametrize("name", sorted(TABLE))
def test_value_against_numpy_and_jit_against_eager(name):
    args, kwargs, _ = TABLE[name]
    ref_args = [a.astype(np.float32) if name in F32_REFERENCE else a for a in args]
    with np.errstate(all="ignore"):
        want = _as_list(getattr(np, name)(*ref_args, **kwargs))
    got = _as_list(_call(name, args, kwargs))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w), (name, np.shape(g), np.shape(w))
        np.testing.assert_allclose(np.asarray(g, np.float64), w, rtol=2e-5, atol=2e-6)
    arrays = [i for i, a in enumerate(args) if isinstance(a, np.ndarray) or
              (isinstance(a, list) and all(isinstance(b, np.ndarray) for b in a))]

    def with_arrays(*traced):
        full = list(args)
        for i, t in zip(arrays, traced):
            full[i] = t
        return _call(name, full, kwargs)

    jitted = _as_list(plugax.jit(with_arrays)(*[args[i] for i in arrays]))
    for j, g in zip(jitted, got):
        np.testing.assert_allclose(np.asarray(j), np.asarray(g), rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("name", sorted(n for n, (_, _, d) in TABLE.items() if d))
def test_grad_against_finite_differences(name):
    args, kwargs, _ = TABLE[name]
    rest = args[1:]
    weights = np.random.RandomState(1).randn(*np.shape(getattr(np, name)(*args, **kwargs)))

    def ours(x):
        return pnp.sum(getattr(pnp, name)(x, *rest, **kwargs) * weights)

    def reference(x):
        return np.sum(getattr(np, name)(x, *rest, **kwargs) * weights)

    with x64():
        got = np.asarray(plugax.grad(ours)(args[0]))
    np.testing.assert_allclose(got, numeric_grad(reference, args[0]), rtol=1e-5, atol=1e-6)


def test_every_added_function_is_in_the_table():
    from plugax_elementwise.numpy_extra import NUMPY_EXTRA
    from plugax_reductions.numpy_stats import NUMPY as STATS
    from plugax_shape.numpy_layout import NUMPY as LAYOUT
    from plugax_sort.interp import NUMPY as INTERP
    assert set(NUMPY_EXTRA) | set(STATS) | set(LAYOUT) | set(INTERP) <= set(TABLE)


def test_errors_name_the_mistake():
    with pytest.raises(ValueError, match="equal division: 4 elements into 3"):
        pnp.split(np.ones(4), 3)
    with pytest.raises(ValueError, match="diag input must be 1d or 2d"):
        pnp.diag(np.ones((2, 2, 2)))
    with pytest.raises(ValueError, match="repeat: repeats may not be negative"):
        pnp.repeat(np.ones(3), -1)
    with pytest.raises(ValueError, match="diff: order must be non-negative"):
        pnp.diff(np.ones(3), -1)
    assert float(plugax.grad(lambda a: pnp.logaddexp(a, -np.inf))(1.0)) == 1.0
