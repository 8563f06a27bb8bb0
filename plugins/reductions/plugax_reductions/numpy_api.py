"""plugax.numpy reductions (sum, mean, var, ...) and the matching Array methods.

They follow jax.numpy's dtype rules, which differ from NumPy's in three ways:
the result is never weakly typed (`jnp.sum(3.0)` is a strong f32); sum and
prod accumulate bool and narrow integers in the default integer type; and
float16/bfloat16 are accumulated in float32, then cast back. `axis` is None
(all axes), an int or a tuple; `keepdims` re-inserts the reduced axes as size 1
with `lax.expand_dims`.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from plugax.extend import (Array, Primitive, Tracer, bfloat16, bool_, canonicalize_dtype,
                           default_int_dtype, float16, float32, get_aval, scalar_like,
                           shared_constant, to_inexact_dtype)

from . import cumulative as C
from . import reduce as R
from ._common import canonical_axes, highest, lowest

_NARROW_FLOATS = (float16, bfloat16)


def _asarray(a: Any) -> Any:
    if type(a) is Array or isinstance(a, Tracer):
        return a
    import plugax.numpy as pnp
    return pnp.asarray(a)


def _cast(x: Any, dtype: Any) -> Any:
    """`x` as a strong `dtype` value; a convert_element_type only where (dtype, weak) differ."""
    if x.dtype is dtype and not x.weak_type:  # Arrays and tracers both carry these
        return x   # the common case, decided before canonicalising
    import plugax.lax as lax
    dtype = canonicalize_dtype(dtype)
    if x.dtype == dtype and not x.weak_type:
        return x
    return lax.convert_element_type(x, dtype)


def _accumulator(dtype: np.dtype) -> np.dtype:
    """JAX's promote_integers: bool and integers narrower than the default int widen."""
    wide = default_int_dtype()
    if dtype == bool_ or (dtype.kind == "i" and dtype.itemsize < wide.itemsize):
        return wide
    if dtype.kind == "u" and dtype.itemsize < wide.itemsize:
        return canonicalize_dtype(np.dtype(f"u{wide.itemsize}"))
    return dtype


def _inexact(dtype: np.dtype) -> np.dtype:
    """mean/var of integers and bools are floats: float64 for 64-bit integers, else
    float32 (JAX 0.10's table, to_inexact_dtype)."""
    return to_inexact_dtype(dtype)


def _computation(dtype: np.dtype) -> np.dtype:
    return float32 if dtype in _NARROW_FLOATS else dtype


def _keep(r: Any, axes: tuple, keepdims: bool) -> Any:
    import plugax.lax as lax
    return lax.expand_dims(r, axes) if keepdims and axes else r


def _size(shape: tuple, axes: tuple) -> int:
    return math.prod(shape[a] for a in axes)


def _reduction(name: str, prim: Primitive, out_dtype: Callable[[np.dtype], np.dtype], doc: str,
               has_dtype: bool = True, identity: bool = True) -> Callable:
    """A jnp-style reduction: cast to the computation dtype, mask with `where`, reduce,
    combine with `initial`, keepdims, cast to the result dtype (JAX's order of steps)."""
    def reduction(a: Any, axis: Any = None, dtype: Any = None, out: None = None,
                  keepdims: bool = False, initial: Any = None, where: Any = None) -> Any:
        _no_out(name, out)
        x = _asarray(a)
        aval = get_aval(x)
        axes = canonical_axes(axis, aval.ndim)
        if not identity and initial is None:
            if where is not None:
                raise ValueError(f"reduction operation {name} does not have an identity, so "
                                 f"to use a where mask pass `initial` too")
            if _size(aval.shape, axes) == 0:
                raise ValueError(f"zero-size array to reduction operation {name}, which has "
                                 f"no identity (operand {aval.str_short()}, axis={axis}); "
                                 f"pass `initial`")
        target = canonicalize_dtype(dtype) if dtype is not None else out_dtype(aval.dtype)
        x = _cast(x, _computation(target))
        if where is not None:
            x = _masked(name, x, where, _IDENTITIES[prim](x.dtype))
        r = prim.bind(x, axes=axes)
        if initial is not None:
            r = _with_initial(name, prim, r, initial)
        return _cast(_keep(r, axes, keepdims), target)

    def no_dtype(a: Any, axis: Any = None, out: None = None, keepdims: bool = False,
                 initial: Any = None, where: Any = None) -> Any:
        return reduction(a, axis, None, out, keepdims, initial, where)

    def logical(a: Any, axis: Any = None, out: None = None, keepdims: bool = False, *,
                where: Any = None) -> Any:
        return reduction(a, axis, None, out, keepdims, None, where)

    fn = reduction if has_dtype else no_dtype if prim not in _LOGICAL else logical
    fn.__name__, fn.__doc__ = name, doc
    return fn


