"""NumPy-style indexing (`x[...]`) and `x.at[...]` updates, as a plan of linear steps.

A static `x[index]` becomes, like in JAX: `rev` for negative steps, one `slice`,
a `squeeze` for integer indices and a `broadcast_in_dim` for `None`. Every step is
linear in `x`, so `x.at[index].add(v)` is `x + plan^T(v)`: the steps' own
transpose rules run backwards, and nothing about indexing is written twice.
Indices with integer arrays or traced values go to advanced.py (one gather /
scatter, after the static slices).
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from plugax.extend import (Array, Primitive, RuleContext, Tracer, UndefPrimal, broadcast_in_dim_p,
                           get_aval, rule_kinds)

from . import advanced, slicing, structural
from ._common import normalized_indices
from .numpy_api import (_convert, asarray, broadcast_to, extend_axis, redirect_out_of_bounds,
                        zeros_like)

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
    tokens = []          # output-axis layout, see module doc
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
            # arrays and traced values went to advanced.py: anything else is the user's
            raise TypeError(f"indices must be integers, slices, None, Ellipsis or integer "
                            f"(or boolean) arrays; got {entry!r} of type "
                            f"{type(entry).__name__}")
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
    """`x[index]` with NumPy semantics: static indices as the plan above, anything with
    integer arrays or traced values as one gather (advanced.py)."""
    x = asarray(x) if not isinstance(x, (Array, Tracer)) else x
    if advanced.needs_gather(index):
        return advanced.getitem(x, index, _static_getitem)
    return _static_getitem(x, index)


def _static_getitem(x: Any, index: Any) -> Any:
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
    dropped (JAX's default mode, "drop"; mode="clip" clamps them); reads clamp, like
    `x[index]`, or fill with mode="fill". Static indices use the static plan; integer
    arrays and traced indices one scatter (advanced.py)."""

    def __init__(self, array: Any, index: Any):
        self.array, self.index = array, index

    def _dynamic(self, mode: Any) -> bool:
        return advanced.needs_gather(self.index, mode not in (None, "drop", "fill"))

    def get(self, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: Any = None, fill_value: Any = None) -> Any:
        """`x[index]`; mode="fill" gives `fill_value` (default NaN, see
        `default_fill_value`) where an index is out of range instead of clamping."""
        if mode not in (None, "clip", "promise_in_bounds", "fill"):
            raise ValueError(f"at[].get: mode must be None, 'clip', 'promise_in_bounds' or "
                             f"'fill', got {mode!r}")
        x = _as_operand(self.array)
        if advanced.needs_gather(self.index, mode is not None and mode != "promise_in_bounds"):
            return advanced.getitem(x, self.index, _static_getitem, mode=mode,
                                    fill_value=fill_value,
                                    indices_are_sorted=indices_are_sorted,
                                    unique_indices=unique_indices)
        return _static_getitem(x, self.index)

    def _update(self, values: Any, op: str, mode: Any, flags: dict) -> Any:
        x = _as_operand(self.array)
        aval = get_aval(x)
        values = _convert(values, aval.dtype, aval.weak_type)
        return advanced.update(x, self.index, values, op, _static_getitem, _static_set,
                               mode=mode, **flags)

    def set(self, values: Any, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: Any = None) -> Any:
        """Out-of-range updates are dropped; with repeated indices the last write wins
        (what JAX does on CPU and GPU)."""
        if self._dynamic(mode):
            return self._update(values, "set", mode, dict(
                indices_are_sorted=indices_are_sorted, unique_indices=unique_indices))
        return _static_set(self.array, self.index, values)

    def add(self, values: Any, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: Any = None) -> Any:
        """Repeated indices accumulate."""
        if self._dynamic(mode):
            return self._update(values, "add", mode, dict(
                indices_are_sorted=indices_are_sorted, unique_indices=unique_indices))
        import plugax.lax as lax
        x = _as_operand(self.array)
        extended = _extended(x, self.index)
        if extended is None:
            return x
        index, axis = extended
        target = x if axis is None else extend_axis(x, axis, 0)
        return _trimmed(lax.add(target, _scatter(target, index, values)), axis, x)

    def subtract(self, values: Any, **kwargs: Any) -> Any:
        import plugax.numpy as pnp
        return self.add(pnp.negative(values), **kwargs)

    def multiply(self, values: Any, *, indices_are_sorted: bool = False,
                 unique_indices: bool = False, mode: Any = None) -> Any:
        """Repeated indices multiply together."""
        return self._update(values, "multiply", mode, dict(
            indices_are_sorted=indices_are_sorted, unique_indices=unique_indices))

    mul = multiply

    def divide(self, values: Any, **kwargs: Any) -> Any:
        """x / values at the indexed places (as `multiply` by the reciprocal, like JAX)."""
        import plugax.numpy as pnp
        x = _as_operand(self.array)
        if get_aval(x).dtype.kind not in "fc":
            raise TypeError(f"x.at[].divide needs a floating-point array, got "
                            f"{get_aval(x).str_short()} (integer division is not an "
                            f"in-place update in JAX either)")
        return self.multiply(pnp.divide(1, values), **kwargs)

    def power(self, values: Any, **kwargs: Any) -> Any:
        """x ** values at the indexed places; repeated indices multiply the exponents
        (JAX: x ** ones.at[index].multiply(values))."""
        import plugax.numpy as pnp
        x = _as_operand(self.array)
        return pnp.power(x, _IndexUpdateRef(pnp.ones_like(x), self.index).multiply(
            values, **kwargs))

    def min(self, values: Any, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: Any = None) -> Any:
        return self._update(values, "min", mode, dict(
            indices_are_sorted=indices_are_sorted, unique_indices=unique_indices))

    def max(self, values: Any, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: Any = None) -> Any:
        return self._update(values, "max", mode, dict(
            indices_are_sorted=indices_are_sorted, unique_indices=unique_indices))

    def apply(self, func: Any, *, indices_are_sorted: bool = False,
              unique_indices: bool = False, mode: Any = None) -> Any:
        """func(x) at the indexed places, applied once per place (also when an index
        repeats: plugax does not apply it twice)."""
        import plugax.lax as lax
        import plugax.numpy as pnp
        x = _as_operand(self.array)
        touched = _IndexUpdateRef(pnp.zeros(get_aval(x).shape, bool), self.index).set(
            True, mode=mode, indices_are_sorted=indices_are_sorted,
            unique_indices=unique_indices)
        return lax.select_n(touched, x, _convert(func(x), get_aval(x).dtype,
                                                 get_aval(x).weak_type))


def _static_set(array: Any, index: Any, values: Any) -> Any:
    """x.at[index].set(values) for a static index: the written positions are worked out
    with NumPy. With repeated indices the last write wins."""
    import plugax.lax as lax
    x = _as_operand(array)
    extended = _extended(x, index)
    if extended is None:
        return x
    index, axis = extended
    target = x if axis is None else extend_axis(x, axis, 0)
    written, keep = _last_writes(get_aval(target).shape, _numpy_index(index))
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
