"""Transpose rules of the linear primitives (the dot-product test), and the errors the
rules raise: each names the primitive, the operand types and what to do instead."""
import numpy as np
import pytest

import plugax
from plugax.extend import UndefPrimal, ShapedArray
from plugax.testing import check_transpose
from plugax_elementwise import arithmetic as A, logic as L, selection as S, transcendental as T

F = np.linspace(-0.9, 0.8, 6, dtype=np.float32).reshape(2, 3)
POS = np.linspace(0.5, 2.0, 6, dtype=np.float32).reshape(2, 3)
S0 = np.float32(1.5)


@pytest.mark.parametrize("prim,args,linear", [
    (A.add_p, (F, POS), (0, 1)), (A.add_p, (S0, POS), (0, 1)),
    (A.add_p, (F, S0), (0, 1)),
    (A.sub_p, (F, POS), (0, 1)), (A.sub_p, (S0, POS), (0, 1)), (A.sub_p, (F, S0), (0, 1)),
    (A.mul_p, (F, POS), 0), (A.mul_p, (F, POS), 1), (A.mul_p, (S0, POS), 0),
    (A.mul_p, (F, S0), 0), (A.mul_p, (S0, POS), 1),
    (A.div_p, (F, POS), 0), (A.div_p, (S0, POS), 0), (A.div_p, (F, S0), 0),
    (A.neg_p, (F,), 0),
    (S.select_n_p, (F > 0, F, POS), (1, 2)),
    (S.select_n_p, (np.array([[0, 1, 2], [2, 2, 0]], np.int32), F, POS, F), (1, 2, 3)),
], ids=lambda v: str(v) if not isinstance(v, (tuple, np.ndarray)) else None)
def test_transpose(prim, args, linear):
    # (add and sub are linear in both operands jointly; in one alone they are affine)
    check_transpose(prim, *args, linear_argnums=linear)


def test_convert_element_type_transpose():
    check_transpose(S.convert_element_type_p, F, linear_argnums=0,
                    new_dtype=np.dtype("float32"), weak_type=False)


def _transpose(prim, ct, *args, **params):
    from plugax.core.rules import TRANSPOSE_CTX, transpose_rules   # the kernel's call
    return transpose_rules[prim](TRANSPOSE_CTX, ct, *args, **params)


def test_rank0_cotangent_is_summed():
    ct = plugax.Array(np.ones((2, 3), np.float32))
    cx, cy = _transpose(A.add_p, ct, UndefPrimal(ShapedArray((), np.float32)),
                        plugax.Array(POS))
    assert np.shape(cx) == () and float(cx) == 6.0 and cy is None


@pytest.mark.parametrize("prim,args", [
    (A.mul_p, (UndefPrimal(ShapedArray((2,), np.float32)),) * 2),
    (A.div_p, (plugax.Array(np.ones(2, np.float32)), UndefPrimal(ShapedArray((2,), np.float32)))),
], ids=["mul-both", "div-denominator"])
def test_nonlinear_transpose_is_refused(prim, args):
    with pytest.raises(plugax.ShapeError, match=f"'{prim}' is not linear"):
        _transpose(prim, plugax.Array(np.ones(2, np.float32)), *args)


def test_select_n_transpose_refuses_predicate():
    with pytest.raises(plugax.ShapeError, match="not linear in `which`"):
        _transpose(S.select_n_p, plugax.Array(np.ones(2, np.float32)),
                   UndefPrimal(ShapedArray((2,), np.bool_)), plugax.Array(F[0, :2]),
                   plugax.Array(F[0, :2]))


# --- errors -----------------------------------------------------------------------------
f32, i32 = np.zeros(3, np.float32), np.zeros(3, np.int32)


@pytest.mark.parametrize("call,pattern", [
    (lambda: A.add_p.bind(f32, i32), r"'add' requires operands of one dtype.*f32\[3\], i32\[3\]"),
    (lambda: A.mul_p.bind(f32, np.zeros(4, np.float32)),
     r"'mul' requires operands of equal shapes.*f32\[3\], f32\[4\].*plugax.numpy"),
    (lambda: T.sin_p.bind(i32), r"'sin' does not accept dtype int32.*floating-point"),
    (lambda: A.add_p.bind(f32 > 0, f32 > 0), r"'add' does not accept dtype bool"),
    (lambda: L.and_p.bind(f32, f32), r"'and' does not accept dtype float32"),
    (lambda: A.abs_p.bind(np.zeros(3, np.uint8)), r"'abs' does not accept dtype uint8"),
    (lambda: A.integer_pow_p.bind(i32, y=-1), r"'integer_pow' cannot raise integers.*y=-1"),
    (lambda: A.integer_pow_p.bind(f32 > 0, y=2), r"'integer_pow' does not accept dtype bool"),
    (lambda: T.pow_p.bind(i32, i32), r"'pow' needs a floating-point or complex base.*i32\[3\]"),
    (lambda: S.select_n_p.bind(f32, f32, f32), r"'select_n' needs a bool or integer `which`"),
    (lambda: S.select_n_p.bind(True, f32, f32, f32), r"'select_n' takes at most 2 cases"),
    (lambda: S.select_n_p.bind(np.zeros(2, bool), f32, f32), r"'select_n' needs cases of one "
                                                             r"shape.*bool\[2\], f32\[3\]"),
    (lambda: S.select_n_p.bind(True, f32, i32), r"'select_n' requires operands of one dtype"),
    (lambda: S.select_n_p.bind(True), r"'select_n' needs at least one case"),
    (lambda: S.clamp_p.bind(np.zeros(2, np.float32), f32, np.float32(1)),
     r"'clamp' needs bounds of rank 0 or of the operand's shape.*f32\[2\], f32\[3\], f32\[\]"),
    (lambda: S.convert_element_type_p.bind(f32, new_dtype=np.dtype("S3"), weak_type=False),
     r"'convert_element_type' cannot convert to dtype"),
])
def test_errors_name_primitive_and_operands(call, pattern):
    # abstract_eval is the type checker (eager evaluation trusts NumPy for speed)
    with pytest.raises(plugax.ShapeError, match=pattern):
        plugax.make_jaxpr(call)()


def test_eager_failure_is_explained_by_abstract_eval():
    with pytest.raises(plugax.ShapeError, match=r"'mul' requires operands of equal shapes"):
        A.mul_p.bind(f32, np.zeros(4, np.float32))


def test_eager_lax_op_with_mismatched_dtypes_raises_like_traced():
    import plugax.lax as lax_ns
    from plugax.extend import ShapeError
    with pytest.raises(ShapeError, match=r"'add'.*f32\[3\], i32\[3\]"):
        lax_ns.add(np.ones(3, np.float32), np.ones(3, np.int32))
    with pytest.raises(ShapeError, match=r"'mul'.*equal shapes"):
        lax_ns.mul(np.ones(3, np.float32), np.ones((2, 3), np.float32))
