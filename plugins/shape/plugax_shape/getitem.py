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

from plugax.extend import Array, Primitive, RuleContext, Tracer, UndefPrimal, get_aval

from . import indexing, slicing, structural
from .numpy_api import _convert, _normalized_indices, asarray, broadcast_to

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
            i = int(np.asarray(entry))
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
            i %= n
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
        idx = _normalized_indices(array[1], shape[array[0]])
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
            steps.append(Step(structural.transpose_p, (), {"permutation": perm}))
            shape_now = [shape_now[k] for k in perm]
            tokens = ["array"] * len(ishape) + [t for t in tokens if t != "array"]
    if "new" in tokens:
        dims = tuple(k for k, t in enumerate(tokens) if t != "new")
        out = [1] * len(tokens)
        for k, size in zip(dims, shape_now):
            out[k] = size
        steps.append(Step(structural.broadcast_in_dim_p, (), {
            "shape": tuple(out), "broadcast_dimensions": dims}))
    return steps


def _sliced_shape(starts: list, limits: list, strides: list) -> list:
    return [(l - s + st - 1) // st for s, l, st in zip(starts, limits, strides)]


def getitem(x: Any, index: Any) -> Any:
    """`x[index]` with NumPy semantics (one integer-array index at most)."""
    x = asarray(x) if not isinstance(x, (Array, Tracer)) else x
    for step in plan(get_aval(x).shape, index):
        x = step.prim.bind(x, *step.extras, **step.params)
    return x


def _scatter(x: Any, index: Any, values: Any) -> Any:
    """plan(index)^T applied to `values`: the values embedded where x[index] reads."""
    avals, steps = [get_aval(x)], plan(get_aval(x).shape, index)
    for step in steps:     # only the types of the intermediate results are needed
        extras = [get_aval(e) for e in step.extras]
        avals.append(_RULES[step.prim].abstract_eval(None, avals[-1], *extras, **step.params))
    ct = broadcast_to(_convert(values, get_aval(x).dtype), avals.pop().shape)
    for step, aval in zip(reversed(steps), reversed(avals)):
        linear_input = UndefPrimal(aval.strip_weak_type())
        ct = _RULES[step.prim].transpose(_TRANSPOSE_CTX, ct, linear_input, *step.extras,
                  **step.params)[0]
    return ct


class _IndexUpdateRef:
    """`x.at[index]`: functional updates, as in JAX."""

    def __init__(self, array: Any, index: Any):
        self.array, self.index = array, index

    def get(self) -> Any:
        return getitem(self.array, self.index)

    def add(self, values: Any) -> Any:
        import plugax.lax as lax
        return lax.add(self.array, _scatter(self.array, self.index, values))

    def set(self, values: Any) -> Any:
        """Needs a concrete index: the mask of written positions is computed with NumPy.

        With repeated integer-array indices, which write wins is unspecified (as in JAX).
        """
        import plugax.lax as lax
        mask = np.zeros(get_aval(self.array).shape, bool)
        try:
            mask[_numpy_index(self.index)] = True
        except TypeError as err:
            raise NotImplementedError("x.at[index].set needs a concrete index") from err
        return lax.select_n(Array(mask), self.array, _scatter(self.array, self.index, values))


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


_RULES = {rs.primitive: rs for rs in structural.RULES + slicing.RULES + indexing.RULES}
