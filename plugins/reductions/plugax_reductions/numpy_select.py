"""NumPy's selection and editing functions whose result positions depend on values:
compress, extract, place, insert, delete, mask_indices (JAX's semantics: a static
`size=` where the output length depends on the data; immutable arrays, so `place`
requires inplace=False).

They need `nonzero` (this family's) to find positions, so they live here rather than
in the shape family (a family calls only the families below it: elementwise, shape).
All are compositions of plugax.numpy functions: every transformation applies.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import plugax.numpy as pnp
from plugax.extend import canonicalize_axis as _axis, get_aval

__all__ = ["compress", "extract", "place", "insert", "delete", "mask_indices", "NUMPY"]


def _shape(x: Any) -> tuple:
    return get_aval(x).shape


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
    # where each inserted value lands: its index plus its rank among the insertions
    # (ties in the order given, as a stable sort would give; n_ins is small and static)
    k = pnp.arange(n_ins)
    before = (idx[None, :] < idx[:, None]) | ((idx[None, :] == idx[:, None]) &
                                              (k[None, :] < k[:, None]))
    val_pos = idx + pnp.sum(before, axis=1, dtype=get_aval(idx).dtype)
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
        drop = pnp.where(drop < 0, drop + n, drop)
        m = _shape(drop)[0]
        keep = pnp.ones((n,), bool).at[drop].set(False, mode="drop")
        (i,) = pnp.nonzero(keep, size=n - m, fill_value=n - 1)
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


def mask_indices(n: int, mask_func: Callable, k: int = 0, *, size: int | None = None) -> tuple:
    """Indices where mask_func(ones((n, n)), k) is non-zero (`size=` fixes their count,
    so that it works under jit where mask_func is traced)."""
    return pnp.nonzero(mask_func(pnp.ones((n, n)), k), size=size)


NUMPY: dict[str, Any] = {name: globals()[name] for name in __all__ if name != "NUMPY"}
