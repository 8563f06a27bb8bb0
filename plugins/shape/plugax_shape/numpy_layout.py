"""NumPy's stacking, splitting, tiling, flipping and triangle functions.

All are compositions of this family's primitives (concatenate, slice, rev,
reshape, broadcast, gather through indexing) and the elementwise family's
comparisons, so every transformation works on them with no rules of their
own. Sizes, counts and offsets are static, as in JAX; an index array built
from them is a constant of the trace.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

import plugax.lax as lax
import plugax.numpy as pnp
from plugax.extend import get_aval

__all__ = ["vstack", "hstack", "dstack", "column_stack", "split", "array_split", "hsplit",
           "vsplit", "dsplit", "tile", "repeat", "flip", "fliplr", "flipud", "roll", "rot90",
           "atleast_1d", "atleast_2d", "atleast_3d", "diag", "diagonal", "diagflat", "tril",
           "triu", "tri", "identity", "meshgrid", "append", "indices", "kron", "cross", "NUMPY"]


def _ndim(x: Any) -> int:
    return get_aval(x).ndim


def atleast_1d(*arys: Any) -> Any:
    out = [pnp.reshape(a, (1,)) if _ndim(a) == 0 else pnp.asarray(a) for a in arys]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys: Any) -> Any:
    out = [pnp.reshape(a, (1,) * (2 - _ndim(a)) + get_aval(a).shape) if _ndim(a) < 2
           else pnp.asarray(a) for a in arys]
    return out[0] if len(out) == 1 else out


def atleast_3d(*arys: Any) -> Any:
    def lift(a: Any) -> Any:
        a, shape = pnp.asarray(a), get_aval(a).shape
        return {0: lambda: pnp.reshape(a, (1, 1, 1)), 1: lambda: pnp.reshape(a, (1, *shape, 1)),
                2: lambda: pnp.reshape(a, (*shape, 1))}.get(len(shape), lambda: a)()
    out = [lift(a) for a in arys]
    return out[0] if len(out) == 1 else out


def vstack(tup: Sequence[Any], dtype: Any = None) -> Any:
    return pnp.concatenate([atleast_2d(a) for a in tup], axis=0)


def hstack(tup: Sequence[Any], dtype: Any = None) -> Any:
    arrs = [atleast_1d(a) for a in tup]
    return pnp.concatenate(arrs, axis=0 if _ndim(arrs[0]) == 1 else 1)


def dstack(tup: Sequence[Any], dtype: Any = None) -> Any:
    return pnp.concatenate([atleast_3d(a) for a in tup], axis=2)


def column_stack(tup: Sequence[Any]) -> Any:
    cols = [pnp.reshape(a, (-1, 1)) if _ndim(a) < 2 else pnp.asarray(a) for a in tup]
    return pnp.concatenate(cols, axis=1)


def _split_points(n: int, sections: Any, strict: bool, name: str) -> list[int]:
    if isinstance(sections, (int, np.integer)):
        k = int(sections)
        if k <= 0:
            raise ValueError(f"{name}: number of sections must be larger than 0, got {k}")
        if strict and n % k:
            raise ValueError(f"array split does not result in an equal division: {n} "
                             f"elements into {k} sections")
        sizes = [n // k + (1 if i < n % k else 0) for i in range(k)]
        return list(np.cumsum(sizes)[:-1])
    return [int(i) for i in sections]


def _split(ary: Any, sections: Any, axis: int, strict: bool, name: str) -> list:
    ary = pnp.asarray(ary)
    shape = get_aval(ary).shape
    axis = axis % len(shape)
    points = [min(max(p if p >= 0 else p + shape[axis], 0), shape[axis])
              for p in _split_points(shape[axis], sections, strict, name)]
    bounds = [0, *points, shape[axis]]
    head = (slice(None),) * axis
    return [ary[(*head, slice(lo, max(lo, hi)))] for lo, hi in zip(bounds, bounds[1:])]


def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list:
    """Equal sections (a count that must divide the axis) or cut points."""
    return _split(ary, indices_or_sections, axis, True, "split")


def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list:
    """Like split, but a count need not divide the axis (the first pieces are longer)."""
    return _split(ary, indices_or_sections, axis, False, "array_split")


def hsplit(ary: Any, indices_or_sections: Any) -> list:
    return split(ary, indices_or_sections, axis=0 if _ndim(ary) == 1 else 1)


def vsplit(ary: Any, indices_or_sections: Any) -> list:
    return split(ary, indices_or_sections, axis=0)


def dsplit(ary: Any, indices_or_sections: Any) -> list:
    return split(ary, indices_or_sections, axis=2)


def tile(A: Any, reps: Any) -> Any:
    """`A` repeated `reps` times along each axis (reps as NumPy: an int or a tuple)."""
    A = pnp.asarray(A)
    reps = (int(reps),) if isinstance(reps, (int, np.integer)) else tuple(int(r) for r in reps)
    shape = get_aval(A).shape
    ndim = max(len(shape), len(reps))
    shape = (1,) * (ndim - len(shape)) + shape
    reps = (1,) * (ndim - len(reps)) + reps
    A = pnp.reshape(A, shape)
    # broadcast a new axis of size r in front of each axis, then merge the pairs
    expanded = pnp.reshape(A, sum(((1, s) for s in shape), ()))
    target = sum(((r, s) for r, s in zip(reps, shape)), ())
    return pnp.reshape(pnp.broadcast_to(expanded, target),
                       tuple(r * s for r, s in zip(reps, shape)))


def repeat(a: Any, repeats: Any, axis: int | None = None, *,
           total_repeat_length: int | None = None) -> Any:
    """Each element repeated `repeats` times (an int or one count per element); the
    counts must be concrete (JAX also needs total_repeat_length when they are traced)."""
    a = pnp.asarray(a)
    if axis is None:
        a, axis = pnp.ravel(a), 0
    n = get_aval(a).shape[axis]
    try:
        counts = np.broadcast_to(np.asarray(repeats, dtype=np.int64), (n,))
    except Exception as err:
        raise ValueError(f"repeat: repeats must be concrete integers broadcastable to the "
                         f"axis length {n}, got {repeats!r}") from err
    if (counts < 0).any():
        raise ValueError("repeat: repeats may not be negative")
    index = np.repeat(np.arange(n), counts)
    if total_repeat_length is not None:
        index = np.resize(index, total_repeat_length) if index.size else \
            np.zeros(total_repeat_length, np.int64)
    return pnp.take(a, index.astype(np.int32), axis=axis)


def flip(m: Any, axis: Any = None) -> Any:
    m = pnp.asarray(m)
    nd = _ndim(m)
    axes = range(nd) if axis is None else ((axis,) if isinstance(axis, int) else axis)
    return lax.rev(m, tuple(a % nd for a in axes))


def fliplr(m: Any) -> Any:
    return flip(m, 1)


def flipud(m: Any) -> Any:
    return flip(m, 0)


def roll(a: Any, shift: Any, axis: Any = None) -> Any:
    """Elements shifted along `axis`, wrapping around (static shifts)."""
    a = pnp.asarray(a)
    if axis is None:
        return pnp.reshape(roll(pnp.ravel(a), shift, 0), get_aval(a).shape)
    shifts = np.broadcast_to(shift, np.broadcast(shift, axis).shape).ravel()
    axes = np.broadcast_to(axis, np.broadcast(shift, axis).shape).ravel()
    for s, ax in zip(shifts, axes):
        n = get_aval(a).shape[int(ax)]
        if n:
            k = int(s) % n
            head = (slice(None),) * (int(ax) % _ndim(a))
            a = pnp.concatenate([a[(*head, slice(n - k, n))], a[(*head, slice(0, n - k))]],
                                axis=int(ax))
    return a


def rot90(m: Any, k: int = 1, axes: tuple = (0, 1)) -> Any:
    m = pnp.asarray(m)
    k, (a0, a1) = int(k) % 4, axes
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, a0), a1)
    perm = list(range(_ndim(m)))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    return pnp.transpose(flip(m, a1), perm) if k == 1 else flip(pnp.transpose(m, perm), a1)


def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Any:
    M = N if M is None else M
    return pnp.asarray(np.tri(N, M, k), dtype=dtype or pnp.float32)


def identity(n: int, dtype: Any = None) -> Any:
    return pnp.eye(n, dtype=dtype)


def _triangle(m: Any, k: int, lower: bool) -> Any:
    m = pnp.asarray(m)
    rows, cols = get_aval(m).shape[-2:]
    keep = np.tri(rows, cols, k, dtype=bool) if lower else ~np.tri(rows, cols, k - 1, dtype=bool)
    return pnp.where(keep, m, pnp.zeros((), get_aval(m).dtype))


def tril(m: Any, k: int = 0) -> Any:
    """The lower triangle (diagonal k and below) of the last two axes."""
    return _triangle(m, k, lower=True)


def triu(m: Any, k: int = 0) -> Any:
    """The upper triangle (diagonal k and above) of the last two axes."""
    return _triangle(m, k, lower=False)


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """The `offset` diagonal of the (axis1, axis2) planes, as a last axis (NumPy's layout)."""
    a = pnp.asarray(a)
    nd = _ndim(a)
    a = pnp.moveaxis(a, (axis1 % nd, axis2 % nd), (nd - 2, nd - 1))
    rows, cols = get_aval(a).shape[-2:]
    i = np.arange(max(0, min(rows + min(offset, 0), cols - max(offset, 0))))
    r, c = i - min(offset, 0), i + max(offset, 0)
    return a[..., r.astype(np.int32), c.astype(np.int32)]


def diag(v: Any, k: int = 0) -> Any:
    """The k-th diagonal of a matrix, or a matrix with `v` on its k-th diagonal."""
    v = pnp.asarray(v)
    if _ndim(v) == 2:
        return diagonal(v, k)
    if _ndim(v) != 1:
        raise ValueError(f"diag input must be 1d or 2d, got an array of shape "
                         f"{get_aval(v).shape}")
    length = get_aval(v).shape[0]
    n = length + abs(k)
    mask = np.eye(n, k=k, dtype=bool)
    # v[j] sits at row j - min(k, 0) and column j + max(k, 0): spread it along the rows
    # (k < 0) or the columns (k >= 0), then keep only the diagonal
    which = np.clip(np.arange(n) - abs(k), 0, max(length - 1, 0)).astype(np.int32)
    spread = pnp.take(v, which)
    values = spread[:, None] if k < 0 else spread[None, :]
    return pnp.where(mask, values, pnp.zeros((), get_aval(v).dtype))


def diagflat(v: Any, k: int = 0) -> Any:
    return diag(pnp.ravel(v), k)


def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy") -> list:
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing!r}")
    xi = [pnp.ravel(x) for x in xi]
    n = len(xi)
    shapes = [[1] * n for _ in xi]
    for i, x in enumerate(xi):
        shapes[i][i] = get_aval(x).shape[0]
    if indexing == "xy" and n >= 2:
        for s in shapes:
            s[0], s[1] = s[1], s[0]
    out = [pnp.reshape(x, tuple(s)) for x, s in zip(xi, shapes)]
    if sparse:
        return out
    full = tuple(max(s[d] for s in shapes) for d in range(n))
    return [pnp.broadcast_to(o, full) for o in out]


