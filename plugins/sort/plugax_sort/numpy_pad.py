"""`plugax.numpy.pad` in every NumPy mode, as JAX has it.

It lives in the sort family because its statistic modes need the reductions
family (maximum, minimum, mean) and this family's median; a family calls only the
families below it (elementwise, shape, reductions for this one).

The pad widths are static, so each axis is padded by blocks computed from static
index arithmetic:
  - constant / empty: blocks of the constant (JAX fills 'empty' with zeros too);
  - edge, wrap, reflect and symmetric (even): a gather with static indices, which
    NumPy's own pad computes when applied to arange(n) -- widths larger than the
    axis (repeated reflection) come out right for free;
  - reflect / symmetric with reflect_type='odd' and linear_ramp: the padded axis is
    an affine function of the axis, out = M x + c, where M and c are NumPy's pad
    applied to the identity and to zeros (exact: the entries are small integers
    and NumPy's own ramp coefficients);
  - maximum, minimum, mean, median: the statistic of the first/last stat_length
    entries, repeated;
  - a callable: JAX's protocol, func(vector, iaxis_pad_width, iaxis, kwargs)
    applied to every 1-d slice along each axis of the zero-padded array (by vmap).
All are compositions of plugax.numpy functions, so jit, vmap and grad apply.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import plugax
import plugax.numpy as pnp
from plugax.extend import get_aval

__all__ = ["pad", "NUMPY"]

_MODES = ("constant", "edge", "linear_ramp", "maximum", "mean", "median", "minimum",
          "reflect", "symmetric", "wrap", "empty")


def _pairs(value: Any, ndim: int, name: str, as_int: bool = True) -> np.ndarray:
    """A (ndim, 2) table from NumPy's shorthands: v, (v,), (before, after), per axis."""
    arr = np.asarray(value)
    if as_int and arr.dtype.kind not in "iu" and not (arr.dtype.kind == "f" and
                                                      np.all(arr == np.round(arr))):
        raise TypeError(f"pad: `{name}` must be composed of integers; got {value!r}")
    try:
        out = np.broadcast_to(arr, (ndim, 2))
    except ValueError as e:
        raise ValueError(f"pad: `{name}` of shape {arr.shape} cannot be broadcast to "
                         f"({ndim}, 2), one (before, after) pair per axis") from e
    return out.astype(np.int64) if as_int else out


def _along(x: Any, axis: int, matrix: np.ndarray, offset: np.ndarray | None = None) -> Any:
    """matrix @ x along axis (+ offset): the affine pads. The matrix is sparse (a few
    entries per row), so it is applied as a few static gathers, each scaled by its
    row's coefficients, rather than as a dense contraction."""
    dtype = get_aval(x).dtype
    work = x if dtype.kind in "fc" else x.astype(pnp.result_type(float))
    wdt = get_aval(work).dtype
    shape = [1] * len(get_aval(x).shape)
    shape[axis] = -1
    rows = [np.nonzero(row)[0] for row in matrix]
    out = None
    for k in range(max(len(r) for r in rows)):
        cols = np.array([r[k] if k < len(r) else 0 for r in rows], np.int32)
        coef = np.array([row[r[k]] if k < len(r) else 0.0 for row, r in zip(matrix, rows)])
        term = pnp.take(work, pnp.asarray(cols), axis=axis) * pnp.asarray(
            coef.reshape(shape).astype(wdt))
        out = term if out is None else out + term
    if offset is not None:
        out = out + pnp.asarray(offset.reshape(shape).astype(wdt))
    return out if dtype.kind in "fc" else out.astype(dtype)


def _stat(x: Any, axis: int, before: int, after: int, length: Any, mode: str) -> Any:
    n = get_aval(x).shape[axis]
    fn = {"maximum": pnp.max, "minimum": pnp.min, "mean": pnp.mean, "median": pnp.median}[mode]
    lb, la = (n, n) if length is None else (min(max(int(length[0]), 1), n),
                                            min(max(int(length[1]), 1), n))
    lead = (slice(None),) * axis

    def block(sl: slice, count: int) -> Any:
        v = fn(x[lead + (sl,)], axis=axis, keepdims=True)
        if get_aval(x).dtype.kind in "iu" and mode in ("mean", "median"):
            v = pnp.round(v).astype(get_aval(x).dtype)    # NumPy rounds integer means
        reps = [1] * len(get_aval(x).shape)
        reps[axis] = count
        return pnp.tile(v.astype(get_aval(x).dtype), reps)
    return pnp.concatenate([block(slice(0, lb), before), x,
                            block(slice(n - la, n), after)], axis=axis)


