"""Lowering rules of the elementwise family: each primitive to StableHLO (or CHLO) ops.

Most primitives are one op of the same name in some dialect, so this module
offers builders that return a RuleSet's `lowering` entry in one call:
`unary("sine")`, `binary("add")`, `compare("LT")`, `unary("tan", "chlo")`.
What needs more than one op is written out below, each for a stated reason:

- `sign` of unsigned integers (StableHLO's sign takes signed and float only);
- `integer_pow` by repeated squaring (multiplies only, exact for integers);
- `pow` with an integer exponent (the impl converts it to the base's dtype);
- `exp2` as ``2 ** x`` (StableHLO has no exp2);
- `round` picking its op by `rounding_method`;
- `select_n` with an integer selector (a binary tree of selects, which clips
  out-of-range selectors to the first and last case like the impl's np.choose).

Nothing here imports jaxlib: the rules reach the dialects through `ctx`.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = ["rule", "splat", "unary", "binary", "compare", "minmax", "sign", "square", "integer_pow", "pow_",
           "exp2", "round_", "select_n", "clamp"]


def rule(fn: Callable) -> dict:
    """The RuleSet `lowering` entry of a platform-independent rule."""
    return {"default": fn}


def unary(op: str, dialect: str = "hlo") -> dict:
    """A unary primitive that is the op `op` of `dialect` ("hlo" or "chlo")."""
    def lower(ctx, x, **params):
        return getattr(getattr(ctx, dialect), op)(x)
    lower.__name__ = f"lower_{op}"
    return rule(lower)


def binary(op: str) -> dict:
    """An n-ary primitive with lax's scalar broadcasting that is the StableHLO op `op`."""
    def lower(ctx, *operands, **params):
        return getattr(ctx.hlo, op)(*ctx.broadcast_scalars(*operands))
    lower.__name__ = f"lower_{op}"
    return rule(lower)


def compare_type(ctx, dtype: np.dtype) -> Any:
    """How StableHLO compares a dtype: as floats, signed or unsigned integers (bools)."""
    kind = "SIGNED" if dtype.kind == "i" else "UNSIGNED" if dtype.kind in "ub" else "FLOAT"
    return ctx.hlo.ComparisonTypeAttr.get(kind)


def compare_values(ctx, x: Any, y: Any, direction: str, dtype: np.dtype) -> Any:
    return ctx.hlo.compare(x, y, ctx.hlo.ComparisonDirectionAttr.get(direction),
                           compare_type=compare_type(ctx, np.dtype(dtype)))


def compare(direction: str) -> dict:
    """A comparison primitive: StableHLO compare with `direction` ("EQ", "LT", ...)."""
    def lower(ctx, x, y):
        x, y = ctx.broadcast_scalars(x, y)
        return compare_values(ctx, x, y, direction, ctx.avals_in[0].dtype)
    lower.__name__ = f"lower_compare_{direction.lower()}"
    return rule(lower)


def splat(ctx, value: Any, dtype: np.dtype, shape: tuple) -> Any:
    """`value` filling `shape`: a rank-0 constant broadcast (no array built at lowering time)."""
    scalar = ctx.constant(np.asarray(value, dtype), dtype)
    return ctx.broadcast_in_dim(scalar, dtype, shape, ()) if shape else scalar


def _full(ctx, value: Any) -> Any:
    """A constant of the output's dtype and shape."""
    return splat(ctx, value, ctx.aval_out.dtype, ctx.aval_out.shape)


# --- arithmetic -----------------------------------------------------------------------
def _sign(ctx, x):
    if ctx.avals_in[0].dtype.kind != "u":
        return ctx.hlo.sign(x)
    nonzero = compare_values(ctx, x, _full(ctx, 0), "NE", ctx.avals_in[0].dtype)
    return ctx.hlo.convert(ctx.ir_type(ctx.aval_out), nonzero)


