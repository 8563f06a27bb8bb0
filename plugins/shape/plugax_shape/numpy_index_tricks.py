"""NumPy's index tricks as JAX has them: the index objects (s_, index_exp, r_, c_,
mgrid, ogrid), ix_, the triangle/diagonal index builders, ravel_multi_index,
unravel_index, fill_diagonal and choose.

Index arrays whose length depends on a shape are built from static arguments (n, k,
m are Python ints, as JAX requires); everything else is a composition of plugax.numpy
functions, so jit, vmap and grad apply with no rules of their own.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

import plugax.numpy as pnp
from plugax.extend import ConcretizationTypeError, get_aval

__all__ = ["s_", "index_exp", "r_", "c_", "mgrid", "ogrid", "ix_", "diag_indices",
           "diag_indices_from", "tril_indices", "triu_indices", "tril_indices_from",
           "triu_indices_from", "ravel_multi_index", "unravel_index",
           "fill_diagonal", "choose", "NUMPY"]

s_ = np.s_               # pure Python index objects: JAX re-exports NumPy's
index_exp = np.index_exp


def _shape(x: Any) -> tuple:
    return get_aval(x).shape


def ix_(*args: Any) -> tuple:
    """Open-mesh index arrays: the i-th 1-d argument shaped to broadcast along axis i."""
    out = []
    for i, a in enumerate(args):
        a = pnp.asarray(a)
        if len(_shape(a)) != 1:
            raise ValueError(f"Arguments to plugax.numpy.ix_ must be 1-dimensional, got "
                             f"shape {_shape(a)}")
        if get_aval(a).dtype == np.bool_:
            raise NotImplementedError("Boolean arguments to plugax.numpy.ix_ are not "
                                      "implemented (as in JAX)")
        shape = [1] * len(args)
        shape[i] = _shape(a)[0]
        out.append(pnp.reshape(a, shape))
    return tuple(out)


def _slice_values(s: slice) -> Any:
    """A slice of a grid: arange(start, stop, step), or linspace(start, stop, n) inclusive
    when the step is imaginary (`5j` = 5 points), as NumPy's mgrid."""
    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    if isinstance(step, complex):
        return pnp.linspace(start, s.stop, int(abs(step)), endpoint=True)
    return pnp.arange(start, s.stop, step)


class _Grid:
    """mgrid (dense, stacked) and ogrid (open, a list): `mgrid[0:3, 0:1:5j]`."""

    def __init__(self, sparse: bool, name: str):
        self.sparse, self.name = sparse, name

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            return _slice_values(key)
        axes = [_slice_values(k) for k in key]
        if self.sparse:
            return list(pnp.meshgrid(*axes, indexing="ij", sparse=True))
        if not axes:
            return pnp.zeros((0,))
        dtype = pnp.result_type(*axes)
        return pnp.stack([g.astype(dtype) for g in pnp.meshgrid(*axes, indexing="ij")], 0)

    def __repr__(self) -> str:
        return f"plugax.numpy.{self.name}"


mgrid = _Grid(False, "mgrid")
ogrid = _Grid(True, "ogrid")


class _Concatenator:
    """r_ and c_: concatenation along an axis by index syntax (`r_[1:4, 0, [7, 8]]`),
    with NumPy's directives: a leading string 'axis[,ndmin[,trans1d]]', 'r' or 'c'."""

    def __init__(self, axis: int, ndmin: int, trans1d: int, name: str):
        self.axis, self.ndmin, self.trans1d, self.name = axis, ndmin, trans1d, name

    def __getitem__(self, key: Any) -> Any:
        items = list(key) if isinstance(key, tuple) else [key]
        axis, ndmin, trans1d, matrix = self.axis, self.ndmin, self.trans1d, None
        if items and isinstance(items[0], str):
            spec = items.pop(0)
            if spec in ("r", "c"):
                matrix = spec
            else:
                try:
                    parts = [int(p) for p in spec.split(",")]
                except ValueError as e:
                    raise ValueError(f"{self.name}: could not understand directive "
                                     f"{spec!r}") from e
                axis, ndmin, trans1d = (parts + [ndmin, trans1d])[:3] if len(parts) < 3 \
                    else parts[:3]
        arrays = []
        for item in items:
            a = _slice_values(item) if isinstance(item, slice) else pnp.asarray(item)
            a = pnp.atleast_1d(a) if len(_shape(a)) == 0 else a
            if len(_shape(a)) < ndmin:
                old = len(_shape(a))
                shape = (1,) * (ndmin - old) + _shape(a)
                a = pnp.reshape(a, shape)
                if trans1d != -1 and old > 0:
                    t = trans1d % ndmin
                    order = list(range(ndmin - old, ndmin))
                    rest = list(range(ndmin - old))
                    perm = rest[:t] + order + rest[t:]
                    a = pnp.transpose(a, np.argsort(perm))
            arrays.append(a)
        if not arrays:
            return pnp.zeros((0,))
        out = pnp.concatenate(arrays, axis=axis)
        if matrix is not None:
            out = pnp.atleast_2d(out)
            return out if matrix == "r" else pnp.transpose(out)
        return out

    def __len__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return f"plugax.numpy.{self.name}"


