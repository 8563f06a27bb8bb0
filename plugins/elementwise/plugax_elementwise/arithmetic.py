"""Arithmetic: add sub mul div rem neg sign abs max min square integer_pow.

Integer semantics follow lax (i.e. XLA), not NumPy: `div` truncates toward zero,
`rem` has the sign of the dividend (C's fmod), and division by zero does not
raise: x / 0 == -1 (all bits set) and x % 0 == x.

The linear ones (add, sub, neg; mul in one operand, div in its numerator) also
have transpose rules, which is all reverse mode needs from them.
"""
from __future__ import annotations

import numpy as np

from plugax.extend import (REAL_OF_COMPLEX, Primitive, ShapedArray, defjvp, deflinear,
                           defvectorized, get_aval, linear_vjp, same_dtypes, scalar_like,
                           zero_vjp)

from . import lowering as L
from .common import (any_dtype, binary_transpose, defbroadcasting, defjvp_bcast,
                     defvjp_bcast, diagonal_rules, is_number,
                     is_signed_or_float, neg_p, number_dtype, numeric_dtype, type_error,
                     zeros_like)
from .complex_ops import complex_p, conj_p, real_p
from .logic import eq_p, floor_p, ge_p, gt_p, lt_p
from .selection import convert, select_n_p

__all__ = ["add_p", "sub_p", "mul_p", "div_p", "rem_p", "neg_p", "sign_p", "abs_p", "max_p",
           "min_p", "square_p", "integer_pow_p", "RULES", "FLOAT_IMPLS"]

# --- add, sub, mul: linear ---------------------------------------------------
add_p, sub_p, mul_p = Primitive("add"), Primitive("sub"), Primitive("mul")

ADD = defbroadcasting(
    add_p, np.add, dtype_rule=number_dtype(add_p), lowering=L.binary("add"),
    **diagonal_rules(add_p, lambda g, *_: g, lambda g, *_: g),
    transpose=binary_transpose(add_p, lambda ct, x, y: ct, lambda ct, x, y: ct))

SUB = defbroadcasting(
    sub_p, np.subtract, dtype_rule=number_dtype(sub_p), lowering=L.binary("subtract"),
    **diagonal_rules(sub_p, lambda g, *_: g, lambda g, *_: neg_p.bind(g)),
    transpose=binary_transpose(sub_p, lambda ct, x, y: ct, lambda ct, x, y: neg_p.bind(ct)))

MUL = defbroadcasting(
    mul_p, np.multiply, dtype_rule=number_dtype(mul_p), lowering=L.binary("multiply"),
    **diagonal_rules(mul_p, lambda g, ans, x, y: mul_p.bind(g, y),
                     lambda g, ans, x, y: mul_p.bind(x, g)),
    transpose=binary_transpose(mul_p, lambda ct, x, y: mul_p.bind(ct, y),
                               lambda ct, x, y: mul_p.bind(x, ct), joint=False))


# --- div, rem: lax integer semantics ------------------------------------------------
div_p, rem_p = Primitive("div"), Primitive("rem")