def _constant_blocks(x: Any, axis: int, before: int, after: int, values: np.ndarray) -> Any:
    shape = list(get_aval(x).shape)
    dtype = get_aval(x).dtype
    parts = []
    if before:
        shape[axis] = before
        parts.append(pnp.full(tuple(shape), values[0], dtype))   # values: floats or traced
    parts.append(x)
    if after:
        shape[axis] = after
        parts.append(pnp.full(tuple(shape), values[1], dtype))
    return pnp.concatenate(parts, axis=axis) if len(parts) > 1 else x


def _apply_callable(x: Any, widths: np.ndarray, func: Callable, kwargs: dict) -> Any:
    for axis in range(len(get_aval(x).shape)):
        def one(v: Any, axis: int = axis) -> Any:
            return pnp.asarray(func(v, tuple(int(w) for w in widths[axis]), axis, kwargs))
        moved = pnp.moveaxis(x, axis, -1)
        lead = get_aval(moved).shape[:-1]
        flat = pnp.reshape(moved, (-1, get_aval(moved).shape[-1]))
        out = plugax.vmap(one)(flat) if get_aval(flat).shape[0] else flat
        x = pnp.moveaxis(pnp.reshape(out, lead + get_aval(out).shape[-1:]), -1, axis)
    return x


def pad(array: Any, pad_width: Any, mode: str | Callable = "constant", **kwargs: Any) -> Any:
    """NumPy's pad (see the module docstring for how each mode is computed)."""
    x = pnp.asarray(array)
    ndim = len(get_aval(x).shape)
    widths = _pairs(pad_width, ndim, "pad_width")
    if np.any(widths < 0):
        raise ValueError(f"pad: index can't contain negative values; got pad_width="
                         f"{pad_width!r}")
    if callable(mode):
        x = _constant_blocks_all(x, widths, np.zeros((ndim, 2)))
        return _apply_callable(x, widths, mode, kwargs)
    if mode not in _MODES:
        raise ValueError(f"Unimplemented padding mode '{mode}' for plugax.numpy.pad; "
                         f"expected one of {_MODES} or a callable")
    allowed = {"constant": {"constant_values"}, "linear_ramp": {"end_values"},
               "reflect": {"reflect_type"}, "symmetric": {"reflect_type"},
               **{m: {"stat_length"} for m in ("maximum", "mean", "median", "minimum")}}
    unexpected = set(kwargs) - allowed.get(mode, set())
    if unexpected:
        raise ValueError(f"pad: unsupported keyword arguments for mode '{mode}': "
                         f"{sorted(unexpected)}")
    if mode in ("constant", "empty"):
        cv = kwargs.get("constant_values", 0)
        try:
            values = _pairs(cv, ndim, "constant_values", as_int=False)
        except Exception:   # a traced value (under jit): an array of fill values
            values = pnp.broadcast_to(pnp.asarray(cv), (ndim, 2))
        return _constant_blocks_all(x, widths, values)
    if mode in ("maximum", "mean", "median", "minimum"):
        length = kwargs.get("stat_length")
        lengths = None if length is None else _pairs(length, ndim, "stat_length")
        for axis in range(ndim):
            b, a = widths[axis]
            if b or a:
                x = _stat(x, axis, int(b), int(a), None if lengths is None else lengths[axis],
                          mode)
        return x
    reflect_type = kwargs.get("reflect_type", "even")
    if reflect_type not in ("even", "odd"):
        raise ValueError(f"pad: reflect_type must be 'even' or 'odd'; got {reflect_type!r}")
    ends = _pairs(kwargs.get("end_values", 0), ndim, "end_values", as_int=False)
    for axis in range(ndim):
        b, a = (int(w) for w in widths[axis])
        n = get_aval(x).shape[axis]
        if not (b or a):
            continue
        if n == 0:
            raise ValueError(f"pad: can't extend the empty axis {axis} in mode '{mode}'")
        if mode == "linear_ramp":
            eye = np.pad(np.eye(n), ((b, a), (0, 0)), mode="linear_ramp", end_values=0)
            offset = np.pad(np.zeros(n), (b, a), mode="linear_ramp",
                            end_values=tuple(float(v) for v in ends[axis]))
            x = _along(x, axis, eye, offset)
        elif reflect_type == "odd" and mode in ("reflect", "symmetric"):
            eye = np.pad(np.eye(n), ((b, a), (0, 0)), mode=mode, reflect_type="odd")
            x = _along(x, axis, eye)
        else:
            idx = np.pad(np.arange(n), (b, a), mode=mode)
            x = pnp.take(x, pnp.asarray(idx.astype(np.int32)), axis=axis)
    return x


def _constant_blocks_all(x: Any, widths: np.ndarray, values: np.ndarray) -> Any:
    for axis in range(len(get_aval(x).shape)):
        b, a = (int(w) for w in widths[axis])
        x = _constant_blocks(x, axis, b, a, values[axis])
    return x


NUMPY: dict[str, Any] = {"pad": pad}
