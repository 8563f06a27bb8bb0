"""Every elementwise primitive against the conformance kit: abstract_eval vs impl, jvp vs
finite differences (float64), vmap vs a loop over every batch-axis placement."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import plugax
from plugax.testing import check_abstract_eval, check_jvp, check_primitive, check_vmap
from plugax_elementwise import arithmetic as A, logic as L, selection as S, transcendental as T

F = np.linspace(-0.9, 0.8, 6, dtype=np.float32).reshape(2, 3)     # inside (-1, 1)
POS = np.linspace(0.5, 2.0, 6, dtype=np.float32).reshape(2, 3)
BIG = np.linspace(1.5, 3.0, 6, dtype=np.float32).reshape(2, 3)    # acosh needs x > 1
I = np.array([[-7, 5, 3], [2, -1, 9]], np.int32)
J = np.array([[2, -3, 3], [5, 4, -2]], np.int32)
S0 = np.float32(0.7)                                              # a rank-0 operand

UNARY_FLOAT = [A.neg_p, A.sign_p, A.abs_p, A.square_p, L.floor_p, L.ceil_p, L.is_finite_p,
               T.cbrt_p, T.exp_p, T.exp2_p, T.log1p_p, T.expm1_p, T.sin_p, T.cos_p, T.tan_p,
               T.asin_p, T.acos_p, T.atan_p, T.sinh_p, T.cosh_p, T.tanh_p, T.asinh_p,
               T.atanh_p, T.logistic_p]
UNARY_POSITIVE = [T.sqrt_p, T.rsqrt_p, T.log_p]
BINARY_FLOAT = [A.add_p, A.sub_p, A.mul_p, A.div_p, A.rem_p, A.max_p, A.min_p, T.atan2_p,
                L.eq_p, L.ne_p, L.lt_p, L.le_p, L.gt_p, L.ge_p]
BINARY_INT = [A.add_p, A.sub_p, A.mul_p, A.div_p, A.rem_p, A.max_p, A.min_p, L.eq_p, L.ne_p,
              L.lt_p, L.le_p, L.gt_p, L.ge_p, L.and_p, L.or_p, L.xor_p]


def _check(prim, *args, **params):
    ran = check_primitive(prim, *args, **params)
    assert "abstract_eval" in ran and "vmap" in ran
    return ran


@pytest.mark.parametrize("prim", UNARY_FLOAT, ids=str)
def test_unary_float(prim):
    assert "jvp" in _check(prim, F)


@pytest.mark.parametrize("prim", UNARY_POSITIVE, ids=str)
def test_unary_positive_domain(prim):
    assert "jvp" in _check(prim, POS)


def test_acosh():
    assert "jvp" in _check(T.acosh_p, BIG)


@pytest.mark.parametrize("prim", BINARY_FLOAT, ids=str)
@pytest.mark.parametrize("shapes", ["full-full", "full-scalar", "scalar-full"])
def test_binary_float(prim, shapes):
    x, y = {"full-full": (F, POS), "full-scalar": (F, S0), "scalar-full": (S0, POS)}[shapes]
    _check(prim, x, y)


@pytest.mark.parametrize("prim", BINARY_INT, ids=str)
def test_binary_int(prim):
    # no float operand: the jvp check does not apply, abstract_eval and vmap do
    ran = _check(prim, I, J)
    assert [r for r in ran if r != "jit"] == ["abstract_eval", "vmap"]
    assert "jit" in ran or "jit" in ran.skipped


def test_bool_logic():
    p, q = F > 0, POS > 1
    for prim in (L.and_p, L.or_p, L.xor_p, A.max_p, L.eq_p):
        _check(prim, p, q)
    _check(L.not_p, p)
    _check(L.not_p, I)


@pytest.mark.parametrize("base,exp", [(POS, F), (POS, S0), (np.float32(1.3), F), (POS, J)])
def test_pow(base, exp):
    _check(T.pow_p, base, exp)


@pytest.mark.parametrize("y", [0, 1, 2, 3, -2])
def test_integer_pow(y):
    _check(A.integer_pow_p, POS, y=y)
    if y >= 0:
        _check(A.integer_pow_p, I, y=y)


@pytest.mark.parametrize("method", list(L.RoundingMethod))
def test_round(method):
    _check(L.round_p, F * 3, rounding_method=method)


@pytest.mark.parametrize("new_dtype", ["float32", "int32", "bool_", "uint8", "float16",
                                       "bfloat16"])
def test_convert_element_type(new_dtype):
    dtype = np.dtype(getattr(plugax.numpy, new_dtype))
    # float outputs below float64 are too coarse for a finite-difference check; the jvp
    # is checked float64 -> float64 below (and to ints, where it must be float0)
    rules = ("abstract_eval", "vmap") + (("jvp",) if dtype.kind in "biu" else ())
    check_primitive(S.convert_element_type_p, F * 4, new_dtype=dtype, weak_type=False,
                    rules=rules)
    check_primitive(S.convert_element_type_p, I, new_dtype=dtype, weak_type=False)


def test_convert_element_type_to_weak_traced():
    f32 = np.dtype("float32")
    closed = plugax.make_jaxpr(lambda x: S.convert_element_type_p.bind(
        x, new_dtype=f32, weak_type=True))(I)
    aval, = closed.out_avals
    assert (aval.dtype, aval.weak_type) == (f32, True)


def test_convert_element_type_to_weak_eager():
    check_abstract_eval(S.convert_element_type_p, I, new_dtype=np.dtype("float32"),
                        weak_type=True)


def test_convert_element_type_jvp_float64():
    check_jvp(S.convert_element_type_p, F, new_dtype=np.dtype("float64"), weak_type=False)


@pytest.mark.parametrize("which", [F > 0, np.array(True), np.array([[0, 1, 2], [2, 1, 0]],
                                                                    np.int32)], ids=str)
def test_select_n(which):
    cases = (F, POS) if which.dtype == bool else (F, POS, BIG)
    _check(S.select_n_p, which, *cases)
    _check(S.select_n_p, which, *[c.astype(np.int32) for c in cases])


def test_select_n_scalar_cases_with_batched_which():
    _check(S.select_n_p, np.array(True), np.float32(1.0), np.float32(2.0))


@pytest.mark.parametrize("bounds", ["scalar", "full"])
def test_clamp(bounds):
    lo, hi = (np.float32(-0.5), np.float32(0.5)) if bounds == "scalar" else (F - 0.3, POS)
    _check(S.clamp_p, lo, F, hi)
    _check(S.clamp_p, np.int32(-1), I, np.int32(4))


# --- properties over random dtypes and shapes -------------------------------------------
FLOAT_DTYPES = [np.float16, np.float32, plugax.numpy.bfloat16]
INT_DTYPES = [np.int8, np.int32, np.uint8, np.uint32]
shapes = hnp.array_shapes(min_dims=0, max_dims=3, max_side=3)


@settings(max_examples=25, deadline=None)
@given(prim=st.sampled_from(UNARY_FLOAT + UNARY_POSITIVE), dtype=st.sampled_from(FLOAT_DTYPES),
       shape=shapes, weak=st.booleans())
def test_unary_types_agree(prim, dtype, shape, weak):
    x = plugax.Array(np.full(shape, 0.5, dtype), weak_type=weak)
    aval, = check_abstract_eval(prim, x)
    assert aval.shape == shape
    assert aval.dtype == (np.bool_ if prim is L.is_finite_p else np.dtype(dtype))
    assert aval.weak_type == weak


@settings(max_examples=25, deadline=None)
@given(prim=st.sampled_from(BINARY_INT), dtype=st.sampled_from(INT_DTYPES), shape=shapes,
       scalar_first=st.booleans(), data=st.data())
def test_binary_int_types_and_batching(prim, dtype, shape, scalar_first, data):
    x = data.draw(hnp.arrays(dtype, shape, elements=st.integers(1, 9)))
    y = data.draw(hnp.arrays(dtype, (), elements=st.integers(1, 9)))
    args = (y, x) if scalar_first else (x, y)
    aval, = check_abstract_eval(prim, *args)
    assert aval.shape == shape
    check_vmap(prim, *args, max_placements=16)


@settings(max_examples=15, deadline=None)
@given(prim=st.sampled_from([T.sin_p, T.tanh_p, T.atan_p, T.logistic_p, T.exp_p, A.square_p,
                             T.cbrt_p, T.asinh_p]),
       x=hnp.arrays(np.float64, hnp.array_shapes(max_dims=2, max_side=3),
                    elements=st.floats(-2, 2).filter(lambda v: abs(v) > 1e-3)))
def test_jvp_at_random_points(prim, x):
    check_jvp(prim, x)


@settings(max_examples=15, deadline=None)
@given(x=hnp.arrays(np.float64, (4,), elements=st.floats(-3, 3)),
       y=hnp.arrays(np.float64, (4,), elements=st.floats(-3, 3)))
def test_max_min_jvp_away_from_ties(x, y):
    y = np.where(np.abs(x - y) < 1e-3, y + 0.5, y)
    check_jvp(A.max_p, x, y)
    check_jvp(A.min_p, x, y)


@settings(max_examples=15, deadline=None)
@given(lo=st.floats(-2, -0.1), hi=st.floats(0.1, 2),
       x=hnp.arrays(np.float64, (5,), elements=st.floats(-3, 3)))
def test_clamp_jvp_away_from_ties(lo, hi, x):
    x = np.where((np.abs(x - lo) < 1e-3) | (np.abs(x - hi) < 1e-3), x + 0.05, x)
    check_jvp(S.clamp_p, np.float64(lo), x, np.float64(hi))
