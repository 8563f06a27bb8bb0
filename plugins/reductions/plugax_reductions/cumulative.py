"""Cumulative reductions along one axis: cumsum, cumprod, cummax, cummin.

Each is NumPy's `ufunc.accumulate`, optionally from the end (`reverse`). The
shape, dtype and weak type pass through, and vmap only renumbers `axis`.
cumsum is linear (its transpose is the cumsum running the other way). The
others are differentiated the way JAX does it: by differentiating an
associative scan built from the elementwise combine (mul, max, min), so zeros
and ties get exactly the derivative of that composition.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from plugax.extend import (Primitive, RuleSet, ShapedArray, Zero, bind, deflinear, get_aval,
                           is_undefined_primal)

from ._common import NUMBER, REAL, dtype_check, highest, lowest, scalar_like, shape_error
from .lowering import scan_lowering

cumsum_p = Primitive("cumsum")
cumprod_p = Primitive("cumprod")
cummax_p = Primitive("cummax")
cummin_p = Primitive("cummin")


def defcumulative(prim: Primitive, ufunc: np.ufunc, *, accepts: tuple, jvp: Callable,
                  transpose: Callable | None = None, lowering: Callable | None = None) -> RuleSet:
    """RuleSet of `ufunc.accumulate` along `axis`, from the end when `reverse`."""
    def impl(ctx, x, *, axis, reverse):
        if not accepts[0](x.dtype):  # eager binds skip abstract_eval; the kernel turns this
            raise TypeError(prim)  # failure into abstract_eval's ShapeError
        if reverse:
            return np.flip(ufunc.accumulate(np.flip(x, axis), axis=axis, dtype=x.dtype), axis)
        return ufunc.accumulate(x, axis=axis, dtype=x.dtype)

    def abstract_eval(ctx, aval: ShapedArray, *, axis, reverse) -> ShapedArray:
        if not isinstance(axis, (int, np.integer)) or not 0 <= axis < aval.ndim:
            raise shape_error(prim, aval, f"needs an axis in [0, {aval.ndim})",
                              "pass an axis within the operand's rank", axis=axis,
                              reverse=reverse)
        dtype_check(prim, accepts, aval, axis=axis, reverse=reverse)
        return aval

    def vmap(ctx, args, dims, *, axis, reverse):
        d = dims[0]
        return prim.bind(args[0], axis=axis + (axis >= d), reverse=reverse), d

    return RuleSet(primitive=prim, impl=impl, abstract_eval=abstract_eval, jvp=jvp,
                   vmap=vmap, transpose=transpose, weak_type=lambda flags, **_: [flags[0]],
                   lowering={"default": lowering} if lowering else {})


def _cumsum_transpose(ctx, ct, x, *, axis, reverse):
    """Each input feeds every later output, so its cotangent sums every later one."""
    if not is_undefined_primal(x):
        return [None]
    return [cumsum_p.bind(ct, axis=axis, reverse=not reverse)]


# --- differentiating through an associative scan ---------------------------------------
def _shifted(x: Any, axis: int, by: int, fill: Any, reverse: bool) -> Any:
    """`x` moved `by` places along `axis` (towards the start if `reverse`), padded with `fill`."""
    import plugax.lax as lax
    shape = get_aval(x).shape
    start, limit = [0] * len(shape), list(shape)
    pad = [(0, 0, 0)] * len(shape)
    if reverse:
        start[axis], pad[axis] = by, (0, by, 0)
    else:
        limit[axis], pad[axis] = shape[axis] - by, (by, 0, 0)
    return lax.pad(lax.slice(x, tuple(start), tuple(limit)), fill, tuple(pad))


def prefix_scan(combine: Callable, identity: Any, x: Any, axis: int, reverse: bool) -> Any:
    """Inclusive scan by recursive doubling: after the round with shift s, each position
    holds the combination of the 2s elements ending there. log2(n) rounds of slices, pads
    and one elementwise op, all of which have jvp rules."""
    n, shift = get_aval(x).shape[axis], 1
    fill = scalar_like(identity, x)
    while shift < n:
        x = combine(_shifted(x, axis, shift, fill, reverse), x)
        shift *= 2
    return x


def _scan_jvp(prim: Primitive, combine: str, identity: Callable) -> Callable:
    def jvp(ctx, primals, tangents, *, axis, reverse):
        import plugax
        import plugax.lax as lax
        (x,), (g,) = primals, tangents
        ans = prim.bind(x, axis=axis, reverse=reverse)
        dtype = get_aval(x).dtype
        if type(g) is Zero or dtype.kind in "biu":
            return ans, Zero.from_value(ans)
        scan = lambda v: prefix_scan(getattr(lax, combine), identity(dtype), v, axis, reverse)
        return ans, plugax.jvp(scan, (x,), (g,))[1]
    jvp.__name__ = f"{prim.name}_jvp"
    return jvp


RULES = [
    defcumulative(cumsum_p, np.add, accepts=NUMBER, jvp=deflinear(cumsum_p),
                  transpose=_cumsum_transpose, lowering=scan_lowering("sum")),
    defcumulative(cumprod_p, np.multiply, accepts=NUMBER,
                  jvp=_scan_jvp(cumprod_p, "mul", lambda dtype: 1),
                  lowering=scan_lowering("prod")),
    defcumulative(cummax_p, np.maximum, accepts=REAL,
                  jvp=_scan_jvp(cummax_p, "max", lowest), lowering=scan_lowering("max")),
    defcumulative(cummin_p, np.minimum, accepts=REAL,
                  jvp=_scan_jvp(cummin_p, "min", highest), lowering=scan_lowering("min")),
]


def _lax_cumulative(prim: Primitive) -> Callable:
    def cumulative(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
        ndim = get_aval(operand).ndim
        axis = int(axis) + ndim if -ndim <= int(axis) < 0 else int(axis)
        return bind(prim, operand, axis=axis, reverse=bool(reverse))
    cumulative.__name__ = prim.name
    cumulative.__doc__ = f"lax.{prim.name}: running {prim.name[3:]} along `axis`."
    return cumulative


LAX = {p.name: _lax_cumulative(p) for p in (cumsum_p, cumprod_p, cummax_p, cummin_p)}
