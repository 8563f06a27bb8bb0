"""The issue-16 breadth of plugax.numpy against JAX's recorded answers: for each call
below, the dtype, weak type, shape and values of every output, as jax 0.10.2 returned
them (data/numpy_breadth_jax.json). This is where JAX's semantics are pinned where
they differ from NumPy's (integer promotion of cumulative_sum, unravel_index's
clipping, float32 results of float_power and heaviside on integers, put dropping
out-of-range indices, ...); test_numpy_breadth_more.py checks values against NumPy
float64, jit, vmap and gradients.

Record (needs jax; the test does not):
    /path/to/jax-venv/bin/python tests/integration/test_numpy_breadth_jax.py --record
"""
from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import numpy as np

DATA = Path(__file__).parent / "data" / "numpy_breadth_jax.json"

X = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
I8 = np.arange(6, dtype=np.int8)
I = np.array([3, 5, 12], np.int32)
F = np.array([0.75, -3.0, 1e-30, 0.0, 5.5], np.float32)

# id -> (function name, args, kwargs); a callable arg `jnp` is replaced by the library
CASES: dict = {
    "cumulative_sum_int8": ("cumulative_sum", (I8,), {}),
    "cumulative_sum_initial": ("cumulative_sum", (X,), {"axis": 1, "include_initial": True}),
    "cumulative_prod_int8": ("cumulative_prod", (I8,), {}),
    "cumulative_prod_initial": ("cumulative_prod", (X,), {"axis": 0, "include_initial": True}),
    "nancumsum_int8": ("nancumsum", (I8,), {}), "nancumprod": ("nancumprod", (X,), {}),
    "bincount": ("bincount", (np.array([0, 1, 1]),), {}),
    "bincount_weights": ("bincount", (np.array([0, 1]),),
                         {"weights": np.array([.5, 1.], np.float32)}),
    "bincount_bool": ("bincount", (np.array([True, False, True]),), {}),
    "gcd_weak": ("gcd", (I, np.int8(4)), {}), "lcm_weak": ("lcm", (I, 6), {}),
    "gcd_signs": ("gcd", (np.array([-12, 0]), np.array([18, -5])), {}),
    "lcm_zero": ("lcm", (np.array([-4, 0]), np.array([6, 3])), {}),
    "left_shift_int8": ("left_shift", (I8, 1), {}),
    "left_shift_negative": ("left_shift", (np.int32(1), -1), {}),
    "right_shift_uint8": ("right_shift", (np.uint8(200), 3), {}),
    "right_shift_wide": ("right_shift", (np.int8(-128), 10), {}),
    "bitwise_left_shift_uint8": ("bitwise_left_shift", (np.uint8(255), 1), {}),
    "bitwise_count": ("bitwise_count", (I,), {}), "bitwise_invert": ("bitwise_invert", (I8,), {}),
    "frexp": ("frexp", (F,), {}), "ldexp": ("ldexp", (X, 2), {}),
    "ldexp_int": ("ldexp", (np.int32(3), np.int32(2)), {}),
    "ldexp_range": ("ldexp", (np.float32(1.5), np.array([130, -140])), {}),
    "modf_int": ("modf", (I,), {}), "spacing": ("spacing", (X,), {}),
    "spacing_f16": ("spacing", (np.float16(1),), {}),
    "heaviside_int": ("heaviside", (I, 0.5), {}),
    "heaviside_zeros": ("heaviside", (np.array([0., -0.]), 0.3), {}),
    "sinc_int": ("sinc", (I,), {}), "i0_int": ("i0", (I,), {}),
    "float_power_int": ("float_power", (I, 2), {}),
    "float_power_int8": ("float_power", (np.int8(2), np.int8(3)), {}),
    "fabs_int8": ("fabs", (I8,), {}), "divmod_int": ("divmod", (I, 4), {}),
    "divmod_signs": ("divmod", (np.array([-7., 7.]), np.array([2., -2.])), {}),
    "positive_int8": ("positive", (I8,), {}), "pow_int": ("pow", (I, 2), {}),
    "around": ("around", (X * 10, 1), {}), "acosh_int": ("acosh", (I,), {}),
    "atan2_mixed": ("atan2", (I, I8[:3]), {}),
    "nextafter": ("nextafter", (np.float32(1), np.float32(2)), {}),
    "geomspace_int": ("geomspace", (1, 100, 3), {}),
    "geomspace_negative": ("geomspace", (-1, -1000, 4), {"endpoint": False}),
    "logspace_int": ("logspace", (0, 2, 3), {}),
    "logspace_f16": ("logspace", (0., 1., 3), {"base": np.e, "dtype": np.float16}),
    "vander_int": ("vander", (I,), {}), "vander_n": ("vander", (X[0],), {"N": 3}),
    "bartlett": ("bartlett", (5,), {}), "kaiser": ("kaiser", (5, 2.0), {}),
    "hamming": ("hamming", (4,), {}), "hanning_1": ("hanning", (1,), {}),
    "blackman_0": ("blackman", (0,), {}),
    "trapezoid_int": ("trapezoid", (I,), {}),
    "trapezoid_x": ("trapezoid", (X,), {"x": np.array([0., 1., 3., 4.])}),
    "gradient_int": ("gradient", (I,), {}), "gradient_spacing": ("gradient", (X, 2.0), {}),
    "gradient_axis": ("gradient", (X,), {"axis": 1}),
    "unwrap_int": ("unwrap", (I,), {}), "unwrap_period": ("unwrap", (X * 10,), {"period": 3.0}),
    "unwrap_int_period": ("unwrap", (np.array([0, 7, 14]),), {"period": 6}),
    "packbits_int8": ("packbits", (I8,), {}),
    "packbits_axis0": ("packbits", (np.array([[1, 0], [0, 1]]),), {"axis": 0}),
    "unpackbits_little": ("unpackbits", (np.array([3], np.uint8),), {"bitorder": "little"}),
    "array_equiv": ("array_equiv", (X, X), {}),
    "poly_int": ("poly", (I,), {}), "polyadd_mixed": ("polyadd", (I, I8), {}),
    "polysub_mixed": ("polysub", (I, I8), {}), "polymul_mixed": ("polymul", (I, I8), {}),
    "polydiv": ("polydiv", (np.array([1., 2., 3.]), np.array([1., 1.])), {}),
    "polyder_int": ("polyder", (I,), {}), "polyint_int": ("polyint", (I,), {}),
    "polyint_k": ("polyint", (X[0],), {"m": 2, "k": 3.0}),
    "polyfit": ("polyfit", (X[0], X[1] ** 2, 1), {}),
    "vecdot": ("vecdot", (X, X), {}), "matvec": ("matvec", (X, X[0]), {}),
    "vecmat": ("vecmat", (X[:, 0], X), {}),
    "tril_indices": ("tril_indices", (3,), {}), "triu_indices": ("triu_indices", (3, 1, 5), {}),
    "diag_indices": ("diag_indices", (3,), {}),
    "diag_indices_from": ("diag_indices_from", (np.ones((3, 3)),), {}),
    "tril_indices_from": ("tril_indices_from", (X,), {"k": 1}),
    "unravel_index_clips": ("unravel_index", (np.array([-3, 5, 30]), (2, 3)), {}),
    "ravel_multi_index": ("ravel_multi_index", ((I, I), (13, 13)), {}),
    "mask_indices": ("mask_indices", (3, "jnp.triu"), {"size": 6}),
    "insert_scalar": ("insert", (I, 1, 7), {}),
    "insert_columns": ("insert", (X, np.array([0, 2, 2]), np.array([7., 8., 9.])), {"axis": 1}),
    "insert_end": ("insert", (I, 5, np.array([1, 2])), {}),
    "delete_int": ("delete", (I, 1), {}),
    "delete_columns": ("delete", (X, np.array([0, 2])), {"axis": 1}),
    "compress": ("compress", (np.array([1, 0, 1]), I), {}),
    "compress_size": ("compress", (np.array([True, False, True, True]), X), {"axis": 1, "size": 2}),
    "extract": ("extract", (X > 1, X), {}),
    "place": ("place", (X, X > 1, np.float32(9)), {"inplace": False}),
    "put_drops": ("put", (X, np.array([1, 40, -1]), np.array([5.0, 6.0])), {"inplace": False}),
    "resize": ("resize", (I, 5), {}), "resize_2d": ("resize", (X, (5, 5)), {}),
    "pad_mean_int8": ("pad", (I8, 2), {"mode": "mean"}),
    "pad_linear_ramp": ("pad", (X, 1), {"mode": "linear_ramp", "end_values": 2.0}),
    "pad_reflect_odd": ("pad", (X, ((2, 5), (0, 3))), {"mode": "reflect", "reflect_type": "odd"}),
    "empty": ("empty", ((2,),), {}), "copy_int8": ("copy", (I8,), {}),
    "select": ("select", ([I > 4, I > 10], [I, I8[:3]]), {"default": 2}),
    "choose_wrap": ("choose", (np.array([2, 0]), [I[:2], I8[:2], X[0, :2]]), {"mode": "wrap"}),
    "fill_diagonal": ("fill_diagonal", (X, np.array([1., 2.])), {"inplace": False}),
    "unstack": ("unstack", (X,), {}), "trim_zeros": ("trim_zeros", (np.array([0, 1, 0]),), {}),
    "concat_mixed": ("concat", ([I, I8],), {}), "permute_dims": ("permute_dims", (X, (1, 0)), {}),
    "matrix_transpose": ("matrix_transpose", (X,), {}), "rollaxis": ("rollaxis", (X, 1), {}),
    "block": ("block", ([[X, X], [X, X]],), {}), "ix_": ("ix_", (I, I8), {}),
    "frombuffer": ("frombuffer", (b"\x01\x02",), {"dtype": np.int8}),
    "fromstring": ("fromstring", ("1 2",), {"sep": " ", "dtype": np.int32}),
    # Python scalars are weakly typed: which results stay weak is JAX's business
    "sinc_python": ("sinc", (2.0,), {}), "i0_python": ("i0", (1.0,), {}),
    "gcd_python": ("gcd", (12, 18), {}), "lcm_python": ("lcm", (4, 6), {}),
    "heaviside_python": ("heaviside", (1.0, 0.5), {}), "ldexp_python": ("ldexp", (1.5, 3), {}),
    "float_power_python": ("float_power", (2, 3), {}),
    "left_shift_python": ("left_shift", (1, 3), {}),
    "right_shift_python": ("right_shift", (-16, 2), {}), "spacing_python": ("spacing", (1.0,), {}),
    "frexp_python": ("frexp", (8.0,), {}), "modf_python": ("modf", (-2.5,), {}),
    "around_python": ("around", (2.56, 1), {}), "fabs_python": ("fabs", (-3,), {}),
    "positive_python": ("positive", (3,), {}), "divmod_python": ("divmod", (7, -2), {}),
    "nextafter_python": ("nextafter", (1.0, 2.0), {}),
    "bitwise_count_python": ("bitwise_count", (7,), {}),
    "pow_python": ("pow", (2.0, 3), {}), "acos_python": ("acos", (0.5,), {}),
    "heaviside_strong_x2": ("heaviside", (1.0, np.float32(.5)), {}),
    "heaviside_int_scalar": ("heaviside", (np.int32(1), 0.5), {}),
    "sinc_int_scalar": ("sinc", (np.int32(1),), {}), "sinc_int_python": ("sinc", (1,), {}),
    "r_": ("r_", None, {}), "c_": ("c_", None, {}), "mgrid": ("mgrid", None, {}),
    "ogrid": ("ogrid", None, {}), "fromfunction": ("fromfunction", None, {}),
    "vectorize_signature": ("vectorize", None, {}),
    "apply_along_axis": ("apply_along_axis", None, {}),
    "apply_over_axes": ("apply_over_axes", None, {}), "piecewise": ("piecewise", None, {}),
}


