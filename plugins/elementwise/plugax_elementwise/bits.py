"""Bit-level primitives: shifts, population count, leading zeros, nextafter,
reduce_precision and bitcast_convert_type, with their `plugax.lax` functions (and the
compositions mulhi and reciprocal).

Why a module of its own: these act on the bits of a value rather than on the number
it stands for, so their impls are written with NumPy views and integer arithmetic,
their derivatives are zero (or, for reduce_precision and nextafter, JAX's choice:
rounding passes the tangent through / no rule), and each lowers to one StableHLO op.

The edge cases follow XLA (and so JAX): a shift by a negative amount or by at least
the bit width gives 0 (the sign for an arithmetic right shift); an arithmetic right
shift of an unsigned integer shifts its two's-complement bits as if signed.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from plugax.extend import (Primitive, RuleSet, ShapedArray, ShapeError, Zero, defjvp,
                           defvectorized, format_operands, is_float, same_dtypes)

from . import lowering as L
from .common import defbroadcasting, float_dtype

__all__ = ["shift_left_p", "shift_right_arithmetic_p", "shift_right_logical_p",
           "population_count_p", "clz_p", "nextafter_p", "reduce_precision_p",
           "bitcast_convert_type_p", "RULES", "LAX"]


def _is_integer(dtype: np.dtype) -> bool:
    return dtype.kind in "iu"


def _int_dtype(prim: Primitive):
    return same_dtypes(prim, _is_integer, "an integer dtype")


def _signed(dtype: np.dtype) -> np.dtype:
    return np.dtype(f"i{dtype.itemsize}")


def _unsigned(dtype: np.dtype) -> np.dtype:
    return np.dtype(f"u{dtype.itemsize}")


# --- shifts ---------------------------------------------------------------------------
shift_left_p = Primitive("shift_left")
shift_right_arithmetic_p = Primitive("shift_right_arithmetic")
shift_right_logical_p = Primitive("shift_right_logical")


def _shift_amount(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The shift as an unsigned count and whether it is in range [0, bits)."""
    bits = x.dtype.itemsize * 8
    y = np.asarray(y)
    in_range = (y.astype(np.int64) >= 0) & (y.astype(np.int64) < bits) if y.dtype.kind == "i" \
        else y.astype(np.uint64) < bits
    return np.where(in_range, y, 0).astype(_unsigned(x.dtype)), in_range


