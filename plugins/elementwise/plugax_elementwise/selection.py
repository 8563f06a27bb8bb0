"""Primitives that convert or pick values: convert_element_type, select_n, clamp.

They do not fit the one-dtype mold of the arithmetic ops: convert_element_type
changes the dtype (and is linear between float types), select_n mixes a bool
or integer selector with cases of any dtype (and is linear in the cases), and
clamp lets its bounds be rank-0 next to a full operand.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

import plugax.lax as lax
from plugax import dtypes
from plugax.extend import (Array, Primitive, RuleSet, ShapedArray, ShapeError, Zero, all_weak,
                           broadcast_batched, get_aval, instantiate, is_eager,
                           is_undefined_primal, moveaxis, same_dtypes)

from . import lowering as L
from .common import FLOATS, defjvp_bcast, match_shape, type_error, zeros_like
from .logic import and_p, ge_p, gt_p, le_p, lt_p, or_p

__all__ = ["convert_element_type_p", "select_n_p", "clamp_p", "convert", "RULES"]

_SCALARS = (bool, int, float, complex)
_CONSTANTS = (*_SCALARS, Array)


# --- convert_element_type[new_dtype, weak_type] ------------------------------------
convert_element_type_p = Primitive("convert_element_type")


def _convert_value(x: np.ndarray, new_dtype: np.dtype) -> np.ndarray:
    """NumPy conversion with XLA's float -> int semantics: truncate, saturate at the
    integer range, NaN -> 0 (NumPy leaves those cases undefined)."""
    x, new_dtype = np.asarray(x), np.dtype(new_dtype)
    if x.dtype not in FLOATS or new_dtype.kind not in "iu":
        return x.astype(new_dtype)
    info = np.iinfo(new_dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        out = x.astype(new_dtype)
    out = np.where(x >= float(info.max), info.max, out)
    out = np.where(x <= float(info.min), info.min, out)
    return np.where(np.isnan(x), 0, out).astype(new_dtype)


def _convert_abstract_eval(ctx, x: ShapedArray, *, new_dtype, weak_type) -> ShapedArray:
    if np.dtype(new_dtype) not in dtypes.supported_dtypes:
        raise type_error(convert_element_type_p, (x,), f"cannot convert to dtype {new_dtype}",
                         f"choose one of {', '.join(d.name for d in dtypes.supported_dtypes)}")
    return ShapedArray(x.shape, new_dtype, weak_type)


def _convert_jvp(ctx, primals, tangents, *, new_dtype, weak_type):
    """Between float types the conversion is linear; to or from ints there is no tangent."""
    (x,), (t,), new_dtype = primals, tangents, np.dtype(new_dtype)
    ans = convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)
    if type(t) is Zero or new_dtype not in FLOATS or get_aval(x).dtype not in FLOATS:
        return ans, Zero.from_value(ans)
    return ans, convert(t, new_dtype)


def _convert_transpose(ctx, ct, x, *, new_dtype, weak_type):
    if x.aval.dtype not in FLOATS or np.dtype(new_dtype) not in FLOATS:
        raise ShapeError(f"primitive 'convert_element_type' is linear only between float "
                         f"dtypes, not from {x.aval.dtype.name} to {new_dtype.name}")
    return [convert(ct, x.aval.dtype)]


def convert(x: Any, new_dtype: Any, weak_type: bool = False) -> Any:
    """`x` as `new_dtype` (canonicalised); a no-op when the type already matches.

    Concrete values (Python scalars, NumPy values, Arrays) are converted on the
    spot when no transformation is running (eager code skips a bind), and, as
    JAX's constant folding does, when they are rank-0 (a jaxpr shows them as a
    literal of the new type). Under a transformation a larger constant goes
    through the primitive like a tracer: a jaxpr then hoists it with its own
    dtype and weak type and records the conversion, as JAX's does.
    """
    new_dtype = dtypes.canonicalize_dtype(new_dtype)
    if (type(x) in _CONSTANTS or isinstance(x, (np.ndarray, np.generic))) and (
            is_eager() or not np.shape(x)):
        value = np.asarray(x)
        if type(x) is Array and value.dtype == new_dtype and x.weak_type == weak_type:
            return x
        return Array(_convert_value(value, new_dtype), weak_type)
    aval = get_aval(x)
    if aval.dtype == new_dtype and aval.weak_type == weak_type:
        return x
    return convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=bool(weak_type))


CONVERT = RuleSet(
    primitive=convert_element_type_p,
    impl=lambda ctx, x, *, new_dtype, weak_type: _convert_value(x, new_dtype),
    abstract_eval=_convert_abstract_eval, jvp=_convert_jvp, transpose=_convert_transpose,
    lowering=L.convert_element_type,
    batching=lambda ctx, args, dims, **params: (convert_element_type_p.bind(args[0], **params),
                                                dims[0]))


# --- vmap for ops whose operands must share a shape except a few rank-0 ones --------
def full_operand_vmap(prim: Primitive, scalar_ok: Sequence[int]) -> Callable:
    """vmap rule for select_n / clamp: unlike lax's binary ops, only the operands at
    `scalar_ok` may stay rank-0 beside full ones. Every operand gets the batch axis
    in front, except unbatched rank-0 ones at `scalar_ok`, which stay as they are."""
    def vmap_rule(ctx, args, dims, **params):
        full = next(i for i in range(len(args)) if i not in scalar_ok)
        shape = get_aval(args[full]).shape
        if dims[full] is not None:
            shape = shape[:dims[full]] + shape[dims[full] + 1:]
        out_shape = (ctx.axis_size,) + shape
        moved = []
        for i, (x, d) in enumerate(zip(args, dims)):
            if d is None:
                if i in scalar_ok and get_aval(x).shape == ():
                    moved.append(x)
                    continue
                x = broadcast_batched(x, ctx.axis_size, 0)
            else:
                x = moveaxis(x, d, 0)
            if get_aval(x).shape != out_shape:   # a batched rank-0 operand
                x = lax.broadcast_in_dim(x, out_shape, (0,))
            moved.append(x)
        return prim.bind(*moved, **params), 0
    vmap_rule.__name__ = f"{prim.name}_vmap"
    return vmap_rule


# --- select_n(which, *cases) --------------------------------------------------------
select_n_p = Primitive("select_n")


def _select_n_impl(ctx, which, *cases):
    if len(cases) == 1:
        return cases[0]
    if which.dtype == np.bool_:
        return np.where(which, cases[1], cases[0])
    return np.choose(which, cases, mode="clip")


def _select_n_abstract_eval(ctx, which: ShapedArray, *cases: ShapedArray) -> ShapedArray:
    avals = (which, *cases)
    if not cases:
        raise type_error(select_n_p, avals, "needs at least one case",
                         "call select_n(which, case0, case1, ...)")
    if which.dtype != np.bool_ and which.dtype.kind not in "iu":
        raise type_error(select_n_p, avals, f"needs a bool or integer `which`, not "
                         f"{which.dtype.name}", "compare first, e.g. lax.ne(which, 0)")
    if which.dtype == np.bool_ and len(cases) > 2:
        raise type_error(select_n_p, avals, "takes at most 2 cases with a bool `which`",
                         "use an integer `which` to choose among more cases")
    dtype = same_dtypes(select_n_p)(*cases)
    if len({c.shape for c in cases}) > 1 or which.shape not in ((), cases[0].shape):
        raise type_error(select_n_p, avals, "needs cases of one shape and a `which` of "
                         "that shape or rank 0", "broadcast them first "
                         "(plugax.numpy.where broadcasts)")
    return ShapedArray(cases[0].shape, dtype, all(c.weak_type for c in cases))


def _select_n_jvp(ctx, primals, tangents):
    """Selection commutes with differentiation: select among the tangents."""
    ans = select_n_p.bind(*primals)
    case_tangents = tangents[1:]
    if all(type(t) is Zero for t in case_tangents):
        return ans, Zero.from_value(ans)
    return ans, select_n_p.bind(primals[0], *map(instantiate, case_tangents))


def _select_n_transpose(ctx, ct, which, *cases):
    """Each case receives the cotangent where it was selected, zero elsewhere."""
    if is_undefined_primal(which):
        raise ShapeError("primitive 'select_n' is not linear in `which`; only the cases "
                         "can be transposed")
    zeros = zeros_like(ct)
    return [None] + [select_n_p.bind(which, *[ct if j == i else zeros
                                              for j in range(len(cases))])
                     if is_undefined_primal(case) else None
                     for i, case in enumerate(cases)]


SELECT_N = RuleSet(primitive=select_n_p, impl=_select_n_impl,
                   abstract_eval=_select_n_abstract_eval, jvp=_select_n_jvp,
                   transpose=_select_n_transpose, batching=full_operand_vmap(select_n_p, (0,)),
                   lowering=L.select_n)


# --- clamp(min, x, max) -------------------------------------------------------------
clamp_p = Primitive("clamp")


def _clamp_abstract_eval(ctx, lo: ShapedArray, x: ShapedArray, hi: ShapedArray) -> ShapedArray:
    dtype = same_dtypes(clamp_p)(lo, x, hi)
    if lo.shape not in ((), x.shape) or hi.shape not in ((), x.shape):
        raise type_error(clamp_p, (lo, x, hi), "needs bounds of rank 0 or of the operand's "
                         "shape", "broadcast the bounds, or use plugax.numpy.clip")
    return ShapedArray(x.shape, dtype, all((lo.weak_type, x.weak_type, hi.weak_type)))


def _masked(mask: Any, g: Any) -> Any:
    """`g` where `mask` holds, zero elsewhere, at the mask's shape."""
    g = match_shape(g, mask)
    return select_n_p.bind(mask, zeros_like(g), g)


# clamp = min(max(x, lo), hi): the output is x, lo or hi, and its tangent follows
# whichever it is (ties go to x, then to lo), so exactly one mask holds everywhere.
CLAMP = RuleSet(
    primitive=clamp_p,
    impl=lambda ctx, lo, x, hi: np.minimum(np.maximum(x, lo), hi),
    abstract_eval=_clamp_abstract_eval,
    jvp=defjvp_bcast(
        clamp_p,
        lambda g, ans, lo, x, hi: _masked(and_p.bind(gt_p.bind(lo, x), le_p.bind(lo, hi)), g),
        lambda g, ans, lo, x, hi: _masked(and_p.bind(ge_p.bind(x, lo), le_p.bind(x, hi)), g),
        lambda g, ans, lo, x, hi: _masked(or_p.bind(lt_p.bind(hi, x), lt_p.bind(hi, lo)), g)),
    batching=full_operand_vmap(clamp_p, (0, 2)), lowering=L.clamp)

RULES = [CONVERT, SELECT_N, CLAMP]
