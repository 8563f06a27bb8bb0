"""Reductions over a set of axes: reduce_prod/max/min/and/or and argmax/argmin.

(reduce_sum is the kernel's, `plugax.structural`: the transformations need it to
transpose broadcasts and to sum cotangents over a vmap batch.)

They share one shape rule (drop `axes`) and one vmap rule (renumber `axes`
around the batch axis, which survives at its position among the kept axes),
so `defreduction` builds those once and each primitive states its NumPy impl,
the dtypes it accepts, and its derivative.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from plugax.extend import (Primitive, RuleSet, ShapedArray, Zero, bind, broadcast_in_dim,
                           canonicalize_dtype, defjvp, get_aval, reduce_sum_p, scalar_like,
                           user_reduction_axes)

from ._common import (LOGICAL, NUMBER, REAL, REAL_OR_COMPLEX, batched_axes, check_axes, dtype_check, highest,
                      lowest, shape_error)
from .lowering import arg_lowering, fold_lowering

reduce_prod_p = Primitive("reduce_prod")
reduce_max_p = Primitive("reduce_max")
reduce_min_p = Primitive("reduce_min")
reduce_and_p = Primitive("reduce_and")
reduce_or_p = Primitive("reduce_or")
argmax_p = Primitive("argmax")
argmin_p = Primitive("argmin")


def _kept(ndim: int, axes: Sequence[int]) -> tuple[int, ...]:
    return tuple(i for i in range(ndim) if i not in axes)


def _unreduce(r: Any, aval: ShapedArray, axes: Sequence[int]) -> Any:
    """Broadcast a reduction result back over the reduced axes."""
    return broadcast_in_dim(r, aval.shape, _kept(aval.ndim, axes))


def defreduction(prim: Primitive, impl: Callable, *, accepts: tuple, jvp: Callable,
                 transpose: Callable | None = None, vjp: Callable | None = None,
                 out_dtype: Callable | None = None,
                 extra_check: Callable | None = None,
                 lowering: Callable | None = None) -> RuleSet:
    """RuleSet of a reduction `impl(x, axes=..., **params)` over the operand's `axes`.

    The result keeps the operand's dtype and weak type unless `out_dtype(**params)`
    names another (argmax's index dtype, which is never weak).
    """
    def abstract_eval(ctx, aval: ShapedArray, *, axes, **params) -> ShapedArray:
        check_axes(prim, aval, axes, **params)
        dtype_check(prim, accepts, aval, axes=axes, **params)
        if extra_check is not None:
            extra_check(aval, axes=axes, **params)
        shape = tuple(d for i, d in enumerate(aval.shape) if i not in axes)
        if out_dtype is None:
            return ShapedArray(shape, aval.dtype, aval.weak_type)
        return ShapedArray(shape, out_dtype(**params), False)

    def vmap(ctx, args, dims, *, axes, **params):
        d = dims[0]
        out = prim.bind(args[0], axes=batched_axes(axes, d), **params)
        return out, d - sum(a < d for a in axes)

    def checked_impl(ctx, x, **params):
        if not accepts[0](x.dtype):  # eager binds skip abstract_eval; the kernel turns this
            raise TypeError(prim)  # failure into abstract_eval's ShapeError
        return impl(x, **params)

    return RuleSet(primitive=prim, impl=checked_impl,
                   abstract_eval=abstract_eval, jvp=jvp, batching=vmap, transpose=transpose,
                   vjp=vjp,
                   lowering={"default": lowering} if lowering else {})


# --- reduce_max / reduce_min: the derivative picks the location(s) of the extremum ----
def _chooser_mask(ans: Any, x: Any, axes: Sequence[int], dtype: Any) -> tuple[Any, Any]:
    """(mask, counts): 1 where x equals the result (in `dtype`), and how many per result."""
    import plugax.lax as lax
    aval = get_aval(x)
    mask = lax.convert_element_type(lax.eq(x, _unreduce(ans, aval, axes)), dtype)
    return mask, reduce_sum_p.bind(mask, axes=axes)


def _chooser_jvp(prim: Primitive) -> Callable:
    """JAX's rule: average the tangents over every position equal to the result.

    With a unique extremum this is the tangent at its location; ties split the
    derivative evenly, which is what a symmetric finite difference sees too.
    """
    def jvp(ctx, primals, tangents, *, axes):
        import plugax.lax as lax
        (x,), (g,) = primals, tangents
        ans = prim.bind(x, axes=axes)
        if type(g) is Zero or get_aval(x).dtype.kind in "biu":
            return ans, Zero.from_value(ans)
        mask, counts = _chooser_mask(ans, x, axes, get_aval(g).dtype)
        return ans, lax.div(reduce_sum_p.bind(lax.mul(g, mask), axes=axes), counts)
    jvp.__name__ = f"{prim.name}_jvp"
    return jvp


def _chooser_vjp(prim: Primitive) -> Callable:
    """The tape's rule: the jvp above, transposed by hand. Its tangent is
    div(reduce_sum(mul(g, mask)), counts); transposing each step back gives
    mul(broadcast(div(ct, counts)), mask), the general path's cotangent."""
    def vjp(ctx, primals, wanted, *, axes):
        import plugax.lax as lax
        (x,) = primals
        ans = prim.bind(x, axes=axes)
        aval = get_aval(x)
        if aval.dtype.kind in "biu":
            return ans, None
        mask, counts = _chooser_mask(ans, x, axes, aval.dtype)

        def backward(ct):
            return [lax.mul(_unreduce(lax.div(ct, counts), aval, axes), mask)]
        return ans, backward
    vjp.__name__ = f"{prim.name}_vjp"
    return vjp


# --- reduce_prod: differentiate a pairwise product tree, as JAX does --------------------
def _product_tree(x: Any) -> Any:
    """The product over axis 0 by repeated halving: multiply the first half by the second
    (padded with 1 when odd). JAX differentiates exactly this tree, so zeros, infinities
    and NaNs among the factors give the same derivative here (no division by x)."""
    import plugax.lax as lax
    while get_aval(x).shape[0] > 1:
        shape = get_aval(x).shape
        n1 = (shape[0] + 1) // 2
        first = lax.slice(x, (0,) * len(shape), (n1,) + shape[1:])
        second = lax.slice(x, (n1,) + (0,) * (len(shape) - 1), shape)
        if shape[0] - n1 != n1:
            config = [(0, 1, 0)] + [(0, 0, 0)] * (len(shape) - 1)
            second = lax.pad(second, scalar_like(x, 1, weak_type=False), config)
        x = lax.mul(first, second)
    return lax.reshape(x, get_aval(x).shape[1:])


def _reduce_prod_jvp(ctx, primals, tangents, *, axes):
    import plugax
    import plugax.lax as lax
    (x,), (g,) = primals, tangents
    ans = reduce_prod_p.bind(x, axes=axes)
    aval = get_aval(x)
    if type(g) is Zero or aval.dtype.kind in "biu" or _size(aval.shape, axes) == 0:
        return ans, Zero.from_value(ans)
    # the reduced axes in front, flattened into one
    kept = _kept(aval.ndim, axes)
    front = (_size(aval.shape, axes),) + tuple(aval.shape[i] for i in kept)
    flat = lambda v: lax.reshape(v, front, tuple(axes) + kept)
    return ans, plugax.jvp(_product_tree, (flat(x),), (flat(g),))[1]


def _size(shape: Sequence[int], axes: Sequence[int]) -> int:
    return int(np.prod([shape[a] for a in axes]))


# --- argmax / argmin: one axis, an integer result, a zero derivative --------------------
def _arg_check(prim: Primitive) -> Callable:
    def check(aval: ShapedArray, *, axes, index_dtype):
        if len(axes) != 1:
            raise shape_error(prim, aval, "reduces exactly one axis",
                              "pass a single axis", axes=axes, index_dtype=index_dtype)
        if aval.shape[axes[0]] == 0:
            raise shape_error(prim, aval, "needs a non-empty reduced axis",
                              "reduce a non-empty axis", axes=axes, index_dtype=index_dtype)
        if np.dtype(index_dtype).kind not in "iu":
            raise shape_error(prim, aval, f"needs an integer index_dtype, not {index_dtype}",
                              "pass index_dtype=numpy.int32", axes=axes,
                              index_dtype=index_dtype)
    return check


def _arg_impl(np_fn: Callable) -> Callable:
    def impl(x, *, axes, index_dtype):
        (axis,) = axes
        return np_fn(x, axis=axis).astype(index_dtype)
    return impl


def _folded(ufunc: np.ufunc, identity: Callable) -> Callable:
    """`ufunc` folded over `axes`, starting from its identity (so empty axes work)."""
    return lambda x, *, axes: ufunc.reduce(x, axis=axes, initial=identity(x.dtype))


_ALL_ONES = lambda dtype: np.invert(np.zeros((), dtype))  # noqa: E731
_NONE = lambda dtype: np.zeros((), dtype)  # noqa: E731
_index_dtype = lambda *, index_dtype: index_dtype  # noqa: E731

RULES = [
    defreduction(reduce_prod_p, lambda x, *, axes: np.multiply.reduce(x, axes, x.dtype),
                 accepts=NUMBER, jvp=_reduce_prod_jvp, lowering=fold_lowering("prod")),
    defreduction(reduce_max_p, _folded(np.maximum, lowest), accepts=REAL_OR_COMPLEX,
                 jvp=_chooser_jvp(reduce_max_p), vjp=_chooser_vjp(reduce_max_p),
                 lowering=fold_lowering("max")),
    defreduction(reduce_min_p, _folded(np.minimum, highest), accepts=REAL_OR_COMPLEX,
                 jvp=_chooser_jvp(reduce_min_p), vjp=_chooser_vjp(reduce_min_p),
                 lowering=fold_lowering("min")),
    defreduction(reduce_and_p, _folded(np.bitwise_and, _ALL_ONES), accepts=LOGICAL,
                 jvp=defjvp(reduce_and_p), lowering=fold_lowering("and")),
    defreduction(reduce_or_p, _folded(np.bitwise_or, _NONE), accepts=LOGICAL,
                 jvp=defjvp(reduce_or_p), lowering=fold_lowering("or")),
    defreduction(argmax_p, _arg_impl(np.argmax), accepts=REAL, jvp=defjvp(argmax_p),
                 out_dtype=_index_dtype, extra_check=_arg_check(argmax_p),
                 lowering=arg_lowering("GT")),
    defreduction(argmin_p, _arg_impl(np.argmin), accepts=REAL, jvp=defjvp(argmin_p),
                 out_dtype=_index_dtype, extra_check=_arg_check(argmin_p),
                 lowering=arg_lowering("LT")),
]


# --- lax front ends ------------------------------------------------------------------------
def _lax_axes(operand: Any, axes: Any, name: str) -> tuple[int, ...]:
    """The user's axes, checked against the operand the user passed (see
    plugax.extend.user_reduction_axes)."""
    return user_reduction_axes(f"lax.{name}", get_aval(operand), axes)


def _lax_reduction(prim: Primitive) -> Callable:
    def reduction(operand: Any, axes: Sequence[int]) -> Any:
        return bind(prim, operand, axes=_lax_axes(operand, axes, prim.name))
    reduction.__name__ = prim.name
    reduction.__doc__ = f"lax.{prim.name}: reduce `operand` over `axes`."
    return reduction


def _lax_arg(prim: Primitive) -> Callable:
    def arg(operand: Any, axis: int, index_dtype: Any) -> Any:
        return bind(prim, operand, axes=_lax_axes(operand, (axis,), prim.name),
                    index_dtype=canonicalize_dtype(index_dtype))
    arg.__name__ = prim.name
    arg.__doc__ = f"lax.{prim.name}: index of the extremum along `axis`."
    return arg


LAX = {p.name: _lax_reduction(p) for p in (reduce_prod_p, reduce_max_p, reduce_min_p,
                                            reduce_and_p, reduce_or_p)}
LAX.update({p.name: _lax_arg(p) for p in (argmax_p, argmin_p)})
