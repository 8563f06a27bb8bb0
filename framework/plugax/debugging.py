"""Switches for debugging a program: `disable_jit`, and names that only label code.

`disable_jit` runs every jitted function as plain Python in the block, so a
`print` or a debugger sees concrete values. It is per thread, like an
override block: the thread's bottom interpreter becomes a separate EvalTrace
(which is what makes jit's cached fast path step aside), and jit checks
`jit_disabled()` before it traces. `named_call` and `named_scope` exist so
ported programs run; plugax does not record the names (no profiler reads them).
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from .core.trace import EvalTrace, _state as _trace_state, close_block, eval_trace, open_block

__all__ = ["disable_jit", "jit_disabled", "named_call", "named_scope"]


class _NoJitEvalTrace(EvalTrace):
    def describe(self) -> str:
        return "EvalTrace (inside plugax.disable_jit)"


_no_jit_trace = _NoJitEvalTrace()


class _Local(threading.local):
    def __init__(self) -> None:
        self.disabled = False


_local = _Local()


def jit_disabled() -> bool:
    """Whether this thread is inside `disable_jit()`."""
    return _local.disabled


@contextmanager
def disable_jit(disable: bool = True) -> Iterator[None]:
    """Run jitted functions as ordinary Python inside the block (this thread)."""
    previous, prev_trace = _local.disabled, _trace_state.trace
    _local.disabled = bool(disable)
    # jaxlib's C++ dispatch must not serve calls in here
    token = open_block(True if disable and prev_trace is eval_trace else None)
    if disable and prev_trace is eval_trace:
        _trace_state.trace = _no_jit_trace
    try:
        yield
    finally:
        _local.disabled = previous
        if _trace_state.trace is _no_jit_trace and prev_trace is eval_trace:
            _trace_state.trace = eval_trace
        close_block(token, prev_trace)


def named_call(fun: Callable, *, name: str | None = None) -> Callable:
    """`fun` itself: the name is only a label (JAX shows it in profiles)."""
    return fun


@contextmanager
def named_scope(name: str) -> Iterator[None]:
    """A labelled block; plugax keeps no profile, so the label has no effect."""
    if not isinstance(name, str):
        raise TypeError(f"named_scope: name must be a str, got {type(name).__name__}")
    yield
