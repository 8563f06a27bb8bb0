"""Front ends: `plugax.pure_callback`, `plugax.debug.callback`, `plugax.debug.print`.

Each flattens the user's arguments (any pytree) and binds its primitive with a
*flat* callback (primitives.py): NumPy arrays in, NumPy arrays out. The flat
callback rebuilds the user's pytrees around plugax Arrays (JAX hands its
callbacks jax Arrays) and flattens what the callback returns, checking its
structure against `result_shape_dtypes`. The same flat callback runs eagerly and
from a compiled program, so a callback behaves alike with and without `jit`.
"""
from __future__ import annotations

import string
import sys
from typing import Any, Callable

import numpy as np

import plugax.tree_util as tu
from plugax.extend import Array, ShapedArray, bind, canonicalize_dtype

from .primitives import VMAP_METHODS, debug_callback_p, pure_callback_p

__all__ = ["pure_callback", "debug_callback", "debug_print"]


def _as_arrays(vals: tuple) -> list:
    """What a callback receives: plugax Arrays (host-backed, no copy)."""
    return [Array(np.asarray(v)) for v in vals]


def _result_avals(result_shape_dtypes: Any) -> tuple[list, Any]:
    leaves, tree = tu.tree_flatten(result_shape_dtypes)
    avals = []
    for leaf in leaves:
        if not (hasattr(leaf, "shape") and hasattr(leaf, "dtype")):
            raise TypeError(f"pure_callback: result_shape_dtypes must be a pytree of objects "
                            f"with .shape and .dtype (plugax.ShapeDtypeStruct), got "
                            f"{type(leaf).__name__}: {leaf!r}")
        avals.append(ShapedArray(tuple(int(d) for d in leaf.shape),
                                 canonicalize_dtype(leaf.dtype)))
    return avals, tree


def pure_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                  sharding: Any = None, vmap_method: str | None = None, **kwargs: Any) -> Any:
    """Call the Python function `callback(*args, **kwargs)` from plugax code, also under
    `jit` (at run time, on the program's values), as `jax.pure_callback`.

    `result_shape_dtypes` (a pytree of `ShapeDtypeStruct`s) says what it returns; the
    callback must return exactly that. It must be a pure function: a jitted program may
    skip a call whose results are unused. It has no derivative (wrap it in
    `custom_jvp`); under `vmap`, `vmap_method` says how it is batched: "sequential"
    (one call per element), "expand_dims" (one call, unbatched arguments get a leading
    axis of size 1), "broadcast_all" (one call, every argument batched).
    """
    if vmap_method not in (None, *VMAP_METHODS):
        raise ValueError(f"vmap_method must be one of {', '.join(map(repr, VMAP_METHODS))} "
                         f"or None, got {vmap_method!r}")
    del sharding   # one device: nothing to place
    leaves, in_tree = tu.tree_flatten((args, kwargs))
    result_avals, out_tree = _result_avals(result_shape_dtypes)

    def flat_callback(*vals: Any) -> list:
        call_args, call_kwargs = tu.tree_unflatten(in_tree, _as_arrays(vals))
        out = callback(*call_args, **call_kwargs)
        out_leaves, tree = tu.tree_flatten(out)
        if tree != out_tree:
            raise TypeError(f"pure_callback: the callback returned a value of structure "
                            f"{tree}, but result_shape_dtypes has structure {out_tree}")
        return [np.asarray(x) for x in out_leaves]

    flat_callback.name = _name(callback)
    outs = bind(pure_callback_p, *leaves, callback=flat_callback,
                result_avals=tuple(result_avals), vmap_method=vmap_method)
    return tu.tree_unflatten(out_tree, outs)


def debug_callback(callback: Callable[..., Any], *args: Any, ordered: bool = False,
                   partitioned: bool = False, **kwargs: Any) -> None:
    """Call `callback(*args, **kwargs)` for its side effect (printing, logging), with the
    values the program computes, eagerly and under `jit`, `vmap` (once per element) and
    `grad` (on the primal values), as `jax.debug.callback`. Its return value is ignored;
    a jitted program keeps the call even though nothing uses it. `ordered=True` runs the
    ordered callbacks of a program in program order."""
    del partitioned   # one device
    leaves, in_tree = tu.tree_flatten((args, kwargs))

    def flat_callback(*vals: Any) -> list:
        call_args, call_kwargs = tu.tree_unflatten(in_tree, _as_arrays(vals))
        callback(*call_args, **call_kwargs)
        return []

    flat_callback.name = _name(callback)
    bind(debug_callback_p, *leaves, callback=flat_callback, ordered=bool(ordered))


def debug_print(fmt: str, *args: Any, ordered: bool = False, **kwargs: Any) -> None:
    """Print `fmt.format(*args, **kwargs)` with the values the program computes (arrays
    formatted as NumPy arrays, with NumPy's print options as they were at the call),
    eagerly and under `jit`, `vmap` and `grad`, as `jax.debug.print`."""
    if not isinstance(fmt, str):
        raise TypeError(f"debug.print: the format must be a str, got {type(fmt).__name__}")
    _check_format(fmt, args, kwargs)
    options = np.get_printoptions()

    def print_callback(*call_args: Any, **call_kwargs: Any) -> None:
        to_np = lambda tree: tu.tree_map(np.asarray, tree)
        with np.printoptions(**options):
            text = fmt.format(*to_np(call_args), **to_np(call_kwargs))
        sys.stdout.write(text + "\n")

    print_callback.__qualname__ = f"print({fmt!r})"
    debug_callback(print_callback, *args, ordered=ordered, **kwargs)


def _check_format(fmt: str, args: tuple, kwargs: dict) -> None:
    """Refuse a format that cannot be filled now, not when the program runs: a missing
    argument would otherwise fail inside the compiled program."""
    auto = 0
    for _, field, _, _ in string.Formatter().parse(fmt):
        if field is None:
            continue
        head = field.split(".")[0].split("[")[0]
        if head == "":
            head, auto = auto, auto + 1
        if isinstance(head, int) or head.isdigit():
            if int(head) >= len(args):
                raise ValueError(f"debug.print: format {fmt!r} needs positional argument "
                                 f"{head}, but {len(args)} were given")
        elif head not in kwargs:
            raise ValueError(f"debug.print: format {fmt!r} names {head!r}, which is not a "
                             f"keyword argument (given: {', '.join(kwargs) or 'none'})")


def _name(f: Any) -> str:
    return getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or repr(f)
