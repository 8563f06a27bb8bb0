"""The `sort` primitive: operands of one shape sorted together along `dimension`.

The first `num_keys` operands are keys, compared lexicographically (the first is
primary); the others ride along with the same permutation. Floats follow JAX's
total order: -inf < ... < -0.0 == 0.0 < ... < inf < NaN, every NaN equal to
every other. The outputs carry the operands' own values (a -0.0 stays -0.0,
a NaN keeps its bits): only the comparison is canonicalised.

Stability: the impl (NumPy's lexsort) is always stable; the lowering passes
`is_stable` to stablehlo.sort, so with `is_stable=False` equal keys may come out
in another order under jit, as in JAX.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from plugax.extend import (RuleSet, Primitive, ShapedArray, ShapeError, Zero, bind, get_aval,
                           moveaxis, broadcast_in_dim)

__all__ = ["sort_p", "sort", "RULES"]

sort_p = Primitive("sort", multiple_results=True)


def _is_float(dtype: np.dtype) -> bool:
    return dtype.kind == "f" or dtype.name == "bfloat16"


def _error(avals: Sequence[ShapedArray], problem: str, fix: str, **params: Any) -> ShapeError:
    shown = ", ".join(a.str_short() for a in avals)
    ps = " ".join(f"{k}={params[k]}" for k in sorted(params))
    return ShapeError(f"primitive 'sort' {problem}; got operands ({shown}) with {ps}. "
                      f"Fix: {fix}")


def _sort_abstract_eval(ctx, *avals: ShapedArray, dimension, is_stable, num_keys):
    params = dict(dimension=dimension, is_stable=is_stable, num_keys=num_keys)
    if not avals:
        raise _error(avals, "needs at least one operand", "pass one or more arrays", **params)
    if any(a.shape != avals[0].shape for a in avals[1:]):
        shapes = " ".join(str(a.shape) for a in avals)
        raise _error(avals, f"needs operands of equal shapes (got shapes {shapes})",
                     "broadcast or reshape the operands to one shape first", **params)
    if not isinstance(num_keys, (int, np.integer)) or not 1 <= num_keys <= len(avals):
        raise _error(avals, f"needs 1 <= num_keys <= {len(avals)}",
                     "pass num_keys between 1 and the number of operands", **params)
    if not isinstance(dimension, (int, np.integer)) or not 0 <= dimension < avals[0].ndim:
        raise _error(avals, f"needs a dimension in [0, {avals[0].ndim})",
                     "sort operands of rank >= 1 along an existing axis (lax.sort accepts "
                     "negative dimensions)", **params)
    return [ShapedArray(a.shape, a.dtype, a.weak_type) for a in avals]


def _numpy_keys(x: np.ndarray) -> list[np.ndarray]:
    """Keys for np.lexsort (primary first) giving JAX's order for one operand.

    A float becomes (is NaN, value with NaNs zeroed): NaNs go last and tie with each
    other, and -0.0 == 0.0 already under NumPy's comparison. A complex key is its real
    part, then its imaginary part (lexicographic, NumPy's and XLA's order)."""
    if x.dtype.kind == "c":
        return _numpy_keys(np.real(x)) + _numpy_keys(np.imag(x))
    if _is_float(x.dtype):
        wide = x.astype(np.float32) if x.dtype.itemsize < 4 or x.dtype.name == "bfloat16" \
            else x
        nan = np.isnan(wide)
        return [nan, np.where(nan, np.zeros((), wide.dtype), wide)]
    return [x]


def _sort_impl(ctx, *operands, dimension, is_stable, num_keys):
    _sort_abstract_eval(ctx, *[ShapedArray(x.shape, x.dtype) for x in operands],
                        dimension=dimension, is_stable=is_stable, num_keys=num_keys)
    moved = [np.moveaxis(x, dimension, -1) for x in operands]
    keys = [k for x in moved[:num_keys] for k in _numpy_keys(x)]
    # np.lexsort sorts by its *last* key first, along the last axis, stably
    perm = np.lexsort(keys[::-1], axis=-1) if moved[0].ndim else np.zeros((), np.intp)
    return [np.moveaxis(np.take_along_axis(x, perm, axis=-1), -1, dimension)
            for x in moved]


def _sort_jvp(ctx, primals, tangents, *, dimension, is_stable, num_keys):
    """Sort an iota along as the last operand: it is the permutation, and each
    tangent is gathered with it (sorting moves values, so it moves tangents)."""
    import plugax.lax as lax
    import plugax.numpy as pnp
    shape = get_aval(primals[0]).shape
    iota = lax.broadcasted_iota(np.int32 if shape[dimension] < 2**31 else np.int64, shape,
                                dimension)
    *outs, perm = bind(sort_p, *primals, iota, dimension=dimension, is_stable=is_stable,
                       num_keys=num_keys)
    tangents_out = [Zero.from_value(o) if type(t) is Zero
                    else pnp.take_along_axis(t, perm, axis=dimension)
                    for o, t in zip(outs, tangents)]
    return outs, tangents_out


def _sort_batching(ctx, args, dims, *, dimension, is_stable, num_keys):
    """Every operand gets its batch axis at the front (unbatched ones broadcast), and
    the sorted dimension moves one place up."""
    size = ctx.axis_size
    moved = []
    for x, d in zip(args, dims):
        if d is None:
            aval = get_aval(x)
            moved.append(broadcast_in_dim(x, (size, *aval.shape),
                                          tuple(range(1, aval.ndim + 1))))
        else:
            moved.append(moveaxis(x, d, 0))
    outs = bind(sort_p, *moved, dimension=dimension + 1, is_stable=is_stable,
                num_keys=num_keys)
    return outs, [0] * len(outs)


# --- lowering -------------------------------------------------------------------------------
def _canonical_float(ctx, x: Any, dtype: np.dtype) -> Any:
    """-0.0 -> 0.0 and every NaN -> one positive NaN, so that TOTALORDER, which would
    put -0.0 before 0.0 and negative NaNs first, gives JAX's order."""
    hlo = ctx.hlo
    zero, nan = ctx.constant(0, dtype), ctx.constant(np.nan, dtype)
    ftype = hlo.ComparisonTypeAttr.get("FLOAT")
    is_zero = hlo.compare(x, zero, hlo.ComparisonDirectionAttr.get("EQ"), compare_type=ftype)
    is_nan = hlo.compare(x, x, hlo.ComparisonDirectionAttr.get("NE"), compare_type=ftype)
    return hlo.select(is_nan, nan, hlo.select(is_zero, zero, x))


