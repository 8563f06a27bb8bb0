"""The generic `reduce_window` primitive: any scalar computation over windows of one
or more operands (pytrees in the front end, as in JAX).

Operands `(*xs, *inits)`, n of each; the `jaxpr` param is the computation traced
once per (function, tree, dtypes) to a ClosedJaxpr from 2n scalars (the left
then the right values) to n. The impl folds it over the window's taps, applied
to whole arrays at once (a body of elementwise primitives maps arrays as it maps
scalars), skipping the padding and dilation holes as XLA does: each window is
init folded with its in-bounds elements only (JAX gives [[4, 5, 5, 4]] for a
3-wide add window with init 2 over ones padded by 1). The lowering puts the body
in the region of a `stablehlo.reduce_window`.

jvp, as JAX's: one reduce_window over the (primal, tangent) pairs, whose body is
the jvp of the computation (init tangents must be zero). Like JAX, no reverse
mode (a generic body has no transpose). vmap: every operand
batched at one axis, with a size-1 window along it.
"""
from __future__ import annotations

import itertools
from typing import Any, Callable

import numpy as np

from plugax.extend import (Primitive, RuleSet, ShapedArray, ShapeError, Zero, bind,
                           eval_jaxpr, get_aval, instantiate, jvp_jaxpr, move_batch_axis,
                           trace_to_jaxpr)

from .window_lowering import _i64s, _padding, _scalar
from .windows import _insert_unit_window, window_shape, window_view

__all__ = ["reduce_window_p", "reduce_window_generic", "RULES"]

reduce_window_p = Primitive("reduce_window", multiple_results=True)
_traced: dict = {}


def _body(computation: Callable, treedef: Any, dtypes: tuple) -> Any:
    """ClosedJaxpr of `computation` on scalar trees, flattened to 2n -> n scalars."""
    import plugax.tree_util as tu
    key = (computation, treedef, dtypes)
    closed = _traced.get(key)
    if closed is None:
        n = len(dtypes)

        def flat(*scalars):
            left = tu.tree_unflatten(treedef, scalars[:n])
            right = tu.tree_unflatten(treedef, scalars[n:])
            out, out_tree = tu.tree_flatten(computation(left, right))
            if out_tree != treedef:
                raise TypeError(f"reduce_window: computation must return the structure of "
                                f"its operands ({treedef}), got {out_tree}")
            return out

        scalars = [ShapedArray((), d) for d in dtypes]
        closed = trace_to_jaxpr(flat, scalars + scalars)
        got = [(a.shape, np.dtype(a.dtype)) for a in closed.out_avals]
        if got != [((), d) for d in dtypes]:
            raise TypeError(f"reduce_window: computation must map two scalars of dtypes "
                            f"{[d.name for d in dtypes]} to one of each, got "
                            f"{[str(a) for a in closed.out_avals]}")
        if len(_traced) < 256:
            _traced[key] = closed
    return closed


def reduce_window_generic(operand: Any, init_value: Any, computation: Callable,
                          params: dict) -> Any:
    """Bind the generic primitive on pytrees `operand` / `init_value` (same structure)."""
    import plugax.numpy as pnp
    import plugax.tree_util as tu
    xs, treedef = tu.tree_flatten(operand)
    inits, init_tree = tu.tree_flatten(init_value)
    if init_tree != treedef:
        raise TypeError(f"reduce_window: operand and init_value must have the same structure, "
                        f"got {treedef} and {init_tree}")
    dtypes = tuple(np.dtype(get_aval(x).dtype) for x in xs)
    inits = [pnp.asarray(v, d) for v, d in zip(inits, dtypes)]
    outs = bind(reduce_window_p, *xs, *inits, jaxpr=_body(computation, treedef, dtypes),
                **params)
    return tu.tree_unflatten(treedef, outs)


def _abstract_eval(ctx, *avals: ShapedArray, jaxpr, **params) -> list:
    n = len(avals) // 2
    xs, inits = avals[:n], avals[n:]
    if len(avals) != 2 * n or any(x.shape != xs[0].shape for x in xs):
        raise ShapeError(f"primitive 'reduce_window' needs operands of one shape and one "
                         f"init value each, got ({', '.join(a.str_short() for a in avals)})")
    for x, init in zip(xs, inits):
        if init.shape != () or init.dtype != x.dtype:
            raise ShapeError(f"primitive 'reduce_window' needs a scalar init value of the "
                             f"operand's dtype, got init {init.str_short()} for operand "
                             f"{x.str_short()}")
    body = [np.dtype(a.dtype) for a in jaxpr.in_avals[:n]]
    if [np.dtype(x.dtype) for x in xs] != body:
        raise ShapeError(f"primitive 'reduce_window' has a computation traced for dtypes "
                         f"{[d.name for d in body]}, got operands "
                         f"({', '.join(a.str_short() for a in xs)})")
    shape = window_shape("reduce_window", xs[0], **params)
    return [ShapedArray(shape, x.dtype, x.weak_type) for x in xs]