def _int_divmod(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Quotient truncated toward zero and C remainder, with XLA's results for y == 0."""
    zero = y == 0
    with np.errstate(all="ignore"):
        safe = np.where(zero, np.ones_like(y), y)
        rem = np.fmod(x, safe)
        quot = (x - rem) // safe   # exact: x - rem is a multiple of y
    all_ones = np.array(-1).astype(x.dtype)
    return np.where(zero, all_ones, quot), np.where(zero, x, rem)


def _div_impl(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return _int_divmod(x, y)[0] if x.dtype.kind in "iu" else np.divide(x, y)


def _rem_impl(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return _int_divmod(x, y)[1] if x.dtype.kind in "iu" else np.fmod(x, y)


DIV = defbroadcasting(
    div_p, _div_impl, dtype_rule=number_dtype(div_p), lowering=L.binary("divide"),
    # d(x/y)/dy = -x/y**2 = -(x/y)/y
    **diagonal_rules(div_p, lambda g, ans, x, y: div_p.bind(g, y),
                     lambda g, ans, x, y: neg_p.bind(mul_p.bind(g, div_p.bind(ans, y)))),
    transpose=binary_transpose(div_p, lambda ct, x, y: div_p.bind(ct, y), None))

def _rem_dy(g, ans, x, y):
    """rem(x, y) = x - y * trunc(x / y): d/dy = -trunc(x / y), written as JAX does,
    -sign(x / y) * floor(|x / y|), so y == 0 gives -+inf (not NaN from x - rem)."""
    q = div_p.bind(x, y)
    return neg_p.bind(mul_p.bind(g, mul_p.bind(sign_p.bind(q), floor_p.bind(abs_p.bind(q)))))


REM = defbroadcasting(
    rem_p, _rem_impl, dtype_rule=numeric_dtype(rem_p), lowering=L.binary("remainder"),
    **diagonal_rules(rem_p, lambda g, *_: g, _rem_dy))


# --- neg, sign, abs -----------------------------------------------------------------
sign_p, abs_p = Primitive("sign"), Primitive("abs")   # neg_p: in common (complex_ops uses it too)


def _neg_transpose(ctx, ct, x):
    return [neg_p.bind(ct)]


NEG = defvectorized(neg_p, np.negative, dtype_rule=number_dtype(neg_p), jvp=deflinear(neg_p),
                    vjp=linear_vjp(neg_p), transpose=_neg_transpose, lowering=L.unary("negate"))
SIGN = defvectorized(sign_p, np.sign, dtype_rule=number_dtype(sign_p), jvp=defjvp(sign_p),
                     vjp=zero_vjp(sign_p),
                     lowering=L.sign)
_abs_operand = same_dtypes(abs_p, lambda d: is_signed_or_float(d) or d.kind == "c",
                           "a signed integer, floating-point or complex dtype")


def _abs_dtype(x: ShapedArray) -> np.dtype:
    """abs of a complex value is its real magnitude (complex64 -> float32), as in JAX."""
    dtype = _abs_operand(x)
    return REAL_OF_COMPLEX.get(dtype, dtype)


def _abs_partial(g, ans, x):
    """Real x: g where x >= 0, else -g (the derivative at 0 is 1, as in JAX, not
    sign(0) = 0). Complex x: Re(g * conj(x) / |x|), with |x| = 0 replaced by 1 (JAX's
    rule: the tangent at 0 is Re(g * 0) = 0, not NaN)."""
    if get_aval(x).dtype.kind != "c":
        return select_n_p.bind(ge_p.bind(x, scalar_like(x, 0)), neg_p.bind(g), g)
    return real_p.bind(mul_p.bind(g, _abs_complex_factor(ans, x)))


def _abs_complex_factor(ans, x):
    """conj(x) / |x|, with |x| = 0 replaced by 1."""
    dtype = get_aval(x).dtype
    mag = convert(ans, dtype)
    zero = eq_p.bind(mag, scalar_like(mag, 0))
    safe = select_n_p.bind(zero, mag, add_p.bind(mul_p.bind(mag, scalar_like(mag, 0)),
                                                 scalar_like(mag, 1)))
    return div_p.bind(conj_p.bind(x, input_dtype=dtype), safe)


_abs_real_vjp = defvjp_bcast(abs_p, _abs_partial)   # diagonal for real x


def _abs_vjp(ctx, primals, wanted):
    """Real x: the diagonal partial. Complex x: the partial is Re(g * c), whose
    transpose (real's, then mul's) is complex(ct, 0) * c."""
    (x,) = primals
    if get_aval(x).dtype.kind != "c":
        return _abs_real_vjp(ctx, primals, wanted)
    ans = abs_p.bind(x)
    factor = _abs_complex_factor(ans, x)
    return ans, lambda ct: [mul_p.bind(complex_p.bind(ct, zeros_like(ct)), factor)]


ABS = defvectorized(abs_p, np.abs, dtype_rule=_abs_dtype,
                    jvp=defjvp_bcast(abs_p, _abs_partial), vjp=_abs_vjp,
                    lowering=L.unary("abs"))


# --- max, min: the tangent follows the larger (smaller) operand, halved at ties ------
max_p, min_p = Primitive("max"), Primitive("min")


def _share(x, y, wins: Primitive, ans=None):
    """x's share of the tangent of max/min: 1 where x wins, 1/2 at ties, else 0. Complex
    operands (ordered lexicographically, no `wins` comparison) as JAX's _balanced_eq:
    [x == ans] / (1 + [y == ans])."""
    dtype = get_aval(x).dtype
    if dtype.kind == "c":
        is_x, is_y = convert(eq_p.bind(x, ans), dtype), convert(eq_p.bind(y, ans), dtype)
        return div_p.bind(is_x, add_p.bind(is_y, scalar_like(is_y, 1)))
    won = convert(wins.bind(x, y), dtype)
    tied = convert(eq_p.bind(x, y), dtype)
    return add_p.bind(won, mul_p.bind(tied, scalar_like(x, 0.5)))


def _defminmax(prim: Primitive, impl, wins: Primitive, op: str):
    return defbroadcasting(
        prim, impl, dtype_rule=any_dtype(prim), lowering=L.minmax(op),
        **diagonal_rules(prim, lambda g, ans, x, y: mul_p.bind(g, _share(x, y, wins, ans)),
                         lambda g, ans, x, y: mul_p.bind(g, _share(y, x, wins, ans))))


MAX = _defminmax(max_p, np.maximum, gt_p, "maximum")
MIN = _defminmax(min_p, np.minimum, lt_p, "minimum")


# --- square, integer_pow[y] -----------------------------------------------------------
square_p, integer_pow_p = Primitive("square"), Primitive("integer_pow")

SQUARE = defvectorized(
    square_p, np.square, dtype_rule=number_dtype(square_p), lowering=L.square,
    **diagonal_rules(square_p, lambda g, ans, x: mul_p.bind(g, mul_p.bind(scalar_like(x, 2), x))))


def _integer_pow_dtype(x: ShapedArray, *, y: int) -> np.dtype:
    if not is_number(x.dtype):
        raise type_error(integer_pow_p, (x,), f"does not accept dtype {x.dtype.name}",
                         "use an integer, floating-point or complex operand")
    if y < 0 and x.dtype.kind in "iu":
        raise type_error(integer_pow_p, (x,), f"cannot raise integers to the negative "
                         f"power y={y}", "convert the operand to a float dtype first")
    return x.dtype


def _integer_pow_partial(g, ans, x, *, y: int):
    """d(x**y) = y * x**(y-1); the power is skipped when it is x**0 or x**1."""
    if y == 1:
        return g
    power = x if y == 2 else integer_pow_p.bind(x, y=y - 1)
    return mul_p.bind(g, mul_p.bind(scalar_like(x, y), power))


_integer_pow_zero_jvp = defjvp(integer_pow_p)
_integer_pow_power_rule = defjvp_bcast(integer_pow_p, _integer_pow_partial)


def _integer_pow_jvp(ctx, primals, tangents, *, y: int):
    rule = _integer_pow_zero_jvp if y == 0 else _integer_pow_power_rule
    return rule(ctx, primals, tangents, y=y)


_integer_pow_power_vjp = defvjp_bcast(integer_pow_p, _integer_pow_partial)


def _integer_pow_vjp(ctx, primals, wanted, *, y: int):
    """x**0 is constant (no cotangent, as its zero jvp); otherwise the diagonal partial."""
    if y == 0:
        return integer_pow_p.bind(*primals, y=y), None
    return _integer_pow_power_vjp(ctx, primals, wanted, y=y)


def _integer_pow_impl(x: np.ndarray, *, y: int) -> np.ndarray:
    # x ** 2 is the common case (squared errors): np.square is twice as fast as power
    return np.square(x) if y == 2 else np.power(x, y)


INTEGER_POW = defvectorized(integer_pow_p, _integer_pow_impl,
                            dtype_rule=_integer_pow_dtype, jvp=_integer_pow_jvp,
                            vjp=_integer_pow_vjp,
                            lowering=L.integer_pow)

RULES = [ADD, SUB, MUL, DIV, REM, NEG, SIGN, ABS, MAX, MIN, SQUARE, INTEGER_POW]

# The NumPy function each impl rule above calls for floating-point operands of one
# dtype and shape: plugax.numpy's eager fast path runs it in place of the rule (no
# bind) while the impl table still holds that rule; an overridden rule is bound.
FLOAT_IMPLS = {add_p: np.add, sub_p: np.subtract, mul_p: np.multiply, div_p: np.divide,
               max_p: np.maximum, min_p: np.minimum, neg_p: np.negative,
               square_p: np.square}

