"""plugax.numpy's set operations on 1-D arrays: isin, union1d, intersect1d, setdiff1d,
setxor1d, with JAX's `size=` / `fill_value=` for use under jit.

Each works at a static size: the unique values of an input, sorted and padded to the
input's length (with a validity mask), then a membership test, then one compaction
of the kept values to the output size. Only that last step needs a concrete value
when no `size` is given (the count of kept values), as in JAX. The default fill
values are JAX's: 0 for setdiff1d, the smallest result (0 when there is none) for
intersect1d and setxor1d, the smallest value for union1d.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from plugax.extend import ConcretizationTypeError, default_int_dtype, get_aval, promote_dtypes

from .numpy_api import asarray, searchsorted
from .setops import _concrete, _first_positions, _sorted_rows, unique
from .sort import sort as lax_sort

__all__ = ["NUMPY", "isin", "union1d", "intersect1d", "setdiff1d", "setxor1d"]

_HINT = ("pass a static size= (and fill_value=) to use it under jit or vmap, as in JAX")


def _flat_pair(name: str, ar1: Any, ar2: Any) -> tuple[Any, Any]:
    import plugax.numpy as pnp
    a, b = promote_dtypes(name, asarray(ar1), asarray(ar2))
    return pnp.ravel(a), pnp.ravel(b)


def _static_size(name: str, size: Any) -> int | None:
    if size is None:
        return None
    try:
        return operator.index(size)
    except TypeError:
        raise ConcretizationTypeError(f"{name}: size must be a static int, got {size!r}; "
                                      f"{_HINT}") from None


def _unique_padded(x: Any, assume_unique: bool) -> tuple[Any, Any, Any]:
    """(sorted unique values padded to len(x), validity mask, first index of each in x)."""
    import plugax.numpy as pnp
    n = get_aval(x).shape[0]
    aux, first, perm = _sorted_rows(pnp.reshape(x, (n, 1)), equal_nan=True)
    if assume_unique:
        first = pnp.ones((n,), bool)
    ind, _ = _first_positions(first, n)
    valid = pnp.arange(n) < pnp.sum(first)
    return pnp.take(aux[:, 0], ind), valid, pnp.take(perm, ind)


def _member(x: Any, test: Any, method: str = "auto") -> Any:
    """x's elements found in `test` (1-D), by `method` (JAX's names)."""
    import plugax.numpy as pnp
    if get_aval(test).shape[0] == 0:
        return pnp.zeros(get_aval(x).shape, bool)
    if method in ("auto", "compare_all"):
        return pnp.any(pnp.expand_dims(x, -1) == test, axis=-1)
    if method in ("binary_search", "sort"):
        ordered = lax_sort(test)
        pos = searchsorted(ordered, x)
        return x == pnp.take(ordered, pnp.minimum(pos, get_aval(test).shape[0] - 1))
    raise ValueError(f"method={method!r} is not implemented; options are 'compare_all', "
                     f"'binary_search', 'sort', and 'auto'")


def _compact(name: str, values: Any, keep: Any, size: int | None, fill_value: Any,
             default_fill: str, extra: tuple = ()) -> Any:
    """The kept entries of sorted `values` (and of each array in `extra`, padded with its
    own fill), first `size` of them, padded with `fill_value`."""
    import plugax.numpy as pnp
    total = pnp.sum(keep)
    if size is None:
        known = _concrete(total)
        if known is None:
            raise ConcretizationTypeError(f"The error arose in {name}(): the number of "
                                          f"results depends on traced values; {_HINT}")
        size = int(known)
    ind, _ = _first_positions(keep, size)
    valid = pnp.arange(size) < total
    out = pnp.take(values, ind) if get_aval(values).shape[0] else pnp.zeros((size,),
                                                                           values.dtype)
    if fill_value is None:
        first = out[0] if size else out
        fill = (pnp.zeros((), out.dtype) if default_fill == "zero"
                else pnp.where(total > 0, first, pnp.zeros((), out.dtype)))
        if default_fill == "smallest" and out.dtype.kind == "f":   # JAX: a NaN result wins
            fill = pnp.where(pnp.any(keep & pnp.isnan(values)), np.nan, fill)
    else:
        fill = pnp.asarray(fill_value).astype(out.dtype)
    out = pnp.where(valid, out, fill)
    if not extra:
        return out
    return (out, *[pnp.where(valid, pnp.take(e, ind), f) for e, f in extra])


def isin(element: Any, test_elements: Any, assume_unique: bool = False, invert: bool = False,
         *, method: str = "auto") -> Any:
    """numpy.isin: whether each element of `element` is in `test_elements` (same shape)."""
    import plugax.numpy as pnp
    el, test = promote_dtypes("isin", asarray(element), asarray(test_elements))
    found = _member(el, pnp.ravel(test), method)
    return ~found if invert else found


def union1d(ar1: Any, ar2: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """numpy.union1d: the sorted unique values of both arrays."""
    import plugax.numpy as pnp
    a, b = _flat_pair("union1d", ar1, ar2)
    return unique(pnp.concatenate([a, b]), size=_static_size("union1d", size),
                  fill_value=fill_value)


def setdiff1d(ar1: Any, ar2: Any, assume_unique: bool = False, *, size: int | None = None,
              fill_value: Any = None) -> Any:
    """numpy.setdiff1d: the sorted unique values of ar1 that are not in ar2 (in ar1's
    dtype, as JAX: only the membership test promotes)."""
    import plugax.numpy as pnp
    a, b = pnp.ravel(asarray(ar1)), pnp.ravel(asarray(ar2))
    size = _static_size("setdiff1d", size)
    if get_aval(a).shape[0] == 0:
        return pnp.full((size or 0,), 0 if fill_value is None else fill_value, a.dtype)
    vals, valid, _ = _unique_padded(a, assume_unique)
    found = _member(*promote_dtypes("setdiff1d", vals, b))
    return _compact("setdiff1d", vals, valid & ~found, size, fill_value, "zero")


def intersect1d(ar1: Any, ar2: Any, assume_unique: bool = False, return_indices: bool = False,
                *, size: int | None = None, fill_value: Any = None) -> Any:
    """numpy.intersect1d: the sorted values in both arrays; with `return_indices`, also
    the index of each in ar1 and in ar2 (first occurrences; padding: the array sizes)."""
    import plugax.numpy as pnp
    a, b = _flat_pair("intersect1d", ar1, ar2)
    size = _static_size("intersect1d", size)
    n1, n2 = get_aval(a).shape[0], get_aval(b).shape[0]
    if n1 == 0 or n2 == 0:
        out = pnp.zeros((size or 0,), a.dtype)
        if fill_value is not None:
            out = pnp.full((size or 0,), fill_value, a.dtype)
        idx = pnp.zeros((size or 0,), default_int_dtype())
        return (out, idx + n1, idx + n2) if return_indices else out
    vals, valid, first1 = _unique_padded(a, assume_unique)
    keep = valid & _member(vals, b)
    if not return_indices:
        return _compact("intersect1d", vals, keep, size, fill_value, "smallest")
    vals2, valid2, first2 = _unique_padded(b, assume_unique)
    ordered = pnp.where(valid2, vals2, pnp.max(vals2))     # padding last keeps it sorted
    pos = pnp.minimum(searchsorted(ordered, vals), n2 - 1)
    in2 = pnp.take(first2, pos)
    return _compact("intersect1d", vals, keep, size, fill_value, "smallest",
                    extra=((first1, n1), (in2, n2)))


def setxor1d(ar1: Any, ar2: Any, assume_unique: bool = False, *, size: int | None = None,
             fill_value: Any = None) -> Any:
    """numpy.setxor1d: the sorted unique values in exactly one of the arrays."""
    import plugax.numpy as pnp
    a, b = _flat_pair("setxor1d", ar1, ar2)
    size = _static_size("setxor1d", size)
    if get_aval(a).shape[0] + get_aval(b).shape[0] == 0:
        return pnp.zeros((size or 0,), a.dtype)
    # as JAX: sort the unique values of both together, keep those equal to neither
    # neighbour (so a NaN in each array gives two NaNs, as in NumPy)
    parts = [_unique_padded(x, assume_unique)[:2] for x in (a, b) if get_aval(x).shape[0]]
    vals = pnp.concatenate([p[0] for p in parts])
    valid = pnp.concatenate([p[1] for p in parts])
    invalid, vals = lax_sort((~valid, vals), num_keys=2)
    valid = ~invalid
    same = vals[1:] == vals[:-1]
    no = pnp.zeros((1,), bool)
    keep = valid & ~pnp.concatenate([no, same]) & ~pnp.concatenate([same & valid[1:], no])
    return _compact("setxor1d", vals, keep, size, fill_value, "smallest")


NUMPY = {f.__name__: f for f in (isin, union1d, intersect1d, setdiff1d, setxor1d)}