def _square(ctx, x):
    return ctx.hlo.multiply(x, x)


def _integer_pow(ctx, x, *, y: int):
    """x ** |y| by repeated squaring (then 1 / that when y < 0)."""
    result, base, n = None, x, abs(y)
    while n:
        if n & 1:
            result = base if result is None else ctx.hlo.multiply(result, base)
        n >>= 1
        if n:
            base = ctx.hlo.multiply(base, base)
    if result is None:
        return _full(ctx, 1)
    return ctx.hlo.divide(_full(ctx, 1), result) if y < 0 else result


def _pow(ctx, x, y):
    """The impl raises to the exponent converted to the base's dtype; so does this."""
    x, y = ctx.broadcast_scalars(x, y)
    dtype = ctx.aval_out.dtype
    if ctx.avals_in[1].dtype != dtype:
        y = ctx.hlo.convert(ctx.ir_type(ctx.aval_out), y)
    return ctx.hlo.power(x, y)


def _exp2(ctx, x):
    return ctx.hlo.power(_full(ctx, 2), x)


def _round(ctx, x, *, rounding_method):
    if int(rounding_method) == 1:   # RoundingMethod.TO_NEAREST_EVEN
        return ctx.hlo.round_nearest_even(x)
    return ctx.hlo.round_nearest_afz(x)


# --- selection ----------------------------------------------------------------------------
def _select_n(ctx, which, *cases):
    """select_n(which, c0, c1, ...): `cases[which]` elementwise."""
    which_aval = ctx.avals_in[0]
    if which_aval.ndim == 0 and ctx.aval_out.ndim:
        which = ctx.broadcast_in_dim(which, which_aval.dtype, ctx.aval_out.shape, ())
    return _select_range(ctx, which, which_aval.dtype, list(cases), 0)


def _select_range(ctx, which, dtype: np.dtype, cases: list, offset: int):
    """The case chosen by `which` among `cases` (numbered from `offset`)."""
    if len(cases) == 1:
        return cases[0]
    if dtype == np.bool_:
        return ctx.hlo.select(which, cases[1], cases[0])
    mid = len(cases) // 2
    bound = splat(ctx, offset + mid, dtype, ctx.aval_out.shape)
    low = compare_values(ctx, which, bound, "LT", dtype)
    return ctx.hlo.select(low, _select_range(ctx, which, dtype, cases[:mid], offset),
                          _select_range(ctx, which, dtype, cases[mid:], offset + mid))


def minmax(op: str) -> dict:
    """max/min: the StableHLO op; for complex operands a lexicographic choice (real
    parts, then imaginary parts), NumPy's order, as JAX lowers them."""
    direction = "GT" if op == "maximum" else "LT"

    def lower(ctx, x, y):
        x, y = ctx.broadcast_scalars(x, y)
        dtype = ctx.avals_in[0].dtype
        if np.dtype(dtype).kind != "c":
            return getattr(ctx.hlo, op)(x, y)
        real = np.dtype(np.float32 if np.dtype(dtype).itemsize == 8 else np.float64)
        rx, ry, ix, iy = ctx.hlo.real(x), ctx.hlo.real(y), ctx.hlo.imag(x), ctx.hlo.imag(y)
        pick_x = ctx.hlo.select(compare_values(ctx, rx, ry, "EQ", real),
                                compare_values(ctx, ix, iy, direction, real),
                                compare_values(ctx, rx, ry, direction, real))
        return ctx.hlo.select(pick_x, x, y)
    lower.__name__ = f"lower_{op}"
    return rule(lower)


def _clamp(ctx, lo, x, hi):
    return ctx.hlo.clamp(lo, x, hi)


sign = rule(_sign)
square = rule(_square)
integer_pow = rule(_integer_pow)
pow_ = rule(_pow)
exp2 = rule(_exp2)
round_ = rule(_round)
select_n = rule(_select_n)
clamp = rule(_clamp)