def special(jnp, case: str):
    """The calls that need the library itself (functions, index objects)."""
    return {
        "r_": lambda: jnp.r_[1:4, 0, I8[:2]], "c_": lambda: jnp.c_[I, I],
        "mgrid": lambda: jnp.mgrid[0:2, 0:1:3j], "ogrid": lambda: jnp.ogrid[0:2, 0:3],
        "fromfunction": lambda: jnp.fromfunction(lambda i, j: i * 3 + j, (2, 3)),
        "vectorize_signature": lambda: jnp.vectorize(lambda a, b: a @ b,
                                                     signature="(n),(n)->()")(X, X[0]),
        "apply_along_axis": lambda: jnp.apply_along_axis(lambda v: v[::-1] * v[0], 1, X),
        "apply_over_axes": lambda: jnp.apply_over_axes(jnp.sum, X, [1]),
        "piecewise": lambda: jnp.piecewise(I, [I > 4], [lambda v: v * 2, lambda v: -v]),
    }[case]()


def run(jnp, case: str) -> list:
    name, args, kwargs = CASES[case]
    if args is None:
        out = special(jnp, case)
    else:
        args = tuple(getattr(jnp, a[4:]) if isinstance(a, str) and a.startswith("jnp.") else a
                     for a in args)
        out = getattr(jnp, name)(*args, **kwargs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    return [{"dtype": str(np.asarray(o).dtype), "shape": list(np.shape(o)),
             "weak": bool(getattr(o, "weak_type", False)),
             "value": np.asarray(o, np.float64).ravel().tolist()} for o in outs]


def record() -> None:
    import jax.numpy as jnp
    warnings.simplefilter("ignore")
    DATA.write_text(json.dumps({case: run(jnp, case) for case in CASES}, indent=0) + "\n")
    print(f"wrote {DATA} ({len(CASES)} cases)")


if __name__ == "__main__":
    if "--record" in sys.argv:
        record()
    sys.exit(0)

import pytest  # noqa: E402

import plugax.numpy as pnp  # noqa: E402

EXPECTED = json.loads(DATA.read_text()) if DATA.exists() else {}


def test_every_case_is_recorded():
    assert set(CASES) == set(EXPECTED), "run this file with --record under jax"


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_jax(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = run(pnp, case)
    want = EXPECTED[case]
    assert len(got) == len(want), case
    for g, w in zip(got, want):
        assert (g["dtype"], g["shape"]) == (w["dtype"], w["shape"]), (case, g, w)
        assert g["weak"] == w["weak"], (case, "weak type", g["weak"], w["weak"])
        np.testing.assert_allclose(g["value"], w["value"], rtol=2e-6, atol=1e-6,
                                   err_msg=case)
