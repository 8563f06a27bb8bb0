"""iota, and take-like gathers: `gather(x, idx, axis, batch_dims)` / `scatter_add`.

The primitives are the general ones of gather_scatter.py / scatter.py (JAX's
dimension numbers); the take-like helpers here build their layout for the common
case "elements along one `axis`, the first `batch_dims` axes shared" (numpy.take,
take_along_axis, the batched dynamic slices), with indices clamped into range.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from plugax.extend import (Array, Primitive, RuleSet, ShapedArray, ShapeError, Zero, bind,
                           broadcast_in_dim, canonicalize_dtype, checked_impl, get_aval,
                           shape_error)

from . import gather_scatter, scatter
from ._common import lowering_of
from .gather_scatter import (GatherDimensionNumbers, GatherScatterMode, ScatterDimensionNumbers,
                             gather_p, scatter_add_p)

iota_p = Primitive("iota")


# --- iota ------------------------------------------------------------------------------
def _iota_abstract_eval(ctx, *, dtype, shape, dimension):
    if not 0 <= dimension < len(shape) or any(s < 0 for s in shape):
        raise shape_error(iota_p, [], "needs 0 <= dimension < len(shape) and sizes >= 0",
                          "fix shape or dimension", dtype=dtype, shape=shape,
                          dimension=dimension)
    return ShapedArray(shape, dtype, False)


def _iota_impl(*, dtype, shape, dimension):
    along = np.arange(shape[dimension], dtype=dtype)
    return np.broadcast_to(np.expand_dims(along, [i for i in range(len(shape))
                                                  if i != dimension]), shape)


def iota(dtype: Any, size: int) -> Any:
    """lax.iota: 0, 1, ..., size-1."""
    return broadcasted_iota(dtype, (size,), 0)


def broadcasted_iota(dtype: Any, shape: tuple, dimension: int) -> Any:
    """lax.broadcasted_iota: the index along `dimension` at each position of `shape`."""
    try:
        shape, dimension = tuple(operator.index(s) for s in shape), operator.index(dimension)
    except TypeError:   # int(2.5) would silently make a shorter iota
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, "
                        f"got {tuple(shape)!r} (dimension {dimension!r}).") from None
    return bind(iota_p, dtype=canonicalize_dtype(dtype), shape=shape, dimension=dimension)


# --- take-like gathers over the general primitives ---------------------------------------------
def _take_dnums(operand_ndim: int, indices_ndim: int, axis: int,
                batch_dims: int) -> GatherDimensionNumbers:
    """The general layout of "take along `axis`, the first `batch_dims` axes shared":
    out = batch + pre + index + post (the gather's batch axes are batch + index)."""
    m, k = batch_dims, indices_ndim - batch_dims
    pre, post = axis - m, operand_ndim - axis - 1
    offset = tuple(range(m, m + pre)) + tuple(range(m + pre + k, m + pre + k + post))
    return GatherDimensionNumbers(offset, (axis,), (axis,), tuple(range(m)), tuple(range(m)))


def _check_take(name: str, operand: Any, indices: Any, axis: int, batch_dims: int) -> None:
    x, i = get_aval(operand), get_aval(indices)
    if not batch_dims <= axis < x.ndim or i.ndim < batch_dims or \
            i.shape[:batch_dims] != x.shape[:batch_dims]:
        raise ShapeError(f"{name}: needs batch_dims <= axis < operand.ndim and the leading "
                         f"batch_dims axes of operand and indices to agree; got operand "
                         f"{x.str_short()}, indices {i.str_short()}, axis={axis}, "
                         f"batch_dims={batch_dims}. Fix: move shared axes to the front of both")
    if x.shape[axis] == 0 and i.size:
        raise ShapeError(f"{name}: cannot index axis {axis} of size 0 of {x.str_short()}. "
                         f"Fix: index a non-empty axis")


def take_params(operand_shape: tuple, indices_ndim: int, axis: int, batch_dims: int = 0,
                scatter: bool = False) -> dict:
    """The gather (or scatter-add) params of a take along `axis` with `batch_dims` shared
    leading axes, for indices of rank `indices_ndim` before their index-vector axis."""
    dn = _take_dnums(len(operand_shape), indices_ndim, axis, batch_dims)
    params = dict(indices_are_sorted=False, unique_indices=False, mode=GatherScatterMode.CLIP)
    if scatter:
        return dict(params, dimension_numbers=ScatterDimensionNumbers(*dn))
    sizes = tuple(min(1, n) if d < batch_dims or d == axis else n
                  for d, n in enumerate(operand_shape))
    return dict(params, dimension_numbers=dn, slice_sizes=sizes, fill_value=None)


def gather(operand: Any, indices: Any, axis: int, batch_dims: int = 0) -> Any:
    """Take `operand` elements along `axis` at `indices` (clamped), the first `batch_dims`
    axes of both shared: numpy.take / take_along_axis as one general gather."""
    axis, batch_dims = int(axis), int(batch_dims)
    _check_take("gather", operand, indices, axis, batch_dims)
    x, i = get_aval(operand), get_aval(indices)
    if x.shape[axis] == 0:     # then there are no indices (_check_take): nothing to read
        out = x.shape[:axis] + i.shape[batch_dims:] + x.shape[axis + 1:]
        return broadcast_in_dim(Array(np.zeros((), x.dtype), x.weak_type), out, ())
    params = take_params(x.shape, i.ndim, axis, batch_dims)
    return bind(gather_p, operand, _index_vector(indices), **params)


def scatter_add(operand: Any, indices: Any, updates: Any, axis: int,
                batch_dims: int = 0) -> Any:
    """Add `updates` (shaped like `gather(operand, indices, axis, batch_dims)`) into
    `operand` at `indices` (clamped) along `axis`; repeated indices accumulate."""
    axis, batch_dims = int(axis), int(batch_dims)
    _check_take("scatter_add", operand, indices, axis, batch_dims)
    if get_aval(operand).shape[axis] == 0:
        return operand
    params = take_params(get_aval(operand).shape, get_aval(indices).ndim, axis, batch_dims,
                         scatter=True)
    return bind(scatter_add_p, operand, _index_vector(indices), updates, **params)


def _index_vector(indices: Any) -> Any:
    """`indices` with a trailing index-vector axis of size 1."""
    aval = get_aval(indices)
    return broadcast_in_dim(indices, aval.shape + (1,), tuple(range(aval.ndim)))


def lax_gather(operand: Any, start_indices: Any, dimension_numbers: Any, slice_sizes: Any = None,
               **kwargs: Any) -> Any:
    """lax.gather with JAX's signature. (The older plugax form `gather(x, idx, axis,
    batch_dims=0)`, a take along `axis`, is still accepted when `dimension_numbers` is an
    integer axis.)"""
    if isinstance(dimension_numbers, (int, np.integer)):
        return gather(operand, start_indices, dimension_numbers,
                      0 if slice_sizes is None else slice_sizes)
    return gather_scatter.gather(operand, start_indices, dimension_numbers, slice_sizes,
                                 **kwargs)


def lax_scatter_add(operand: Any, scatter_indices: Any, updates: Any, dimension_numbers: Any,
                    *args: Any, **kwargs: Any) -> Any:
    """lax.scatter_add with JAX's signature (an integer `dimension_numbers` is plugax's
    older take-like form, see `lax_gather`)."""
    if isinstance(dimension_numbers, (int, np.integer)):
        return scatter_add(operand, scatter_indices, updates, dimension_numbers, *args)
    return scatter.scatter_add(operand, scatter_indices, updates, dimension_numbers, **kwargs)


def _no_tangent(ctx, primals, tangents, **params):
    out = iota_p.bind(**params)
    return out, Zero.from_value(out)


RULES = [
    # iota has no operands, so no transformation ever reaches a jvp or vmap rule of it;
    # the jvp rule only documents that its output has no tangent.
    RuleSet(primitive=iota_p, impl=checked_impl(_iota_impl, _iota_abstract_eval),
            abstract_eval=_iota_abstract_eval, jvp=_no_tangent, lowering=lowering_of(iota_p)),
]

LAX = {"iota": iota, "broadcasted_iota": broadcasted_iota, "gather": lax_gather,
       "scatter_add": lax_scatter_add}
