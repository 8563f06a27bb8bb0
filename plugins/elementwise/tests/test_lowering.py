"""Lowering rules of the elementwise family: jitted (XLA) equals eager (NumPy impl).

Every primitive is checked on random inputs of every dtype it accepts, all of a
primitive's dtypes lowered into one module (compiling dominates the cost). The
inputs stay in each primitive's domain and include the edge cases where lax's
semantics differ from NumPy's defaults: integer division and remainder by zero
and of negative operands, float -> int conversion out of range and of NaN,
rounding ties, selectors out of range. Then a few plugax.numpy functions under
px.jit, and the error raised for a primitive without a lowering rule.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import plugax as px
import plugax.numpy as pnp
from plugax.extend import PluginInfo, Primitive, defvectorized, hookimpl
from plugax.testing import (ALL_DTYPES, FLOATS, INTS, NUMERIC, SIGNED, LoweringMismatch,
                            check_lowering, check_lowerings, check_primitive, has_lowering,
                            scoped_plugin, x64)
from plugax_elementwise import arithmetic as A, logic as L, selection as S, transcendental as T
from plugax_elementwise.plugin import plugax_primitive_rules

ALL = ALL_DTYPES
SHAPE = (3, 4)


def draw(dtype, lo=-3.0, hi=3.0, seed=0, shape=SHAPE):
    """Random values of `dtype`: floats uniform in [lo, hi]; ints in [lo, hi] clipped to range."""
    rng, dtype = np.random.default_rng(seed), np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        low, high = max(int(lo * 40), int(info.min)), min(int(hi * 40), int(info.max))
        return rng.integers(low, high, size=shape, endpoint=True).astype(dtype)
    return rng.uniform(lo, hi, size=shape).astype(dtype)


def check_dtypes(prim, dtypes, make_args, **params):
    """Lower `prim` on `make_args(dtype)` for every dtype in one module (x64 for 64-bit)."""
    with x64():
        check_lowerings([(prim, make_args(np.dtype(d)), params) for d in dtypes])


# --- unary floating-point math, each on its domain --------------------------------------
FLOAT_DOMAINS = {
    T.sqrt_p: (0.01, 4), T.rsqrt_p: (0.05, 4), T.log_p: (0.01, 4), T.log1p_p: (-0.9, 3),
    T.cbrt_p: (-4, 4), T.exp_p: (-4, 4), T.exp2_p: (-5, 5), T.expm1_p: (-2, 2),
    T.sin_p: (-4, 4), T.cos_p: (-4, 4), T.tan_p: (-1.3, 1.3), T.asin_p: (-0.99, 0.99),
    T.acos_p: (-0.99, 0.99), T.atan_p: (-4, 4), T.sinh_p: (-3, 3), T.cosh_p: (-3, 3),
    T.tanh_p: (-3, 3), T.asinh_p: (-4, 4), T.acosh_p: (1.01, 4), T.atanh_p: (-0.95, 0.95),
    T.logistic_p: (-6, 6), L.floor_p: (-4, 4), L.ceil_p: (-4, 4),
}


@pytest.mark.parametrize("prim", list(FLOAT_DOMAINS), ids=str)
def test_unary_float_math(prim):
    lo, hi = FLOAT_DOMAINS[prim]
    check_dtypes(prim, FLOATS, lambda d: (draw(d, lo, hi),))


# --- arithmetic on every numeric dtype -----------------------------------------------
@pytest.mark.parametrize("prim", [A.add_p, A.sub_p, A.mul_p, A.max_p, A.min_p], ids=str)
def test_binary_arithmetic(prim):
    check_dtypes(prim, NUMERIC, lambda d: (draw(d, seed=1), draw(d, seed=2)))


@pytest.mark.parametrize("prim", [A.neg_p, A.sign_p, A.square_p], ids=str)
def test_unary_arithmetic(prim):
    check_dtypes(prim, NUMERIC, lambda d: (draw(d),))


def test_abs_on_signed_and_float():
    check_dtypes(A.abs_p, SIGNED + FLOATS, lambda d: (draw(d),))


def test_sign_of_zero_and_unsigned():
    check_dtypes(A.sign_p, ("uint8", "uint32", "int32", "float32"),
                 lambda d: (np.array([0, 1, 5, 0], d),))


def with_zeros_and_negatives(dtype, seed):
    """Divisors with zeros (and negative values where the dtype has them)."""
    x = draw(dtype, -2, 2, seed=seed)
    x.flat[::5] = 0
    return x


@pytest.mark.parametrize("prim", [A.div_p, A.rem_p], ids=str)
def test_integer_div_rem_truncate_and_handle_zero(prim):
    check_dtypes(prim, INTS, lambda d: (draw(d, seed=3), with_zeros_and_negatives(d, 4)))


def test_integer_division_overflow_wraps():
    m = np.iinfo(np.int32).min
    check_lowerings([(p, (np.array([m, m, 7], np.int32), np.array([-1, 1, -1], np.int32)))
                     for p in (A.div_p, A.rem_p)])


@pytest.mark.parametrize("prim", [A.div_p, A.rem_p, T.atan2_p], ids=str)
def test_float_div_rem_atan2(prim):
    check_dtypes(prim, FLOATS, lambda d: (draw(d, seed=5), draw(d, 0.5, 3, seed=6)
                                          * np.where(draw("bool", seed=7), 1, -1).astype(d)))


@pytest.mark.parametrize("y", [0, 1, 3, 8, -1, -2])
def test_integer_pow(y):
    dtypes = FLOATS + (INTS if y >= 0 else ())
    check_dtypes(A.integer_pow_p, dtypes, lambda d: (draw(d, -1.5, 1.5) if d.kind == "f"
                                                     else draw(d, -0.1, 0.1),), y=y)


def test_pow_with_float_and_integer_exponents():
    float_y = [(T.pow_p, (draw(d, 0.1, 3), draw(d, -2, 2, seed=1))) for d in FLOATS]
    int_y = [(T.pow_p, (draw(d, -2, 2), draw("int32", -0.1, 0.1, seed=1))) for d in FLOATS]
    with x64():
        check_lowerings(float_y + int_y)


# --- rounding and is_finite ------------------------------------------------------------
TIES = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -0.7, 0.2, 3.49, -3.51])


@pytest.mark.parametrize("method", list(L.RoundingMethod), ids=str)
def test_round_ties(method):
    check_dtypes(L.round_p, FLOATS, lambda d: (TIES.astype(d),), rounding_method=method)


def test_is_finite():
    special = np.array([0.0, -1.5, np.inf, -np.inf, np.nan, 3e4])
    check_dtypes(L.is_finite_p, FLOATS, lambda d: (special.astype(d),))


# --- comparisons and bitwise logic -------------------------------------------------------
@pytest.mark.parametrize("prim", [L.eq_p, L.ne_p, L.lt_p, L.le_p, L.gt_p, L.ge_p], ids=str)
def test_comparisons(prim):
    check_dtypes(prim, ALL, lambda d: (draw(d, -0.1, 0.1, seed=8), draw(d, -0.1, 0.1, seed=9)))


def test_comparisons_with_nan():
    x, y = np.array([np.nan, 1.0, np.nan, 2.0]), np.array([np.nan, np.nan, 1.0, 2.0])
    check_lowerings([(p, (x.astype(np.float32), y.astype(np.float32)))
                     for p in (L.eq_p, L.ne_p, L.lt_p, L.le_p, L.gt_p, L.ge_p)])


@pytest.mark.parametrize("prim", [L.and_p, L.or_p, L.xor_p], ids=str)
def test_bitwise_binary(prim):
    check_dtypes(prim, ("bool",) + INTS, lambda d: (draw(d, seed=10), draw(d, seed=11)))


def test_not():
    check_dtypes(L.not_p, ("bool",) + INTS, lambda d: (draw(d),))


# --- conversion ----------------------------------------------------------------------------
@pytest.mark.parametrize("new", ALL)
def test_convert_element_type_from_every_dtype(new):
    """From every dtype to `new`; floats include NaN, infinities, out-of-range values and
    fractions, so float -> int truncation, saturation and NaN -> 0 are all exercised."""
    edge = np.array([np.nan, np.inf, -np.inf, 1e10, -1e10, 300.7, -300.7, -0.6, 0.6, 0.0,
                     2.5, -129.0])

    def args(d):
        return (edge.astype(d),) if d.kind == "f" else (draw(d, -4, 4).reshape(-1),)

    with np.errstate(all="ignore"):
        check_dtypes(S.convert_element_type_p, ALL, args, new_dtype=np.dtype(new),
                     weak_type=False)


# --- selection ----------------------------------------------------------------------------
def test_select_n_with_bool_selector():
    check_dtypes(S.select_n_p, ALL, lambda d: (draw("bool", seed=12), draw(d, seed=1),
                                               draw(d, seed=2)))


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_select_n_with_integer_selector_clips(n):
    which = np.arange(-2, 10).reshape(SHAPE) % (n + 2) - 1   # includes -1 and n
    cases = [draw("float32", seed=s) for s in range(n)]
    with np.errstate(all="ignore"):   # -1 as uint8 wraps to 255: out of range, clipped too
        check_lowerings([(S.select_n_p, (which.astype(w), *cases))
                         for w in ("int32", "uint8", "int8")])


def test_select_n_with_rank0_selector():
    check_lowerings([(S.select_n_p, (np.bool_(True), draw("float32"), draw("float32", seed=3))),
                     (S.select_n_p, (np.int32(2), *[draw("int32", seed=s) for s in range(3)]))])


def test_clamp_with_array_and_scalar_bounds():
    def args(d):
        return draw(d, -1, 0, seed=13), draw(d, -3, 3), draw(d, 0, 1, seed=14)
    check_dtypes(S.clamp_p, NUMERIC, args)
    check_lowerings([(S.clamp_p, (np.float32(-1), draw("float32"), np.float32(0.5)))])


def test_binary_ops_broadcast_rank0_operands():
    x = draw("float32", 0.1, 3)
    cases = [(p, (x, np.float32(0.7))) for p in (A.add_p, A.div_p, T.pow_p, L.lt_p)]
    cases += [(p, (np.float32(0.7), x)) for p in (A.sub_p, A.max_p, T.atan2_p)]
    check_lowerings(cases)


# --- exact ops on arbitrary values (one compile per test: same types, cached executable) ---
def int_arrays(dtype):
    return hnp.arrays(dtype, 8, elements=hnp.from_dtype(np.dtype(dtype)))


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["int8", "uint8", "int32", "uint32"]).flatmap(
    lambda d: st.tuples(int_arrays(d), int_arrays(d))))
def test_integer_div_rem_on_arbitrary_values(xy):
    with np.errstate(all="ignore"):
        check_lowerings([(A.div_p, xy), (A.rem_p, xy)])


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.float32, 8, elements=st.floats(width=32, allow_subnormal=False)))
def test_float_to_int_conversion_and_rounding_on_arbitrary_values(x):
    converts = [(S.convert_element_type_p, (x,), dict(new_dtype=np.dtype(d), weak_type=False))
                for d in ("int8", "uint8", "int32", "uint32", "bool", "float16", "bfloat16")]
    rounding = [(p, (x,)) for p in (L.floor_p, L.ceil_p, L.is_finite_p)]
    rounding += [(L.round_p, (x,), dict(rounding_method=m)) for m in L.RoundingMethod]
    with np.errstate(all="ignore"):
        check_lowerings(converts + rounding)


# --- coverage, the numpy front end under jit, errors ---------------------------------------
# every primitive the tests above check on its dtype matrix
CHECKED = {*FLOAT_DOMAINS, A.add_p, A.sub_p, A.mul_p, A.max_p, A.min_p, A.neg_p, A.sign_p,
           A.square_p, A.abs_p, A.div_p, A.rem_p, T.atan2_p, A.integer_pow_p, T.pow_p,
           L.round_p, L.is_finite_p, L.eq_p, L.ne_p, L.lt_p, L.le_p, L.gt_p, L.ge_p, L.and_p,
           L.or_p, L.xor_p, L.not_p, S.convert_element_type_p, S.select_n_p, S.clamp_p}
# the complex primitives: lowered on complex64 and complex128 in test_complex.py
from plugax_elementwise import complex_ops as _C  # noqa: E402
CHECKED |= {_C.real_p, _C.imag_p, _C.complex_p, _C.conj_p}
# the bit-level primitives: lowered against their impls on every integer dtype in
# test_bits.py
from plugax_elementwise import bits as _B  # noqa: E402
CHECKED |= {_B.shift_left_p, _B.shift_right_arithmetic_p, _B.shift_right_logical_p,
            _B.population_count_p, _B.clz_p, _B.nextafter_p, _B.reduce_precision_p,
            _B.bitcast_convert_type_p}


def test_every_elementwise_primitive_has_a_lowering_rule_and_is_checked_here():
    family = {r.primitive for r in plugax_primitive_rules()}
    assert sorted(p.name for p in family if not has_lowering(p)) == []
    assert sorted(p.name for p in family - CHECKED) == []


NUMPY_FUNCTIONS = [
    lambda x, y: pnp.sin(x) * pnp.exp(-y) + pnp.sqrt(pnp.abs(x)),
    lambda x, y: pnp.where(x > y, x, y) - pnp.maximum(x, 0.5),
    lambda x, y: pnp.clip(x, -1, 1) ** 2 + pnp.floor_divide(x, 0.3),
    lambda x, y: pnp.remainder(x, y) + pnp.log1p(pnp.square(y)) / pnp.cosh(x),
    lambda x, y: (x.astype(pnp.int32) % 3) + pnp.round(y * 10),
    lambda x, y: pnp.isfinite(pnp.log(x)) & (pnp.tanh(y) < 0.3),
    lambda x, y: pnp.arctan2(x, y) + pnp.power(pnp.abs(y), 1.5) + 2 * x - 1,
]


@pytest.mark.skipif(not hasattr(px, "jit"), reason="the xla_call plugin (px.jit) is not loaded")
@pytest.mark.parametrize("i", range(len(NUMPY_FUNCTIONS)))
def test_numpy_functions_jit_equals_eager(i):
    x, y = draw("float32", seed=20), draw("float32", seed=21)
    with np.errstate(all="ignore"):
        eager = NUMPY_FUNCTIONS[i](pnp.asarray(x), pnp.asarray(y))
        jitted = px.jit(NUMPY_FUNCTIONS[i])(x, y)
    assert jitted.dtype == eager.dtype and jitted.shape == eager.shape
    np.testing.assert_allclose(np.asarray(jitted, np.float64), np.asarray(eager, np.float64),
                               rtol=2e-5, atol=1e-5)


class OnePrimitive:
    """A throwaway plugin contributing one RuleSet (for the kit's failure messages)."""

    def __init__(self, ruleset):
        self.ruleset = ruleset

    @hookimpl
    def plugax_plugin_info(self):
        return PluginInfo(name=self.ruleset.primitive.name)

    @hookimpl
    def plugax_primitive_rules(self):
        return [self.ruleset]


def test_check_lowering_names_the_primitive_and_the_inputs_on_mismatch():
    bogus = Primitive("bogus_sin")
    wrong = defvectorized(bogus, np.sin, lowering={"default": lambda ctx, x: ctx.hlo.negate(x)})
    with scoped_plugin(OnePrimitive(wrong), "bogus"):
        with pytest.raises(LoweringMismatch) as info:
            check_lowering(bogus, draw("float32"))
    message = str(info.value)
    assert "lowering rule of primitive 'bogus_sin'" in message
    assert "f32[3,4]" in message and "max abs error" in message


def test_check_lowering_without_a_rule_says_so():
    bogus = Primitive("unlowered")
    with scoped_plugin(OnePrimitive(defvectorized(bogus, np.sin)), "unlowered"):
        with pytest.raises(LoweringMismatch, match="no lowering rule is registered"):
            check_lowering(bogus, draw("float32"))


def test_check_primitive_adds_the_lowering_check_on_request():
    x = draw("float32", 0.1, 2)
    assert "lowering" not in check_primitive(T.log_p, x)
    assert "lowering" in check_primitive(T.log_p, x, lowering=True)
    assert check_primitive(A.integer_pow_p, x, rules=["lowering"], y=3) == ["lowering"]
