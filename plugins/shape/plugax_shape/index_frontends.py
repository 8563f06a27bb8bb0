"""Front ends over the indexing primitives: lax's *_in_dim slices, put_along_axis,
and the segment reductions of `jax.ops` (`plugax.ops`).

All are compositions, so they inherit the primitives' jvp, transpose, vmap and
lowering rules.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from plugax.extend import get_aval

from .slicing import lax_dynamic_slice, lax_dynamic_update_slice


def _starts(operand: Any, index: Any, axis: int) -> list:
    nd = get_aval(operand).ndim
    return [index if d == axis % nd else 0 for d in range(nd)]


def dynamic_slice_in_dim(operand: Any, start_index: Any, slice_size: int = 1,
                         axis: int = 0) -> Any:
    """lax.dynamic_slice_in_dim: `slice_size` elements from `start_index` along `axis`."""
    shape = list(get_aval(operand).shape)
    shape[axis] = int(slice_size)
    return lax_dynamic_slice(operand, _starts(operand, start_index, axis), shape)


def dynamic_index_in_dim(operand: Any, index: Any, axis: int = 0, keepdims: bool = True) -> Any:
    """lax.dynamic_index_in_dim: element `index` along `axis` (the axis kept if keepdims)."""
    from plugax.extend import reshape
    out = dynamic_slice_in_dim(operand, index, 1, axis)
    if keepdims:
        return out
    shape = list(get_aval(out).shape)
    del shape[axis % len(shape)]
    return reshape(out, tuple(shape))


def dynamic_update_slice_in_dim(operand: Any, update: Any, start_index: Any, axis: int) -> Any:
    """lax.dynamic_update_slice_in_dim: write `update` from `start_index` along `axis`."""
    return lax_dynamic_update_slice(operand, update, _starts(operand, start_index, axis))


def dynamic_update_index_in_dim(operand: Any, update: Any, index: Any, axis: int) -> Any:
    """lax.dynamic_update_index_in_dim: write `update` (with or without the axis) at `index`."""
    from plugax.extend import reshape
    up, op = get_aval(update), get_aval(operand)
    if up.ndim == op.ndim - 1:
        shape = list(up.shape)
        shape.insert(axis % op.ndim, 1)
        update = reshape(update, tuple(shape))
    return dynamic_update_slice_in_dim(operand, update, index, axis)


def put_along_axis(arr: Any, indices: Any, values: Any, axis: int | None,
                   inplace: bool = True, *, mode: Any = None) -> Any:
    """jnp.put_along_axis: arr with `values` written at `indices` along `axis` (JAX needs
    inplace=False: arrays are immutable)."""
    import plugax.numpy as pnp
    if inplace:
        raise ValueError("jax.numpy.put_along_axis cannot modify arrays in-place; pass "
                         "inplace=False and use the return value")
    if axis is None:
        return put_along_axis(pnp.ravel(arr), pnp.ravel(indices), pnp.ravel(values), 0,
                              inplace=False, mode=mode).reshape(get_aval(arr).shape)
    arr = pnp.asarray(arr)
    nd = get_aval(arr).ndim
    axis = axis % nd
    ishape = get_aval(indices).shape
    if len(ishape) != nd:
        raise ValueError(f"put_along_axis: indices of rank {len(ishape)} for an array of rank "
                         f"{nd}; they must have the same rank")
    index = []
    for d in range(nd):
        if d == axis:
            index.append(indices)
        else:
            shape = [1] * nd
            shape[d] = ishape[d]
            index.append(np.arange(ishape[d]).reshape(shape))
    return arr.at[tuple(index)].set(values, mode=mode)


def _segment(op: str, identity: Any):
    def segment(data: Any, segment_ids: Any, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode: Any = None) -> Any:
        import plugax.numpy as pnp
        data = pnp.asarray(data)
        if num_segments is None:
            from plugax.extend import Tracer
            if isinstance(segment_ids, Tracer):
                raise ValueError(f"segment_{op}: num_segments must be given when segment_ids "
                                 f"is traced (the output shape depends on it)")
            num_segments = int(np.max(np.asarray(segment_ids))) + 1 if np.size(
                segment_ids) else 0
        aval = get_aval(data)
        init = identity(aval.dtype)
        out = pnp.full((int(num_segments),) + aval.shape[1:], init, aval.dtype)
        ref = out.at[segment_ids]
        kw = dict(indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                  mode=mode)
        return {"sum": ref.add, "prod": ref.multiply, "max": ref.max, "min": ref.min}[op](
            data, **kw)
    segment.__name__ = f"segment_{op}"
    segment.__doc__ = (f"jax.ops.segment_{op}: combine the rows of `data` with equal "
                       f"segment_ids (out-of-range ids are dropped; empty segments hold the "
                       f"{op} identity).")
    return segment


def _extreme(low: bool):
    def value(dtype: Any) -> Any:
        dtype = np.dtype(dtype)
        if dtype.kind == "b":
            return not low
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            return info.max if low else info.min
        return np.inf if low else -np.inf
    return value


segment_sum = _segment("sum", lambda dtype: 0)
segment_prod = _segment("prod", lambda dtype: 1)
segment_max = _segment("max", _extreme(low=False))
segment_min = _segment("min", _extreme(low=True))

LAX = {f.__name__: f for f in (dynamic_slice_in_dim, dynamic_index_in_dim,
                               dynamic_update_slice_in_dim, dynamic_update_index_in_dim)}
NUMPY = {f.__name__: f for f in (put_along_axis,)}
OPS = {f.__name__: f for f in (segment_sum, segment_prod, segment_max, segment_min)}
