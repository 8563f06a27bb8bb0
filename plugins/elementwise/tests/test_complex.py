"""Complex operands through the elementwise primitives, with the conformance kit: jvp
against finite differences along complex directions (complex128), transposes by the
dot-product test under the pairing Re(sum(a * b)), vmap against a loop, and jit against
eager; then the lowering of real/imag/complex/conj and of the complex-accepting
primitives on complex64 and complex128 in one module.

Third-party transformations (jet) are skipped here: Taylor rules are real-only.
"""
import numpy as np
import pytest

from plugax.testing import check_lowerings, check_primitive, x64
from plugax_elementwise import arithmetic as A, complex_ops as C, logic as L
from plugax_elementwise import selection as S, transcendental as T

Z = (np.linspace(-0.9, 0.8, 6) + 1j * np.linspace(0.5, -0.7, 6)).astype(np.complex64)
Z = Z.reshape(2, 3)
W = (np.linspace(0.4, 1.3, 6) - 1j * np.linspace(-0.6, 0.9, 6)).astype(np.complex64)
W = W.reshape(2, 3)
F = np.linspace(-0.9, 0.8, 6, dtype=np.float32).reshape(2, 3)
G = np.linspace(0.3, 1.6, 6, dtype=np.float32).reshape(2, 3)
C64, F32 = np.dtype(np.complex64), np.dtype(np.float32)

UNARY = [A.neg_p, A.abs_p, A.square_p, T.exp_p, T.exp2_p, T.log_p, T.log1p_p,
         T.expm1_p, T.sqrt_p, T.rsqrt_p, T.sin_p, T.cos_p, T.tan_p, T.asin_p, T.acos_p,
         T.atan_p, T.sinh_p, T.cosh_p, T.tanh_p, T.asinh_p, T.acosh_p, T.atanh_p,
         T.logistic_p]
BINARY = [A.add_p, A.sub_p, A.mul_p, A.div_p, T.pow_p, L.eq_p, L.ne_p, A.max_p, A.min_p,
          T.atan2_p]


def _check(prim, *args, **params):
    ran = check_primitive(prim, *args, transformations=False, **params)
    assert "abstract_eval" in ran and "vmap" in ran
    assert "jit" in ran or "jit" in ran.skipped      # skipped where xla_call is not loaded
    return ran


@pytest.mark.parametrize("prim", UNARY, ids=str)
def test_unary_on_complex(prim):
    # acosh away from its branch cut (real axis left of 1), where JAX's rsqrt(x^2 - 1)
    # is the derivative of the principal branch
    assert "jvp" in _check(prim, Z + 2 if prim is T.acosh_p else Z)


def test_sign_of_complex_is_z_over_abs_z_with_jaxs_zero_jvp():
    """JAX gives sign a zero jvp for every dtype, complex too (where z/|z| is not
    piecewise constant): the jvp check against finite differences does not apply."""
    import plugax
    check_primitive(A.sign_p, Z, rules=["abstract_eval", "vmap"], transformations=False)
    np.testing.assert_allclose(plugax.lax.sign(Z), Z / np.abs(Z), rtol=1e-6)
    _, t = plugax.jvp(plugax.lax.sign, (Z,), (W,))
    np.testing.assert_array_equal(t, np.zeros_like(Z))


@pytest.mark.parametrize("prim", BINARY, ids=str)
def test_binary_on_complex(prim):
    _check(prim, Z, W)
    _check(prim, Z, np.complex64(0.5 - 0.25j))    # a rank-0 operand


def test_integer_pow_and_pow_with_integer_exponent():
    for y in (2, 3, -2):
        _check(A.integer_pow_p, Z, y=y)
    _check(T.pow_p, Z, np.array([[1, 2, 3], [-1, 0, 2]], np.int32))


