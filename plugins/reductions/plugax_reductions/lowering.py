"""StableHLO lowerings of the reductions family.

- The folds (reduce_sum/prod/max/min/and/or) are one `stablehlo.reduce` each,
  started from the fold's identity (0, 1, the lowest / highest value, all ones,
  zero), so empty axes give what NumPy's `ufunc.reduce(initial=...)` gives.
- argmax/argmin reduce (value, index) pairs with a comparator that is a total
  order -- NaN beats everything, then the better value, then the smaller index
  -- so XLA may combine pairs in any order and still find NumPy's answer (the
  first NaN, else the first extremum).
- The cumulative ops are an inclusive scan by recursive doubling: log2(n)
  rounds of "shift by s (filling with the identity), combine". That is
  O(n log n) work in a few large ops, where a `reduce_window` over a window of
  length n would cost O(n^2) on CPU.

jaxlib is reached only through `ctx` (`ctx.hlo`, `ctx.ir`), never imported here.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ._common import highest, lowest

__all__ = ["fold_lowering", "arg_lowering", "scan_lowering"]


# --- combining functions: (ctx, dtype) -> binary op on MLIR values -----------------------
def _op(name: str) -> Callable:
    return lambda ctx, dtype: getattr(ctx.hlo, name)


def _lexicographic(ctx, dtype, direction: str) -> Callable:
    """max/min of two complex scalars in NumPy's (and JAX's) order: by real part, then
    by imaginary part (StableHLO's maximum does not order complex numbers)."""
    cmp_type = ctx.hlo.ComparisonTypeAttr.get("FLOAT")

    def cmp(a, b, how):
        return ctx.hlo.compare(a, b, ctx.hlo.ComparisonDirectionAttr.get(how),
                               compare_type=cmp_type)

    def op(a, b):
        ra, rb, ia, ib = ctx.hlo.real(a), ctx.hlo.real(b), ctx.hlo.imag(a), ctx.hlo.imag(b)
        pick_a = ctx.hlo.select(cmp(ra, rb, "EQ"), cmp(ia, ib, direction),
                                cmp(ra, rb, direction))
        return ctx.hlo.select(pick_a, a, b)
    return op


def _max_op(ctx, dtype):
    if np.dtype(dtype).kind == "c":
        return _lexicographic(ctx, dtype, "GT")
    return ctx.hlo.or_ if np.dtype(dtype).kind == "b" else ctx.hlo.maximum


def _min_op(ctx, dtype):
    if np.dtype(dtype).kind == "c":
        return _lexicographic(ctx, dtype, "LT")
    return ctx.hlo.and_ if np.dtype(dtype).kind == "b" else ctx.hlo.minimum


_ALL_ONES = lambda dtype: np.invert(np.zeros((), dtype))  # noqa: E731

# name -> (combine, identity(dtype))
COMBINES: dict[str, tuple[Callable, Callable]] = {
    "sum": (_op("add"), lambda dtype: 0),
    "prod": (_op("multiply"), lambda dtype: 1),
    "max": (_max_op, lowest),
    "min": (_min_op, highest),
    "and": (_op("and_"), _ALL_ONES),
    "or": (_op("or_"), lambda dtype: 0),
}


# --- building a stablehlo.reduce -----------------------------------------------------------
def _scalar_type(ctx, dtype: Any) -> Any:
    return ctx.ir.RankedTensorType.get((), ctx.element_type(dtype))


def reduce_values(ctx, operands: Sequence[Any], inits: Sequence[Any], dtypes: Sequence[Any],
                  axes: Sequence[int], body: Callable) -> list:
    """`stablehlo.reduce` of `operands` over `axes`; `body(*lhs, *rhs)` returns the
    combined values (one per operand) as MLIR values of rank 0."""
    op = ctx.hlo.ReduceOp([ctx.ir_type(a) for a in ctx.avals_out], list(operands), list(inits),
                          ctx.ir.DenseI64ArrayAttr.get(list(axes)))
    scalar_types = [_scalar_type(ctx, d) for d in dtypes]
    block = op.regions[0].blocks.append(*scalar_types, *scalar_types)
    with ctx.ir.InsertionPoint(block):
        ctx.hlo.return_(list(body(*block.arguments)))
    return list(op.results)


def fold_lowering(kind: str) -> Callable:
    """Lowering of reduce_<kind>: one stablehlo.reduce starting from the identity."""
    combine, identity = COMBINES[kind]

    def lowering(ctx, x, *, axes):
        dtype = ctx.avals_in[0].dtype
        init = ctx.constant(identity(dtype), dtype)
        op = combine(ctx, dtype)
        (out,) = reduce_values(ctx, [x], [init], [dtype], axes, lambda a, b: [op(a, b)])
        return out
    lowering.__name__ = f"reduce_{kind}_lowering"
    return lowering


# --- argmax / argmin -----------------------------------------------------------------------
def _compare(ctx, a: Any, b: Any, direction: str, dtype: Any) -> Any:
    kind = np.dtype(dtype).kind
    ctype = "FLOAT" if kind == "f" or np.dtype(dtype).name == "bfloat16" else \
        "SIGNED" if kind == "i" else "UNSIGNED"
    return ctx.hlo.compare(a, b, ctx.hlo.ComparisonDirectionAttr.get(direction),
                           compare_type=ctx.hlo.ComparisonTypeAttr.get(ctype))


def _is_float(dtype: Any) -> bool:
    return np.dtype(dtype).kind == "f" or np.dtype(dtype).name == "bfloat16"


def _pick_first(ctx, direction: str, dtype: Any, index_dtype: Any) -> Callable:
    """Comparator body: keep (a, i) over (b, j) when a is NaN and b is not, when a is
    strictly better, or when they tie (equal, or both NaN) and i < j."""
    def body(a, i, b, j):
        hlo = ctx.hlo
        better = _compare(ctx, a, b, direction, dtype)
        tie = _compare(ctx, a, b, "EQ", dtype)
        if _is_float(dtype):
            a_nan = _compare(ctx, a, a, "NE", dtype)
            b_nan = _compare(ctx, b, b, "NE", dtype)
            better = hlo.or_(better, hlo.and_(a_nan, hlo.not_(b_nan)))
            tie = hlo.or_(tie, hlo.and_(a_nan, b_nan))
        first = _compare(ctx, i, j, "LT", index_dtype)
        keep_a = hlo.or_(better, hlo.and_(tie, first))
        return [hlo.select(keep_a, a, b), hlo.select(keep_a, i, j)]
    return body


def arg_lowering(direction: str) -> Callable:
    """argmax ("GT") / argmin ("LT"): a variadic reduce over (values, iota) pairs."""
    def lowering(ctx, x, *, axes, index_dtype):
        from plugax.extend import ShapedArray
        (axis,) = axes
        aval = ctx.avals_in[0]
        dtype = aval.dtype
        positions = ctx.hlo.iota(ctx.ir_type(ShapedArray(aval.shape, index_dtype)),
                                 ctx.ir.IntegerAttr.get(ctx.ir.IntegerType.get_signless(64),
                                                        axis))
        worst = lowest(dtype) if direction == "GT" else highest(dtype)
        inits = [ctx.constant(worst, dtype), ctx.constant(0, index_dtype)]
        value_aval = ShapedArray(ctx.aval_out.shape, dtype)
        op = ctx.hlo.ReduceOp([ctx.ir_type(value_aval), ctx.ir_type(ctx.aval_out)],
                              [x, positions], inits, ctx.ir.DenseI64ArrayAttr.get([axis]))
        types = [_scalar_type(ctx, dtype), _scalar_type(ctx, index_dtype)]
        block = op.regions[0].blocks.append(*types, *types)
        with ctx.ir.InsertionPoint(block):
            ctx.hlo.return_(_pick_first(ctx, direction, dtype, index_dtype)(*block.arguments))
        return op.results[1]
    lowering.__name__ = f"arg{'max' if direction == 'GT' else 'min'}_lowering"
    return lowering


# --- cumulative ops --------------------------------------------------------------------------
def _shifted(ctx, x: Any, shape: Sequence[int], axis: int, by: int, fill: Any,
             reverse: bool) -> Any:
    """`x` moved `by` places along `axis` (towards the start if `reverse`), the vacated
    places holding `fill`: a slice, then a pad back to the full shape."""
    ndim = len(shape)
    start, limit = [0] * ndim, list(shape)
    low, high = [0] * ndim, [0] * ndim
    if reverse:
        start[axis], high[axis] = by, by
    else:
        limit[axis], low[axis] = shape[axis] - by, by
    i64 = ctx.ir.DenseI64ArrayAttr.get
    cut = ctx.hlo.slice(x, i64(start), i64(limit), i64([1] * ndim))
    return ctx.hlo.pad(cut, fill, i64(low), i64(high), i64([0] * ndim))


def scan_lowering(kind: str) -> Callable:
    """Lowering of cum<kind>: an inclusive scan by recursive doubling (see module doc)."""
    combine, identity = COMBINES[kind]

    def lowering(ctx, x, *, axis, reverse):
        aval = ctx.avals_in[0]
        op = combine(ctx, aval.dtype)
        fill = ctx.constant(identity(aval.dtype), aval.dtype)
        shift, n = 1, aval.shape[axis]
        while shift < n:
            x = op(_shifted(ctx, x, aval.shape, axis, shift, fill, reverse), x)
            shift *= 2
        return x
    lowering.__name__ = f"cum{kind}_lowering"
    return lowering
