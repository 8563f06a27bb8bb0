"""nonzero, flatnonzero and argwhere: positions of the nonzero elements.

In this family because a traced `nonzero` (with JAX's static `size=`) counts
with a cumulative sum, then writes each position into its slot with an indexed
update (the shape family, which this one requires). A concrete array needs no
size: its result shape is read off its values, as in NumPy.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import plugax.numpy as pnp
from plugax.extend import ConcretizationTypeError, Tracer, default_int_dtype, get_aval

__all__ = ["nonzero", "flatnonzero", "argwhere", "NUMPY"]


def nonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> tuple:
    """jnp.nonzero: the indices of the nonzero elements, one array per axis. Concrete `a`
    works as in NumPy; a traced one needs a static `size` (the first `size` positions,
    padded with `fill_value`, default 0), as in JAX."""
    itype = np.dtype(default_int_dtype())     # int32, int64 with x64 (as JAX)
    if not isinstance(a, Tracer):
        found = np.nonzero(np.asarray(a))
        if size is None:
            return tuple(pnp.asarray(f.astype(itype)) for f in found)
        fills = _fills(fill_value, len(found))
        return tuple(pnp.asarray(np.concatenate([f[:size], np.full(max(size - f.size, 0), v)])
                                 .astype(itype)) for f, v in zip(found, fills))
    if size is None:
        raise ConcretizationTypeError(
            "The size argument of jnp.nonzero must be statically specified to use jnp.nonzero "
            "within JAX transformations (the number of nonzero elements depends on the "
            f"values of {a.aval.str_short()}).")
    shape = get_aval(a).shape
    mask = pnp.ravel(a) != 0
    n = mask.shape[0]
    slot = pnp.where(mask, pnp.cumsum(mask.astype(itype)) - 1, size)   # size: dropped
    flat = pnp.full((size,), -1, itype).at[slot].set(pnp.arange(n, dtype=itype), mode="drop")
    out, rest = [], flat
    for d in reversed(shape):     # unravel, last axis first
        out.append(pnp.remainder(rest, max(d, 1)))
        rest = pnp.floor_divide(rest, max(d, 1))
    fills = _fills(fill_value, len(shape))
    return tuple(pnp.where(flat < 0, itype.type(v), o) for o, v in zip(reversed(out), fills))


def _fills(fill_value: Any, ndim: int) -> tuple:
    if fill_value is None:
        return (0,) * ndim
    values = tuple(np.ravel(np.asarray(fill_value)).tolist())
    return values * ndim if len(values) == 1 else values


def flatnonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """jnp.flatnonzero: nonzero(ravel(a)) (size / fill_value as in `nonzero`)."""
    return nonzero(pnp.ravel(a), size=size, fill_value=fill_value)[0]


def argwhere(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """jnp.argwhere: the nonzero positions as rows of shape (count, ndim)."""
    a = pnp.asarray(a)
    if get_aval(a).ndim == 0:
        a = pnp.reshape(a, (1,))
        return pnp.zeros((int(nonzero(a, size=size)[0].shape[0]), 0), default_int_dtype())
    return pnp.stack(nonzero(a, size=size, fill_value=fill_value), axis=1)


NUMPY = {f.__name__: f for f in (nonzero, flatnonzero, argwhere)}
