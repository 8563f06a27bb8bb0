"""Piecewise-constant primitives: rounding, is_finite, comparisons, bitwise logic.

What they share: their derivative is zero wherever it exists, so every jvp is a
symbolic `Zero` (for float outputs too: floor, ceil, round), and none has a
transpose. They differ only in which dtypes they accept and what they return.
"""
from __future__ import annotations

import enum

import numpy as np

from plugax.extend import Primitive, bool_, defjvp, defvectorized, same_dtypes, zero_vjp

from . import lowering as L
from .common import defbroadcasting, float_dtype, int_or_bool_dtype

__all__ = ["floor_p", "ceil_p", "round_p", "is_finite_p", "eq_p", "ne_p", "lt_p", "le_p",
           "gt_p", "ge_p", "and_p", "or_p", "xor_p", "not_p", "RoundingMethod", "RULES"]


class RoundingMethod(enum.IntEnum):
    """How `round` breaks ties; an IntEnum so jaxprs print `round[rounding_method=1]`."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1

    def __str__(self) -> str:
        return str(int(self))


# --- floor, ceil, round ------------------------------------------------------
floor_p = Primitive("floor")
ceil_p = Primitive("ceil")
round_p = Primitive("round")


def _round_impl(x: np.ndarray, *, rounding_method: RoundingMethod) -> np.ndarray:
    """Ties to even is NumPy's rint; away from zero steps the truncation outwards
    when the (exact) fractional part is at least one half."""
    if rounding_method == RoundingMethod.TO_NEAREST_EVEN:
        return np.rint(x)
    whole = np.trunc(x)
    return np.where(np.abs(x - whole) >= 0.5, whole + np.sign(x), whole).astype(x.dtype)


ROUNDING = [defvectorized(p, fn, dtype_rule=float_dtype(p), jvp=defjvp(p), vjp=zero_vjp(p),
                          lowering=lower)
            for p, fn, lower in ((floor_p, np.floor, L.unary("floor")),
                                 (ceil_p, np.ceil, L.unary("ceil")),
                                 (round_p, _round_impl, L.round_))]


# --- is_finite ---------------------------------------------------------------
is_finite_p = Primitive("is_finite")


def _bool_result(dtype_rule):
    """A dtype rule that checks the operands with `dtype_rule`, then answers bool."""
    def rule(*avals, **params):
        dtype_rule(*avals, **params)  # raises on operands the primitive rejects
        return bool_
    return rule


IS_FINITE = defvectorized(is_finite_p, np.isfinite,
                          dtype_rule=_bool_result(float_dtype(is_finite_p)),
                          jvp=defjvp(is_finite_p), vjp=zero_vjp(is_finite_p),
                          lowering=L.unary("is_finite"))


# --- comparisons: any dtype in, bool out --------------------------------------
eq_p, ne_p = Primitive("eq"), Primitive("ne")
lt_p, le_p, gt_p, ge_p = Primitive("lt"), Primitive("le"), Primitive("gt"), Primitive("ge")

def _comparison_dtype(p: Primitive):
    """eq and ne take any dtype; the ordering comparisons refuse complex operands,
    which have no order (NumPy orders them lexicographically, XLA refuses them: the
    answer would differ between eager and jit), as JAX does."""
    if p in (eq_p, ne_p):
        return same_dtypes(p)
    return same_dtypes(p, lambda d: d.kind != "c",
                       "an integer, floating-point or bool dtype: complex numbers are "
                       "not ordered")


COMPARISONS = [defbroadcasting(p, fn, dtype_rule=_bool_result(_comparison_dtype(p)),
                               jvp=defjvp(p), vjp=zero_vjp(p),
                               lowering=L.compare(p.name.upper()))
               for p, fn in ((eq_p, np.equal), (ne_p, np.not_equal), (lt_p, np.less),
                             (le_p, np.less_equal), (gt_p, np.greater),
                             (ge_p, np.greater_equal))]


# --- bitwise logic: bitwise on integers, logical on bool ------------------------
and_p, or_p, xor_p, not_p = (Primitive("and"), Primitive("or"), Primitive("xor"),
                             Primitive("not"))

# NumPy's bitwise ufuncs are already logical on bool arrays, as lax's are.
BITWISE = [defbroadcasting(p, fn, dtype_rule=int_or_bool_dtype(p), jvp=defjvp(p),
                           lowering=L.binary(op))
           for p, fn, op in ((and_p, np.bitwise_and, "and_"), (or_p, np.bitwise_or, "or_"),
                             (xor_p, np.bitwise_xor, "xor"))]
BITWISE.append(defvectorized(not_p, np.invert, dtype_rule=int_or_bool_dtype(not_p),
                             jvp=defjvp(not_p), lowering=L.unary("not_")))

RULES = [*ROUNDING, IS_FINITE, *COMPARISONS, *BITWISE]
