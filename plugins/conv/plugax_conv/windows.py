"""Window reductions: reduce_window_sum / max / min, and the two primitives that
differentiate max and min windows (max-pooling), as in JAX.

All share XLA's ReduceWindow geometry: the operand is dilated by
`base_dilation` (holes filled with the reduction's identity), padded with
`padding` (low, high; negative crops), and every window of
`window_dimensions` taps, `window_dilation` apart, `window_strides` apart,
is reduced.

- reduce_window_sum is linear: its transpose pads the cotangent (strides
  become interior holes) and sums windows again, striding by base_dilation.
- max/min are piecewise selections: the tangent is the tangent at each
  window's chosen element, `select_and_gather_add(t, x)`, linear in t; its
  transpose scatters (adds) each cotangent back to that element,
  `select_and_scatter_add(ct, x)`, whose transpose is the gather again.
- vmap adds a window of size 1 along the mapped axis, so every rule is one
  primitive whatever the batch placement.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from plugax.extend import (Primitive, RuleSet, ShapedArray, ShapeError, defjvp, deflinear,
                           get_aval, instantiate, is_undefined_primal, move_batch_axis, Zero)

from .dims import dilate_dim, window_out_dim
from .window_lowering import (reduce_window_lowering, select_and_gather_add_lowering,
                              select_and_scatter_add_lowering)

__all__ = ["reduce_window_sum_p", "reduce_window_max_p", "reduce_window_min_p",
           "select_and_gather_add_p", "select_and_scatter_add_p", "identity", "RULES",
           "window_shape"]

reduce_window_sum_p = Primitive("reduce_window_sum")
reduce_window_max_p = Primitive("reduce_window_max")
reduce_window_min_p = Primitive("reduce_window_min")
select_and_gather_add_p = Primitive("select_and_gather_add")
select_and_scatter_add_p = Primitive("select_and_scatter_add")

_KIND = {reduce_window_sum_p: "sum", reduce_window_max_p: "max", reduce_window_min_p: "min"}


def identity(kind: str, dtype: Any) -> Any:
    """The value windows start from and holes/padding hold: 0, or the lowest/highest."""
    dtype = np.dtype(dtype)
    if kind == "sum":
        return np.zeros((), dtype)
    if dtype.kind == "b":
        return np.asarray(kind == "min")
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.asarray(info.min if kind == "max" else info.max, dtype)
    return np.asarray(-np.inf if kind == "max" else np.inf, dtype)


# --- geometry ---------------------------------------------------------------------------------
def window_shape(name: str, aval: Any, window_dimensions, window_strides, padding,
                 base_dilation=None, window_dilation=None) -> tuple:
    """Output shape of a window reduction, after checks naming the operand and params."""
    nd = len(aval.shape)
    base_dilation = base_dilation or (1,) * nd
    window_dilation = window_dilation or (1,) * nd
    seqs = dict(window_dimensions=window_dimensions, window_strides=window_strides,
                padding=padding, base_dilation=base_dilation, window_dilation=window_dilation)
    for key, seq in seqs.items():
        if len(seq) != nd:
            raise ShapeError(f"primitive {name!r} needs one entry of {key} per operand "
                             f"dimension ({nd}), got {tuple(seq)} for operand "
                             f"{aval.str_short()}")
    for key in ("window_strides", "base_dilation", "window_dilation"):
        if any(int(v) < 1 for v in seqs[key]):
            raise ShapeError(f"primitive {name!r} needs positive {key}, got "
                             f"{tuple(seqs[key])} for operand {aval.str_short()}")
    if any(int(w) < 0 for w in window_dimensions):
        raise ShapeError(f"primitive {name!r} needs non-negative window_dimensions, got "
                         f"{tuple(window_dimensions)} for operand {aval.str_short()}")
    out = []
    for n, w, s, (lo, hi), bd, wd in zip(aval.shape, window_dimensions, window_strides, padding,
                                         base_dilation, window_dilation):
        padded = dilate_dim(n, bd) + lo + hi
        if padded < 0:
            raise ShapeError(f"primitive {name!r} got negative padding {tuple(padding)} larger "
                             f"than the operand {aval.str_short()}")
        out.append(window_out_dim(padded, dilate_dim(w, wd), s))
    return tuple(out)


def window_view(x: np.ndarray, fill: Any, window_dimensions, window_strides, padding,
                base_dilation, window_dilation, out_shape: tuple) -> np.ndarray:
    """(*out, *window) view (or copy) of `x`'s windows, holes and padding holding `fill`."""
    nd = x.ndim
    if any(d > 1 for d in base_dilation):
        holes = np.full(tuple(dilate_dim(n, d) for n, d in zip(x.shape, base_dilation)), fill,
                        x.dtype)
        holes[tuple(slice(None, None, d) for d in base_dilation)] = x
        x = holes
    if any(lo > 0 or hi > 0 for lo, hi in padding):
        x = np.pad(x, [(max(lo, 0), max(hi, 0)) for lo, hi in padding], constant_values=fill)
    x = x[tuple(slice(max(-lo, 0), n - max(-hi, 0)) for (lo, hi), n in zip(padding, x.shape))]
    span = tuple(dilate_dim(w, d) for w, d in zip(window_dimensions, window_dilation))
    if 0 in out_shape or 0 in span:
        return np.zeros(tuple(out_shape) + tuple(window_dimensions), x.dtype)
    win = np.lib.stride_tricks.sliding_window_view(x, span)
    return win[tuple(slice(None, (o - 1) * s + 1, s) for o, s in zip(out_shape, window_strides))
               + tuple(slice(None, None, d) for d in window_dilation)]


