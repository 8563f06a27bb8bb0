"""plugax.numpy functions that create or rearrange arrays, written over the lax ones.

Creation with concrete arguments (arange, linspace, eye) runs NumPy eagerly and
wraps the result; creation of a constant fill (zeros, ones, full) broadcasts a
scalar of the target dtype so that, traced, it is one `broadcast_in_dim` of a
literal, as in JAX. Dtypes follow JAX: 64-bit types become 32-bit while x64 is
off, and mixed operands are promoted on the JAX lattice.
"""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from plugax.extend import (Array, Tracer, array_value, bfloat16, canonicalize_dtype,
                           default_float_dtype, dtype_of_value, float16, float32, get_aval,
                           result_type, to_inexact_dtype)

from . import indexing, slicing, structural
from ._common import canonical_axes, canonical_axis, normalized_indices

_SCALARS = (bool, int, float, complex)


def _is_traced_or_array(x: Any) -> bool:
    return isinstance(x, (Tracer, Array))


def _shape_tuple(shape: Any) -> tuple[int, ...]:
    """A shape as a tuple of ints; anything else (a float size, a traced value) is JAX's
    TypeError naming the shape, never a size silently truncated."""
    dims = tuple(shape) if isinstance(shape, (tuple, list)) or np.ndim(shape) else (shape,)
    try:
        return tuple(operator.index(s) for s in dims)
    except TypeError:
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, "
                        f"got {shape!r}.") from None


def _convert(x: Any, dtype: Any, weak_type: bool = False) -> Any:
    """x as (dtype, weak_type): NumPy for concrete values, convert_element_type when traced."""
    dtype = canonicalize_dtype(dtype)
    if isinstance(x, Tracer):
        aval = x.aval
        if aval.dtype == dtype and aval.weak_type == weak_type:
            return x
        import plugax.lax as lax
        return lax.convert_element_type(x, dtype)
    if isinstance(x, Array) and x.dtype == dtype and x.weak_type == weak_type:
        return x
    return Array(np.asarray(x, dtype), weak_type)


def _promote(*xs: Any) -> list:
    """Operands converted to their JAX result type (weak Python scalars yield)."""
    dtype, weak = result_type(*xs)
    return [x if get_aval(x).dtype == dtype and get_aval(x).weak_type == weak
            else _convert(x, dtype, weak) for x in xs]


# --- creation -----------------------------------------------------------------------------
def asarray(a: Any, dtype: Any = None, copy: Any = None) -> Any:
    """An Array (or the tracer itself); Python scalars stay weakly typed, like JAX."""
    if a is None:
        raise ValueError("None is not a valid value for plugax.numpy.asarray (an array "
                         "needs numbers or booleans)")
    if isinstance(a, (list, tuple)) and any(_is_traced_or_array(e) or isinstance(e, (list, tuple))
                                            for e in a):
        if not a:
            return asarray(np.asarray(a), dtype)
        parts = [asarray(e, dtype) for e in a]
        if len({get_aval(p).shape for p in parts}) > 1:     # NumPy's (and JAX's) ValueError
            raise ValueError(f"setting an array element with a sequence. The requested array "
                             f"has an inhomogeneous shape after 1 dimensions: the elements "
                             f"have shapes {', '.join(str(get_aval(p).shape) for p in parts)}")
        return stack(parts)
    if _is_traced_or_array(a):
        return a if dtype is None else _convert(a, dtype, False)
    if dtype is None:
        weak = type(a) in _SCALARS and type(a) is not bool   # bools are never weak (JAX)
        dtype = dtype_of_value(a) if weak else canonicalize_dtype(np.asarray(a).dtype)
        return Array(np.asarray(a, dtype), weak)
    return Array(np.asarray(a, canonicalize_dtype(dtype)))


def array(object: Any, dtype: Any = None, copy: bool = True, ndmin: int = 0) -> Any:
    out = asarray(object, dtype)
    if get_aval(out).ndim < ndmin:
        out = reshape(out, (1,) * (ndmin - get_aval(out).ndim) + get_aval(out).shape)
    return out