def _no_out(name: str, out: Any) -> None:
    if out is not None:
        raise NotImplementedError(f"plugax.numpy.{name}: the `out` argument is not supported "
                                  f"(arrays are immutable); use the return value")


_IDENTITIES = {R.reduce_sum_p: lambda d: 0, R.reduce_prod_p: lambda d: 1,
               R.reduce_max_p: lowest, R.reduce_min_p: highest,
               R.reduce_and_p: lambda d: True, R.reduce_or_p: lambda d: False}
# the elementwise op that folds `initial` into a reduction's result
_COMBINE = {R.reduce_sum_p: "add", R.reduce_prod_p: "mul", R.reduce_max_p: "max",
            R.reduce_min_p: "min", R.reduce_and_p: "bitwise_and", R.reduce_or_p: "bitwise_or"}
_LOGICAL = (R.reduce_and_p, R.reduce_or_p)


def _mask_of(name: str, where: Any, shape: tuple) -> Any:
    """`where` as a boolean mask of `shape` (JAX rejects non-boolean masks, so do we)."""
    import plugax.numpy as pnp
    mask = _asarray(where)
    if mask.dtype != bool_:
        raise ValueError(f"plugax.numpy.{name}: where must be None or a boolean array; got "
                         f"dtype {mask.dtype} (compare first, e.g. where=x > 0)")
    return pnp.broadcast_to(mask, shape)


def _masked(name: str, x: Any, where: Any, fill: Any) -> Any:
    """`x` where the mask holds, else `fill` (the reduction's identity)."""
    import plugax.lax as lax
    shape = get_aval(x).shape
    filler = scalar_like(x, fill, weak_type=False)
    filler = lax.broadcast_in_dim(filler, shape, ()) if shape else filler
    return lax.select_n(_mask_of(name, where, shape), filler, x)


def _with_initial(name: str, prim: Primitive, r: Any, initial: Any) -> Any:
    """`op(initial, r)`: XLA needs the identity as the fold's start, so a user's initial
    value is folded in afterwards, converted to the computation dtype (as JAX does)."""
    import plugax.lax as lax
    init = _asarray(initial)
    if get_aval(init).ndim != 0:
        raise ValueError(f"plugax.numpy.{name}: initial must be a scalar, got shape "
                         f"{get_aval(init).shape}")
    init = _cast(init, get_aval(r).dtype)
    return getattr(lax, _COMBINE[prim])(init, r)


sum_ = _reduction("sum", R.reduce_sum_p, _accumulator, "Sum of elements over `axis`.")
prod_ = _reduction("prod", R.reduce_prod_p, _accumulator, "Product of elements over `axis`.")
max_ = _reduction("max", R.reduce_max_p, lambda d: d, "Maximum over `axis`.",
                  has_dtype=False, identity=False)
min_ = _reduction("min", R.reduce_min_p, lambda d: d, "Minimum over `axis`.",
                  has_dtype=False, identity=False)
all_ = _reduction("all", R.reduce_and_p, lambda d: bool_,
                  "Whether every element over `axis` is true.", has_dtype=False)
any_ = _reduction("any", R.reduce_or_p, lambda d: bool_,
                  "Whether some element over `axis` is true.", has_dtype=False)


def _mean_parts(a: Any, axis: Any, dtype: Any) -> tuple:
    """(operand in the computation dtype, axes, element count, result dtype)."""
    x = _asarray(a)
    aval = get_aval(x)
    axes = canonical_axes(axis, aval.ndim)
    target = canonicalize_dtype(dtype) if dtype is not None else _inexact(aval.dtype)
    return _cast(x, _computation(target)), axes, _size(aval.shape, axes), target


def _divide(x: Any, n: float) -> Any:
    """x / n with n as a literal of x's dtype (n <= 0 gives nan, as in JAX)."""
    import plugax.lax as lax
    return lax.div(x, shared_constant(n if n > 0 else np.nan, x.dtype))


def _masked_sum_and_count(name: str, x: Any, axes: tuple, where: Any) -> tuple:
    """(sum of x where the mask holds, how many places it holds), over `axes`."""
    import plugax.lax as lax
    mask = _mask_of(name, where, get_aval(x).shape)
    count = R.reduce_sum_p.bind(lax.convert_element_type(mask, x.dtype), axes=axes)
    return R.reduce_sum_p.bind(_masked(name, x, mask, 0), axes=axes), count


def _divide_counted(s: Any, count: Any) -> Any:
    """s / count, NaN where count <= 0 (a traced count: JAX's var does the same)."""
    import plugax.lax as lax
    zero, nan = scalar_like(count, 0, weak_type=False), scalar_like(s, np.nan, weak_type=False)
    shape = get_aval(s).shape
    nan = lax.broadcast_in_dim(nan, shape, ()) if shape else nan
    return lax.select_n(lax.gt(count, zero), nan, lax.div(s, count))


