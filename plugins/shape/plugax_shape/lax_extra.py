"""JAX's lax helpers over the shape family's primitives: full/full_like/empty, broadcast
and its variants, collapse, slice_in_dim/index_in_dim/index_take, stack/unstack/tile,
dtype and scatter_sub (scatter_apply, which loops, is the control-flow family's).

Why compositions and not primitives: each is a fixed arrangement of broadcast_in_dim,
reshape, slice, concatenate, gather or scatter_add, whose rules (jvp, transpose, vmap,
lowering) already exist; JAX has primitives for a few of them (tile, scatter_sub) only
for the sake of its jaxprs' readability. The arguments, defaults and errors are JAX's.
"""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from plugax.extend import broadcast_in_dim, get_aval, reshape
from plugax.extend import broadcast_shapes as _broadcast_shapes

from . import numpy_api

__all__ = ["LAX"]


def _lax():
    import plugax.lax as lax
    return lax


def _check_scalar_fill(name: str, fill_value: Any) -> None:
    if np.shape(fill_value) != () and get_aval(fill_value).shape != ():
        raise TypeError(f"lax.{name} must be called with a scalar fill_value, got one of "
                        f"shape {get_aval(fill_value).shape}; use plugax.numpy.full, which "
                        f"broadcasts an array fill")


def _shape(shape: Any) -> tuple[int, ...]:
    """A shape from an int or a sequence of ints (JAX accepts both)."""
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        return (int(shape),)
    return tuple(operator.index(d) for d in shape)


def full(shape: Sequence[int], fill_value: Any, dtype: Any = None) -> Any:
    """`fill_value` (a scalar) broadcast to `shape`; weakly typed when no dtype is given
    and the fill is a Python scalar, as in JAX."""
    _check_scalar_fill("full", fill_value)
    return numpy_api.full(_shape(shape), fill_value, dtype)


def full_like(x: Any, fill_value: Any, dtype: Any = None, shape: Sequence[int] | None = None
              ) -> Any:
    """`full` with x's shape and dtype (and weak type, when no dtype is given)."""
    _check_scalar_fill("full_like", fill_value)
    return numpy_api.full_like(x, fill_value, dtype, None if shape is None else _shape(shape))


def empty(shape: Sequence[int], dtype: Any) -> Any:
    """An array of `shape` and `dtype` whose values do not matter: zeros, as in JAX."""
    return numpy_api.full(_shape(shape), 0, dtype)


def broadcast(operand: Any, sizes: Sequence[int]) -> Any:
    """`operand` with new leading axes of `sizes`."""
    aval = get_aval(operand)
    sizes = tuple(operator.index(s) for s in sizes)
    if not sizes:
        return operand
    return broadcast_in_dim(operand, sizes + aval.shape,
                            tuple(range(len(sizes), len(sizes) + aval.ndim)))


