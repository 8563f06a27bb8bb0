"""The `debug_print` primitive (JAX 0.10's name): `plugax.debug.print` and `debug.log`.

A primitive of its own rather than a `debug_callback` with a printing closure, as
in JAX, so that a jaxpr shows what is printed (`fmt`, the static arguments) and
the message is built from params alone. Its rules are debug_callback's, run on the
printing callback its params describe: print the primal values under jvp, once per
element under vmap, a kept host call under jit.

Arguments that are not arrays (a string, None, an object) are *static*: kept in
the params and formatted as they are, as JAX does; only arrays are operands.
"""
from __future__ import annotations

import logging
import string
import sys
from typing import Any, Callable

import numpy as np

import plugax.tree_util as tu
from plugax.extend import Array, Primitive, RuleSet, bind

from .primitives import (Named, batch_debug_callback, lower_debug_callback, run_callback,
                         transpose_debug_callback)

__all__ = ["debug_print_p", "RULES", "split_static", "merge_static", "check_format",
           "logger"]

debug_print_p = Primitive("debug_print", multiple_results=True)
logger = logging.getLogger("plugax.debug")

_DYNAMIC = (Array, np.ndarray, np.generic, bool, int, float, complex)


def split_static(args: tuple, kwargs: dict) -> tuple[Any, list, tuple]:
    """(in_tree, array leaves, ((position, value), ...) of the other leaves)."""
    from plugax.extend import Tracer
    leaves, in_tree = tu.tree_flatten((args, kwargs))
    dyn, static = [], []
    for i, leaf in enumerate(leaves):
        if isinstance(leaf, (*_DYNAMIC, Tracer)):
            dyn.append(leaf)
        else:
            static.append((i, leaf))
    return in_tree, dyn, tuple(static)


def merge_static(in_tree: Any, dyn: list, static: tuple) -> tuple[tuple, dict]:
    """The (args, kwargs) that `split_static` took apart, with `dyn` as the arrays."""
    statics = dict(static)
    it = iter(dyn)
    leaves = [statics[i] if i in statics else next(it)
              for i in range(len(statics) + len(dyn))]
    return tu.tree_unflatten(in_tree, leaves)


class _FormatChecker(string.Formatter):
    """JAX's check of a print format against its arguments at the call: a missing one
    raises IndexError/KeyError, an unused one ValueError; nothing is formatted."""

    def format_field(self, value: Any, format_spec: str) -> str:
        return ""

    def check_unused_args(self, used_args: Any, args: Any, kwargs: Any) -> None:
        unused = [a for i, a in enumerate(args) if i not in used_args]
        unused_kw = [k for k in kwargs if k not in used_args]
        if unused:
            raise ValueError(f"Unused positional arguments to `plugax.debug.print`: {unused}")
        if unused_kw:
            raise ValueError(f"Unused keyword arguments to `plugax.debug.print`: {unused_kw}. "
                             f"You may be passing an f-string (i.e, `f\"{{x}}\"`) into "
                             f"`plugax.debug.print` and instead should pass in a regular "
                             f"string.")


def check_format(fmt: str, args: tuple, kwargs: dict) -> None:
    _FormatChecker().format(fmt, *args, **kwargs)


def message(fmt: str, np_printoptions: tuple, has_placeholders: bool, args: tuple,
            kwargs: dict) -> str:
    """What is printed: arrays as NumPy arrays, with the print options of the call."""
    to_np = lambda x: np.asarray(x) if isinstance(x, Array) else x
    args, kwargs = tu.tree_map(to_np, (args, kwargs))
    with np.printoptions(**dict(np_printoptions)):
        if has_placeholders:
            return fmt.format(*args, **kwargs)
        return " ".join((fmt, *(str(a) for a in args)))


def _print_callback(fmt, ordered, in_tree, static_args, np_printoptions, has_placeholders,
                    logging_record) -> Callable:
    """The flat callback (NumPy arrays in) that formats and emits the message."""
    def emit(*vals: Any) -> list:
        args, kwargs = merge_static(in_tree, [Array(np.asarray(v)) for v in vals], static_args)
        text = message(fmt, np_printoptions, has_placeholders, args, kwargs)
        if logging_record is not None:
            record = logging.makeLogRecord(logging_record.__dict__)
            record.msg, record.args = text, ()
            logger.handle(record)
        else:
            sys.stdout.write(text + "\n")
        return []
    return Named(emit, f"print({fmt!r})")


def _abstract_eval(ctx, *avals, **params):
    return []


def _impl(ctx, *vals, **params):
    cb = _print_callback(**params)
    run_callback(cb, vals, f"debug.{cb.name}")
    return []


def _jvp(ctx, primals, tangents, **params):
    bind(debug_print_p, *primals, **params)   # the primal values; no derivative
    return [], []


def _batching(ctx, args, dims, **params):
    return batch_debug_callback(ctx, args, dims, callback=_print_callback(**params),
                                ordered=params["ordered"])


def _lowering(ctx, *operands, **params):
    return lower_debug_callback(ctx, *operands, callback=_print_callback(**params),
                                ordered=params["ordered"])


RULES = [RuleSet(debug_print_p, impl=_impl, abstract_eval=_abstract_eval, jvp=_jvp,
                 batching=_batching, transpose=transpose_debug_callback,
                 lowering={"default": _lowering})]