def append(arr: Any, values: Any, axis: int | None = None) -> Any:
    if axis is None:
        return pnp.concatenate([pnp.ravel(arr), pnp.ravel(values)])
    return pnp.concatenate([arr, values], axis=axis)


def indices(dimensions: Sequence[int], dtype: Any = None, sparse: bool = False) -> Any:
    grids = meshgrid(*[pnp.arange(d, dtype=dtype or np.int32) for d in dimensions],
                     indexing="ij", sparse=sparse)
    return tuple(grids) if sparse else pnp.stack(grids)


def kron(a: Any, b: Any) -> Any:
    """The Kronecker product: every entry of `a` times the whole of `b`."""
    a, b = pnp.asarray(a), pnp.asarray(b)
    nd = max(_ndim(a), _ndim(b))
    sa = (1,) * (nd - _ndim(a)) + get_aval(a).shape
    sb = (1,) * (nd - _ndim(b)) + get_aval(b).shape
    # interleave the axes: a's axis i pairs with b's axis i, then merge each pair
    a_axes = pnp.reshape(a, sum(((s, 1) for s in sa), ()))
    b_axes = pnp.reshape(b, sum(((1, s) for s in sb), ()))
    prod = a_axes * b_axes
    return pnp.reshape(prod, tuple(x * y for x, y in zip(sa, sb)))


def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: int | None = None) -> Any:
    """The cross product of 3-vectors (or the scalar z of 2-vectors) along the given axes."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = pnp.moveaxis(pnp.asarray(a), axisa, -1), pnp.moveaxis(pnp.asarray(b), axisb, -1)
    na, nb = get_aval(a).shape[-1], get_aval(b).shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError(f"incompatible dimensions for cross product (dimension must be 2 or "
                         f"3), got {na} and {nb}")
    a0, a1, a2 = a[..., 0], a[..., 1], (a[..., 2] if na == 3 else None)
    b0, b1, b2 = b[..., 0], b[..., 1], (b[..., 2] if nb == 3 else None)
    if a2 is None and b2 is None:
        return a0 * b1 - a1 * b0
    a2 = pnp.zeros_like(a0) if a2 is None else a2
    b2 = pnp.zeros_like(b0) if b2 is None else b2
    c = pnp.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return pnp.moveaxis(c, -1, axisc)


NUMPY = {name: globals()[name] for name in __all__ if name != "NUMPY"}
