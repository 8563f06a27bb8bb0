"""NumPy's editing and array-API shape functions as JAX has them: concat,
permute_dims, matrix_transpose, unstack, rollaxis, copy, empty/empty_like, block,
compress, extract, place, put, insert, delete, resize, trim_zeros.

JAX's arrays are immutable, so `place` and `put` return the result (inplace=False
is required, with JAX's error otherwise); a result whose length depends on values
(compress, extract) takes a static `size=` to work under jit, as in JAX. All are
compositions of plugax.numpy functions: every transformation applies.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

import plugax.numpy as pnp
from plugax.extend import get_aval

__all__ = ["concat", "permute_dims", "matrix_transpose", "unstack", "rollaxis", "copy",
           "empty", "empty_like", "block", "compress", "extract", "place", "put", "insert",
           "delete", "resize", "trim_zeros", "NUMPY"]


def _shape(x: Any) -> tuple:
    return get_aval(x).shape


def _axis(axis: int, ndim: int, name: str) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for an array of rank {ndim}")
    return axis % ndim


def concat(arrays: Sequence[Any], /, *, axis: int | None = 0) -> Any:
    """The array API's concatenate."""
    return pnp.concatenate(arrays, axis=axis)


def permute_dims(a: Any, /, axes: Sequence[int]) -> Any:
    """The array API's transpose (axes required)."""
    return pnp.transpose(a, tuple(axes))


def matrix_transpose(x: Any, /) -> Any:
    """Swap the last two axes (a stack of matrices transposed)."""
    nd = len(_shape(x))
    if nd < 2:
        raise ValueError(f"matrix_transpose: x must be at least two-dimensional; got shape "
                         f"{_shape(x)}")
    return pnp.swapaxes(x, -1, -2)


def unstack(x: Any, /, *, axis: int = 0) -> tuple:
    """The slices of x along axis, as a tuple (the inverse of stack)."""
    x = pnp.asarray(x)
    if len(_shape(x)) == 0:
        raise ValueError("unstack: x must be at least one-dimensional")
    axis = _axis(axis, len(_shape(x)), "unstack")
    moved = pnp.moveaxis(x, axis, 0)
    return tuple(moved[i] for i in range(_shape(moved)[0]))


def rollaxis(a: Any, axis: int, start: int = 0) -> Any:
    """NumPy's older moveaxis: axis moved to lie before position start."""
    nd = len(_shape(a))
    axis = _axis(axis, nd, "rollaxis")
    if not -nd <= start <= nd:
        raise ValueError(f"rollaxis: start={start} must satisfy {-nd}<=start<={nd}")
    start = start + nd if start < 0 else start
    start = start - 1 if start > axis else start
    return pnp.moveaxis(a, axis, start)


def copy(a: Any, order: str | None = None) -> Any:
    return pnp.array(a, copy=True)


def empty(shape: Any, dtype: Any = None, *, device: Any = None) -> Any:
    """Zeros: an XLA array has no uninitialised memory to hand out (as in JAX)."""
    return pnp.zeros(shape, dtype)


def empty_like(prototype: Any, dtype: Any = None, shape: Any = None, *,
               device: Any = None) -> Any:
    return pnp.zeros_like(prototype, dtype=dtype, shape=shape)


def _block(xs: Any) -> tuple:
    if isinstance(xs, tuple):
        raise ValueError(f"plugax.numpy.block does not allow tuples, got {xs}")
    if isinstance(xs, list):
        if not xs:
            raise ValueError("plugax.numpy.block does not allow empty list arguments")
        parts, depths = zip(*[_block(x) for x in xs])
        if any(d != depths[0] for d in depths[1:]):
            raise ValueError("Mismatched list depths in plugax.numpy.block")
        rank = max(depths[0], max(len(_shape(p)) for p in parts))
        parts = [pnp.reshape(p, (1,) * (rank - len(_shape(p))) + _shape(p)) for p in parts]
        return pnp.concatenate(parts, axis=-depths[0]), depths[0] + 1
    return pnp.asarray(xs), 1


def block(arrays: Any) -> Any:
    """Assemble an array from nested lists of blocks (the innermost lists are joined
    along the last axis, the next along the one before, ...)."""
    return _block(arrays)[0]