def broadcast_like(arr: Any, like_arr: Any) -> Any:
    """`arr` broadcast (NumPy's trailing-axes rule) to the shape of `like_arr`."""
    return numpy_api.broadcast_to(arr, get_aval(like_arr).shape)


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The NumPy broadcast of `shapes` (a ValueError when they are incompatible)."""
    try:
        return tuple(_broadcast_shapes([tuple(s) for s in shapes]))
    except Exception as error:
        raise ValueError(f"Incompatible shapes for broadcasting: shapes="
                         f"{[tuple(s) for s in shapes]}") from error


def broadcast_to_rank(x: Any, rank: int) -> Any:
    """`x` with leading size-1 axes added until it has `rank` axes."""
    ndim = get_aval(x).ndim
    if ndim >= rank:
        return x
    return broadcast(x, (1,) * (rank - ndim))


def collapse(operand: Any, start_dimension: int, stop_dimension: int | None = None) -> Any:
    """Axes [start_dimension, stop_dimension) merged into one (negative indices count from
    the end; stop None: to the last axis)."""
    shape = get_aval(operand).shape
    lo, hi, _ = slice(start_dimension, stop_dimension).indices(len(shape))
    if lo > hi:
        raise ValueError(f"lax.collapse needs start_dimension <= stop_dimension, got "
                         f"{start_dimension} and {stop_dimension} for an operand of shape "
                         f"{shape}")
    size = int(np.prod(shape[lo:hi], dtype=np.int64))
    return reshape(operand, shape[:lo] + (size,) + shape[hi:])


def slice_in_dim(operand: Any, start_index: int | None, limit_index: int | None,
                 stride: int = 1, axis: int = 0) -> Any:
    """`operand[start:limit:stride]` along `axis`: None means the whole axis, negative
    indices count from the end; indices beyond the axis are an error (lax.slice's), as
    in JAX."""
    shape = get_aval(operand).shape
    axis = operator.index(axis)
    if not -len(shape) <= axis < len(shape):
        raise ValueError(f"lax.slice_in_dim: axis {axis} is out of bounds for an operand of "
                         f"shape {shape}")
    axis %= len(shape)
    n = shape[axis]
    start = 0 if start_index is None else operator.index(start_index)
    limit = n if limit_index is None else operator.index(limit_index)
    start = start + n if start < 0 else start
    limit = limit + n if limit < 0 else limit
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, int(stride)
    return _lax().slice(operand, starts, limits, strides)


def index_in_dim(operand: Any, index: int, axis: int = 0, keepdims: bool = True) -> Any:
    """Element `index` (negative counts from the end) along `axis`, keeping that axis (size
    1) unless keepdims is False."""
    shape = get_aval(operand).shape
    axis = operator.index(axis) % max(len(shape), 1)
    n, index = shape[axis], operator.index(index)
    if not -n <= index < n:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size {n}")
    index %= n
    out = slice_in_dim(operand, index, index + 1, 1, axis)
    return _lax().squeeze(out, (axis,)) if not keepdims else out


def index_take(src: Any, idxs: Sequence[Any], axes: Sequence[int]) -> Any:
    """`src` indexed by the integer arrays `idxs` along `axes` (one per axis, broadcast
    together), the other axes kept: NumPy's advanced indexing at the front."""
    import plugax.numpy as jnp
    axes = tuple(operator.index(a) for a in axes)
    if len(idxs) != len(axes):
        raise TypeError(f"lax.index_take needs one index array per axis, got {len(idxs)} "
                        f"index arrays for axes {axes}")
    moved = jnp.moveaxis(src, axes, tuple(range(len(axes))))
    index = tuple(jnp.asarray(i) for i in idxs)
    return moved[index]


def stack(operands: Sequence[Any], axis: int = 0) -> Any:
    """The operands (of one shape) stacked along a new `axis`."""
    operands = list(operands)
    if not operands:
        raise ValueError("lax.stack needs at least one operand")
    ndim = get_aval(operands[0]).ndim
    axis = operator.index(axis)
    if not -(ndim + 1) <= axis <= ndim:
        raise ValueError(f"lax.stack: axis {axis} is out of bounds for operands of rank {ndim}")
    axis %= ndim + 1
    lax = _lax()
    return lax.concatenate([lax.expand_dims(x, (axis,)) for x in operands], axis)


def unstack(x: Any, axis: int = 0) -> tuple:
    """The slices of `x` along `axis`, as a tuple."""
    shape = get_aval(x).shape
    if not shape:
        raise ValueError("lax.unstack requires an array of rank at least 1, got a scalar")
    axis = operator.index(axis) % len(shape)
    return tuple(index_in_dim(x, i, axis, keepdims=False) for i in range(shape[axis]))


def tile(operand: Any, reps: Sequence[int]) -> Any:
    """`operand` repeated `reps[i]` times along axis i (one rep per axis, as JAX asks)."""
    shape = get_aval(operand).shape
    reps = tuple(operator.index(r) for r in reps)
    if len(reps) != len(shape):
        raise TypeError(f"reps length must be equal to the ndim of x, got len(reps)="
                        f"{len(reps)} and x.ndim={len(shape)}.")
    # broadcast to (r0, n0, r1, n1, ...) then merge each pair
    wide = tuple(v for r, n in zip(reps, shape) for v in (r, n))
    out = broadcast_in_dim(operand, wide, tuple(range(1, 2 * len(shape), 2)))
    return reshape(out, tuple(r * n for r, n in zip(reps, shape)))


def dtype(x: Any) -> np.dtype:
    """The dtype of a value, not canonicalised (JAX's lax.dtype: a Python float is float64,
    an int int64 whatever x64 says)."""
    if isinstance(x, (list, tuple)):
        raise TypeError(f"lax.dtype: cannot determine the dtype of a {type(x).__name__}; "
                        f"pass an array or a scalar")
    if isinstance(x, type) and issubclass(x, (bool, int, float, complex)):
        return np.dtype({bool: np.bool_, int: np.int64, float: np.float64,
                         complex: np.complex128}[x])
    if isinstance(x, (bool, int, float, complex)):
        return np.dtype(np.bool_ if isinstance(x, bool) else np.int64 if isinstance(x, int)
                        else np.float64 if isinstance(x, float) else np.complex128)
    if hasattr(x, "dtype") and not isinstance(x, type):
        return np.dtype(x.dtype)
    try:
        return np.dtype(x)
    except TypeError:
        return np.asarray(x).dtype


def scatter_sub(operand: Any, scatter_indices: Any, updates: Any, dimension_numbers: Any,
                *, indices_are_sorted: bool = False, unique_indices: bool = False,
                mode: Any = None) -> Any:
    """operand with `updates` subtracted at the scattered positions (repeated indices
    accumulate): scatter_add of the negated updates."""
    lax = _lax()
    return lax.scatter_add(operand, scatter_indices, lax.neg(updates), dimension_numbers,
                           indices_are_sorted=indices_are_sorted,
                           unique_indices=unique_indices, mode=mode)


LAX: dict[str, Any] = {f.__name__: f for f in (
    full, full_like, empty, broadcast, broadcast_like, broadcast_shapes, broadcast_to_rank,
    collapse, slice_in_dim, index_in_dim, index_take, stack, unstack, tile, dtype,
    scatter_sub)}