def _params(window_dimensions, window_strides, padding, base_dilation, window_dilation):
    return dict(window_dimensions=tuple(window_dimensions), window_strides=tuple(window_strides),
                padding=tuple(padding), base_dilation=tuple(base_dilation),
                window_dilation=tuple(window_dilation))


# --- reduce_window_{sum,max,min} ------------------------------------------------------------
def _reduce_abstract_eval(prim):
    def rule(ctx, x: ShapedArray, **params) -> ShapedArray:
        if _KIND[prim] == "sum" and x.dtype.kind == "b":
            raise ShapeError(f"primitive {prim.name!r} does not accept dtype bool (operand "
                             f"{x.str_short()}); use reduce_window_max (any) instead")
        return ShapedArray(window_shape(prim.name, x, **params), x.dtype, x.weak_type)
    return rule


def _reduce_impl(prim):
    kind = _KIND[prim]
    reduce = {"sum": np.sum, "max": np.max, "min": np.min}[kind]

    def impl(ctx, x, **params):
        out_shape = window_shape(prim.name, get_aval(x), **params)
        init = identity(kind, x.dtype)
        win = window_view(np.asarray(x), init, out_shape=out_shape, **params)
        axes = tuple(range(x.ndim, 2 * x.ndim))
        if kind == "sum":
            return np.sum(win, axis=axes, dtype=x.dtype)
        return reduce(win, axis=axes, initial=init)
    return impl


def _insert_unit_window(params: dict, bdim: int) -> dict:
    """The params with a size-1 window along a new axis `bdim` (vmap's mapped axis)."""
    ins = lambda seq, v: tuple(seq[:bdim]) + (v,) + tuple(seq[bdim:])  # noqa: E731
    out = dict(params)
    for key in ("window_dimensions", "window_strides", "base_dilation", "window_dilation"):
        if key in params:
            out[key] = ins(params[key], 1)
    out["padding"] = ins(params["padding"], (0, 0))
    return out


def _reduce_vmap(prim):
    def rule(ctx, args, dims, **params):
        (x,), (d,) = args, dims
        return prim.bind(x, **_insert_unit_window(params, d)), d
    return rule