def full(shape: Any, fill_value: Any, dtype: Any = None) -> Any:
    """`fill_value` broadcast to `shape` (one broadcast_in_dim of a scalar when traced);
    weakly typed when no dtype is given and the fill is (a Python scalar), as in JAX."""
    if dtype is None:
        dtype, weak = result_type(fill_value)
        return _filled(shape, fill_value, dtype, weak)
    return _filled(shape, fill_value, dtype, False)


def _filled(shape: Any, fill_value: Any, dtype: Any, weak: bool) -> Any:
    return broadcast_to(_convert(fill_value, dtype, weak), _shape_tuple(shape))


def zeros(shape: Any, dtype: Any = None) -> Any:
    return full(shape, 0, dtype or default_float_dtype())


def ones(shape: Any, dtype: Any = None) -> Any:
    return full(shape, 1, dtype or default_float_dtype())


def full_like(a: Any, fill_value: Any, dtype: Any = None, shape: Any = None) -> Any:
    """Like `full` with `a`'s dtype, and its weak type too unless `dtype` is given (JAX)."""
    aval = get_aval(a)
    return _filled(aval.shape if shape is None else shape, fill_value,
                   aval.dtype if dtype is None else dtype, dtype is None and aval.weak_type)


def zeros_like(a: Any, dtype: Any = None, shape: Any = None) -> Any:
    return full_like(a, 0, dtype, shape)


def ones_like(a: Any, dtype: Any = None, shape: Any = None) -> Any:
    return full_like(a, 1, dtype, shape)


def _eager(value: np.ndarray, dtype: Any) -> Array:
    dtype = canonicalize_dtype(dtype if dtype is not None else value.dtype)
    return Array(np.asarray(value, dtype))


def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None) -> Array:
    """Computed eagerly (its length must be known, so the arguments must be concrete), the
    way JAX computes it: dtype from JAX's promotion of the arguments (np.int8(5) gives
    int8), values start + step * i in that dtype (float32 for 16-bit floats), not
    NumPy's float64 arange rounded afterwards."""
    if stop is None:
        start, stop = 0, start
    args = [a for a in (start, stop, step) if a is not None]
    for a in args:
        if isinstance(a, Tracer) or np.ndim(a) != 0:
            raise ValueError(f"arange: arguments must be concrete scalars, got {a!r:.60} "
                             "(the length of the result must be known)")
    dtype = canonicalize_dtype(dtype) if dtype is not None else result_type(*args)[0]
    start, stop = _scalar(start), _scalar(stop)
    if step is None:
        i = np.arange(max(0, int(np.ceil(stop - start))))
        return Array((np.asarray(start).astype(dtype) + i.astype(dtype)).astype(dtype))
    step = _scalar(step)
    size = max(0, int(np.ceil((stop - start) / step)))
    work = float32 if dtype in (float16, bfloat16) else dtype
    with np.errstate(over="ignore"):
        values = np.asarray(start).astype(work) + np.asarray(step).astype(work) * \
            np.arange(size).astype(work)
    return Array(values.astype(work).astype(dtype))


def _scalar(x: Any) -> Any:
    return array_value(x).item() if isinstance(x, Array) else np.asarray(x).item()


def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True,
             retstep: bool = False, dtype: Any = None, axis: int = 0) -> Any:
    """Differentiable in `start` and `stop` (which may be traced), as JAX's: the points are
    start * (1 - t) + stop * t for t = iota / div, in the (inexact) computation dtype; the
    step is returned in that dtype too."""
    import plugax.lax as lax
    import plugax.numpy as pnp
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"linspace: number of samples, {num}, must be non-negative")
    start, stop = asarray(start), asarray(stop)
    if dtype is None:
        dtype = _inexact(result_type(start, stop)[0])
    dtype = canonicalize_dtype(dtype)
    compute = _inexact(dtype)
    start, stop = _convert(start, compute), _convert(stop, compute)
    bounds = list(broadcast_shapes(shape(start), shape(stop)))
    start, stop = broadcast_to(start, bounds), broadcast_to(stop, bounds)
    axis = canonical_axis(axis, len(bounds) + 1)
    div = num - 1 if endpoint else num
    if num > 1:
        delta = pnp.true_divide(lax.sub(stop, start), Array(np.asarray(div, compute)))
        t_shape = [1] * (len(bounds) + 1)
        t_shape[axis] = div
        t = reshape(pnp.true_divide(lax.iota(compute, div), Array(np.asarray(div, compute))),
                    t_shape)
        bounds.insert(axis, 1)
        out = reshape(start, bounds) * (1 - t) + reshape(stop, bounds) * t
        if endpoint:
            out = concatenate([out, expand_dims(stop, axis)], axis)
    elif num == 1:
        delta = Array(np.asarray(np.nan, compute)) if endpoint else lax.sub(stop, start)
        out = expand_dims(start, axis)
    else:
        delta = Array(np.asarray(np.nan, compute))
        out = zeros(tuple(bounds[:axis]) + (0,) + tuple(bounds[axis:]), compute)
    if dtype.kind in "iu":
        out = lax.floor(out)
    out = _convert(out, dtype)
    return (out, delta) if retstep else out