r_ = _Concatenator(0, 1, -1, "r_")
c_ = _Concatenator(-1, 2, 0, "c_")


def diag_indices(n: int, ndim: int = 2) -> tuple:
    """(arange(n),) * ndim: the index of the main diagonal of an (n,)*ndim array."""
    n, ndim = int(n), int(ndim)
    if n < 0 or ndim < 0:
        raise ValueError(f"diag_indices: n and ndim must be non-negative; got n={n}, "
                         f"ndim={ndim}")
    return (pnp.arange(n),) * ndim


def diag_indices_from(arr: Any) -> tuple:
    shape = _shape(arr)
    if len(shape) < 2:
        raise ValueError("diag_indices_from: input array must be at least 2-d")
    if len(set(shape)) != 1:
        raise ValueError(f"diag_indices_from: all dimensions of input must be of equal "
                         f"length; got shape {shape}")
    return diag_indices(shape[0], len(shape))


def _triangle_indices(n: int, k: int, m: int | None, lower: bool) -> tuple:
    n, k = int(n), int(k)
    m = n if m is None else int(m)
    i, j = np.tril_indices(n, k, m) if lower else np.triu_indices(n, k, m)
    return pnp.asarray(i.astype(np.int32)), pnp.asarray(j.astype(np.int32))


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple:
    """Row and column indices of the lower triangle (static n, k, m: the count of
    indices is their function, so they must be known when tracing, as in JAX)."""
    return _triangle_indices(n, k, m, True)


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple:
    return _triangle_indices(n, k, m, False)


def _from(arr: Any, name: str) -> tuple:
    shape = _shape(arr)
    if len(shape) != 2:
        raise ValueError(f"{name}: input array must be 2-d; got shape {shape}")
    return shape


def tril_indices_from(arr: Any, k: int = 0) -> tuple:
    n, m = _from(arr, "tril_indices_from")
    return tril_indices(n, k, m)


def triu_indices_from(arr: Any, k: int = 0) -> tuple:
    n, m = _from(arr, "triu_indices_from")
    return triu_indices(n, k, m)


def _concrete(x: Any, what: str) -> np.ndarray:
    try:
        return np.asarray(x)
    except Exception as e:   # a tracer
        raise ConcretizationTypeError(
            f"{what} needs concrete values, but it was given a traced array (under jit); "
            f"use mode='wrap' or mode='clip' instead") from e