def _sum_transpose(ctx, ct, x, *, window_dimensions, window_strides, padding, base_dilation,
                   window_dilation):
    """Every input element received ct from each window it sat in: pad ct back onto the
    (dilated) input grid with strides as holes, and sum the windows that cover each input
    element, stepping by base_dilation so holes of the dilated input are skipped."""
    import plugax.lax as lax
    shape = x.aval.shape
    pads = []
    for n, w, s, (lo, _), bd, wd, o in zip(shape, window_dimensions, window_strides, padding,
                                            base_dilation, window_dilation, ct.shape):
        before = dilate_dim(w, wd) - lo - 1
        after = dilate_dim(n, bd) + dilate_dim(w, wd) - 1 - dilate_dim(o, s) - before
        pads.append((before, after, s - 1))
    padded = lax.pad(ct, np.zeros((), ct.dtype), pads)
    return [reduce_window_sum_p.bind(padded, **_params(
        window_dimensions, base_dilation, [(0, 0)] * len(shape), [1] * len(shape),
        window_dilation))]


# --- select_and_gather_add / select_and_scatter_add -----------------------------------------------
def _chosen(operand: np.ndarray, select: str, params: dict, out_shape: tuple) -> tuple:
    """For each window, the flat index (into the padded, dilated operand grid) of the
    element max/min selects (the first one on ties, as XLA's >= / <= select keeps it)."""
    init = identity(select, operand.dtype)
    win = window_view(operand, init, out_shape=out_shape, **params)
    grid = window_view(np.arange(operand.size).reshape(operand.shape), -1,
                       out_shape=out_shape, **params)
    taps = (int(np.prod(params["window_dimensions"])),)
    pick = (np.argmax if select == "max" else np.argmin)(win.reshape(out_shape + taps), axis=-1)
    idx = np.take_along_axis(grid.reshape(out_shape + taps), pick[..., None], -1)[..., 0]
    return pick, idx


def _gather_abstract_eval(ctx, t: ShapedArray, x: ShapedArray, *, select_prim, **params):
    if t.shape != x.shape or t.dtype != x.dtype:
        raise ShapeError(f"primitive 'select_and_gather_add' needs tangents and operand of "
                         f"one shape and dtype, got {t.str_short()} and {x.str_short()}")
    return ShapedArray(window_shape("select_and_gather_add", x, **params), t.dtype, t.weak_type)


def _gather_impl(ctx, t, x, *, select_prim, **params):
    out_shape = window_shape("select_and_gather_add", get_aval(x), **params)
    taps = (int(np.prod(params["window_dimensions"])),)
    if 0 in out_shape or 0 in taps:
        return np.zeros(out_shape, t.dtype)
    pick, _ = _chosen(np.asarray(x), select_prim, params, out_shape)
    tw = window_view(np.asarray(t), np.zeros((), t.dtype), out_shape=out_shape, **params)
    return np.take_along_axis(tw.reshape(out_shape + taps), pick[..., None], -1)[..., 0]


def _gather_transpose(ctx, ct, t, x, *, select_prim, window_dimensions, window_strides,
                      padding, base_dilation, window_dilation):
    if is_undefined_primal(x) or not is_undefined_primal(t):
        raise ShapeError("primitive 'select_and_gather_add' is linear in its tangents only")
    if any(d != 1 for d in base_dilation) or any(d != 1 for d in window_dilation):
        raise NotImplementedError(
            f"VJP not implemented for select_and_gather (MaxPool) with dilation, got "
            f"base_dilation={base_dilation}, window_dilation={window_dilation} (as in JAX)")
    return [select_and_scatter_add_p.bind(ct, x, select_prim=select_prim,
                                          window_dimensions=window_dimensions,
                                          window_strides=window_strides, padding=padding), None]


