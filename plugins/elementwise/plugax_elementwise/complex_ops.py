"""Complex numbers: the primitives real, imag, complex and conj.

Why these four are primitives: every other complex operation (angle, abs's
derivative, the transposes of real <-> complex conversions) is written with
them, and they are exactly the linear maps between C and R^2 whose transposes
define JAX's differentiation convention. JAX transposes (never conjugates) the
linear map: real's transpose puts the cotangent in the real part, imag's puts
*minus* the cotangent in the imaginary part, and conj transposes to conj. With
these, `grad(f)(z)` of a real-valued f is df/dx - i df/dy, e.g.
`grad(lambda z: abs(z) ** 2)(z) == 2 * conj(z)`, as in JAX.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from plugax.extend import (COMPLEX_OF_REAL, REAL_OF_COMPLEX, Primitive, ShapedArray,
                           UndefPrimal, deflinear, defvectorized, float32, float64, same_dtypes)

from . import lowering as L
from .common import (binary_transpose, defbroadcasting, defjvp_bcast, neg_p, type_error,
                     zeros_like)

__all__ = ["real_p", "imag_p", "complex_p", "conj_p", "RULES"]

real_p, imag_p, complex_p, conj_p = (Primitive("real"), Primitive("imag"),
                                     Primitive("complex"), Primitive("conj"))

_complex_operand = {p: same_dtypes(p, lambda d: d.kind == "c", "a complex dtype")
                    for p in (real_p, imag_p)}


def _part_dtype(prim: Primitive):
    def rule(x: ShapedArray) -> np.dtype:
        return REAL_OF_COMPLEX[_complex_operand[prim](x)]
    return rule


def _real_transpose(ctx, ct, x):
    return [complex_p.bind(ct, zeros_like(ct))]


def _imag_transpose(ctx, ct, x):
    return [complex_p.bind(zeros_like(ct), neg_p.bind(ct))]


REAL = defvectorized(real_p, lambda x: np.real(x).copy(), dtype_rule=_part_dtype(real_p),
                     jvp=deflinear(real_p), transpose=_real_transpose,
                     lowering=L.unary("real"))
IMAG = defvectorized(imag_p, lambda x: np.imag(x).copy(), dtype_rule=_part_dtype(imag_p),
                     jvp=deflinear(imag_p), transpose=_imag_transpose,
                     lowering=L.unary("imag"))


# --- complex(x, y) = x + i y: float32 -> complex64, float64 -> complex128 ----------------
def _complex_dtype(x: ShapedArray, y: ShapedArray) -> np.dtype:
    if x.dtype != y.dtype or x.dtype not in (float32, float64):
        raise type_error(complex_p, (x, y), "needs two operands of one dtype, float32 or "
                         "float64", "convert them first (plugax.numpy promotes)")
    return COMPLEX_OF_REAL[x.dtype]


def _complex_impl(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    out = np.empty(np.broadcast_shapes(x.shape, y.shape), COMPLEX_OF_REAL[x.dtype])
    out.real, out.imag = x, y
    return out


COMPLEX = defbroadcasting(
    complex_p, _complex_impl, dtype_rule=_complex_dtype, lowering=L.binary("complex"),
    jvp=defjvp_bcast(complex_p, lambda g, ans, x, y: complex_p.bind(g, zeros_like(g)),
                     lambda g, ans, x, y: complex_p.bind(zeros_like(g), g)),
    transpose=binary_transpose(complex_p, lambda ct, x, y: real_p.bind(ct),
                               lambda ct, x, y: neg_p.bind(imag_p.bind(ct))))


# --- conj[input_dtype]: complex -> complex, or float -> complex (JAX's signature) -------
def _conj_dtype(x: ShapedArray, *, input_dtype: Any) -> np.dtype:
    if x.dtype.kind == "c":
        return x.dtype
    if x.dtype in (float32, float64):
        return COMPLEX_OF_REAL[x.dtype]
    raise type_error(conj_p, (x,), f"does not accept dtype {x.dtype.name}",
                     "pass a float32, float64 or complex operand")


def _conj_impl(x: np.ndarray, *, input_dtype: Any) -> np.ndarray:
    return np.conj(x).astype(_conj_dtype(ShapedArray(x.shape, x.dtype), input_dtype=None))


def _conj_transpose(ctx, ct, x: UndefPrimal, *, input_dtype: Any):
    """conj's transpose is conj; from a real operand (which conj made complex), the
    real part of the cotangent."""
    if x.aval.dtype.kind == "c":
        return [conj_p.bind(ct, input_dtype=x.aval.dtype)]
    return [real_p.bind(ct)]


def _lower_conj(ctx, x, *, input_dtype):
    """StableHLO has no conj: complex(real(x), -imag(x)) (or complex(x, 0) for real x)."""
    if ctx.avals_in[0].dtype.kind == "c":
        return ctx.hlo.complex(ctx.hlo.real(x), ctx.hlo.negate(ctx.hlo.imag(x)))
    zero = L.splat(ctx, 0, ctx.avals_in[0].dtype, ctx.avals_in[0].shape)
    return ctx.hlo.complex(x, zero)


CONJ = defvectorized(conj_p, _conj_impl, dtype_rule=_conj_dtype, jvp=deflinear(conj_p),
                     transpose=_conj_transpose, lowering=L.rule(_lower_conj))

RULES = [REAL, IMAG, COMPLEX, CONJ]
