"""Primitives that rearrange the whole operand: squeeze, rev (and expand_dims, a front
end over broadcast_in_dim).

broadcast_in_dim, reshape and transpose are the kernel's (`plugax.structural`):
the transformations themselves need them, so every family, this one included,
uses them through `plugax.extend`.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

# broadcast_in_dim, reshape and transpose are re-exported: numpy_api and slicing use them
# from here, as when this module defined them
from plugax.extend import (Primitive, ShapedArray, axes_removing_batching, bind,  # noqa: F401
                           broadcast_in_dim, get_aval, reshape, shape_error, transpose,
                           unary_transpose)

from ._common import canonical_axes, defshape

squeeze_p = Primitive("squeeze")
rev_p = Primitive("rev")


# --- squeeze ---------------------------------------------------------------------------
def _squeeze_shape(aval: ShapedArray, *, dimensions) -> tuple:
    if any(not 0 <= d < aval.ndim or aval.shape[d] != 1 for d in dimensions):
        raise shape_error(squeeze_p, [aval], "can only remove axes of size 1",
                          "pass only axes whose size is 1", dimensions=dimensions)
    return tuple(s for i, s in enumerate(aval.shape) if i not in dimensions)


@unary_transpose
def _squeeze_transpose(ct, aval, *, dimensions):
    return reshape(ct, aval.shape)


def squeeze(array: Any, dimensions: Sequence[int]) -> Any:
    """lax.squeeze: remove the given size-1 axes (negative axes count from the end)."""
    ndim = get_aval(array).ndim
    return bind(squeeze_p, array, dimensions=tuple(sorted(canonical_axes(dimensions, ndim))))


# --- rev -------------------------------------------------------------------------------
def _rev_shape(aval: ShapedArray, *, dimensions) -> tuple:
    if any(not 0 <= d < aval.ndim for d in dimensions) or len(set(dimensions)) != len(dimensions):
        raise shape_error(rev_p, [aval], "needs distinct axes of the operand",
                          "pass axes in range(operand.ndim)", dimensions=dimensions)
    return aval.shape


@unary_transpose
def _rev_transpose(ct, aval, *, dimensions):
    return rev(ct, dimensions)


def _rev_vmap(ctx, args, dims, *, dimensions):
    d = dims[0]
    return rev(args[0], tuple(a + (a >= d) for a in dimensions)), d


def rev(operand: Any, dimensions: Sequence[int]) -> Any:
    """lax.rev: reverse the order of elements along `dimensions`."""
    return bind(rev_p, operand, dimensions=tuple(int(d) for d in dimensions))


def expand_dims(array: Any, dimensions: Sequence[int]) -> Any:
    """lax.expand_dims: a front end over broadcast_in_dim, as in JAX (no primitive)."""
    shape = list(get_aval(array).shape)
    ndim_out = len(shape) + len(tuple(dimensions))
    new = canonical_axes(dimensions, ndim_out, "dimension")
    kept = tuple(i for i in range(ndim_out) if i not in new)
    for i in sorted(new):
        shape.insert(i, 1)
    return broadcast_in_dim(array, shape, kept)


RULES = [
    defshape(squeeze_p, lambda x, *, dimensions: np.squeeze(x, axis=dimensions),
             _squeeze_shape, transpose=_squeeze_transpose, batching=axes_removing_batching(squeeze_p, "dimensions")),
    defshape(rev_p, lambda x, *, dimensions: np.flip(x, axis=dimensions), _rev_shape,
             transpose=_rev_transpose, batching=_rev_vmap),
]

LAX = {"squeeze": squeeze, "rev": rev, "expand_dims": expand_dims}