def _impl(ctx, *args, jaxpr, **params):
    n = len(args) // 2
    xs, inits = [np.asarray(a) for a in args[:n]], [np.asarray(a) for a in args[n:]]
    out_shape = window_shape("reduce_window", get_aval(args[0]), **params)
    wins = [window_view(x, i, out_shape=out_shape, **params) for x, i in zip(xs, inits)]
    inside = window_view(np.ones(xs[0].shape, bool), False, out_shape=out_shape, **params)
    outs = [np.full(out_shape, i, x.dtype) for x, i in zip(xs, inits)]
    for tap in itertools.product(*map(range, params["window_dimensions"])):
        at = (Ellipsis,) + tap
        new = eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *outs, *(w[at] for w in wins))
        outs = [np.where(inside[at], np.asarray(v, o.dtype), o)   # holes are skipped
                for v, o in zip(new, outs)]
    return outs


def _jvp(ctx, primals, tangents, *, jaxpr, **params):
    n = len(primals) // 2
    if any(type(t) is not Zero for t in tangents[n:]):
        raise TypeError("reduce_window jvp does not support non-zero init_value_tangent.")
    xs, inits = primals[:n], primals[n:]
    dots = [instantiate(t) for t in tangents[:n]]
    jvp_closed, _ = jvp_jaxpr(jaxpr, [True] * (2 * n), instantiate=True)

    def paired(*s):   # (left primals, left tangents, right primals, right tangents)
        lp, lt, rp, rt = s[:n], s[n:2 * n], s[2 * n:3 * n], s[3 * n:]
        return eval_jaxpr(jvp_closed.jaxpr, jvp_closed.consts, *lp, *rp, *lt, *rt)

    scalars = [ShapedArray((), get_aval(x).dtype) for x in xs] * 2
    body = trace_to_jaxpr(paired, scalars + scalars)
    zeros = [np.zeros((), get_aval(x).dtype) for x in xs]
    outs = reduce_window_p.bind(*xs, *dots, *inits, *zeros, jaxpr=body, **params)
    # the primal outputs come from their own reduce_window: under linearize they are
    # then known, and reverse mode stops at the (missing) transpose of the tangent one
    # with an error naming reduce_window, where JAX fails ("Linearization failed")
    return reduce_window_p.bind(*primals, jaxpr=jaxpr, **params), outs[n:]


def _vmap(ctx, args, dims, *, jaxpr, **params):
    n = len(args) // 2
    if any(d is not None for d in dims[n:]):
        raise NotImplementedError("vmap of reduce_window over its init value is not "
                                  "supported; map only the operand")
    d = next(d for d in dims[:n] if d is not None)
    size = args[dims.index(d)].shape[d]
    xs = [move_batch_axis(size, di, d, x) for x, di in zip(args[:n], dims[:n])]
    outs = reduce_window_p.bind(*xs, *args[n:], jaxpr=jaxpr, **_insert_unit_window(params, d))
    return outs, [d] * n


def _lowering(ctx, *args, jaxpr, window_dimensions, window_strides, padding, base_dilation,
              window_dilation):
    n = len(args) // 2
    op = ctx.hlo.ReduceWindowOp([ctx.ir_type(a) for a in ctx.avals_out], list(args[:n]),
                                list(args[n:]), _i64s(ctx, window_dimensions),
                                window_strides=_i64s(ctx, window_strides),
                                base_dilations=_i64s(ctx, base_dilation),
                                window_dilations=_i64s(ctx, window_dilation),
                                padding=_padding(ctx, padding))
    scalars = [_scalar(ctx, a.dtype) for a in ctx.avals_in[:n]]
    block = op.regions[0].blocks.append(*scalars, *scalars)
    with ctx.ir.InsertionPoint(block):
        ctx.hlo.return_(ctx.lower_jaxpr(jaxpr, *block.arguments))
    return list(op.results)


RULES = [RuleSet(primitive=reduce_window_p, impl=_impl, abstract_eval=_abstract_eval,
                 jvp=_jvp, batching=_vmap, lowering={"default": _lowering})]
