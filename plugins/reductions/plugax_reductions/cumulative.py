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
                           is_undefined_primal, scalar_like)

from ._common import NUMBER, ORDERED_NUMBER, dtype_check, shape_error
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
                   batching=vmap, transpose=transpose,
                   lowering={"default": lowering} if lowering else {})


def _cumsum_transpose(ctx, ct, x, *, axis, reverse):
    """Each input feeds every later output, so its cotangent sums every later one."""
    if not is_undefined_primal(x):
        return [None]
    return [cumsum_p.bind(ct, axis=axis, reverse=not reverse)]


# --- differentiating through an associative scan ---------------------------------------
def _every_other(x: Any, axis: int, start: int, stop: int | None, stride: int) -> Any:
    """x[start:stop:stride] along `axis` (stop None: to the end; negative: from the end)."""
    import plugax.lax as lax
    shape = get_aval(x).shape
    n = shape[axis]
    stop = n if stop is None else stop + n if stop < 0 else stop
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, max(stop, start), stride
    return lax.slice(x, starts, limits, strides)


def _interleave(a: Any, b: Any, axis: int) -> Any:
    """a[0], b[0], a[1], b[1], ... along `axis`, by padding each with zeros in between."""
    import plugax.lax as lax
    same = get_aval(a).shape[axis] == get_aval(b).shape[axis]
    pad_a, pad_b = [(0, 0, 0)] * get_aval(a).ndim, [(0, 0, 0)] * get_aval(b).ndim
    pad_a[axis], pad_b[axis] = (0, 1 if same else 0, 1), (1, 0 if same else 1, 1)
    return lax.add(lax.pad(a, scalar_like(a, 0, weak_type=False), pad_a),
                   lax.pad(b, scalar_like(b, 0, weak_type=False), pad_b))


def associative_scan(combine: Callable, x: Any, axis: int, reverse: bool) -> Any:
    """Inclusive scan by JAX's recursion (lax.associative_scan): combine adjacent pairs,
    scan those, then fill in the even positions. Differentiating this very tree is how
    JAX differentiates cumprod/cummax/cummin, so ties and zeros get JAX's derivative."""
    import plugax.lax as lax
    if reverse:
        return lax.rev(associative_scan(combine, lax.rev(x, (axis,)), axis, False), (axis,))
    n = get_aval(x).shape[axis]
    if n < 2:
        return x
    odd = associative_scan(combine, combine(_every_other(x, axis, 0, -1, 2),
                                            _every_other(x, axis, 1, None, 2)), axis, False)
    rest = _every_other(x, axis, 2, None, 2)
    even = combine(_every_other(odd, axis, 0, -1, 1) if n % 2 == 0 else odd, rest)
    even = lax.concatenate([_every_other(x, axis, 0, 1, 1), even], axis)
    return _interleave(even, odd, axis)


def _scan_jvp(prim: Primitive, combine: str) -> Callable:
    def jvp(ctx, primals, tangents, *, axis, reverse):
        import plugax
        import plugax.lax as lax
        (x,), (g,) = primals, tangents
        ans = prim.bind(x, axis=axis, reverse=reverse)
        dtype = get_aval(x).dtype
        if type(g) is Zero or dtype.kind in "biu":
            return ans, Zero.from_value(ans)
        scan = lambda v: associative_scan(getattr(lax, combine), v, axis, reverse)
        return ans, plugax.jvp(scan, (x,), (g,))[1]
    jvp.__name__ = f"{prim.name}_jvp"
    return jvp


RULES = [
    defcumulative(cumsum_p, np.add, accepts=NUMBER, jvp=deflinear(cumsum_p),
                  transpose=_cumsum_transpose, lowering=scan_lowering("sum")),
    defcumulative(cumprod_p, np.multiply, accepts=NUMBER,
                  jvp=_scan_jvp(cumprod_p, "mul"),
                  lowering=scan_lowering("prod")),
    defcumulative(cummax_p, np.maximum, accepts=ORDERED_NUMBER,
                  jvp=_scan_jvp(cummax_p, "max"), lowering=scan_lowering("max")),
    defcumulative(cummin_p, np.minimum, accepts=ORDERED_NUMBER,
                  jvp=_scan_jvp(cummin_p, "min"), lowering=scan_lowering("min")),
]


def _lax_cumulative(prim: Primitive) -> Callable:
    def cumulative(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
        aval = get_aval(operand)
        ndim = aval.ndim
        if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
            raise TypeError(f"lax.{prim.name}: axis must be an int, got {axis!r}")
        if not -ndim <= axis < ndim:   # checked here: under vmap the primitive sees axis+1
            raise ValueError(f"lax.{prim.name}: axis {axis} is out of bounds for an operand "
                             f"{aval.str_short()} (rank {ndim})")
        axis = int(axis) % ndim
        return bind(prim, operand, axis=axis, reverse=bool(reverse))
    cumulative.__name__ = prim.name
    cumulative.__doc__ = f"lax.{prim.name}: running {prim.name[3:]} along `axis`."
    return cumulative


LAX = {p.name: _lax_cumulative(p) for p in (cumsum_p, cumprod_p, cummax_p, cummin_p)}