def _inexact(dtype: np.dtype) -> np.dtype:
    return to_inexact_dtype(dtype)


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Array:
    return _eager(np.eye(N, M, k), dtype or default_float_dtype())


# --- rearranging --------------------------------------------------------------------------
def _aval(a: Any) -> Any:
    """The type of anything array-like: lists and tuples too, as NumPy and JAX take them."""
    return get_aval(a if _is_traced_or_array(a) or type(a) in _SCALARS else asarray(a))


def shape(a: Any) -> tuple[int, ...]:
    return _aval(a).shape


def ndim(a: Any) -> int:
    return _aval(a).ndim


def size(a: Any, axis: int | None = None) -> int:
    aval = _aval(a)
    return aval.size if axis is None else aval.shape[axis]


def reshape(a: Any, newshape: Any = None, order: str = "C", *, shape: Any = None) -> Any:
    """numpy.reshape; one -1 is inferred. Only C order (as in JAX)."""
    if order != "C":
        raise NotImplementedError("plugax.numpy.reshape supports only order='C'")
    sizes = list(_shape_tuple(newshape if shape is None else shape))
    total = get_aval(a).size
    if sizes.count(-1) > 1:
        raise ValueError(f"can only specify one unknown dimension (-1), got {tuple(sizes)}")
    if -1 in sizes:
        known = int(np.prod([s for s in sizes if s != -1]))
        if known == 0 or total % known:
            raise ValueError(f"cannot reshape an array of size {total} into shape "
                             f"{tuple(sizes)}")
        sizes[sizes.index(-1)] = total // known
    if tuple(sizes) == get_aval(a).shape:
        return asarray(a)
    return structural.reshape(a, sizes)


def ravel(a: Any, order: str = "C") -> Any:
    return reshape(a, (-1,), order)


def transpose(a: Any, axes: Sequence[int] | None = None) -> Any:
    nd = ndim(a)
    perm = tuple(range(nd))[::-1] if axes is None else canonical_axes(axes, nd)
    return structural.transpose(a, perm)


def swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    perm = list(range(ndim(a)))
    i, j = canonical_axis(axis1, len(perm)), canonical_axis(axis2, len(perm))
    perm[i], perm[j] = perm[j], perm[i]
    return structural.transpose(a, perm)


def moveaxis(a: Any, source: Any, destination: Any) -> Any:
    nd = ndim(a)
    src, dst = canonical_axes(source, nd), canonical_axes(destination, nd)
    if len(src) != len(dst):
        raise ValueError("moveaxis: source and destination need the same number of axes")
    perm = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        perm.insert(d, s)
    return structural.transpose(a, perm)


def expand_dims(a: Any, axis: Any) -> Any:
    return structural.expand_dims(a, (axis,) if isinstance(axis, (int, np.integer)) else axis)


def squeeze(a: Any, axis: Any = None) -> Any:
    aval = get_aval(a)
    axes = [i for i, s in enumerate(aval.shape) if s == 1] if axis is None else axis
    wanted = (axes,) if isinstance(axes, (int, np.integer)) else tuple(axes)
    if any(-aval.ndim <= d < aval.ndim and aval.shape[d] != 1 for d in wanted):
        raise ValueError(f"cannot select an axis to squeeze out which has size not equal to "
                         f"one, got shape={aval.shape} and dimensions={wanted}")
    return structural.squeeze(a, axes)


