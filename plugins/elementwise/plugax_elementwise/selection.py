"""Primitives that pick values: select_n, clamp.

They do not fit the one-dtype mold of the arithmetic ops: select_n mixes a bool
or integer selector with cases of any dtype (and is linear in the cases), and
clamp lets its bounds be rank-0 next to a full operand.

`convert` is the kernel's convert_element_type (`plugax.structural`), under the
name this family's modules have always used.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from plugax.extend import (Primitive, RuleSet, ShapedArray, ShapeError, Zero, broadcast_batched,
                           broadcast_in_dim, convert_element_type as convert,
                           convert_element_type_p, get_aval, instantiate, is_undefined_primal,
                           linear_vjp,
                           moveaxis, same_dtypes)

from . import lowering as L
from .common import checked_vmap, defjvp_bcast, match_shape, type_error, zeros_like
from .logic import and_p, ge_p, gt_p, le_p, lt_p, or_p

__all__ = ["convert_element_type_p", "select_n_p", "clamp_p", "convert", "RULES"]


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
                x = broadcast_in_dim(x, out_shape, (0,))
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
                   transpose=_select_n_transpose,
                   # linear in the cases (`which` is an integer or bool, never wanted)
                   vjp=linear_vjp(select_n_p),
                   batching=checked_vmap(lambda *avals: _select_n_abstract_eval(None, *avals),
                                         full_operand_vmap(select_n_p, (0,))),
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
    batching=checked_vmap(lambda *avals: _clamp_abstract_eval(None, *avals),
                          full_operand_vmap(clamp_p, (0, 2))),
    lowering=L.clamp)

RULES = [SELECT_N, CLAMP]
