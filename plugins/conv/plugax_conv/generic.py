"""The generic `reduce_window` primitive: any scalar computation over windows.

The computation is traced once per (function, dtype) to a ClosedJaxpr on two
scalars, the primitive's `jaxpr` param. The impl folds it over the window's
taps, applied to whole arrays at once (a body made of elementwise primitives
maps arrays as it maps scalars), skipping the padding and dilation holes as
XLA does (each window is init folded with its in-bounds elements only: JAX
gives [[4, 5, 5, 4]] for a 3-wide add window with init 2 over ones padded by
1); the lowering puts the body in the region of a `stablehlo.reduce_window`. Transformations: vmap (a size-1 window along the mapped axis)
and jit; no jvp (an arbitrary body has no derivative rule here; JAX
differentiates only the monoid cases too, which window_api routes to the fast
primitives).
"""
from __future__ import annotations

import itertools
from typing import Any, Callable

import numpy as np

from plugax.extend import (Primitive, RuleSet, ShapedArray, ShapeError, bind, eval_jaxpr,
                           get_aval, trace_to_jaxpr)

from .window_lowering import _padding, _i64s, _scalar
from .windows import _insert_unit_window, window_shape, window_view

__all__ = ["reduce_window_p", "reduce_window_generic", "RULES"]

reduce_window_p = Primitive("reduce_window")
_traced: dict = {}


def _body(computation: Callable, dtype: np.dtype) -> Any:
    key = (computation, dtype)
    closed = _traced.get(key)
    if closed is None:
        scalar = ShapedArray((), dtype)
        closed = trace_to_jaxpr(lambda a, b: [computation(a, b)], [scalar, scalar])
        out = closed.out_avals
        if len(out) != 1 or out[0].shape != () or np.dtype(out[0].dtype) != dtype:
            raise TypeError(f"reduce_window: computation must map two {dtype.name} scalars to "
                            f"one {dtype.name} scalar, got {[str(a) for a in out]}")
        if len(_traced) < 256:
            _traced[key] = closed
    return closed


def reduce_window_generic(operand: Any, init_value: Any, computation: Callable,
                          params: dict) -> Any:
    import plugax.numpy as pnp
    dtype = np.dtype(get_aval(operand).dtype)
    init = pnp.asarray(init_value, dtype)
    return bind(reduce_window_p, operand, init, jaxpr=_body(computation, dtype), **params)


def _abstract_eval(ctx, x: ShapedArray, init: ShapedArray, *, jaxpr, **params) -> ShapedArray:
    if init.shape != () or init.dtype != x.dtype:
        raise ShapeError(f"primitive 'reduce_window' needs a scalar init value of the "
                         f"operand's dtype, got init {init.str_short()} for operand "
                         f"{x.str_short()}")
    return ShapedArray(window_shape("reduce_window", x, **params), x.dtype, x.weak_type)


def _impl(ctx, x, init, *, jaxpr, **params):
    out_shape = window_shape("reduce_window", get_aval(x), **params)
    init = np.asarray(init)
    win = window_view(np.asarray(x), init, out_shape=out_shape, **params)
    inside = window_view(np.ones(x.shape, bool), False, out_shape=out_shape, **params)
    out = np.full(out_shape, init, x.dtype)
    for tap in itertools.product(*map(range, params["window_dimensions"])):
        at = (Ellipsis,) + tap
        (new,) = eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, out, win[at])
        out = np.where(inside[at], np.asarray(new), out)   # padding and holes are skipped
    return out


def _vmap(ctx, args, dims, *, jaxpr, **params):
    (x, init), (d, init_dim) = args, dims
    if init_dim is not None:
        raise NotImplementedError("vmap of reduce_window over its init value is not "
                                  "supported; map only the operand")
    return reduce_window_p.bind(x, init, jaxpr=jaxpr, **_insert_unit_window(params, d)), d


def _lowering(ctx, x, init, *, jaxpr, window_dimensions, window_strides, padding,
              base_dilation, window_dilation):
    dtype = np.dtype(ctx.avals_in[0].dtype)
    op = ctx.hlo.ReduceWindowOp([ctx.ir_type(ctx.aval_out)], [x], [init],
                                _i64s(ctx, window_dimensions),
                                window_strides=_i64s(ctx, window_strides),
                                base_dilations=_i64s(ctx, base_dilation),
                                window_dilations=_i64s(ctx, window_dilation),
                                padding=_padding(ctx, padding))
    scalar = _scalar(ctx, dtype)
    block = op.regions[0].blocks.append(scalar, scalar)
    with ctx.ir.InsertionPoint(block):
        ctx.hlo.return_(ctx.lower_jaxpr(jaxpr, *block.arguments))
    return op.result


RULES = [RuleSet(primitive=reduce_window_p, impl=_impl, abstract_eval=_abstract_eval,
                 batching=_vmap, lowering={"default": _lowering})]