def compress(condition: Any, a: Any, axis: int | None = None, *, size: int | None = None,
             fill_value: Any = 0, out: None = None) -> Any:
    """The slices of a along axis where condition holds. Under jit pass a static
    `size=`: the first `size` selected slices, then `fill_value` slices."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to plugax.numpy.compress is not "
                                  "supported (arrays are immutable)")
    cond = pnp.asarray(condition).astype(bool)
    if len(_shape(cond)) != 1:
        raise ValueError(f"compress: condition must be a 1D array; got shape {_shape(cond)}")
    arr = pnp.ravel(a) if axis is None else pnp.moveaxis(a, axis, 0)
    n = _shape(arr)[0]
    cond, extra = cond[:n], cond[n:]
    arr = arr[:_shape(cond)[0]]
    if size is None:
        if _shape(extra)[0] and bool(pnp.any(extra)):
            raise ValueError("compress: condition contains entries that are out of bounds")
        (keep,) = pnp.nonzero(cond)
        result = pnp.take(arr, keep, axis=0)
    else:
        if not 0 <= size <= _shape(arr)[0]:
            raise ValueError(f"compress: size must be non-negative and not greater than the "
                             f"size of the array axis; got size={size} for a.shape[axis]="
                             f"{_shape(arr)[0]}")
        (keep,) = pnp.nonzero(cond, size=size, fill_value=_shape(arr)[0])
        fill = pnp.full((1,) + _shape(arr)[1:], fill_value, dtype=get_aval(arr).dtype)
        result = pnp.take(pnp.concatenate([arr, fill], 0), keep, axis=0)
    return result if axis is None else pnp.moveaxis(result, 0, axis)


def extract(condition: Any, arr: Any, *, size: int | None = None, fill_value: Any = 0) -> Any:
    """The elements of arr where condition holds, flattened (compress of the ravels)."""
    return compress(pnp.ravel(condition), pnp.ravel(arr), size=size, fill_value=fill_value)


def _tile_to(v: Any, n: int) -> Any:
    m = _shape(v)[0]
    return pnp.tile(v, -(-n // m))[:n] if m != n else v


def place(arr: Any, mask: Any, vals: Any, *, inplace: bool = True) -> Any:
    """arr with the positions where mask holds set to vals, in order, repeated."""
    if inplace:
        raise ValueError("plugax.numpy.place cannot modify arrays in-place, because plugax "
                         "arrays are immutable (as JAX's). Pass inplace=False to instead "
                         "return an updated array.")
    data, m, v = pnp.asarray(arr), pnp.asarray(mask), pnp.ravel(pnp.asarray(vals))
    size = int(np.prod(_shape(data)))
    if size != int(np.prod(_shape(m))):
        raise ValueError(f"place: arr and mask must be the same size; got shapes "
                         f"{_shape(data)} and {_shape(m)}")
    if _shape(v)[0] == 0:
        raise ValueError("place: cannot place values from an empty array")
    if size == 0:
        return data
    (idx,) = pnp.nonzero(pnp.ravel(m), size=size, fill_value=size)
    return pnp.ravel(data).at[idx].set(_tile_to(v, size), mode="drop").reshape(_shape(data))


def put(a: Any, ind: Any, v: Any, mode: str | None = None, *, inplace: bool = True) -> Any:
    """a with the flat positions ind set to v (repeated). Out-of-range indices are
    dropped by default; mode='clip' or 'wrap' bring them in (mode='raise' is not
    supported, as in JAX)."""
    if inplace:
        raise ValueError("plugax.numpy.put cannot modify arrays in-place, because plugax "
                         "arrays are immutable (as JAX's). Pass inplace=False to instead "
                         "return an updated array.")
    arr, idx, vals = pnp.asarray(a), pnp.ravel(pnp.asarray(ind)), pnp.ravel(pnp.asarray(v))
    size = int(np.prod(_shape(arr)))
    if not size or not _shape(idx)[0] or not _shape(vals)[0]:
        return arr
    vals = _tile_to(vals, _shape(idx)[0])
    if mode is None:
        idx = pnp.where(idx < 0, idx + size, idx)
        idx = pnp.where((idx < 0) | (idx >= size), size, idx)
    elif mode == "clip":
        idx = pnp.clip(idx, 0, size - 1)
    elif mode == "wrap":
        idx = pnp.remainder(idx, size)
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to plugax.numpy.put is not supported "
                                  "(as in JAX)")
    else:
        raise ValueError(f"mode should be one of 'wrap' or 'clip'; got mode={mode!r}")
    return pnp.ravel(arr).at[idx].set(vals, mode="drop").reshape(_shape(arr))


def insert(arr: Any, obj: Any, values: Any, axis: int | None = None) -> Any:
    """arr with values inserted before the indices obj along axis (static obj length)."""
    a = pnp.ravel(arr) if axis is None else pnp.asarray(arr)
    axis = 0 if axis is None else _axis(axis, len(_shape(a)), "insert")
    n_in = _shape(a)[axis]
    if isinstance(obj, slice):
        idx = pnp.arange(*obj.indices(n_in))
    else:
        idx = pnp.asarray(obj)
    if len(_shape(idx)) > 1:
        raise ValueError(f"insert: obj must be a slice, a one-dimensional array, or a scalar; "
                         f"got {obj}")
    if get_aval(idx).dtype.kind not in "iu":
        if int(np.prod(_shape(idx))) == 0:
            idx = idx.astype(np.int32)
        else:
            raise ValueError(f"insert: index array must be integer typed; got {obj}")
    vals = pnp.array(values, dtype=get_aval(a).dtype, ndmin=len(_shape(a)), copy=False)
    if int(np.prod(_shape(idx))) == 1:
        scalar = len(_shape(idx)) == 0
        first = pnp.ravel(idx)[0]
        if scalar:
            vals = pnp.moveaxis(vals, 0, axis)
        idx = pnp.full((_shape(vals)[axis],), first)
    n_ins = np.broadcast_shapes(_shape(idx), (_shape(vals)[axis],))[0]
    out_shape = list(_shape(a))
    out_shape[axis] += n_ins
    idx = pnp.clip(pnp.where(idx < 0, idx + n_in, idx), 0, n_in)
    idx = pnp.broadcast_to(idx, (n_ins,))
    # where each inserted value lands: its index plus the number inserted before it
    order = pnp.argsort(idx, stable=True)
    val_pos = idx.at[order].add(pnp.arange(n_ins, dtype=get_aval(idx).dtype))
    keep = pnp.ones((n_in + n_ins,), bool).at[val_pos].set(False)
    (arr_pos,) = pnp.nonzero(keep, size=n_in)
    out = pnp.zeros(tuple(out_shape), get_aval(a).dtype)
    lead = (slice(None),) * axis
    vals = pnp.broadcast_to(vals, tuple(out_shape[:axis]) + (n_ins,) + tuple(out_shape[axis + 1:]))
    out = out.at[lead + (val_pos,)].set(vals)
    return out.at[lead + (arr_pos,)].set(a)


def delete(arr: Any, obj: Any, axis: int | None = None, *,
           assume_unique_indices: bool = False) -> Any:
    """arr without the entries obj along axis. An integer, a slice, or a concrete index
    or boolean array; with assume_unique_indices=True a traced index array works too."""
    a = pnp.ravel(arr) if axis is None else pnp.asarray(arr)
    axis = 0 if axis is None else _axis(axis, len(_shape(a)), "delete")
    n = _shape(a)[axis]
    lead = (slice(None),) * axis
    if isinstance(obj, (int, np.integer)):
        i = _axis(int(obj), n, "delete")
        return pnp.concatenate([a[lead + (slice(0, i),)], a[lead + (slice(i + 1, None),)]],
                               axis=axis)
    if isinstance(obj, slice):
        obj, assume_unique_indices = np.arange(n)[obj], True
    if assume_unique_indices and get_aval(pnp.asarray(obj)).dtype.kind in "iu":
        drop = pnp.ravel(pnp.asarray(obj))
        drop = pnp.sort(pnp.clip(pnp.where(drop < 0, drop + n, drop), 0, n))
        m = _shape(drop)[0]
        drop = drop - pnp.arange(m, dtype=get_aval(drop).dtype)
        i = pnp.arange(n - m, dtype=get_aval(drop).dtype)
        i = i + pnp.sum(i[None, :] >= drop[:, None], axis=0, dtype=get_aval(i).dtype)
        return a[lead + (i,)]
    try:
        o = np.asarray(obj)
    except Exception as e:
        raise TypeError("delete: a traced `obj` array needs assume_unique_indices=True "
                        "(the output length must be known when tracing)") from e
    if o.dtype.kind in "iu":
        mask = np.ones(n, bool)
        mask[o] = False
    elif o.dtype == np.bool_:
        if o.shape != (n,):
            raise ValueError("delete: for boolean indices, obj must be one-dimensional with "
                             "length matching the axis")
        mask = ~o
    else:
        raise ValueError(f"delete: got obj.dtype={o.dtype}; must be integer or bool")
    return pnp.take(a, pnp.asarray(np.nonzero(mask)[0].astype(np.int32)), axis=axis)


def resize(a: Any, new_shape: Any) -> Any:
    """a's elements repeated (cyclically) to fill new_shape."""
    new_shape = (new_shape,) if isinstance(new_shape, (int, np.integer)) else tuple(new_shape)
    if any(d < 0 for d in new_shape):
        raise ValueError("resize: all elements of `new_shape` must be non-negative")
    flat = pnp.ravel(a)
    size = int(np.prod(new_shape))
    if _shape(flat)[0] == 0 or size == 0:
        return pnp.zeros(new_shape, get_aval(flat).dtype)
    return pnp.reshape(_tile_to(flat, size), new_shape)


def trim_zeros(filt: Any, trim: str = "fb", axis: Any = None) -> Any:
    """filt without its leading ('f') and/or trailing ('b') zeros. The output shape
    depends on the values, so filt must be concrete (not traced), as in JAX."""
    try:
        c = np.asarray(filt)
    except Exception as e:
        raise TypeError("trim_zeros needs a concrete array: its output shape depends on the "
                        "values, which a traced array does not have") from e
    axes = range(c.ndim) if axis is None else [
        a % c.ndim for a in (axis if isinstance(axis, (list, tuple)) else [axis])]
    index = [slice(None)] * c.ndim
    for ax in axes:
        mask = c.any(axis=tuple(i for i in range(c.ndim) if i != ax)) if c.ndim > 1 else c != 0
        nz = np.nonzero(mask)[0]
        if nz.size == 0:
            index[ax] = slice(0, 0)
            continue
        index[ax] = slice(int(nz[0]) if "f" in trim.lower() else None,
                          int(nz[-1]) + 1 if "b" in trim.lower() else None)
    return pnp.asarray(filt)[tuple(index)]


NUMPY: dict[str, Any] = {name: globals()[name] for name in __all__ if name != "NUMPY"}
