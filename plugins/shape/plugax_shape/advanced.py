"""`x[index]` and `x.at[index]` with integer arrays or traced integers, as one gather or
scatter, the way JAX lowers NumPy indexing.

An index with advanced entries (integer arrays, traced integer scalars or arrays,
lists, concrete boolean masks) is split in two: its slices are applied first with
the static plan of getitem.py (`x[S]`: every slice a window, nothing duplicated),
and what remains -- the advanced entries, full slices and `None`s -- becomes one
gather whose index vectors are the advanced entries broadcast together. Updates
reverse it: `x.at[S].set(x[S].at[A].op(v))`, the inner one a scatter with the same
dimension numbers. Python ints count as advanced here (as in NumPy, they take part
in the "advanced axes adjacent?" rule).

Out of range: reads use PROMISE_IN_BOUNDS as JAX's `x[i]` does (XLA clamps), updates
FILL_OR_DROP (out-of-range updates are dropped); `.at[].get(mode=...)` chooses.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

from plugax.extend import (Array, ConcretizationTypeError, Tracer, bind, broadcast_in_dim,
                           broadcast_shapes, concatenate, convert_element_type, get_aval,
                           reshape)

from ._common import normalized_indices, zeros
from .gather_scatter import (GatherDimensionNumbers, GatherScatterMode, ScatterDimensionNumbers,
                             fill_param, gather_p, scatter_add_p, scatter_max_p, scatter_min_p,
                             scatter_mul_p, scatter_p)


class NonConcreteBooleanIndexError(IndexError, ConcretizationTypeError):
    """A boolean mask index that is traced: the result's shape would depend on its
    values, which jit does not know (JAX's error of the same name). Use the
    three-argument `jnp.where(mask, x, y)` instead."""

    def __init__(self, aval: Any):
        super().__init__(f"Array boolean indices must be concrete; got {aval.str_short()}\n\n"
                         f"Under jit the shape of x[mask] would depend on the mask's values. "
                         f"Use jnp.where(mask, x, fill) (three arguments) instead.")


def _is_advanced(e: Any) -> bool:
    """Integer arrays, lists, booleans and anything traced; not static integers."""
    if isinstance(e, (Tracer, list, bool, np.bool_)):
        return True
    if isinstance(e, (np.ndarray, Array)):
        return not (np.ndim(e) == 0 and np.asarray(e).dtype.kind in "iu")
    return False


def needs_gather(index: Any, mode_given: bool = False) -> bool:
    """Whether `index` has an entry the static plan cannot take (or a mode was asked for)."""
    entries = index if isinstance(index, tuple) else (index,)
    return mode_given or any(_is_advanced(e) for e in entries)


def _entries(shape: tuple, index: Any) -> list:
    """The index as a list with Ellipsis expanded, lists as arrays, boolean masks as the
    integer arrays of their nonzero positions (one per axis they cover)."""
    raw = list(index) if isinstance(index, tuple) else [index]
    out: list = []
    for e in raw:
        if isinstance(e, Tracer) and e.aval.dtype == np.bool_:
            raise NonConcreteBooleanIndexError(e.aval)
        if isinstance(e, Tracer) and e.aval.dtype.kind not in "iu":
            raise TypeError(f"indices must be integers (or concrete booleans), got "
                            f"{e.aval.str_short()}")
        if isinstance(e, (list, np.ndarray, Array, bool, np.bool_)) and not isinstance(e, Tracer):
            value = np.asarray(e)
            if value.dtype == np.bool_:
                if value.ndim == 0:
                    raise NotImplementedError("plugax does not support a scalar boolean index "
                                              "(x[True]); use x[None] or jnp.where")
                out.extend(Array(np.asarray(n, np.int32 if value.size < 2 ** 31 else np.int64))
                           for n in np.nonzero(value))
                out[-value.ndim:] = [_Mask(a, value.shape[k]) for k, a in
                                     enumerate(out[-value.ndim:])]
                continue
            if value.dtype.kind not in "iu":
                raise IndexError(f"arrays used as indices must be of integer (or boolean) type, "
                                 f"got {value.dtype}")
            e = e if isinstance(e, Array) else Array(value)
        out.append(e)
    consumed = sum(e is not None and e is not Ellipsis for e in out)
    if sum(e is Ellipsis for e in out) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > len(shape):
        raise IndexError(f"too many indices: array is {len(shape)}-dimensional, but {consumed} "
                         f"were indexed")
    fill = [slice(None)] * (len(shape) - consumed)
    if any(e is Ellipsis for e in out):
        at = next(k for k, e in enumerate(out) if e is Ellipsis)
        out = out[:at] + fill + out[at + 1:]
    else:
        out = out + fill
    # a boolean mask's axes must match the ones it covers
    axis = 0
    for k, e in enumerate(out):
        if e is None:
            continue
        if isinstance(e, _Mask):
            if e.size != shape[axis]:
                raise IndexError(f"boolean index did not match indexed array along axis "
                                 f"{axis}; size of axis is {shape[axis]} but size of "
                                 f"corresponding boolean axis is {e.size}")
            out[k] = e.indices
        axis += 1
    return out


class _Mask(NamedTuple):
    indices: Any
    size: int


class Split(NamedTuple):
    """`x[index] == x[static][gather part]`; see the module docstring."""

    static: tuple            # slices (and full slices for advanced entries)
    entries: list            # None, full slices, advanced entries


def split(shape: tuple, index: Any) -> Split:
    entries = _entries(shape, index)
    static = tuple(e if isinstance(e, slice) else slice(None) for e in entries if e is not None)
    rest = [slice(None) if isinstance(e, slice) else e for e in entries]
    return Split(static, rest)


def _is_trivial(static: tuple) -> bool:
    return all(s == slice(None) for s in static)


class Layout(NamedTuple):
    indices: Any                 # (*broadcast shape, n advanced) integer index vectors
    dnums: GatherDimensionNumbers
    slice_sizes: tuple
    gathered_shape: tuple        # the gather's output
    final_shape: tuple           # with the None axes


def layout(shape: tuple, entries: list) -> Layout:
    """The gather reading `x[entries]` for x of `shape` (entries: None, full slices and
    advanced entries only)."""
    adv, slice_axes, tokens, positions = [], [], [], []
    axis = 0
    for pos, e in enumerate(entries):
        if e is None:
            tokens.append("n")
            continue
        if isinstance(e, slice):
            slice_axes.append(axis)
            tokens.append("s")
        else:
            adv.append((axis, e))
            positions.append(pos)
            tokens.append("a")
        axis += 1
    raw = [e if isinstance(e, (Array, Tracer)) else Array(np.asarray(e)) for _, e in adv]
    bshape = broadcast_shapes([get_aval(a).shape for a in raw])
    if bshape is None:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together with "
                         f"shapes {' '.join(str(get_aval(a).shape) for a in raw)}")
    # int32 (int64 for 64-bit indices) before normalising, so i + n cannot overflow int8
    dtype = np.dtype(np.int64 if any(get_aval(a).dtype.itemsize > 4 for a in raw)
                     else np.int32)
    vectors = []
    for (ax, _), a in zip(adv, raw):
        aval = get_aval(a)
        if aval.dtype != dtype:
            a = convert_element_type(a, dtype)
        a = normalized_indices(a, shape[ax])
        lead = len(bshape) - aval.ndim
        vectors.append(broadcast_in_dim(a, bshape + (1,), tuple(range(lead, len(bshape)))))
    indices = vectors[0] if len(vectors) == 1 else concatenate(vectors, len(bshape))
    contiguous = positions == list(range(positions[0], positions[0] + len(positions)))
    if contiguous:
        first = tokens.index("a")
        final_tokens = [t for t in tokens[:first]] + ["A"] + [t for t in tokens[first:]
                                                            if t != "a"]
    else:
        final_tokens = ["A"] + [t for t in tokens if t != "a"]
    gathered_tokens = [t for t in final_tokens if t != "n"]
    at = gathered_tokens.index("A")
    nb = len(bshape)
    offset = tuple(range(at)) + tuple(range(at + nb, nb + len(slice_axes)))
    adv_axes = tuple(ax for ax, _ in adv)
    dn = GatherDimensionNumbers(offset, adv_axes, adv_axes)
    sizes = tuple(1 if d in adv_axes else n for d, n in enumerate(shape))
    it = iter(shape[d] for d in slice_axes)
    gathered, final = [], []
    for t in final_tokens:
        dims = bshape if t == "A" else (1,) if t == "n" else (next(it),)
        final.extend(dims)
        if t != "n":
            gathered.extend(dims)
    return Layout(indices, dn, sizes, tuple(gathered), tuple(final))


def gather_index(x: Any, entries: list, mode: GatherScatterMode, fill_value: Any = None,
                 indices_are_sorted: bool = False, unique_indices: bool = False) -> Any:
    """`x[entries]` (entries from `split`) as one gather."""
    shape = get_aval(x).shape
    lay = layout(shape, entries)
    if any(d == 0 for d in lay.final_shape):
        return zeros(lay.final_shape, get_aval(x).dtype)
    if any(shape[d] == 0 for d in lay.dnums.start_index_map):
        raise IndexError(f"index is out of bounds for an axis of size 0 of an array of shape "
                         f"{shape}")
    out = bind(gather_p, x, lay.indices, dimension_numbers=lay.dnums,
               slice_sizes=lay.slice_sizes, indices_are_sorted=bool(indices_are_sorted),
               unique_indices=bool(unique_indices), mode=mode,
               fill_value=fill_param(fill_value))
    return out if lay.gathered_shape == lay.final_shape else reshape(out, lay.final_shape)


_SCATTERS = {"set": scatter_p, "add": scatter_add_p, "multiply": scatter_mul_p,
             "min": scatter_min_p, "max": scatter_max_p}


def scatter_index(x: Any, entries: list, updates: Any, op: str, mode: GatherScatterMode,
                  indices_are_sorted: bool = False, unique_indices: bool = False) -> Any:
    """`x.at[entries].<op>(updates)` as one scatter; `updates` already has x's dtype and
    broadcasts to `x[entries]`'s shape."""
    from .numpy_api import broadcast_to
    shape = get_aval(x).shape
    lay = layout(shape, entries)
    try:
        updates = broadcast_to(updates, lay.final_shape)
    except ValueError as err:
        raise ValueError(f"x.at[index].{op}(values): values of shape {get_aval(updates).shape} "
                         f"do not broadcast to the indexed shape {lay.final_shape}") from err
    if any(d == 0 for d in lay.final_shape) or any(shape[d] == 0
                                                   for d in lay.dnums.start_index_map):
        return x
    if lay.gathered_shape != lay.final_shape:
        updates = reshape(updates, lay.gathered_shape)
    return bind(_SCATTERS[op], x, lay.indices, updates,
                dimension_numbers=ScatterDimensionNumbers(*lay.dnums),
                indices_are_sorted=bool(indices_are_sorted),
                unique_indices=bool(unique_indices), mode=mode)


def getitem(x: Any, index: Any, static_getitem: Callable, mode: Any = None,
            fill_value: Any = None, **flags: Any) -> Any:
    """`x[index]` through `x[static][rest]` (static_getitem: getitem.py's plan)."""
    shape = get_aval(x).shape
    parts = split(shape, index)
    if not _is_trivial(parts.static):
        x = static_getitem(x, parts.static)
    if mode is None and all(_is_scalar_index(e) for e in parts.entries
                            if e is not None and not isinstance(e, slice)):
        return _dynamic_index(x, parts.entries)
    gmode = GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else \
        GatherScatterMode.from_any(mode)
    return gather_index(x, parts.entries, gmode, fill_value, **flags)


def _is_scalar_index(e: Any) -> bool:
    return np.ndim(e) == 0 if not isinstance(e, Tracer) else e.aval.ndim == 0


def _dynamic_index(x: Any, entries: list) -> Any:
    """`x[i, :, j]` with scalar (traced) integers only: one dynamic_slice and a reshape,
    as JAX does. Its start is clamped like the gather's, and so is its transpose
    (dynamic_update_slice), so grad of x[10] on 4 rows reaches row 3 as in JAX."""
    from .slicing import dynamic_slice
    shape = get_aval(x).shape
    starts, sizes, final = [], [], []
    axis = 0
    for e in entries:
        if e is None:
            final.append(1)
            continue
        if isinstance(e, slice):
            starts.append(0)
            sizes.append(shape[axis])
            final.append(shape[axis])
        else:
            if shape[axis] == 0:
                raise IndexError(f"index is out of bounds for axis {axis} with size 0")
            i = e if isinstance(e, (Array, Tracer)) else Array(np.asarray(e))
            dtype = np.dtype(np.int64 if get_aval(i).dtype.itemsize > 4 else np.int32)
            if get_aval(i).dtype != dtype:
                i = convert_element_type(i, dtype)
            starts.append(normalized_indices(i, shape[axis]))
            sizes.append(1)
        axis += 1
    out = dynamic_slice(x, starts, sizes)
    return out if tuple(sizes) == tuple(final) else reshape(out, tuple(final))


def update(x: Any, index: Any, values: Any, op: str, static_getitem: Callable,
           static_set: Callable, mode: Any = None, **flags: Any) -> Any:
    """`x.at[index].<op>(values)` through `x.at[static].set(x[static].at[rest].<op>(v))`."""
    shape = get_aval(x).shape
    parts = split(shape, index)
    smode = GatherScatterMode.from_any(mode)
    if _is_trivial(parts.static):
        return scatter_index(x, parts.entries, values, op, smode, **flags)
    inner = scatter_index(static_getitem(x, parts.static), parts.entries, values, op, smode,
                          **flags)
    return static_set(x, parts.static, inner)
