"""NumPy's editing and array-API shape functions as JAX has them: concat,
permute_dims, matrix_transpose, unstack, rollaxis, copy, empty/empty_like, block,
put, resize, trim_zeros. (compress, extract, place, insert and delete need
`nonzero` and live in the reductions family: plugax_reductions/numpy_select.py.)

JAX's arrays are immutable, so `put` returns the result (inplace=False is
required, with JAX's error otherwise). All are compositions of this family's and
the elementwise family's plugax.numpy functions: every transformation applies.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

import plugax.numpy as pnp
from plugax.extend import canonicalize_axis as _axis, get_aval

__all__ = ["concat", "permute_dims", "matrix_transpose", "unstack", "rollaxis", "copy",
           "empty", "empty_like", "block", "put", "resize", "trim_zeros", "NUMPY"]


def _shape(x: Any) -> tuple:
    return get_aval(x).shape


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


def _tile_to(v: Any, n: int) -> Any:
    m = _shape(v)[0]
    return pnp.tile(v, -(-n // m))[:n] if m != n else v


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
