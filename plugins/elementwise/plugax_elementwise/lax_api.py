"""plugax.lax: one function per elementwise primitive, with JAX's names and signatures.

Like jax.lax these do not promote: operands must share a dtype (a weak Python
scalar of that dtype is fine) and a shape (or be rank-0). `plugax.numpy` is
the promoting, broadcasting layer on top. (`lax.convert_element_type` is the
kernel's: `plugax.structural`.)
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from plugax.extend import Primitive

from . import arithmetic as A, complex_ops as C, logic as L, selection as S, transcendental as T
from .logic import RoundingMethod

__all__ = ["LAX"]


def _unary(prim: Primitive) -> Callable:
    def fn(x: Any) -> Any:
        return prim.bind(x)
    return fn


def _binary(prim: Primitive) -> Callable:
    def fn(x: Any, y: Any) -> Any:
        return prim.bind(x, y)
    return fn


def integer_pow(x: Any, y: int) -> Any:
    """x ** y for a static Python int y (repeated multiplication, any numeric dtype)."""
    if isinstance(y, bool) or not isinstance(y, (int, np.integer)):
        raise TypeError(f"lax.integer_pow needs a Python int exponent y, got {y!r} "
                        f"({type(y).__name__}); use lax.pow for other exponents")
    return A.integer_pow_p.bind(x, y=int(y))


def round(x: Any, rounding_method: RoundingMethod = RoundingMethod.AWAY_FROM_ZERO) -> Any:
    """Round to an integral value; ties away from zero unless told TO_NEAREST_EVEN."""
    return L.round_p.bind(x, rounding_method=RoundingMethod(rounding_method))


def select_n(which: Any, *cases: Any) -> Any:
    """cases[which] elementwise; `which` bool (at most 2 cases) or integer."""
    return S.select_n_p.bind(which, *cases)


def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    """on_true where pred else on_false (select_n with the cases swapped)."""
    return S.select_n_p.bind(pred, on_false, on_true)


def conj(x: Any) -> Any:
    """The complex conjugate; a real operand becomes complex (JAX's lax.conj)."""
    dtype = np.result_type(getattr(x, "dtype", None) or np.asarray(x).dtype)
    return C.conj_p.bind(x, input_dtype=dtype)


def complex(x: Any, y: Any) -> Any:
    """x + i y from two float operands of one dtype (float32 -> complex64)."""
    return C.complex_p.bind(x, y)


def clamp(min: Any, x: Any, max: Any) -> Any:
    """min(max(x, min), max); the bounds are rank-0 or of x's shape."""
    return S.clamp_p.bind(min, x, max)


_UNARY = {"neg": A.neg_p, "sign": A.sign_p, "abs": A.abs_p, "square": A.square_p,
          "floor": L.floor_p, "ceil": L.ceil_p, "is_finite": L.is_finite_p,
          "bitwise_not": L.not_p, **{p.name: p for p in (
              T.sqrt_p, T.rsqrt_p, T.cbrt_p, T.exp_p, T.exp2_p, T.log_p, T.log1p_p, T.expm1_p,
              T.sin_p, T.cos_p, T.tan_p, T.asin_p, T.acos_p, T.atan_p, T.sinh_p, T.cosh_p,
              T.tanh_p, T.asinh_p, T.acosh_p, T.atanh_p, T.logistic_p)},
          "real": C.real_p, "imag": C.imag_p}
_BINARY = {"add": A.add_p, "sub": A.sub_p, "mul": A.mul_p, "div": A.div_p, "rem": A.rem_p,
           "max": A.max_p, "min": A.min_p, "pow": T.pow_p, "atan2": T.atan2_p,
           "eq": L.eq_p, "ne": L.ne_p, "lt": L.lt_p, "le": L.le_p, "gt": L.gt_p, "ge": L.ge_p,
           "bitwise_and": L.and_p, "bitwise_or": L.or_p, "bitwise_xor": L.xor_p}

LAX: dict[str, Any] = {
    **{name: _unary(p) for name, p in _UNARY.items()},
    **{name: _binary(p) for name, p in _BINARY.items()},
    "integer_pow": integer_pow, "round": round, "select_n": select_n, "select": select,
    "clamp": clamp, "RoundingMethod": RoundingMethod, "conj": conj, "complex": complex,
}
for _name, _fn in LAX.items():
    if getattr(_fn, "__name__", None) == "fn":
        _fn.__name__ = _fn.__qualname__ = _name