@pytest.mark.parametrize("prim,args,params,linear", [
    (C.real_p, (Z,), {}, 0), (C.imag_p, (Z,), {}, 0),
    (C.complex_p, (F, G), {}, (0, 1)), (C.complex_p, (F, np.float32(0.5)), {}, (0, 1)),
    (C.conj_p, (Z,), {"input_dtype": C64}, 0), (C.conj_p, (F,), {"input_dtype": F32}, 0),
    (A.mul_p, (Z, W), {}, 1), (A.div_p, (Z, W), {}, 0), (A.add_p, (Z, W), {}, (0, 1)),
    (A.neg_p, (Z,), {}, 0),
    (S.convert_element_type_p, (Z,), {"new_dtype": F32, "weak_type": False}, 0),
    (S.convert_element_type_p, (F,), {"new_dtype": C64, "weak_type": False}, 0),
], ids=lambda v: str(v) if not isinstance(v, (tuple, dict, int)) else "")
def test_linear_complex_maps_transpose_as_jax(prim, args, params, linear):
    """JAX transposes (never conjugates): real -> complex(ct, 0), imag -> complex(0, -ct),
    conj -> conj, mul by y -> ct * y; the kit's dot-product test pairs Re(sum(a * b))."""
    # a conversion's output dtype is fixed (32-bit) by its param: coarser differences
    options = {"jvp": {"eps": 1e-3, "rtol": 1e-3}} if prim is S.convert_element_type_p else {}
    ran = _check(prim, *args, linear_argnums=linear, options=options, **params)
    assert "transpose" in ran and "jvp" in ran


def test_select_n_and_comparisons_take_complex():
    _check(S.select_n_p, F > 0, Z, W)
    _check(L.eq_p, Z, Z)


def test_the_part_and_magnitude_dtypes_are_real():
    import plugax.lax as lax
    assert lax.real(Z).dtype == np.float32 and lax.imag(Z).dtype == np.float32
    assert lax.abs(Z).dtype == np.float32 and lax.complex(F, G).dtype == np.complex64
    assert lax.conj(F).dtype == np.complex64
    with x64():
        z = np.asarray(Z, np.complex128)
        assert lax.real(z).dtype == np.float64 and lax.abs(z).dtype == np.float64
        assert lax.complex(F.astype(np.float64), G.astype(np.float64)).dtype == np.complex128


def test_lowering_on_complex64_and_complex128():
    cases = []
    for c, f in ((np.complex64, np.float32), (np.complex128, np.float64)):
        z, w, x, y = Z.astype(c), W.astype(c), F.astype(f), G.astype(f)
        cases += [(C.real_p, (z,)), (C.imag_p, (z,)), (C.complex_p, (x, y)),
                  (C.complex_p, (x, f(0.5))),
                  (C.conj_p, (z,), {"input_dtype": np.dtype(c)}),
                  (C.conj_p, (x,), {"input_dtype": np.dtype(f)}),
                  (A.integer_pow_p, (z,), {"y": -3}), (A.integer_pow_p, (z,), {"y": 0}),
                  (T.pow_p, (z, np.array([[1, 2, 3], [-1, 0, 2]], np.int32))),
                  (S.select_n_p, (F > 0, z, w)), (L.ne_p, (z, w)),
                  (S.convert_element_type_p, (z,), {"new_dtype": np.dtype(f), "weak_type": False}),
                  (S.convert_element_type_p, (z * 3,), {"new_dtype": np.dtype(np.int32),
                                                         "weak_type": False}),
                  (S.convert_element_type_p, (np.array([0, 1j, 2], c),),
                   {"new_dtype": np.dtype(bool), "weak_type": False}),
                  (S.convert_element_type_p, (x,), {"new_dtype": np.dtype(c), "weak_type": False})]
        cases += [(p, (z,)) for p in UNARY if p is not T.acosh_p] + [(T.acosh_p, (w,))]
        cases += [(p, (z, w)) for p in BINARY]
    with x64(), np.errstate(all="ignore"):
        check_lowerings(cases)