def _shift_left(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    count, ok = _shift_amount(x, y)
    out = np.left_shift(x.view(_unsigned(x.dtype)), count)
    return np.where(ok, out, 0).astype(_unsigned(x.dtype)).view(x.dtype)


def _shift_right_logical(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    count, ok = _shift_amount(x, y)
    out = np.right_shift(x.view(_unsigned(x.dtype)), count)
    return np.where(ok, out, 0).astype(_unsigned(x.dtype)).view(x.dtype)


def _shift_right_arithmetic(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    count, ok = _shift_amount(x, y)
    signed = x.view(_signed(x.dtype))
    out = np.right_shift(signed, count.astype(signed.dtype))
    fill = np.where(signed < 0, -1, 0).astype(signed.dtype)
    return np.asarray(np.where(ok, out, fill), signed.dtype).view(x.dtype)


SHIFTS = [defbroadcasting(p, fn, dtype_rule=_int_dtype(p), jvp=defjvp(p),
                          lowering=L.binary(op))
          for p, fn, op in ((shift_left_p, _shift_left, "shift_left"),
                            (shift_right_arithmetic_p, _shift_right_arithmetic,
                             "shift_right_arithmetic"),
                            (shift_right_logical_p, _shift_right_logical,
                             "shift_right_logical"))]


# --- population_count, clz ----------------------------------------------------------
population_count_p = Primitive("population_count")
clz_p = Primitive("clz")


def _popcount(x: np.ndarray) -> np.ndarray:
    u = np.asarray(x).view(_unsigned(x.dtype))
    as_bytes = u.reshape(u.shape + (1,)).view(np.uint8)
    return np.unpackbits(as_bytes, axis=-1).sum(-1).astype(x.dtype).reshape(x.shape)


def _clz(x: np.ndarray) -> np.ndarray:
    bits = x.dtype.itemsize * 8
    u = np.asarray(x).view(_unsigned(x.dtype)).astype(np.uint64)
    count = np.full(x.shape, bits, np.int64)
    for shift in range(bits):   # the highest set bit decides
        count = np.where((u >> np.uint64(shift)) & np.uint64(1), bits - 1 - shift, count)
    return count.astype(x.dtype)


COUNTS = [defvectorized(p, fn, dtype_rule=_int_dtype(p), jvp=defjvp(p), lowering=L.unary(op))
          for p, fn, op in ((population_count_p, _popcount, "popcnt"),
                            (clz_p, _clz, "count_leading_zeros"))]


# --- nextafter --------------------------------------------------------------------------
nextafter_p = Primitive("nextafter")


def _nextafter(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if x.dtype.name == "bfloat16":   # NumPy's nextafter has no bfloat16 loop
        return _nextafter_bits(x, y)
    return np.nextafter(x, y).astype(x.dtype)


def _nextafter_bits(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    x, y = np.broadcast_arrays(x, y)
    xf, yf = x.astype(np.float32), y.astype(np.float32)
    bits = x.view(np.uint16).astype(np.int32)
    magnitude = bits & 0x7FFF
    away = (xf < yf) == (xf >= 0)   # moving away from zero grows the magnitude
    stepped = np.where(away, bits + 1, bits - 1)
    tiny = np.where(yf > 0, 1, 0x8001)   # from +-0 the step is the smallest subnormal
    out = np.where(magnitude == 0, tiny, stepped)
    out = np.where(xf == yf, y.view(np.uint16), out)
    out = np.where(np.isnan(xf) | np.isnan(yf), 0x7FC0, out)
    return out.astype(np.uint16).view(x.dtype)


def _no_derivative(ctx, primals, tangents):
    if all(type(t) is Zero for t in tangents):
        out = nextafter_p.bind(*primals)
        return out, Zero.from_value(out)
    raise NotImplementedError("plugax has no derivative for lax.nextafter (JAX has none "
                              "either): the result steps to a neighbouring float, which is "
                              "not a differentiable function of the operands")


NEXTAFTER = defbroadcasting(nextafter_p, _nextafter, dtype_rule=float_dtype(nextafter_p),
                            jvp=_no_derivative, lowering=L.rule(
                                lambda ctx, x, y: ctx.chlo.next_after(
                                    *ctx.broadcast_scalars(x, y))))


# --- reduce_precision ---------------------------------------------------------------------
reduce_precision_p = Primitive("reduce_precision")

_FLOAT_LAYOUT = {"float16": (5, 10), "bfloat16": (8, 7), "float32": (8, 23),
                 "float64": (11, 52)}


def _reduce_precision(x: np.ndarray, *, exponent_bits: int, mantissa_bits: int) -> np.ndarray:
    """XLA's rounding of `x` to a float with the given exponent and mantissa widths (round
    to nearest even; overflow to infinity; values below the smallest normal number to a
    signed zero, NaN kept), done on the integer bits of `x`."""
    src_exp, src_mant = _FLOAT_LAYOUT[x.dtype.name]
    nbits = x.dtype.itemsize * 8
    udt = np.dtype(f"u{x.dtype.itemsize}")
    one = udt.type(1)
    bits = np.asarray(x).view(udt).copy()
    if mantissa_bits < src_mant:
        drop = udt.type(src_mant - mantissa_bits)
        last_bit_mask = one << drop
        base_bias = (last_bit_mask >> one) - one
        last_bit = (bits & last_bit_mask) >> drop
        bits = (bits + last_bit + base_bias) & ~(last_bit_mask - one)
    if exponent_bits < src_exp:
        sign_mask = one << udt.type(nbits - 1)
        exp_mask = udt.type(((1 << src_exp) - 1) << src_mant)
        bias = (1 << (src_exp - 1)) - 1
        reduced_bias = (1 << (exponent_bits - 1)) - 1
        exponent = bits & exp_mask
        overflows = exponent > udt.type((bias + reduced_bias) << src_mant)
        underflows = exponent <= udt.type((bias - reduced_bias) << src_mant)
        signed_zero = bits & sign_mask
        bits = np.where(overflows, signed_zero | exp_mask,
                        np.where(underflows, signed_zero, bits)).astype(udt)
    out = bits.view(x.dtype)
    return np.where(np.isnan(x), x, out).astype(x.dtype)


def _reduce_precision_abstract_eval(ctx, x: ShapedArray, *, exponent_bits: int,
                                    mantissa_bits: int) -> ShapedArray:
    if not is_float(x.dtype):
        raise ShapeError(f"primitive 'reduce_precision' needs a floating-point operand, got "
                         f"({format_operands([x])}); convert it first")
    if exponent_bits < 1 or mantissa_bits < 0:
        raise ShapeError(f"primitive 'reduce_precision' needs exponent_bits >= 1 and "
                         f"mantissa_bits >= 0, got {exponent_bits} and {mantissa_bits}")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _reduce_precision_jvp(ctx, primals, tangents, **params):
    """JAX's rule: the tangent is rounded the same way (the rounding is treated as the
    identity the format change stands for)."""
    out = reduce_precision_p.bind(primals[0], **params)
    t = tangents[0]
    return out, Zero.from_value(out) if type(t) is Zero else reduce_precision_p.bind(t, **params)


def _lower_reduce_precision(ctx, x, *, exponent_bits: int, mantissa_bits: int):
    i32 = ctx.ir.IntegerType.get_signless(32)
    return ctx.hlo.reduce_precision(x, ctx.ir.IntegerAttr.get(i32, exponent_bits),
                                    ctx.ir.IntegerAttr.get(i32, mantissa_bits))


REDUCE_PRECISION = RuleSet(
    reduce_precision_p,
    impl=lambda ctx, x, **params: _reduce_precision(x, **params),
    abstract_eval=_reduce_precision_abstract_eval, jvp=_reduce_precision_jvp,
    transpose=lambda ctx, ct, x, **params: [ct if type(ct) is Zero
                                            else reduce_precision_p.bind(ct, **params)],
    batching=lambda ctx, args, dims, **params: (reduce_precision_p.bind(args[0], **params),
                                                dims[0]),
    lowering=L.rule(_lower_reduce_precision))


# --- bitcast_convert_type -------------------------------------------------------------------
bitcast_convert_type_p = Primitive("bitcast_convert_type")


def _bitcast_shape(x: ShapedArray, new_dtype: np.dtype) -> tuple:
    old, new = x.dtype.itemsize, new_dtype.itemsize
    if old == new:
        return x.shape
    if old > new:                       # one element becomes old/new of the new dtype
        return x.shape + (old // new,)
    if not x.shape or x.shape[-1] != new // old:
        raise ShapeError(f"primitive 'bitcast_convert_type' to the wider {new_dtype.name} "
                         f"needs a last axis of size {new // old} (the {x.dtype.name} "
                         f"elements that make one {new_dtype.name}), got "
                         f"({format_operands([x])})")
    return x.shape[:-1]


def _bitcast_abstract_eval(ctx, x: ShapedArray, *, new_dtype: np.dtype) -> ShapedArray:
    if (x.dtype == np.bool_) != (new_dtype == np.bool_) and x.dtype != new_dtype:
        raise ShapeError(f"primitive 'bitcast_convert_type' cannot convert between bool and "
                         f"other dtypes, got ({format_operands([x])}) to {new_dtype.name}")
    return ShapedArray(_bitcast_shape(x, new_dtype), new_dtype, False)


def _bitcast_impl(ctx, x: np.ndarray, *, new_dtype: np.dtype) -> np.ndarray:
    x = np.ascontiguousarray(x)
    if x.dtype.itemsize >= new_dtype.itemsize:
        return x.reshape(x.shape + (1,)).view(new_dtype).reshape(
            _bitcast_shape(ShapedArray(x.shape, x.dtype), new_dtype))
    return x.view(new_dtype).reshape(x.shape[:-1])


def _bitcast_vmap(ctx, args, dims, *, new_dtype: np.dtype):
    x, d = args[0], dims[0]
    if d == np.ndim(x) - 1 and np.dtype(new_dtype).itemsize != x.dtype.itemsize:
        from plugax.extend import moveaxis
        x, d = moveaxis(x, d, 0), 0     # the last axis is the one that changes
    return bitcast_convert_type_p.bind(x, new_dtype=new_dtype), d


def _bitcast_jvp(ctx, primals, tangents, *, new_dtype):
    out = bitcast_convert_type_p.bind(primals[0], new_dtype=new_dtype)
    return out, Zero.from_value(out)


def _lower_bitcast(ctx, x, *, new_dtype):
    return ctx.hlo.bitcast_convert(ctx.ir_type(ctx.aval_out), x)


BITCAST = RuleSet(bitcast_convert_type_p, impl=_bitcast_impl,
                  abstract_eval=_bitcast_abstract_eval, jvp=_bitcast_jvp,
                  batching=_bitcast_vmap, lowering=L.rule(_lower_bitcast))

RULES = [*SHIFTS, *COUNTS, NEXTAFTER, REDUCE_PRECISION, BITCAST]


# --- the plugax.lax functions ----------------------------------------------------------------
def shift_left(x: Any, y: Any) -> Any:
    """x << y on integers of one dtype; shifts outside [0, bits) give 0."""
    return shift_left_p.bind(x, y)


def shift_right_arithmetic(x: Any, y: Any) -> Any:
    """x >> y filling with the sign bit (unsigned operands shift as if signed)."""
    return shift_right_arithmetic_p.bind(x, y)


def shift_right_logical(x: Any, y: Any) -> Any:
    """x >> y filling with zeros (signed operands shift as if unsigned)."""
    return shift_right_logical_p.bind(x, y)


def population_count(x: Any) -> Any:
    """The number of set bits of each element, in x's dtype."""
    return population_count_p.bind(x)


def clz(x: Any) -> Any:
    """The number of leading zero bits of each element, in x's dtype."""
    return clz_p.bind(x)


def nextafter(x1: Any, x2: Any) -> Any:
    """The next float after x1 in the direction of x2 (not differentiable, as in JAX)."""
    return nextafter_p.bind(x1, x2)


def reduce_precision(operand: Any, exponent_bits: int, mantissa_bits: int) -> Any:
    """`operand` rounded to a float format of the given widths, kept in its dtype."""
    from plugax.extend import ConcretizationTypeError, Tracer
    for name, value in (("exponent_bits", exponent_bits), ("mantissa_bits", mantissa_bits)):
        if isinstance(value, Tracer):
            raise ConcretizationTypeError(f"the {name} argument of lax.reduce_precision must "
                                          f"be a concrete Python int, got a traced value")
    return reduce_precision_p.bind(operand, exponent_bits=int(exponent_bits),
                                   mantissa_bits=int(mantissa_bits))


def bitcast_convert_type(operand: Any, new_dtype: Any) -> Any:
    """The bits of `operand` read as `new_dtype`: a narrower dtype adds a last axis, a
    wider one consumes the last axis (which must hold exactly the bytes of one)."""
    from plugax.extend import canonicalize_dtype
    try:
        new_dtype = canonicalize_dtype(np.dtype(new_dtype))
    except TypeError:
        raise TypeError(f"lax.bitcast_convert_type needs a dtype for new_dtype, got "
                        f"{new_dtype!r}") from None
    return bitcast_convert_type_p.bind(operand, new_dtype=new_dtype)


def mulhi(x: Any, y: Any) -> Any:
    """The high half of the double-width product x * y (integers of one dtype).

    Computed in x's own width from half-width pieces (schoolbook multiplication of the
    unsigned bits, then the two's-complement fix-up for signed operands), so it needs
    no wider dtype: int32 works without x64, int64 with it."""
    import plugax.lax as lax
    from plugax.extend import get_aval
    dtype = get_aval(x).dtype
    if get_aval(y).dtype != dtype or not _is_integer(dtype):
        raise TypeError(f"lax.mulhi needs integer operands of one dtype, got "
                        f"{get_aval(x).dtype.name} and {get_aval(y).dtype.name}")
    udt = _unsigned(dtype)
    half = dtype.itemsize * 4
    xu, yu = (bitcast_convert_type(v, udt) if dtype.kind == "i" else v for v in (x, y))
    c, mask = udt.type(half), udt.type((1 << half) - 1)
    x_lo, x_hi = lax.bitwise_and(xu, mask), shift_right_logical(xu, c)
    y_lo, y_hi = lax.bitwise_and(yu, mask), shift_right_logical(yu, c)
    lo_lo, hi_lo = lax.mul(x_lo, y_lo), lax.mul(x_hi, y_lo)
    lo_hi, hi_hi = lax.mul(x_lo, y_hi), lax.mul(x_hi, y_hi)
    cross = lax.add(lax.add(shift_right_logical(lo_lo, c), lax.bitwise_and(hi_lo, mask)),
                    lo_hi)
    high = lax.add(lax.add(hi_hi, shift_right_logical(hi_lo, c)),
                   shift_right_logical(cross, c))
    if dtype.kind == "u":
        return high
    x_neg = lax.convert_element_type(lax.lt(x, dtype.type(0)), udt)
    y_neg = lax.convert_element_type(lax.lt(y, dtype.type(0)), udt)
    high = lax.sub(lax.sub(high, lax.mul(x_neg, yu)), lax.mul(y_neg, xu))
    return bitcast_convert_type(high, dtype)


def reciprocal(x: Any) -> Any:
    """1 / x elementwise (lax.div by a one of x's dtype)."""
    import plugax.lax as lax
    from plugax.extend import scalar_like
    return lax.div(scalar_like(x, 1), x)


LAX = {"shift_left": shift_left, "shift_right_arithmetic": shift_right_arithmetic,
       "shift_right_logical": shift_right_logical, "population_count": population_count,
       "clz": clz, "nextafter": nextafter, "reduce_precision": reduce_precision,
       "bitcast_convert_type": bitcast_convert_type, "mulhi": mulhi,
       "reciprocal": reciprocal}
