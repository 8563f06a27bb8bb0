"""Front ends: `plugax.pure_callback`, `plugax.debug.callback`, `plugax.debug.print`.

Each flattens the user's arguments (any pytree) and binds its primitive with a
*flat* callback (primitives.py): NumPy arrays in, NumPy arrays out. The flat
callback rebuilds the user's pytrees around plugax Arrays (JAX hands its
callbacks jax Arrays) and flattens what the callback returns, checking its
structure against `result_shape_dtypes`. The same flat callback runs eagerly and
from a compiled program, so a callback behaves alike with and without `jit`.
"""
from __future__ import annotations

import logging
import string
import sys
from typing import Any, Callable

import numpy as np

import plugax.tree_util as tu
from plugax.extend import Array, ShapedArray, bind, canonicalize_dtype

from .primitives import VMAP_METHODS, Named, debug_callback_p, pure_callback_p
from .printing import check_format, debug_print_p, logger, merge_static, split_static

__all__ = ["pure_callback", "debug_callback", "debug_print", "debug_log", "effects_barrier"]


def as_arrays(vals: tuple) -> list:
    """What a callback receives: plugax Arrays (host-backed, no copy)."""
    return [Array(np.asarray(v)) for v in vals]


def result_avals_of(result_shape_dtypes: Any) -> tuple[list, Any]:
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
        raise ValueError(f"vmap_method must be one of the allowed methods "
                         f"{[*VMAP_METHODS, None]}, but got: {vmap_method}")
    del sharding   # one device: nothing to place
    leaves, in_tree = tu.tree_flatten((args, kwargs))
    result_avals, out_tree = result_avals_of(result_shape_dtypes)

    def flat_callback(*vals: Any) -> list:
        call_args, call_kwargs = tu.tree_unflatten(in_tree, as_arrays(vals))
        out = callback(*call_args, **call_kwargs)
        out_leaves, tree = tu.tree_flatten(out)
        if tree != out_tree:
            raise TypeError(f"pure_callback: the callback returned a value of structure "
                            f"{tree}, but result_shape_dtypes has structure {out_tree}")
        return [np.asarray(x) for x in out_leaves]

    outs = bind(pure_callback_p, *leaves, callback=Named(flat_callback, _name(callback)),
                result_avals=tuple(result_avals), vmap_method=vmap_method)
    return tu.tree_unflatten(out_tree, outs)


def debug_callback(callback: Callable[..., Any] | None = None, *args: Any,
                   ordered: bool = False, partitioned: bool = False, **kwargs: Any) -> Any:
    """Call `callback(*args, **kwargs)` for its side effect (printing, logging), with the
    values the program computes, eagerly and under `jit`, `vmap` (once per element) and
    `grad` (on the primal values), as `jax.debug.callback`. Its return value is ignored;
    a jitted program keeps the call even though nothing uses it. `ordered=True` runs the
    ordered callbacks of a program in program order. Arguments that are not arrays are
    passed as they are. `debug.callback(ordered=True)(f, x)` is the two-call form."""
    del partitioned   # one device

    def bind_callback(callback: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        in_tree, dyn, static = split_static(args, kwargs)

        def flat_callback(*vals: Any) -> list:
            call_args, call_kwargs = merge_static(in_tree, as_arrays(vals), static)
            callback(*call_args, **call_kwargs)
            return []

        bind(debug_callback_p, *dyn, callback=Named(flat_callback, _name(callback)),
             ordered=bool(ordered))

    if callback is not None:
        return bind_callback(callback, *args, **kwargs)
    if args or kwargs:
        raise TypeError(f"debug.callback received unexpected arguments in the two-call "
                        f"form: {args=} {kwargs=}")
    return bind_callback


def debug_print(fmt: str | None = None, *args: Any, ordered: bool = False,
                partitioned: bool = False, skip_format_check: bool = False,
                _use_logging: bool = False, **kwargs: Any) -> Any:
    """Print `fmt.format(*args, **kwargs)` with the values the program computes (arrays
    formatted as NumPy arrays, with NumPy's print options as they were at the call),
    eagerly and under `jit`, `vmap` and `grad`, as `jax.debug.print`. The format is
    checked against the arguments at the call (a missing one raises IndexError or
    KeyError, an unused one ValueError). `debug.print(ordered=True)(fmt, x)` is the
    two-call form."""
    del partitioned   # one device
    record = _log_record() if _use_logging else None

    def bind_print(fmt: str, *args: Any, **kwargs: Any) -> None:
        if not isinstance(fmt, str):
            raise TypeError(f"debug.print: the format must be a str, got "
                            f"{type(fmt).__name__}")
        if not skip_format_check:
            check_format(fmt, args, kwargs)
        fields = next(iter(string.Formatter().parse(fmt)), (None, None))[1]
        in_tree, dyn, static = split_static(args, kwargs)
        bind(debug_print_p, *dyn, fmt=fmt, ordered=bool(ordered), in_tree=in_tree,
             static_args=static, np_printoptions=tuple(np.get_printoptions().items()),
             has_placeholders=fields is not None, logging_record=record)

    if fmt is not None:
        return bind_print(fmt, *args, **kwargs)
    if args or kwargs:
        raise TypeError(f"debug.print received unexpected arguments in the two-call form: "
                        f"{args=} {kwargs=}")
    return bind_print


def debug_log(fmt: str | None = None, *args: Any, ordered: bool = False,
              partitioned: bool = False, skip_format_check: bool = False, **kwargs: Any) -> Any:
    """`debug.print`, but the message goes to the `plugax.debug` logger at INFO level,
    attributed to the caller's file and line (JAX's `jax.debug.log`)."""
    return debug_print(fmt, *args, ordered=ordered, partitioned=partitioned,
                       skip_format_check=skip_format_check, _use_logging=True, **kwargs)


def _log_record() -> logging.LogRecord:
    """A record naming the user's line (the first frame outside this family)."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith(
            "plugax_callback"):
        frame = frame.f_back
    file, line = (frame.f_code.co_filename, frame.f_lineno) if frame else ("?", 0)
    return logger.makeRecord(logger.name, logging.INFO, file, line, "", (), None)


def effects_barrier() -> None:
    """Wait until every callback of the programs already called has run (JAX's
    `jax.effects_barrier`). A plugax program that calls back into Python returns only
    once it has finished, so nothing is ever pending: this returns at once."""


def _name(f: Any) -> str:
    return getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or repr(f)
