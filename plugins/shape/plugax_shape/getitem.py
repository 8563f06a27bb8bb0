"""NumPy-style indexing (`x[...]`) and `x.at[...]` updates, as a plan of linear steps.

`x[index]` becomes, like in JAX: `rev` for negative steps, one `slice`, a
`squeeze` for integer indices, a `gather` for the (single) integer-array index,
a `transpose` when NumPy moves the advanced-index axes to the front, and a
`broadcast_in_dim` for `None`. Every step is linear in `x`, so
`x.at[index].add(v)` is `x + plan^T(v)`: the steps' own transpose rules run
backwards, and nothing about indexing is written twice.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from plugax.extend import (Array, Primitive, RuleContext, Tracer, UndefPrimal, broadcast_in_dim_p,
                           get_aval, rule_kinds, transpose_p)

from . import indexing, slicing, structural
from ._common import normalized_indices
from .numpy_api import (_convert, asarray, broadcast_to, default_fill_value,
                        extend_axis, full_like, redirect_out_of_bounds, zeros_like)

_TRANSPOSE_CTX = RuleContext("transpose")


class Step(NamedTuple):
    prim: Primitive
    extras: tuple     # operands after x (gather indices)
    params: dict


def _is_int(i: Any) -> bool:
    if isinstance(i, (bool, np.bool_)):
        return False
    if isinstance(i, (int, np.integer)):
        return True
    return (isinstance(i, (np.ndarray, Array)) and np.ndim(i) == 0
            and np.asarray(i).dtype.kind in "iu")


def _as_array_index(i: Any) -> Any:
    """Lists and concrete boolean masks become integer arrays (NumPy semantics)."""
    if isinstance(i, Tracer):
        if i.aval.dtype.kind not in "iu":
            raise TypeError(f"a traced index must be an integer array, got {i.aval.str_short()} "
                            f"(boolean masks need concrete values: their size depends on them)")
        return i
    value = np.asarray(i)
    if value.dtype == np.bool_:
        if value.ndim != 1:
            raise NotImplementedError("plugax supports only 1-D boolean masks as indices")
        return np.flatnonzero(value)
    if value.dtype.kind not in "iu":
        raise IndexError(f"arrays used as indices must be of integer (or boolean) type, "
                         f"got {value.dtype}")
    return value


def _expand(index: Any, ndim: int) -> list:
    index = list(index) if isinstance(index, tuple) else [index]
    index = [_as_array_index(i) if isinstance(i, (list, np.ndarray, Array, Tracer))
             and not _is_int(i) else i for i in index]
    consumed = sum(i is not None and i is not Ellipsis for i in index)
    if sum(i is Ellipsis for i in index) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > ndim:
        raise IndexError(f"too many indices: array is {ndim}-dimensional, but {consumed} "
                         f"were indexed")
    fill = [slice(None)] * (ndim - consumed)
    if any(i is Ellipsis for i in index):
        at = next(k for k, i in enumerate(index) if i is Ellipsis)
        return index[:at] + fill + index[at + 1:]
    return index + fill


def plan(shape: tuple, index: Any) -> list[Step]:
    """The linear steps that compute `x[index]` for `x` of this shape."""
    entries = _expand(index, len(shape))
    starts, limits, strides, reversed_, squeezed = [], [], [], [], []
    tokens, advanced, array = [], [], None          # output-axis layout, see module doc
    axis = 0
    for pos, entry in enumerate(entries):
        if entry is None:
            tokens.append("new")
            continue
        n = shape[axis]
        if _is_int(entry):
            i = _clamped_int(entry, n, axis)
            start, limit, stride = i, i + 1, 1
            squeezed.append(axis)
            advanced.append(pos)
        elif isinstance(entry, slice):
            start, stop, step = entry.indices(n)
            count = len(range(start, stop, step))
            if step < 0:
                reversed_.append(axis)
                start = n - 1 - start if count else 0
                stop, step = start + (count - 1) * -step + 1 if count else 0, -step
            start, limit, stride = start, max(stop, start), step
            tokens.append("slice")
        else:
            if array is not None:
                raise NotImplementedError("plugax supports one integer-array index per "
                                          "indexing expression (use take_along_axis or "
                                          "several steps)")
            array = (axis, entry)
            start, limit, stride = 0, n, 1
            tokens.append("array")
            advanced.append(pos)
        starts.append(start), limits.append(limit), strides.append(stride)
        axis += 1
    steps = []
    if reversed_:
        steps.append(Step(structural.rev_p, (), {"dimensions": tuple(reversed_)}))
    if (tuple(starts), tuple(limits), set(strides)) != ((0,) * len(shape), shape, {1}) and shape:
        steps.append(Step(slicing.slice_p, (), {
            "start_indices": tuple(starts), "limit_indices": tuple(limits),
            "strides": None if set(strides) <= {1} else tuple(strides)}))
    if squeezed:
        steps.append(Step(structural.squeeze_p, (), {"dimensions": tuple(squeezed)}))
    shape_now = [s for k, s in enumerate(_sliced_shape(starts, limits, strides))
                 if k not in squeezed]
    if array is not None:
        gather_axis = array[0] - sum(a < array[0] for a in squeezed)
        idx = normalized_indices(array[1], shape[array[0]])
        ishape = list(get_aval(idx).shape)
        dn = indexing.GatherDimensionNumbers(gather_axis)
        steps.append(Step(indexing.gather_p, (idx,), {"dimension_numbers": dn}))
        shape_now[gather_axis:gather_axis + 1] = ishape
        at = tokens.index("array")
        tokens[at:at + 1] = ["array"] * len(ishape)
        if advanced != list(range(advanced[0], advanced[0] + len(advanced))):
            # NumPy: advanced indices separated by others put their axes first.
            moved = range(gather_axis, gather_axis + len(ishape))
            perm = tuple(moved) + tuple(k for k in range(len(shape_now)) if k not in moved)
            steps.append(Step(transpose_p, (), {"permutation": perm}))
            shape_now = [shape_now[k] for k in perm]
            tokens = ["array"] * len(ishape) + [t for t in tokens if t != "array"]
    if "new" in tokens:
        dims = tuple(k for k, t in enumerate(tokens) if t != "new")
        out = [1] * len(tokens)
        for k, size in zip(dims, shape_now):
            out[k] = size
        steps.append(Step(broadcast_in_dim_p, (), {
            "shape": tuple(out), "broadcast_dimensions": dims}))
    return steps


def _clamped_int(entry: Any, n: int, axis: int) -> int:
    """A static integer index, negatives counted from the end, then clamped into range:
    JAX reads `x[3]` of 3 rows as `x[2]` (XLA's gather clamps), it does not raise."""
    if n == 0:
        raise IndexError(f"index {int(np.asarray(entry))} is out of bounds for axis {axis} "
                         f"with size 0")
    i = int(np.asarray(entry))
    return min(max(i + n if i < 0 else i, 0), n - 1)


def _sliced_shape(starts: list, limits: list, strides: list) -> list:
    return [(l - s + st - 1) // st for s, l, st in zip(starts, limits, strides)]


def getitem(x: Any, index: Any) -> Any:
    """`x[index]` with NumPy semantics (one integer-array index at most)."""
    x = asarray(x) if not isinstance(x, (Array, Tracer)) else x
    for step in plan(get_aval(x).shape, index):
        x = step.prim.bind(x, *step.extras, **step.params)
    return x


def _scatter(x: Any, index: Any, values: Any, keep: np.ndarray | None = None) -> Any:
    """plan(index)^T applied to `values`: the values embedded where x[index] reads (only
    those where `keep` holds, if given), with x's dtype and weak type."""
    avals, steps = [get_aval(x)], plan(get_aval(x).shape, index)
    for step in steps:     # only the types of the intermediate results are needed
        extras = [get_aval(e) for e in step.extras]
        avals.append(_rules("abstract_eval")[step.prim](None, avals[-1], *extras, **step.params))
    ct = broadcast_to(_convert(values, avals[0].dtype, avals[0].weak_type), avals.pop().shape)
    if keep is not None:
        import plugax.lax as lax
        ct = lax.select_n(Array(keep), zeros_like(ct), ct)
    for step, aval in zip(reversed(steps), reversed(avals)):
        linear_input = UndefPrimal(aval.strip_weak_type())
        ct = _rules("transpose")[step.prim](_TRANSPOSE_CTX, ct, linear_input, *step.extras,
                  **step.params)[0]
    return ct


class _IndexUpdateRef:
    """`x.at[index]`: functional updates, as in JAX. Updates at out-of-range indices are
    dropped (XLA's scatter semantics, JAX's default mode); reads clamp, like `x[index]`."""

    def __init__(self, array: Any, index: Any):
        self.array, self.index = array, index

    def get(self, mode: Any = None, fill_value: Any = None) -> Any:
        """`x[index]`; mode="fill" gives `fill_value` (default NaN, see
        `default_fill_value`) where an index is out of range instead of clamping."""
        if mode in (None, "clip", "promise_in_bounds"):
            return getitem(self.array, self.index)
        if mode != "fill":
            raise ValueError(f"at[].get: mode must be None, 'clip', 'promise_in_bounds' or "
                             f"'fill', got {mode!r}")
        x = _as_operand(self.array)
        extended = _extended(x, self.index)
        fill = default_fill_value(x.dtype) if fill_value is None else fill_value
        if extended is None:      # a static integer index out of range: all fill
            return full_like(getitem(x, self.index), fill)
        ext_index, axis = extended
        if axis is None:
            return getitem(x, self.index)
        return getitem(extend_axis(x, axis, fill), ext_index)

    def add(self, values: Any) -> Any:
        import plugax.lax as lax
        x = _as_operand(self.array)
        extended = _extended(x, self.index)
        if extended is None:
            return x
        index, axis = extended
        target = x if axis is None else extend_axis(x, axis, 0)
        return _trimmed(lax.add(target, _scatter(target, index, values)), axis, x)

    def set(self, values: Any) -> Any:
        """Needs a concrete index: the written positions are worked out with NumPy. With
        repeated indices the last write wins (what JAX does on CPU and GPU)."""
        import plugax.lax as lax
        x = _as_operand(self.array)
        extended = _extended(x, self.index)
        if extended is None:
            return x
        index, axis = extended
        target = x if axis is None else extend_axis(x, axis, 0)
        try:
            np_index = _numpy_index(index)
        except TypeError as err:
            raise NotImplementedError("x.at[index].set needs a concrete index (the positions "
                                      "it writes are computed with NumPy); use .add, or "
                                      "lax.dynamic_update_slice") from err
        written, keep = _last_writes(get_aval(target).shape, np_index)
        update = _scatter(target, index, values, keep)
        return _trimmed(lax.select_n(Array(written), target, update), axis, x)


def _as_operand(x: Any) -> Any:
    return x if isinstance(x, (Array, Tracer)) else asarray(x)


def _extended(x: Any, index: Any) -> tuple | None:
    """(index, axis) such that indexing `x` extended by one slot at the end of `axis`
    sends every out-of-range element of the array index there (axis None: nothing is out
    of range); None when a static integer index is out of range (the whole update drops)."""
    shape = get_aval(x).shape
    entries = _expand(index, len(shape))
    axis, found = 0, None
    for pos, entry in enumerate(entries):
        if entry is None:
            continue
        if _is_int(entry):
            i = int(np.asarray(entry))
            if not -shape[axis] <= i < shape[axis]:
                return None
        elif not isinstance(entry, slice):
            found = (pos, axis)
        axis += 1
    if found is None:
        return index, None
    pos, axis = found
    size = shape[axis]
    redirected, any_out = redirect_out_of_bounds(normalized_indices(entries[pos], size), size)
    if not any_out:
        return index, None
    entries[pos] = redirected
    return tuple(entries), axis


def _trimmed(out: Any, axis: int | None, like: Any) -> Any:
    """`out` without the extra slot `_extended` added along `axis`."""
    if axis is None:
        return out
    shape = get_aval(like).shape
    return slicing.slice(out, (0,) * len(shape), shape)


def _last_writes(shape: tuple, np_index: Any) -> tuple[np.ndarray, np.ndarray | None]:
    """(mask of the positions `x.at[np_index].set` writes, mask of the update elements that
    land last on their position -- None when no two land on one position)."""
    ids = np.full(shape, -1)
    gathered = np.empty(shape, np.int8)[np_index].shape
    ids[np_index] = np.arange(int(np.prod(gathered))).reshape(gathered)
    written = ids >= 0
    keep = np.zeros(int(np.prod(gathered)), bool)
    keep[ids[written]] = True
    return written, None if keep.all() else keep.reshape(gathered)


def _numpy_index(index: Any) -> Any:
    if isinstance(index, Tracer):
        raise TypeError("traced index")
    if isinstance(index, tuple):
        return tuple(_numpy_index(i) for i in index)
    return np.asarray(index) if isinstance(index, (Array, list)) else index


class _IndexUpdateHelper:
    def __init__(self, array: Any):
        self.array = array

    def __getitem__(self, index: Any) -> _IndexUpdateRef:
        return _IndexUpdateRef(self.array, index)


def _rules(kind: str) -> dict:
    """The installed rules of `kind` by primitive: the plan's steps include the kernel's
    structural primitives, whose RuleSets this family does not hold."""
    return rule_kinds[kind].table
