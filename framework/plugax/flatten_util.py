"""`plugax.flatten_util.ravel_pytree`: a pytree of arrays as one flat vector, and back.

Why in the kernel: it needs only the kernel's structural primitives (reshape,
concatenate, split, convert_element_type), so it works under every
transformation with no primitive family loaded, as optimisers and samplers
(which keep their state as one vector) expect.

Semantics as JAX's: the vector's dtype promotes the leaves' dtypes (Python
scalars count with their default dtype, not weakly); when all leaves share a
dtype, `unravel` keeps whatever dtype it is given, otherwise it requires the
promoted dtype and converts each piece back to its leaf's dtype. No leaves give
an empty float32 vector.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .core.avals import get_aval
from .dtypes import promote_types
from .structural import concatenate, convert_element_type, reshape, split
from .tree_util import tree_flatten, tree_unflatten

__all__ = ["ravel_pytree"]


def ravel_pytree(pytree: Any) -> tuple[Any, Callable[[Any], Any]]:
    """(flat, unravel): the leaves of `pytree` raveled and concatenated into a 1-D array
    of their promoted dtype, and a function mapping such a vector back to a pytree of
    the same structure, shapes and dtypes."""
    leaves, treedef = tree_flatten(pytree)
    flat, unravel_list = _ravel_list(leaves)
    return flat, _Unravel(treedef, unravel_list)


class _Unravel:
    """The unravel function: a class, so that it is hashable and has a readable repr
    (JAX's is a HashablePartial, usable as a static argument)."""

    __slots__ = ("treedef", "unravel_list")

    def __init__(self, treedef: Any, unravel_list: Callable[[Any], list]):
        self.treedef, self.unravel_list = treedef, unravel_list

    def __call__(self, flat: Any) -> Any:
        return tree_unflatten(self.treedef, self.unravel_list(flat))

    def __repr__(self) -> str:
        return f"<unravel_pytree for {self.treedef}>"


def _ravel_list(leaves: Sequence[Any]) -> tuple[Any, Callable[[Any], list]]:
    if not leaves:
        return convert_element_type(np.zeros((0,), np.float32), np.float32), lambda _: []
    avals = [get_aval(x) for x in leaves]
    from_dtypes = tuple(a.dtype for a in avals)
    to_dtype = promote_types(*((d, False) for d in from_dtypes))[0]
    sizes = tuple(int(np.prod(a.shape, dtype=np.int64)) for a in avals)
    shapes = tuple(a.shape for a in avals)
    if all(d == to_dtype for d in from_dtypes):
        flat = concatenate([reshape(x, (n,)) for x, n in zip(leaves, sizes)], 0)
        return flat, _SingleDtype(sizes, shapes)
    flat = concatenate([reshape(convert_element_type(x, to_dtype), (n,))
                        for x, n in zip(leaves, sizes)], 0)
    return flat, _MixedDtypes(sizes, shapes, from_dtypes, to_dtype)


class _SingleDtype:
    """Unravel without conversions: any dtype is accepted (as JAX, so a vector of
    another dtype, such as a tangent of float0 or a float64 copy, unravels too)."""

    def __init__(self, sizes: tuple, shapes: tuple):
        self.sizes, self.shapes = sizes, shapes

    def __call__(self, flat: Any) -> list:
        _check_length(flat, self.sizes)
        return [reshape(c, s) for c, s in zip(split(flat, self.sizes, 0), self.shapes)]


class _MixedDtypes(_SingleDtype):
    def __init__(self, sizes: tuple, shapes: tuple, from_dtypes: tuple, to_dtype: np.dtype):
        super().__init__(sizes, shapes)
        self.from_dtypes, self.to_dtype = from_dtypes, to_dtype

    def __call__(self, flat: Any) -> list:
        dtype = get_aval(flat).dtype
        if dtype != self.to_dtype:
            raise TypeError(f"unravel function given array of dtype {dtype}, but expected "
                            f"dtype {self.to_dtype}")
        return [convert_element_type(c, d)
                for c, d in zip(super().__call__(flat), self.from_dtypes)]


def _check_length(flat: Any, sizes: tuple) -> None:
    shape = get_aval(flat).shape
    if shape != (sum(sizes),):
        raise ValueError(f"unravel function expected a 1-D array of shape ({sum(sizes)},) "
                         f"(the raveled pytree's size), got shape {shape}")
