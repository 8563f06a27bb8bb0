"""Sample summaries of jax.scipy.stats: rankdata, sem, mode.

They take only the static arguments JAX takes (method, axis, nan_policy as Python
values) so they trace under jit; `nan_policy="omit"`/"raise" are refused where JAX
refuses them, since a traced program cannot know whether its input holds NaNs.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

import plugax
import plugax.lax as lax
import plugax.numpy as jnp
from plugax.extend import default_float_dtype

from ._common import promote

__all__ = ["ModeResult", "mode", "rankdata", "sem"]

ArrayLike = Any
_POLICIES = ("propagate", "omit", "raise")


def _check_policy(nan_policy: str, fn: str, omit_ok: bool = False) -> None:
    if nan_policy not in _POLICIES:
        raise ValueError(f"Illegal nan_policy value {nan_policy!r}; expected one of "
                         f"{{'propagate', 'omit', 'raise'}}")
    if nan_policy == "omit" and not omit_ok:
        raise NotImplementedError(f"Logic for `nan_policy` of {nan_policy} is not implemented")
    if nan_policy == "raise":
        raise NotImplementedError(f"In order to best JIT compile `{fn}`, we cannot know "
                                  f"whether `x` contains nans. Please check if nans exist in "
                                  f"`x` outside of the `{fn}` function.")


class ModeResult(NamedTuple):
    mode: Any
    count: Any


def _rows(x: Any, axis: int | None) -> tuple[Any, int | None]:
    """`x` as (n, m): the reduced axis first, everything else flattened."""
    if axis is None:
        return jnp.reshape(x, (-1, 1)), None
    axis = axis % x.ndim
    moved = jnp.moveaxis(x, axis, 0)
    return jnp.reshape(moved, (moved.shape[0], -1)), axis


def mode(a: ArrayLike, axis: int | None = 0, nan_policy: str = "propagate",
         keepdims: bool = False) -> ModeResult:
    """The most common value along `axis` (the smallest of ties) and how often it occurs."""
    _check_policy(nan_policy, "mode")
    x = jnp.atleast_1d(jnp.asarray(a))
    shape = x.shape
    if axis is not None:
        axis = axis % x.ndim
    if keepdims:
        out = (1,) * len(shape) if axis is None else tuple(
            1 if i == axis else s for i, s in enumerate(shape))
    else:
        out = () if axis is None else tuple(s for i, s in enumerate(shape) if i != axis)
    if x.size == 0:       # JAX's answer for no data: NaN, seen 0 times (as floats)
        nan = jnp.full(out, np.nan, dtype=default_float_dtype())
        return ModeResult(nan, jnp.zeros(out, dtype=default_float_dtype()))
    rows, axis = _rows(x, axis)
    ordered = jnp.sort(rows, axis=0)
    # occurrences of each sorted value: n^2 comparisons, fine for a summary statistic and
    # free of data-dependent shapes
    counts = jnp.sum(ordered[:, None, :] == ordered[None, :, :], axis=1)
    first = jnp.argmax(counts, axis=0)          # the first maximum: the smallest value
    value = jnp.take_along_axis(ordered, first[None, :], axis=0)[0]
    return ModeResult(jnp.reshape(value, out), jnp.reshape(jnp.max(counts, axis=0), out))


def _rank_vector(a: Any, method: str) -> Any:
    n = a.shape[0]
    out_dtype = default_float_dtype()
    ordered, order = lax.sort_key_val(a, jnp.arange(n))
    inverse = jnp.argsort(order)                 # position of each input in sorted order
    if method == "ordinal":
        return (inverse + 1).astype(out_dtype)
    starts = jnp.concatenate([jnp.array([True]), ordered[1:] != ordered[:-1]])
    dense = jnp.take(jnp.cumsum(starts), inverse)
    if method == "dense":
        return dense.astype(out_dtype)
    # where each group of ties starts in sorted order, then n after the last
    edges = jnp.nonzero(starts, size=n + 1, fill_value=n)[0].astype(out_dtype)
    if method == "max":
        return jnp.take(edges, dense)
    if method == "min":
        return jnp.take(edges, dense - 1) + 1
    return 0.5 * (jnp.take(edges, dense) + jnp.take(edges, dense - 1) + 1)


def rankdata(a: ArrayLike, method: str = "average", *, axis: int | None = None,
             nan_policy: str = "propagate") -> Any:
    """Ranks from 1, ties resolved by `method` (average, min, max, dense, ordinal); NaN
    anywhere in a ranked vector makes all its ranks NaN."""
    _check_policy(nan_policy, "rankdata")
    if method not in ("average", "min", "max", "dense", "ordinal"):
        raise ValueError(f"unknown method '{method}'")
    a = jnp.asarray(a)

    def ranks(v: Any) -> Any:
        r = _rank_vector(v, method)
        return jnp.where(jnp.any(jnp.isnan(v)), np.nan, r) if v.dtype.kind == "f" else r

    if axis is None:
        return ranks(jnp.ravel(a))
    rows, axis = _rows(a, axis)
    ranked = plugax.vmap(ranks, in_axes=1, out_axes=1)(rows)
    moved = jnp.reshape(ranked, (a.shape[axis],) + tuple(
        s for i, s in enumerate(a.shape) if i != axis))
    return jnp.moveaxis(moved, 0, axis)


def sem(a: ArrayLike, axis: int | None = 0, ddof: int = 1, nan_policy: str = "propagate", *,
        keepdims: bool = False) -> Any:
    """Standard error of the mean: std(ddof) / sqrt(count); "omit" ignores NaNs."""
    b, = promote("sem", a)
    if nan_policy == "propagate":
        size = b.size if axis is None else b.shape[axis]
        return jnp.std(b, axis, ddof=ddof, keepdims=keepdims) / np.sqrt(size).astype(b.dtype)
    if nan_policy == "omit":
        count = jnp.sum(~jnp.isnan(b), axis, keepdims=keepdims)
        return jnp.nanstd(b, axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(count).astype(b.dtype)
    raise ValueError(f"{nan_policy} is not supported")