def concatenate(arrays: Sequence[Any], axis: int | None = 0) -> Any:
    arrays = _promote(*arrays)
    if axis is None:
        return concatenate([ravel(a) for a in arrays], 0)
    shapes = [get_aval(a).shape for a in arrays]
    if len({len(s) for s in shapes}) > 1:   # JAX's TypeError, before the primitive's
        raise TypeError(f"Cannot concatenate arrays with different numbers of dimensions: "
                        f"got {', '.join(map(str, shapes))}.")
    return slicing.concatenate(arrays, canonical_axis(axis, ndim(arrays[0])))


def stack(arrays: Sequence[Any], axis: int = 0) -> Any:
    if not len(arrays):
        raise ValueError("need at least one array to stack")
    arrays = _promote(*arrays)
    shapes = [get_aval(a).shape for a in arrays]
    if len(set(shapes)) > 1:
        raise ValueError(f"All input arrays must have the same shape. Got "
                         f"{', '.join(map(str, shapes))}.")
    axis = canonical_axis(axis, ndim(arrays[0]) + 1)
    return slicing.concatenate([expand_dims(a, axis) for a in arrays], axis)


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(*shapes))


def broadcast_to(a: Any, shape: Any) -> Any:
    """NumPy broadcasting as one broadcast_in_dim (none when the shape already matches)."""
    a = asarray(a) if not _is_traced_or_array(a) else a
    shape, aval = _shape_tuple(shape), get_aval(a)
    if aval.shape == shape:
        return a
    lead = len(shape) - aval.ndim
    if lead < 0 or np.broadcast_shapes(aval.shape, shape) != shape:
        raise ValueError(f"cannot broadcast an array of shape {aval.shape} to shape {shape}")
    return structural.broadcast_in_dim(a, shape, tuple(range(lead, len(shape))))


def broadcast_arrays(*args: Any) -> list:
    target = broadcast_shapes(*(get_aval(a).shape for a in args))
    return [broadcast_to(a, target) for a in args]


# --- out-of-bounds indices: JAX's modes ------------------------------------------------------
_MODES = (None, "fill", "clip", "wrap")


def default_fill_value(dtype: np.dtype) -> Any:
    """What JAX's gathers return for an out-of-bounds index in "fill" mode: NaN for
    floats, the most negative signed integer, the largest unsigned one, True."""
    if dtype.kind == "b":
        return True
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min if dtype.kind == "i" else info.max
    return np.nan


def redirect_out_of_bounds(indices: Any, size: int) -> tuple[Any, bool]:
    """(indices with every one outside [0, size) replaced by `size`, whether any might be).

    Indices must already be normalised (negatives counted from the end). Gathering from
    (scattering into) an operand extended by one slot at `size` then fills (drops)
    exactly the out-of-range places -- one linear primitive, so jvp, vmap and transpose
    need nothing new. Concrete indices all in range are returned as they are.
    """
    if not isinstance(indices, Tracer):
        value = np.asarray(array_value(indices) if isinstance(indices, Array) else indices)
        bad = (value < 0) | (value >= size)
        if not bad.any():
            return indices, False
        return Array(np.where(bad, size, value).astype(value.dtype)), True
    import plugax.lax as lax
    dtype = indices.aval.dtype
    n = Array(np.asarray(size, dtype), True)
    bad = lax.ge(indices, n) if dtype.kind == "u" else lax.bitwise_or(
        lax.lt(indices, Array(np.zeros((), dtype), True)), lax.ge(indices, n))
    return lax.select_n(bad, indices, lax.broadcast_in_dim(n, indices.aval.shape, ())), True


def extend_axis(x: Any, axis: int, fill: Any) -> Any:
    """`x` with one more slot at the end of `axis`, holding `fill` (x's dtype and weak type)."""
    import plugax.lax as lax
    aval = get_aval(x)
    config = [(0, 0, 0)] * aval.ndim
    config[axis] = (0, 1, 0)
    return lax.pad(x, _convert(fill, aval.dtype, aval.weak_type), config)