def _compare_type(ctx, dtype: np.dtype) -> Any:
    kind = "TOTALORDER" if _is_float(dtype) else "SIGNED" if dtype.kind == "i" else "UNSIGNED"
    return ctx.hlo.ComparisonTypeAttr.get(kind)


def _comparator(ctx, args: Sequence[Any], avals: Sequence[ShapedArray], num_keys: int) -> Any:
    """x < y lexicographically over the keys: lt(k0) | eq(k0) & (lt(k1) | eq(k1) & ...)."""
    hlo = ctx.hlo
    keys = []     # (x, y, dtype) per compared key, primary first; complex: real, then imag
    for i in range(num_keys):
        dtype, x, y = avals[i].dtype, args[2 * i], args[2 * i + 1]
        if dtype.kind == "c":
            part = np.dtype(np.float32 if dtype.itemsize == 8 else np.float64)
            keys += [(hlo.real(x), hlo.real(y), part), (hlo.imag(x), hlo.imag(y), part)]
        else:
            keys.append((x, y, dtype))
    result = None
    for x, y, dtype in reversed(keys):
        if _is_float(dtype):
            x, y = _canonical_float(ctx, x, dtype), _canonical_float(ctx, y, dtype)
        ctype = _compare_type(ctx, dtype)
        lt = hlo.compare(x, y, hlo.ComparisonDirectionAttr.get("LT"), compare_type=ctype)
        if result is None:
            result = lt
        else:
            eq = hlo.compare(x, y, hlo.ComparisonDirectionAttr.get("EQ"), compare_type=ctype)
            result = hlo.or_(lt, hlo.and_(eq, result))
    return result


def _sort_lowering(ctx, *operands, dimension, is_stable, num_keys):
    ir, hlo = ctx.ir, ctx.hlo
    op = hlo.SortOp([ctx.ir_type(a) for a in ctx.avals_out], list(operands),
                    dimension=ir.IntegerAttr.get(ir.IntegerType.get_signless(64), dimension),
                    is_stable=ir.BoolAttr.get(bool(is_stable)))
    scalar_types = [ir.RankedTensorType.get((), ctx.element_type(a.dtype))
                    for a in ctx.avals_in]
    block = op.regions[0].blocks.append(*[t for t in scalar_types for _ in (0, 1)])
    with ir.InsertionPoint(block):
        hlo.return_([_comparator(ctx, list(block.arguments), ctx.avals_in, num_keys)])
    return list(op.results)


RULES = [RuleSet(sort_p, impl=_sort_impl, abstract_eval=_sort_abstract_eval, jvp=_sort_jvp,
                 batching=_sort_batching, lowering={"default": _sort_lowering})]


def _canonical_dimension(dimension: Any, ndim: int) -> int:
    if isinstance(dimension, bool) or not isinstance(dimension, (int, np.integer)):
        raise TypeError(f"lax.sort: dimension must be an int, got {dimension!r}")
    if not -ndim <= dimension < ndim:
        raise ValueError(f"lax.sort: dimension {dimension} is out of bounds for operands of "
                         f"rank {ndim}")
    return int(dimension) % ndim


def sort(operand: Any, dimension: int = -1, is_stable: bool = True, num_keys: int = 1) -> Any:
    """lax.sort: one array (returns an array) or a sequence of arrays sorted together by
    the first `num_keys` of them (returns a tuple), along `dimension`."""
    if isinstance(operand, (list, tuple)):
        if not operand:
            raise TypeError("Sort requires at least one operand")
        if not 1 <= num_keys <= len(operand):
            raise ValueError(f"num_keys={num_keys} must be between 1 and "
                             f"len(operand)={len(operand)}")
        dim = _canonical_dimension(dimension, get_aval(operand[0]).ndim)
        return tuple(bind(sort_p, *operand, dimension=dim, is_stable=bool(is_stable),
                          num_keys=int(num_keys)))
    if num_keys != 1:
        raise ValueError(f"num_keys={num_keys} must equal 1 for a single operand.")
    dim = _canonical_dimension(dimension, get_aval(operand).ndim)
    return bind(sort_p, operand, dimension=dim, is_stable=bool(is_stable), num_keys=1)[0]


def sort_key_val(keys: Any, values: Any, dimension: int = -1,
                 is_stable: bool = True) -> tuple[Any, Any]:
    """lax.sort_key_val: sort `keys` along `dimension`, `values` in the same permutation."""
    dim = _canonical_dimension(dimension, get_aval(keys).ndim)
    k, v = bind(sort_p, keys, values, dimension=dim, is_stable=bool(is_stable), num_keys=1)
    return k, v
