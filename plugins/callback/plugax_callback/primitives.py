"""The `pure_callback` and `debug_callback` primitives (JAX's names) and their rules.

Both carry a *flat* callback in their params: NumPy arrays in, a list of NumPy
arrays out (the front ends in api.py wrap the user's function: pytrees, plugax
Arrays). Eagerly the impl calls it; under `jit` the lowering emits a host callback
(`plugax.extend.emit_host_callback`), so it runs each time the compiled program
runs, with the program's values.

- `pure_callback` is a function of its operands: no jvp (JAX raises the same
  error: wrap it in `custom_jvp`), vmap as its `vmap_method` says, and XLA may
  drop a call whose results are unused (it is declared free of side effects).
- `debug_callback` has no outputs and is kept by XLA however unused (a side
  effect). Its jvp calls it on the primals only and gives nothing to derivatives;
  under vmap it calls the callback once per batch element, in order, as JAX does.
  `ordered=True` orders it with the other ordered callbacks of the program.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from plugax.extend import (CallbackError, Primitive, RuleSet, ShapedArray, bdim_at_front,
                           bind, broadcast_in_dim, checked_callback_outputs,
                           emit_host_callback, get_aval)

__all__ = ["pure_callback_p", "debug_callback_p", "RULES", "VMAP_METHODS", "run_callback", "Named",
           "batch_debug_callback", "lower_debug_callback", "transpose_debug_callback"]

pure_callback_p = Primitive("pure_callback", multiple_results=True)
debug_callback_p = Primitive("debug_callback", multiple_results=True)

VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                "legacy_vectorized")


def run_callback(callback: Callable, vals: Sequence[Any], what: str) -> list:
    """Run a flat callback eagerly; its exception becomes a CallbackError (as under jit,
    where jaxlib only reports that a callback failed) caused by the user's exception."""
    try:
        return list(callback(*vals))
    except CallbackError:
        raise
    except Exception as err:
        raise CallbackError(f"{what} raised {type(err).__name__}: {err}") from err


class Named:
    """A flat callback with the user's function's name: what a jaxpr shows in the
    equation's params and what an error names (a closure would print as
    `<function pure_callback.<locals>.flat_callback at 0x...>`)."""

    __slots__ = ("fn", "name")

    def __init__(self, fn: Callable, name: str):
        self.fn, self.name = fn, name

    def __call__(self, *args: Any) -> Any:
        return self.fn(*args)

    def __repr__(self) -> str:
        return self.name


def callback_name(callback: Callable, prim: str) -> str:
    return f"{prim}({getattr(callback, 'name', None) or function_name(callback)})"


def function_name(f: Any) -> str:
    return getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or repr(f)


# --- pure_callback ------------------------------------------------------------------

def pure_abstract_eval(ctx, *avals, callback, result_avals, vmap_method):
    return [ShapedArray(a.shape, a.dtype) for a in result_avals]


def _pure_impl(ctx, *vals, callback, result_avals, vmap_method):
    name = callback_name(callback, "pure_callback")
    checked = lambda *xs: checked_callback_outputs(callback(*xs), result_avals, name)
    return run_callback(checked, vals, name)   # checked as under jit (host_callback.py)


def _pure_jvp(ctx, primals, tangents, **params):
    raise ValueError("Pure callbacks do not support JVP. Please use `plugax.custom_jvp` to "
                     "use callbacks while taking gradients.")


def _pure_transpose(ctx, cts, *args, **params):
    raise ValueError("Pure callbacks do not support transpose. Please use "
                     "`plugax.custom_vjp` to use callbacks while taking gradients.")


def sequential_callback(callback: Callable, batched: Sequence[bool], axis_size: int,
                result_avals: Sequence[ShapedArray]) -> Callable:
    """A flat callback over the whole batch that calls `callback` once per element, in
    order, and stacks the results (JAX's 'sequential': a loop, in one host call)."""
    def looped(*vals: Any) -> list:
        per = [checked_callback_outputs(callback(*[v[i] if b else v
                                                   for v, b in zip(vals, batched)]),
                                        result_avals, "pure_callback")
               for i in range(axis_size)]
        return [np.stack([p[k] for p in per]) if per else np.zeros((0, *a.shape), a.dtype)
                for k, a in enumerate(result_avals)]
    return Named(looped, getattr(callback, "name", None) or function_name(callback))