def _moded_indices(name: str, indices: Any, size: int, mode: Any,
                   clip_normalises: bool) -> tuple[Any, bool]:
    """(indices to gather at, whether the operand needs the fill slot at `size`).

    Negative indices count from the end, except in JAX's take with mode="clip", which
    clamps them to 0 (`clip_normalises=False`)."""
    if mode not in _MODES:
        raise ValueError(f"{name}: mode must be one of {_MODES[1:]} (None means 'fill', as "
                         f"in JAX), got {mode!r}")
    if mode == "wrap":
        import plugax.numpy as pnp
        return pnp.remainder(_integer_indices(indices), size if size else 1), False
    if mode == "clip" and not clip_normalises:
        return _integer_indices(indices), False        # gather clamps into range itself
    indices = normalized_indices(indices, size)
    if mode == "clip":
        return indices, False
    return redirect_out_of_bounds(indices, size)


def _integer_indices(indices: Any) -> Any:
    """`indices` as an integer Array or tracer, not normalised."""
    if isinstance(indices, Tracer):
        if indices.aval.dtype.kind not in "iu":
            raise TypeError(f"indices must be integers, got {indices.aval.str_short()}")
        return indices
    value = np.asarray(array_value(indices) if isinstance(indices, Array) else indices)
    if value.dtype.kind not in "iu":
        raise TypeError(f"indices must be integers, got dtype {value.dtype}")
    return Array(value.astype(canonicalize_dtype(value.dtype)))


def take(a: Any, indices: Any, axis: int | None = None, out: None = None, mode: Any = None,
         unique_indices: bool = False, indices_are_sorted: bool = False,
         fill_value: Any = None) -> Any:
    """numpy.take with JAX's modes: by default ("fill") an out-of-range index gives
    `fill_value` (NaN for floats, see `default_fill_value`); "clip" clamps, "wrap" wraps."""
    if out is not None:
        raise NotImplementedError("take: the `out` argument is not supported (arrays are "
                                  "immutable); use the return value")
    if axis is None:
        a, axis = ravel(a), 0
    axis = canonical_axis(axis, ndim(a))
    size = shape(a)[axis]
    if size == 0 and not isinstance(indices, Tracer) and np.size(indices):
        raise IndexError("take: cannot take a non-empty selection from an empty axis")
    idx, fill = _moded_indices("take", indices, size, mode, clip_normalises=False)
    if fill:
        a = extend_axis(a, axis, _fill_for(a, fill_value))
    return indexing.gather(a, idx, axis)


def _fill_for(a: Any, fill_value: Any) -> Any:
    return default_fill_value(get_aval(a).dtype) if fill_value is None else fill_value


def take_along_axis(arr: Any, indices: Any, axis: int | None, mode: Any = None,
                    fill_value: Any = None) -> Any:
    """numpy.take_along_axis: a gather whose other axes are shared batch axes; out-of-range
    indices follow `mode` as in `take` (negative ones count from the end in every mode)."""
    if axis is None:
        arr, axis = ravel(arr), 0
    nd = ndim(arr)
    axis = canonical_axis(axis, nd)
    if ndim(indices) != nd:
        raise ValueError(f"take_along_axis: indices of rank {ndim(indices)} for an array of "
                         f"rank {nd}; they must have the same rank")
    idx, fill = _moded_indices("take_along_axis", indices, shape(arr)[axis], mode,
                               clip_normalises=True)
    if fill:
        arr = extend_axis(arr, axis, _fill_for(arr, fill_value))
    batch = broadcast_shapes(shape(arr)[:axis] + shape(arr)[axis + 1:],
                             shape(idx)[:axis] + shape(idx)[axis + 1:])
    last = lambda x, n: broadcast_to(moveaxis(x, axis, -1), batch + (n,))
    out = indexing.gather(last(arr, shape(arr)[axis]), last(idx, shape(idx)[axis]),
                          axis=nd - 1, batch_dims=nd - 1)
    return moveaxis(out, -1, axis)


FUNCTIONS = {f.__name__: f for f in (
    asarray, array, full, zeros, ones, full_like, zeros_like, ones_like, arange, linspace, eye,
    shape, ndim, size, reshape, ravel, transpose, swapaxes, moveaxis, expand_dims, squeeze,
    concatenate, stack, broadcast_shapes, broadcast_to, broadcast_arrays, take,
    take_along_axis)}
