"""Primitives that cut out or embed rectangular windows: slice, pad,
dynamic_slice, dynamic_update_slice (concatenate and split are the kernel's:
the Jacobians need them; `concatenate` is re-exported here for the front end).

They come in transpose pairs: the adjoint of cutting a window out is embedding it
into zeros (slice <-> pad, dynamic_slice <-> dynamic_update_slice). Start indices of the dynamic ones are
operands (they may be traced) and are clamped so the window fits, as in XLA.
"""
from __future__ import annotations

import builtins
from typing import Any, Sequence

import numpy as np

from plugax.extend import (Array, Primitive, RuleSet, ShapedArray, bdim_at_front, bind,
                           checked_impl, concatenate,
                           deflinear, first_weak, get_aval, is_undefined_primal, linear_jvp,
                           moveaxis, shape_error, unary_transpose)

from ._common import defshape, index_dtype_ok, lowering_of, normalized_indices, zeros
from .structural import broadcast_in_dim

slice_p = Primitive("slice")
pad_p = Primitive("pad")
dynamic_slice_p = Primitive("dynamic_slice")
dynamic_update_slice_p = Primitive("dynamic_update_slice")


# --- slice -------------------------------------------------------------------------------
def _slice_shape(aval: ShapedArray, *, start_indices, limit_indices, strides) -> tuple:
    strides = strides or (1,) * aval.ndim
    if not len(start_indices) == len(limit_indices) == len(strides) == aval.ndim:
        raise shape_error(slice_p, [aval], "needs one start, limit and stride per axis",
                          "pass sequences of length operand.ndim", start_indices=start_indices,
                          limit_indices=limit_indices, strides=strides)
    if any(not 0 <= s <= l <= n or st < 1 for s, l, n, st
           in zip(start_indices, limit_indices, aval.shape, strides)):
        raise shape_error(slice_p, [aval], "needs 0 <= start <= limit <= size and stride >= 1 "
                          "on every axis", "clip the window to the operand's shape",
                          start_indices=start_indices, limit_indices=limit_indices,
                          strides=strides)
    return tuple((l - s + st - 1) // st for s, l, st in zip(start_indices, limit_indices, strides))


def _slice_impl(x, *, start_indices, limit_indices, strides):
    strides = strides or (1,) * x.ndim
    return x[tuple(map(builtins.slice, start_indices, limit_indices, strides))]


@unary_transpose
def _slice_transpose(ct, aval, *, start_indices, limit_indices, strides):
    """Embed the window into zeros: pad by `start` below, the rest above, stride-1 between."""
    strides = strides or (1,) * aval.ndim
    config = []
    for n, s, m, st in zip(aval.shape, start_indices, get_aval(ct).shape, strides):
        dilated = m + max(m - 1, 0) * (st - 1)
        config.append((s, n - s - dilated, st - 1))
    return pad(ct, _zero_like(ct), config)


def _zero_like(x: Any) -> Array:
    """A rank-0 zero of x's dtype and weak type: padding with it keeps x's weak type, as
    JAX's transposes do (x.at[i].set on a weak array stays weak)."""
    aval = get_aval(x)
    return Array(np.zeros((), aval.dtype), aval.weak_type)


def _slice_vmap(ctx, args, dims, *, start_indices, limit_indices, strides):
    d = dims[0]
    ins = lambda t, v: t[:d] + (v,) + t[d:]
    return bind(slice_p, args[0], start_indices=ins(start_indices, 0),
                limit_indices=ins(limit_indices, ctx.axis_size),
                strides=None if strides is None else ins(strides, 1)), d


def slice(operand: Any, start_indices: Sequence[int], limit_indices: Sequence[int],
          strides: Sequence[int] | None = None) -> Any:
    """lax.slice: the static window [start, limit) with optional strides."""
    return bind(slice_p, operand, start_indices=tuple(int(i) for i in start_indices),
                limit_indices=tuple(int(i) for i in limit_indices),
                strides=None if strides is None else tuple(int(i) for i in strides))


# --- pad ---------------------------------------------------------------------------------
def _pad_abstract_eval(ctx, aval, pv, *, padding_config):
    if pv.ndim != 0 or pv.dtype != aval.dtype:
        raise shape_error(pad_p, [aval, pv], "needs a rank-0 padding value of the operand's "
                          "dtype", "convert the padding value", padding_config=padding_config)
    if len(padding_config) != aval.ndim or any(i < 0 for _, _, i in padding_config):
        raise shape_error(pad_p, [aval, pv], "needs one (low, high, interior) triple per axis "
                          "with interior >= 0", "fix padding_config",
                          padding_config=padding_config)
    shape = tuple(lo + hi + n + max(n - 1, 0) * i
                  for n, (lo, hi, i) in zip(aval.shape, padding_config))
    if any(s < 0 for s in shape):
        raise shape_error(pad_p, [aval, pv], f"would produce the negative shape {shape}",
                          "crop less with negative low/high padding",
                          padding_config=padding_config)
    return ShapedArray(shape, aval.dtype, aval.weak_type and pv.weak_type)


def _pad_impl(x, pv, *, padding_config):
    shape = [lo + hi + n + max(n - 1, 0) * i for n, (lo, hi, i) in zip(x.shape, padding_config)]
    out = np.full(shape, pv, dtype=x.dtype)
    src, dst = [], []
    for n, m, (lo, _, i) in zip(x.shape, shape, padding_config):
        pos = lo + np.arange(n) * (i + 1)          # where each element of x lands
        kept = np.nonzero((pos >= 0) & (pos < m))[0]
        if kept.size == 0:
            return out
        src.append(np.s_[kept[0]:kept[-1] + 1])
        dst.append(np.s_[pos[kept[0]]:pos[kept[-1]] + 1:i + 1])
    out[tuple(dst)] = x[tuple(src)]
    return out


def _pad_transpose(ctx, ct, x, pv, *, padding_config):
    """Undo low/high padding by padding with their negatives, then drop interior padding.

    The padding value's cotangent is what the operand's did not receive.
    """
    import plugax.lax as lax
    aval = x.aval if is_undefined_primal(x) else get_aval(x)
    unpadded = pad(ct, _zero_like(ct), [(-lo, -hi, 0) for lo, hi, _ in padding_config])
    strides = [i + 1 for _, _, i in padding_config]
    ct_x = slice(unpadded, (0,) * aval.ndim, get_aval(unpadded).shape, strides)
    ct_pv = None
    if is_undefined_primal(pv):
        everything = tuple(range(aval.ndim))
        ct_pv = lax.sub(lax.reduce_sum(ct, everything), lax.reduce_sum(ct_x, everything))
    return [ct_x if is_undefined_primal(x) else None, ct_pv]


def _pad_vmap(ctx, args, dims, *, padding_config):
    (x, pv), (dx, dpv) = args, dims
    if dpv is None:
        config = padding_config[:dx] + ((0, 0, 0),) + padding_config[dx:]
        return bind(pad_p, x, pv, padding_config=config), dx
    # A batched padding value: pad with zero, then select it where the padding went.
    import plugax.lax as lax
    x = bdim_at_front(x, dx, ctx.axis_size)
    aval = get_aval(x)
    config = ((0, 0, 0),) + padding_config
    padded = bind(pad_p, x, Array(np.zeros((), aval.dtype)), padding_config=config)
    shape = get_aval(padded).shape
    mask = _pad_impl(np.zeros(aval.shape[1:], bool), np.True_,
                     padding_config=padding_config)
    mask = broadcast_in_dim(Array(mask), shape, tuple(range(1, len(shape))))
    pv = broadcast_in_dim(moveaxis(pv, dpv, 0), shape, (0,))
    return lax.select_n(mask, padded, pv), 0


def pad(operand: Any, padding_value: Any, padding_config: Sequence[Sequence[int]]) -> Any:
    """lax.pad: (low, high, interior) per axis; negative low/high crop."""
    if type(padding_value) in (bool, int, float, complex):
        padding_value = Array(np.asarray(padding_value, get_aval(operand).dtype), True)
    return bind(pad_p, operand, padding_value,
                padding_config=tuple(tuple(int(v) for v in c) for c in padding_config))


# --- dynamic_slice / dynamic_update_slice ----------------------------------------------------
def _check_starts(prim, aval, starts, avals, params):
    if len(starts) != aval.ndim or any(s.ndim or not index_dtype_ok(s) for s in starts):
        raise shape_error(prim, avals, f"needs {aval.ndim} rank-0 integer start indices",
                          "pass one integer scalar start per operand axis", **params)


def _clamped(starts, shape, sizes):
    """Start indices moved so the window fits, as XLA does."""
    return [int(np.clip(s, 0, n - z)) for s, n, z in zip(starts, shape, sizes)]


def _dynamic_slice_abstract_eval(ctx, aval, *starts, slice_sizes):
    _check_starts(dynamic_slice_p, aval, starts, [aval, *starts], {"slice_sizes": slice_sizes})
    if len(slice_sizes) != aval.ndim or any(not 0 <= z <= n for z, n in
                                            zip(slice_sizes, aval.shape)):
        raise shape_error(dynamic_slice_p, [aval, *starts], "needs 0 <= slice size <= operand "
                          "size on every axis", "shrink slice_sizes", slice_sizes=slice_sizes)
    return ShapedArray(slice_sizes, aval.dtype, aval.weak_type)


def _dynamic_slice_impl(x, *starts, slice_sizes):
    starts = _clamped(starts, x.shape, slice_sizes)
    return x[tuple(np.s_[s:s + z] for s, z in zip(starts, slice_sizes))]


def _dynamic_slice_transpose(ctx, ct, x, *starts, slice_sizes):
    ct_x = dynamic_update_slice(zeros(x.aval.shape, x.aval.dtype), ct, starts)
    return [ct_x] + [None] * len(starts)


def _window_indices(start: Any, size: int, window: int, axis_size: int) -> Any:
    """(B, window) indices of batched windows: clamped start + iota, the XLA way."""
    import plugax.lax as lax
    from .indexing import iota
    dtype = get_aval(start).dtype
    start = lax.clamp(Array(np.zeros((), dtype)), start, Array(np.asarray(size - window, dtype)))
    offsets = iota(dtype, window)
    return lax.add(broadcast_in_dim(start, (axis_size, window), (0,)),
                   broadcast_in_dim(offsets, (axis_size, window), (1,)))


def _batched_starts(starts, dims, axis_size):
    return [moveaxis(s, d, 0) if d is not None else broadcast_in_dim(s, (axis_size,), ())
            for s, d in zip(starts, dims)]


def _dynamic_slice_vmap(ctx, args, dims, *, slice_sizes):
    (x, *starts), (dx, *dstarts) = args, dims
    B = ctx.axis_size
    x = bdim_at_front(x, dx, B)
    if all(d is None for d in dstarts):
        return dynamic_slice(x, [0, *starts], (B, *slice_sizes)), 0
    # Batched starts: one gather of a window per axis (gather keeps the batch in front).
    from .indexing import gather
    for k, (s, z) in enumerate(zip(_batched_starts(starts, dstarts, B), slice_sizes)):
        idx = _window_indices(s, get_aval(x).shape[k + 1], z, B)
        x = gather(x, idx, axis=k + 1, batch_dims=1)
    return x, 0


def dynamic_slice(operand: Any, start_indices: Sequence[Any], slice_sizes: Sequence[int]) -> Any:
    """The primitive: a window of static size at (possibly traced) start indices, each
    clamped so the window fits. The rules use it; users get `lax_dynamic_slice`."""
    return bind(dynamic_slice_p, operand, *start_indices,
                slice_sizes=tuple(int(z) for z in slice_sizes))


def _from_end(operand: Any, start_indices: Sequence[Any]) -> list:
    """Negative start indices count from the end of their axis (JAX's default,
    allow_negative_indices=True); the primitives then clamp the window into range.
    Anything but integer starts of the right number is left for the abstract eval rule
    to explain."""
    shape = get_aval(operand).shape
    if len(start_indices) != len(shape):
        return list(start_indices)
    out = []
    for s, n in zip(start_indices, shape):
        if isinstance(s, (int, np.integer)) and s >= 0:
            out.append(s)
        else:
            aval = get_aval(s)
            out.append(normalized_indices(s, n) if aval.dtype.kind == "i" and not aval.ndim
                       else s)
    return out


def lax_dynamic_slice(operand: Any, start_indices: Sequence[Any],
                      slice_sizes: Sequence[int]) -> Any:
    """lax.dynamic_slice: negative starts count from the end, then the window is clamped
    into range (so it always has `slice_sizes`), as in JAX."""
    return dynamic_slice(operand, _from_end(operand, start_indices), slice_sizes)


def _dynamic_update_slice_abstract_eval(ctx, aval, upd, *starts):
    avals = [aval, upd, *starts]
    _check_starts(dynamic_update_slice_p, aval, starts, avals, {})
    if upd.dtype != aval.dtype or upd.ndim != aval.ndim or any(
            u > n for u, n in zip(upd.shape, aval.shape)):
        raise shape_error(dynamic_update_slice_p, avals, "needs an update of the operand's "
                          "dtype and rank, no larger on any axis", "slice or convert the update")
    return ShapedArray(aval.shape, aval.dtype, aval.weak_type and upd.weak_type)


def _dynamic_update_slice_impl(x, upd, *starts):
    starts = _clamped(starts, x.shape, upd.shape)
    out = np.array(x, copy=True)
    out[tuple(np.s_[s:s + z] for s, z in zip(starts, upd.shape))] = upd
    return out


def _dynamic_update_slice_transpose(ctx, ct, x, upd, *starts):
    upd_aval = upd.aval if is_undefined_primal(upd) else get_aval(upd)
    ct_x = ct_upd = None
    if is_undefined_primal(x):
        ct_x = dynamic_update_slice(ct, zeros(upd_aval.shape, upd_aval.dtype), starts)
    if is_undefined_primal(upd):
        ct_upd = dynamic_slice(ct, starts, upd_aval.shape)
    return [ct_x, ct_upd] + [None] * len(starts)


def _dynamic_update_slice_vmap(ctx, args, dims):
    (x, upd, *starts), (dx, du, *dstarts) = args, dims
    B = ctx.axis_size
    x, upd = bdim_at_front(x, dx, B), bdim_at_front(upd, du, B)
    if all(d is None for d in dstarts):
        return dynamic_update_slice(x, upd, [0, *starts]), 0
    # Batched starts: embed the update (and a mask of where it went) into zeros one axis
    # at a time with scatter-add, whose window indices are distinct, then select.
    import plugax.lax as lax
    from .indexing import scatter_add
    full = get_aval(x).shape
    embedded, mask = upd, broadcast_in_dim(Array(np.True_), get_aval(upd).shape, ())
    for k, s in enumerate(_batched_starts(starts, dstarts, B)):
        shape = get_aval(embedded).shape
        idx = _window_indices(s, full[k + 1], shape[k + 1], B)
        target = shape[:k + 1] + (full[k + 1],) + shape[k + 2:]
        embedded = scatter_add(zeros(target, get_aval(x).dtype), idx, embedded,
                               axis=k + 1, batch_dims=1)
        mask = scatter_add(zeros(target, np.bool_), idx, mask, axis=k + 1, batch_dims=1)
    return lax.select_n(mask, x, embedded), 0


def dynamic_update_slice(operand: Any, update: Any, start_indices: Sequence[Any]) -> Any:
    """The primitive: write `update` into `operand` at (clamped) start indices."""
    return bind(dynamic_update_slice_p, operand, update, *start_indices)


def lax_dynamic_update_slice(operand: Any, update: Any, start_indices: Sequence[Any]) -> Any:
    """lax.dynamic_update_slice: negative starts count from the end, then clamp (JAX)."""
    return dynamic_update_slice(operand, update, _from_end(operand, start_indices))


RULES = [
    defshape(slice_p, _slice_impl, _slice_shape, transpose=_slice_transpose, batching=_slice_vmap),
    RuleSet(primitive=pad_p, impl=checked_impl(_pad_impl, _pad_abstract_eval),
            abstract_eval=_pad_abstract_eval,
            jvp=deflinear(pad_p), batching=_pad_vmap, transpose=_pad_transpose, lowering=lowering_of(pad_p)),
    RuleSet(primitive=dynamic_slice_p,
            impl=checked_impl(_dynamic_slice_impl, _dynamic_slice_abstract_eval),
            abstract_eval=_dynamic_slice_abstract_eval, jvp=linear_jvp(dynamic_slice_p, [0]),
            batching=_dynamic_slice_vmap, transpose=_dynamic_slice_transpose, lowering=lowering_of(dynamic_slice_p)),
    RuleSet(primitive=dynamic_update_slice_p,
            impl=checked_impl(_dynamic_update_slice_impl, _dynamic_update_slice_abstract_eval),
            abstract_eval=_dynamic_update_slice_abstract_eval,
            jvp=linear_jvp(dynamic_update_slice_p, [0, 1]), batching=_dynamic_update_slice_vmap,
            transpose=_dynamic_update_slice_transpose,
            lowering=lowering_of(dynamic_update_slice_p)),
]

LAX = {"slice": slice, "pad": pad,
       "dynamic_slice": lax_dynamic_slice, "dynamic_update_slice": lax_dynamic_update_slice}