def ravel_multi_index(multi_index: Sequence[Any], dims: Sequence[int], mode: str = "raise",
                      order: str = "C", *, dtype: Any = None) -> Any:
    """Flat indices of coordinate arrays into an array of shape `dims`. mode='raise'
    checks bounds, which needs concrete indices (as JAX); 'wrap', 'clip', 'ignore'
    work under jit."""
    if len(multi_index) != len(dims):
        raise ValueError(f"ravel_multi_index: len(multi_index)={len(multi_index)} != "
                         f"len(dims)={len(dims)}")
    dims = tuple(int(d) for d in dims)
    idx = [pnp.asarray(i) for i in multi_index]
    dtype = pnp.result_type(int, *idx) if dtype is None else np.dtype(dtype)
    if not np.issubdtype(dtype, np.integer):
        raise ValueError(f"ravel_multi_index: dtype={dtype} is not an integer type")
    for i in idx:
        if get_aval(i).dtype.kind not in "iu":
            raise TypeError("ravel_multi_index: only int indices permitted")
    if mode == "raise":
        for i, d in zip(idx, dims):
            c = _concrete(i, "ravel_multi_index with mode='raise'")
            if np.any((c < 0) | (c >= d)):
                raise ValueError("ravel_multi_index: invalid entry in coordinates array")
    elif mode == "clip":
        idx = [pnp.clip(i, 0, d - 1) for i, d in zip(idx, dims)]
    elif mode == "wrap":
        idx = [pnp.remainder(i, d) for i, d in zip(idx, dims)]
    elif mode != "ignore":
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', 'clip', or "
                         f"'ignore'.")
    if order == "C":
        strides = np.cumprod((1,) + dims[1:][::-1])[::-1]
    elif order == "F":
        strides = np.cumprod((1,) + dims[:-1])
    else:
        raise ValueError(f"invalid order={order!r}. Expected 'C' or 'F'")
    out = pnp.zeros((), dtype)
    for i, s in zip(idx, strides):
        out = out + i.astype(dtype) * int(s)
    return out


def unravel_index(indices: Any, shape: Sequence[int]) -> tuple:
    """Coordinates of flat indices in `shape`. Out-of-range indices are clipped to the
    nearest edge, as JAX does (NumPy raises; a traced index cannot)."""
    idx = pnp.asarray(indices)
    shape = list(shape) if isinstance(shape, (list, tuple)) else [shape]
    if any(np.ndim(s) != 0 for s in shape):
        raise ValueError("unravel_index: shape should be a scalar or 1D sequence.")
    out: list = [0] * len(shape)
    for i in reversed(range(len(shape))):
        idx, out[i] = pnp.floor_divide(idx, shape[i]), pnp.remainder(idx, shape[i])
    above = idx > 0
    below = pnp.zeros((), bool) if get_aval(idx).dtype.kind == "u" else idx < -1
    return tuple(pnp.where(above, s - 1, pnp.where(below, 0, o)) for s, o in zip(shape, out))


def fill_diagonal(a: Any, val: Any, wrap: bool = False, *, inplace: bool = True) -> Any:
    """a with its main diagonal set to val (repeated to length). JAX's arrays are
    immutable: pass inplace=False and use the result."""
    if inplace:
        raise NotImplementedError("plugax arrays are immutable (as JAX's): call "
                                  "fill_diagonal(a, val, inplace=False) and use the result")
    if wrap:
        raise NotImplementedError("fill_diagonal: wrap=True is not implemented (as in JAX)")
    a, val = pnp.asarray(a), pnp.asarray(val)
    shape = _shape(a)
    if len(shape) < 2:
        raise ValueError("fill_diagonal: array must be at least 2-d")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise ValueError(f"fill_diagonal: all dimensions of input must be of equal length; "
                         f"got shape {shape}")
    n = min(shape)
    if len(_shape(val)) != 0:
        flat = pnp.ravel(val)
        reps = -(-n // max(_shape(flat)[0], 1))
        val = pnp.tile(flat, reps)[:n]
    return a.at[diag_indices(n, len(shape))].set(val)


def choose(a: Any, choices: Sequence[Any], out: None = None, mode: str = "raise") -> Any:
    """choices[a[i]][i] for every position i (all broadcast together)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to plugax.numpy.choose is not "
                                  "supported (arrays are immutable)")
    a = pnp.asarray(a)
    if get_aval(a).dtype.kind not in "iu":
        raise ValueError("choose: `a` array must be integer typed")
    n = len(choices)
    if mode == "raise":
        c = _concrete(a, "choose with mode='raise'")
        if np.any((c < 0) | (c >= n)):
            raise ValueError("choose: invalid entry in choice array")
    elif mode == "wrap":
        a = pnp.remainder(a, n)
    elif mode == "clip":
        a = pnp.clip(a, 0, n - 1)
    else:
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    a, *cs = pnp.broadcast_arrays(a, *[pnp.asarray(c) for c in choices])
    stacked = pnp.stack(cs, 0)
    return pnp.take_along_axis(stacked, a[None], axis=0)[0]


NUMPY: dict[str, Any] = {name: globals()[name] for name in __all__ if name != "NUMPY"}