def _scatter_abstract_eval(ctx, s: ShapedArray, x: ShapedArray, *, select_prim,
                           window_dimensions, window_strides, padding):
    out = window_shape("select_and_scatter_add", x, window_dimensions, window_strides, padding)
    if s.shape != out or s.dtype != x.dtype:
        raise ShapeError(f"primitive 'select_and_scatter_add' needs a source of the windows' "
                         f"shape {out} and the operand's dtype, got source {s.str_short()} for "
                         f"operand {x.str_short()}")
    return ShapedArray(x.shape, s.dtype, s.weak_type)


def _scatter_impl(ctx, s, x, *, select_prim, window_dimensions, window_strides, padding):
    params = _params(window_dimensions, window_strides, padding, (1,) * x.ndim, (1,) * x.ndim)
    if s.size == 0 or 0 in window_dimensions:
        return np.zeros(x.shape, s.dtype)
    _, idx = _chosen(np.asarray(x), select_prim, params, tuple(s.shape))
    out = np.zeros(x.size, s.dtype)
    keep = idx >= 0                                   # padding is never scattered into
    np.add.at(out, idx[keep], np.asarray(s)[keep])
    return out.reshape(x.shape)


def _scatter_transpose(ctx, ct, s, x, *, select_prim, window_dimensions, window_strides,
                       padding):
    if is_undefined_primal(x) or not is_undefined_primal(s):
        raise ShapeError("primitive 'select_and_scatter_add' is linear in its source only")
    nd = len(window_dimensions)
    return [select_and_gather_add_p.bind(ct, x, select_prim=select_prim, **_params(
        window_dimensions, window_strides, padding, (1,) * nd, (1,) * nd)), None]


def _pair_vmap(prim):
    """Both operands batched at the same axis (an unbatched one is broadcast): one more
    size-1 window along it."""
    def rule(ctx, args, dims, **params):
        size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
        d = next(d for d in dims if d is not None)
        a, b = (move_batch_axis(size, di, d, v) for v, di in zip(args, dims))
        return prim.bind(a, b, **_insert_unit_window(params, d)), d
    return rule


def _chooser_jvp(prim):
    select = _KIND[prim]

    def tangent(g, ans, x, **params):
        return select_and_gather_add_p.bind(g, x, select_prim=select, **params)
    return defjvp(prim, tangent)


def _linear_in_first(prim):
    def jvp(ctx, primals, tangents, **params):
        out = prim.bind(*primals, **params)
        t = tangents[0]
        if type(t) is Zero:
            return out, Zero(get_aval(out))
        return out, prim.bind(instantiate(t), primals[1], **params)
    return jvp


def _reduce_rules(prim, jvp, transpose=None) -> RuleSet:
    return RuleSet(primitive=prim, impl=_reduce_impl(prim),
                   abstract_eval=_reduce_abstract_eval(prim), jvp=jvp, transpose=transpose,
                   batching=_reduce_vmap(prim),
                   lowering={"default": reduce_window_lowering(_KIND[prim], identity)})


RULES = [
    _reduce_rules(reduce_window_sum_p, deflinear(reduce_window_sum_p), _sum_transpose),
    _reduce_rules(reduce_window_max_p, _chooser_jvp(reduce_window_max_p)),
    _reduce_rules(reduce_window_min_p, _chooser_jvp(reduce_window_min_p)),
    RuleSet(primitive=select_and_gather_add_p, impl=_gather_impl,
            abstract_eval=_gather_abstract_eval, jvp=_linear_in_first(select_and_gather_add_p),
            transpose=_gather_transpose, batching=_pair_vmap(select_and_gather_add_p),
            lowering={"default": select_and_gather_add_lowering(identity)}),
    RuleSet(primitive=select_and_scatter_add_p, impl=_scatter_impl,
            abstract_eval=_scatter_abstract_eval, jvp=_linear_in_first(select_and_scatter_add_p),
            transpose=_scatter_transpose, batching=_pair_vmap(select_and_scatter_add_p),
            lowering={"default": select_and_scatter_add_lowering(identity)}),
]
