"""`io_callback` (JAX's primitive and `jax.experimental.io_callback`): a callback with
results *and* side effects (reading a file, drawing from a host generator).

Unlike `pure_callback` a compiled program keeps it however unused, and runs it once
per execution (XLA neither drops nor duplicates a side-effecting call); unlike
`debug.callback` it returns values. JAX's rules: no jvp or transpose, vmap calls it
once per element in order (refused when `ordered=True`, whose order a batch would
break), and `ordered=True` orders it with the program's other ordered callbacks.
"""
from __future__ import annotations

from typing import Any, Callable

import plugax.tree_util as tu
from plugax.extend import (Primitive, RuleSet, bdim_at_front, bind, checked_callback_outputs,
                           emit_host_callback)

from .api import as_arrays, result_avals_of
from .primitives import (Named, callback_name, function_name, pure_abstract_eval,
                         run_callback, sequential_callback)

__all__ = ["io_callback_p", "io_callback", "RULES"]

io_callback_p = Primitive("io_callback", multiple_results=True)


def _abstract_eval(ctx, *avals, callback, result_avals, ordered):
    return pure_abstract_eval(ctx, *avals, callback=callback, result_avals=result_avals,
                               vmap_method=None)


def _impl(ctx, *vals, callback, result_avals, ordered):
    name = callback_name(callback, "io_callback")
    checked = lambda *xs: checked_callback_outputs(callback(*xs), result_avals, name)
    return run_callback(checked, vals, name)


def _jvp(ctx, primals, tangents, **params):
    raise ValueError("IO callbacks do not support JVP.")


def _transpose(ctx, cts, *args, **params):
    raise ValueError("IO callbacks do not support transpose.")


def _batching(ctx, args, dims, *, callback, result_avals, ordered):
    if ordered:
        raise ValueError("Cannot `vmap` ordered IO callback.")
    n = ctx.axis_size
    batched = [d is not None for d in dims]
    vals = [bdim_at_front(x, d, n) if d is not None else x for x, d in zip(args, dims)]
    batched_avals = tuple(type(a)((n, *a.shape), a.dtype) for a in result_avals)
    looped = sequential_callback(callback, batched, n, result_avals)
    outs = bind(io_callback_p, *vals, callback=looped, result_avals=batched_avals,
                ordered=False)
    return outs, [0] * len(outs)


def _lowering(ctx, *operands, callback, result_avals, ordered):
    return emit_host_callback(ctx, callback, operands, result_avals,
                              name=callback_name(callback, "io_callback"), has_side_effect=True,
                              ordered=ordered)


def io_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                sharding: Any = None, ordered: bool = False, **kwargs: Any) -> Any:
    """Call `callback(*args, **kwargs)`, which may have side effects, from plugax code,
    also under `jit` (each run of the program calls it once), as
    `jax.experimental.io_callback`; `result_shape_dtypes` says what it returns."""
    del sharding   # one device
    leaves, in_tree = tu.tree_flatten((args, kwargs))
    result_avals, out_tree = result_avals_of(result_shape_dtypes)

    def flat_callback(*vals: Any) -> list:
        call_args, call_kwargs = tu.tree_unflatten(in_tree, as_arrays(vals))
        out_leaves, tree = tu.tree_flatten(callback(*call_args, **call_kwargs))
        if tree != out_tree:
            raise TypeError(f"io_callback: the callback returned a value of structure "
                            f"{tree}, but result_shape_dtypes has structure {out_tree}")
        return out_leaves

    outs = bind(io_callback_p, *leaves, callback=Named(flat_callback, function_name(callback)),
                result_avals=tuple(result_avals), ordered=bool(ordered))
    return tu.tree_unflatten(out_tree, outs)


RULES = [RuleSet(io_callback_p, impl=_impl, abstract_eval=_abstract_eval, jvp=_jvp,
                 transpose=_transpose, batching=_batching, lowering={"default": _lowering})]
