"""Gather and scatter layouts and modes: JAX's dimension numbers and GatherScatterMode.

Plain data, apart from the primitives: the lowering rules read them too, and
keeping them here lets lowering.py import them without importing the
primitives' module (which imports lowering.py for its rules).
"""
from __future__ import annotations

import enum
from typing import Any, NamedTuple, Sequence

import numpy as np

__all__ = ["GatherDimensionNumbers", "ScatterDimensionNumbers", "GatherScatterMode",
           "default_fill_value", "gather_dnums", "scatter_dnums"]


class GatherDimensionNumbers(NamedTuple):
    """JAX's gather layout. The index vector is the last axis of `indices`; the other
    index axes are the batch axes of the output, which fill the positions not in
    `offset_dims` in order; `offset_dims` hold the window axes (operand axes not
    collapsed and not batching), in operand order."""

    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


class ScatterDimensionNumbers(NamedTuple):
    """JAX's scatter layout: `update_window_dims` are the window axes of `updates`; the
    other update axes match the batch axes of `indices`."""

    update_window_dims: tuple[int, ...]
    inserted_window_dims: tuple[int, ...]
    scatter_dims_to_operand_dims: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    scatter_indices_batching_dims: tuple[int, ...] = ()


class GatherScatterMode(enum.Enum):
    """What an out-of-range window does (see the module docstring)."""

    CLIP = enum.auto()
    FILL_OR_DROP = enum.auto()
    PROMISE_IN_BOUNDS = enum.auto()

    @staticmethod
    def from_any(s: "str | GatherScatterMode | None") -> "GatherScatterMode":
        if isinstance(s, GatherScatterMode):
            return s
        if s == "clip":
            return GatherScatterMode.CLIP
        if s is None or s in ("fill", "drop"):
            return GatherScatterMode.FILL_OR_DROP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        raise ValueError(f'Unknown gather mode "{s}" (expected "clip", "fill", "drop", '
                         f'"promise_in_bounds" or None; "one_hot" is not supported)')


def default_fill_value(dtype: Any) -> Any:
    """JAX's fill for out-of-range gathers: NaN, the most negative signed integer, the
    largest unsigned one, True."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return True
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return int(info.min if dtype.kind == "i" else info.max)
    return float("nan")


def _tup(xs: Sequence[int]) -> tuple[int, ...]:
    return tuple(int(x) for x in xs)


def gather_dnums(dn: Any) -> GatherDimensionNumbers:
    return GatherDimensionNumbers(*(_tup(f) for f in dn))


def scatter_dnums(dn: Any) -> ScatterDimensionNumbers:
    return ScatterDimensionNumbers(*(_tup(f) for f in dn))


def _to_scatter_dnums(dn: GatherDimensionNumbers) -> ScatterDimensionNumbers:
    return ScatterDimensionNumbers(dn.offset_dims, dn.collapsed_slice_dims, dn.start_index_map,
                                   dn.operand_batching_dims, dn.start_indices_batching_dims)


def _to_gather_dnums(dn: ScatterDimensionNumbers) -> GatherDimensionNumbers:
    return GatherDimensionNumbers(dn.update_window_dims, dn.inserted_window_dims,
                                  dn.scatter_dims_to_operand_dims, dn.operand_batching_dims,
                                  dn.scatter_indices_batching_dims)


def _scatter_slice_sizes(operand_shape, updates_shape, dn: ScatterDimensionNumbers):
    """The gather slice sizes that read back what a scatter writes."""
    dropped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    window = iter(updates_shape[d] for d in dn.update_window_dims)
    return tuple(min(1, n) if d in dropped else next(window)
                 for d, n in enumerate(operand_shape))