def mean(a: Any, axis: Any = None, dtype: Any = None, out: None = None,
         keepdims: bool = False, *, where: Any = None) -> Any:
    """Arithmetic mean over `axis` (of the places `where` holds); integers and bools
    average to the default float."""
    _no_out("mean", out)
    x, axes, n, target = _mean_parts(a, axis, dtype)
    if where is None:   # keepdims before the division, as in JAX's jaxpr
        r = _divide(_keep(R.reduce_sum_p.bind(x, axes=axes), axes, keepdims), n)
    else:
        r = _keep(_divide_counted(*_masked_sum_and_count("mean", x, axes, where)), axes,
                  keepdims)
    return _cast(r, target)


def var(a: Any, axis: Any = None, dtype: Any = None, out: None = None, ddof: int = 0,
        keepdims: bool = False, *, where: Any = None, correction: Any = None) -> Any:
    """Variance: the mean squared deviation, divided by (count - ddof); `correction` is
    the array-API name of ddof."""
    import plugax.lax as lax
    _no_out("var", out)
    if correction is not None:
        if ddof:
            raise ValueError("var: pass ddof or correction, not both")
        ddof = correction
    x, axes, n, target = _mean_parts(a, axis, dtype)
    aval = get_aval(x)
    kept = tuple(i for i in range(aval.ndim) if i not in axes)
    if where is None:
        centre = _divide(R.reduce_sum_p.bind(x, axes=axes), n)
    else:
        centre = _divide_counted(*_masked_sum_and_count("var", x, axes, where))
    dev = lax.sub(x, lax.broadcast_in_dim(centre, aval.shape, kept))
    if aval.dtype.kind == "c":   # |dev|^2, a real variance of the real dtype (as JAX)
        sq = lax.real(lax.mul(dev, lax.conj(dev)))
        target = np.dtype(target).type(0).real.dtype if np.dtype(target).kind == "c" else target
    else:
        sq = lax.mul(dev, dev)
    if where is None:
        r = _divide(R.reduce_sum_p.bind(sq, axes=axes), n - ddof)
    else:
        s, count = _masked_sum_and_count("var", sq, axes, where)
        r = _divide_counted(s, lax.sub(count, scalar_like(count, ddof, weak_type=False)))
    return _cast(_keep(r, axes, keepdims), target)


def std(a: Any, axis: Any = None, dtype: Any = None, out: None = None, ddof: int = 0,
        keepdims: bool = False, *, where: Any = None, correction: Any = None) -> Any:
    """Standard deviation: the square root of `var`."""
    import plugax.lax as lax
    return lax.sqrt(var(a, axis, dtype, out, ddof, keepdims, where=where,
                        correction=correction))


def _arg(prim: Primitive) -> Callable:
    def arg(a: Any, axis: int | None = None, out: None = None, keepdims: bool = False) -> Any:
        import plugax.lax as lax
        _no_out(prim.name, out)
        x = _asarray(a)
        ndim = get_aval(x).ndim
        if axis is None:
            x, axes = lax.reshape(x, (get_aval(x).size,)), (0,)
        else:
            axes = canonical_axes(axis, ndim)
        r = prim.bind(x, axes=axes, index_dtype=default_int_dtype())
        if keepdims:
            return lax.expand_dims(r, tuple(range(ndim)) if axis is None else axes)
        return r
    arg.__name__ = prim.name
    arg.__doc__ = f"Indices of the {prim.name[3:]}imum along `axis` (flattened if None)."
    return arg


argmax, argmin = _arg(R.argmax_p), _arg(R.argmin_p)


def _cumulative(prim: Primitive) -> Callable:
    def cumulative(a: Any, axis: int | None = None, dtype: Any = None, out: None = None) -> Any:
        import plugax.lax as lax
        _no_out(prim.name, out)
        x = _asarray(a)
        if axis is None or get_aval(x).ndim == 0:   # flattened, as in jnp
            x, axis = lax.reshape(x, (get_aval(x).size,)), 0
        aval = get_aval(x)
        (axis,) = canonical_axes(axis, aval.ndim)
        default = default_int_dtype() if aval.dtype == bool_ else aval.dtype
        target = canonicalize_dtype(dtype) if dtype is not None else default
        return prim.bind(_cast(x, target), axis=axis, reverse=False)
    cumulative.__name__ = prim.name
    cumulative.__doc__ = f"Running {prim.name[3:]} along `axis` (flattened if None)."
    return cumulative


cumsum, cumprod = _cumulative(C.cumsum_p), _cumulative(C.cumprod_p)

NUMPY = {"sum": sum_, "prod": prod_, "max": max_, "min": min_, "amax": max_, "amin": min_,
         "all": all_, "any": any_, "mean": mean, "var": var, "std": std, "argmax": argmax,
         "argmin": argmin, "cumsum": cumsum, "cumprod": cumprod}

METHODS = {name: NUMPY[name] for name in ("sum", "prod", "max", "min", "all", "any", "mean",
                                          "var", "std", "argmax", "argmin", "cumsum",
                                          "cumprod")}