def _pure_batching(ctx, args, dims, *, callback, result_avals, vmap_method):
    n = ctx.axis_size
    batched_avals = tuple(ShapedArray((n, *a.shape), a.dtype) for a in result_avals)
    if vmap_method in ("sequential", "sequential_unrolled"):
        batched = [d is not None for d in dims]
        vals = [bdim_at_front(x, d, n) if d is not None else x for x, d in zip(args, dims)]
        looped = sequential_callback(callback, batched, n, result_avals)
        outs = bind(pure_callback_p, *vals, callback=looped, result_avals=batched_avals,
                    vmap_method=vmap_method)
        return outs, [0] * len(outs)
    if vmap_method in ("expand_dims", "broadcast_all", "legacy_vectorized"):
        vals = []
        for x, d in zip(args, dims):
            if d is not None:
                vals.append(bdim_at_front(x, d, n))
            elif vmap_method == "legacy_vectorized":   # JAX's: unbatched ones as they are
                vals.append(x)
            else:
                shape = get_aval(x).shape
                size = n if vmap_method == "broadcast_all" else 1
                vals.append(broadcast_in_dim(x, (size, *shape), tuple(range(1, len(shape) + 1))))
        outs = bind(pure_callback_p, *vals, callback=callback, result_avals=batched_avals,
                    vmap_method=vmap_method)
        return outs, [0] * len(outs)
    raise NotImplementedError(
        "vmap is only supported for the pure_callback primitive when vmap_method is one of "
        "'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
        f"'legacy_vectorized'. Got vmap_method={vmap_method!r}.")


def _pure_lowering(ctx, *operands, callback, result_avals, vmap_method):
    return emit_host_callback(ctx, callback, operands, result_avals,
                              name=callback_name(callback, "pure_callback"), has_side_effect=False)


# --- debug_callback ---------------------------------------------------------------

def _debug_abstract_eval(ctx, *avals, callback, ordered):
    return []


def _debug_impl(ctx, *vals, callback, ordered):
    run_callback(callback, vals, callback_name(callback, "debug.callback"))
    return []


def _debug_jvp(ctx, primals, tangents, *, callback, ordered):
    """The callback sees the primals; nothing flows into a derivative (no outputs)."""
    bind(debug_callback_p, *primals, callback=callback, ordered=ordered)
    return [], []


def batch_debug_callback(ctx, args, dims, *, callback, ordered):
    """One host call that runs the callback once per batch element, in order (JAX
    unrolls the same calls into the program)."""
    n = ctx.axis_size
    batched = [d is not None for d in dims]
    vals = [bdim_at_front(x, d, n) if d is not None else x for x, d in zip(args, dims)]

    def per_element(*xs: Any) -> list:
        for i in range(n):
            callback(*[x[i] if b else x for x, b in zip(xs, batched)])
        return []
    name = getattr(callback, "name", None) or function_name(callback)
    bind(debug_callback_p, *vals, callback=Named(per_element, name), ordered=ordered)
    return [], []


def transpose_debug_callback(ctx, cts, *args, **params):
    return [None] * len(args)   # it has no outputs: nothing to transpose, no cotangents


def lower_debug_callback(ctx, *operands, callback, ordered):
    def run(*vals: Any) -> list:
        callback(*vals)
        return []
    emit_host_callback(ctx, run, operands, [], name=callback_name(callback, "debug.callback"),
                       has_side_effect=True, ordered=ordered)
    return []


RULES = [
    RuleSet(pure_callback_p, impl=_pure_impl, abstract_eval=pure_abstract_eval,
            jvp=_pure_jvp, transpose=_pure_transpose, batching=_pure_batching,
            lowering={"default": _pure_lowering}),
    RuleSet(debug_callback_p, impl=_debug_impl, abstract_eval=_debug_abstract_eval,
            jvp=_debug_jvp, transpose=transpose_debug_callback, batching=batch_debug_callback,
            lowering={"default": lower_debug_callback}),
]
