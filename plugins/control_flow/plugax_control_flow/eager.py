"""Eager loops, compiled: `scan` and `while` called outside any transformation.

Interpreting a loop body equation by equation costs a few microseconds per
equation per step, so an eager `lax.scan` of 10^5 steps ran ~80x slower than
JAX's. JAX never interprets a control-flow primitive eagerly: it compiles the
primitive application once per signature and runs that. So do we: the impl
rule of `scan` and of `while` first asks `compiled_loop` for an executable of
``prim.bind(*operands, **params)`` staged through the public `plugax.jit`
machinery (its `lower(...).compile()` stages, so a failure to lower or compile
is told apart from a failure while running), cached per (sub-jaxpr, params,
operand types, rule tables), unless the loop is short enough that interpreting
it is cheaper than compiling a new program (`INTERPRET_BUDGET`; a `while`, whose
trip count is unknown, interprets up to the budget and compiles the rest). Only
where compiling is impossible does the impl run its body step by step in Python:

- no transformation of ours may be bypassed: inside `disable_jit()` (the user
  asked for Python), inside a `plugax.extend.override` block (the thread's own
  rules must run, `is_eager()` is False there) and when a caller forces it
  (`interpret_eager_loops`, for tests and debugging);
- `plugax.jit` is not available (the xla_call plugin is not loaded);
- the body does not lower or compile (a primitive with an impl but no lowering
  rule): then that jaxpr is interpreted from then on, and one log line says why.

What stays the same: errors the operands cause are raised by abstract_eval at
the eager bind, before either path runs; a callback in the body (debug.print,
pure_callback, io_callback) runs on the host from the compiled loop, in order,
and its exception surfaces as the same `CallbackError`; grad, vmap and jvp of
an eager loop bind the transformed loop on the eager interpreter, which comes
here again, so they are compiled too. The results are returned as NumPy values
so the eager bind types them with its own avals (weak types included).
"""
from __future__ import annotations

import logging
import threading
import weakref
from contextlib import contextmanager
from typing import Any, Iterator

import numpy as np

from plugax.extend import (Array, Primitive, eval_trace, is_eager, jit_disabled,
                           registry_version, trace_state)

__all__ = ["compiled_loop", "eager_front_call", "MISS", "interpret_eager_loops",
           "eager_loop_stats", "INTERPRET_BUDGET", "loop_work"]

log = logging.getLogger("plugax.control_flow")

_INTERPRET = object()   # a cache entry: this jaxpr cannot be compiled, interpret it
_SEEN = object()        # a front-end cache entry: called once; compile on the second call
# Interpreting costs a few microseconds per equation per step; compiling a new program
# costs milliseconds (lowering, and XLA's compile when the program text is new). Below
# this many equation-steps an eager loop whose program is not compiled yet is cheaper
# interpreted: a 10-step scan of a fresh closure, made anew on every call (a lambda
# inside a function), must not pay a compilation per call. Tests set it to 0.
INTERPRET_BUDGET = 2000
# first sub-jaxpr of the params -> {(params, operand types, registry version): Compiled}
_cache: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()
_forced = threading.local()
# counts for tests and for users wondering which path ran
eager_loop_stats = {"compiled": 0, "interpreted": 0, "compilations": 0}


@contextmanager
def interpret_eager_loops(interpret: bool = True) -> Iterator[None]:
    """Run eager scan/while bodies step by step in Python in this thread (the
    per-step interpreter), e.g. to compare both paths or to debug a body."""
    prev = getattr(_forced, "on", False)
    _forced.on = interpret
    try:
        yield
    finally:
        _forced.on = prev


def _jit() -> Any:
    """`plugax.jit`, or None when no plugin provides it."""
    try:
        import plugax
        return plugax.jit
    except (ImportError, AttributeError):
        return None


def _hashable(value: Any) -> bool:
    try:
        hash(value)
        return True
    except TypeError:
        return False


def loop_work(steps: int, *jaxprs: Any) -> int:
    """Equation-steps of interpreting `steps` steps of these bodies (at least 1 per step)."""
    return steps * max(1, sum(len(j.eqns) for j in jaxprs))


def _run_by_eval_trace() -> bool:
    """Whether the interpreter running this impl rule is the plain eager one: the
    bottom of the current trace's chain. (Not `is_eager()`: partial evaluation runs
    the known half of a loop, e.g. the forward scan of `grad`, on its parent EvalTrace
    without making it current.) An `override` block's thread has another bottom
    interpreter, whose rules may differ from the tables: it interprets."""
    trace = trace_state.trace
    while trace.parent is not None:
        trace = trace.parent
    return trace is eval_trace


def compiled_loop(prim: Primitive, jaxpr: Any, vals: tuple, params: dict,
                  work: int | None = None) -> list | None:
    """The outputs (NumPy) of ``prim.bind(*vals, **params)`` run as one compiled
    program, or None when the caller must interpret the loop (see the module).
    `work`: the equation-steps interpreting would cost, when known; below
    INTERPRET_BUDGET a program not compiled yet is not compiled."""
    if getattr(_forced, "on", False) or not _run_by_eval_trace() or jit_disabled():
        eager_loop_stats["interpreted"] += 1
        return None
    items = tuple(sorted(params.items()))
    if not _hashable(items):
        eager_loop_stats["interpreted"] += 1
        return None
    key = (items, tuple((np.shape(v), np.result_type(v)) for v in vals), registry_version())
    table = _cache.setdefault(jaxpr, {})
    entry = table.get(key)
    if entry is None:
        if work is not None and work < INTERPRET_BUDGET:
            eager_loop_stats["interpreted"] += 1
            return None
        entry = table[key] = _compile(prim, vals, params)
    if entry is _INTERPRET:
        eager_loop_stats["interpreted"] += 1
        return None
    eager_loop_stats["compiled"] += 1
    prev, trace_state.trace = trace_state.trace, eval_trace   # run it as eager code
    try:
        outs = entry(*vals)
    finally:
        trace_state.trace = prev
    return [np.asarray(o) for o in outs]


def _compile(prim: Primitive, vals: tuple, params: dict) -> Any:
    jit = _jit()
    if jit is None:
        return _INTERPRET

    def loop(*operands: Any) -> list:
        return prim.bind(*operands, **params)
    loop.__name__ = f"eager_{prim.name}"
    prev, trace_state.trace = trace_state.trace, eval_trace   # stage it as eager code
    try:
        compiled = jit(loop).lower(*vals).compile()
    except Exception as err:   # lowering or compiling only: nothing has run yet
        log.info("plugax: an eager %s is interpreted step by step, its body does not "
                 "compile: %s: %s", prim.name, type(err).__name__, err)
        return _INTERPRET
    finally:
        trace_state.trace = prev
    eager_loop_stats["compilations"] += 1
    return compiled


# --- the front ends: one jitted call per user function --------------------------------
# Compiling the primitive (above) still leaves the front end tracing the body on every
# call, and each trace is a new jaxpr, hence a new cache entry. JAX caches that trace by
# the user's function; so do we, for eager calls only: `lax.scan(f, ...)` called again
# with the same `f` (and static arguments and operand types) runs one cached
# `plugax.jit` of the whole front-end call. As in JAX, the body is then not traced again,
# so Python side effects in it run once, and a global it reads is read at the first
# call (pass changing values as operands). Operands stay where they are (device
# results are not copied to the host) and weak types are kept, as jit keeps them.
MISS = object()   # `eager_front_call` found nothing to run: take the ordinary path
_fronts: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()
_SCALARS = (bool, int, float, complex)


def _leaf_sig(x: Any) -> Any:
    """What a jitted call's signature depends on for one operand, or None if unknown."""
    t = type(x)
    if t is Array:
        return (x.shape, x.dtype, x.weak_type)
    if t in _SCALARS:
        return t
    if t is np.ndarray or isinstance(x, np.generic):
        return (t, x.shape, x.dtype)
    return None


def eager_front_call(fun: Any, static: tuple, build: Any, args: tuple) -> Any:
    """``build(fun_ref)(*args)`` through a `plugax.jit` cached per (`fun`, `static`,
    operand types), or MISS where the caller must run its ordinary (tracing) path:
    not eager, interpretation forced, `fun` not weak-referenceable, an operand of
    unknown kind, or the call not lowering (its ordinary path then raises the user's
    error, or interprets a body that has no lowering)."""
    if getattr(_forced, "on", False) or not is_eager() or jit_disabled():
        return MISS
    import plugax.tree_util as tu
    leaves, tree = tu.tree_flatten(args)
    sig = [static, tree, registry_version()]
    for x in leaves:
        s = _leaf_sig(x)
        if s is None:
            return MISS
        sig.append(s)
    try:
        table = _fronts.get(fun)
        if table is None:
            table = _fronts[fun] = {}
        sig = tuple(sig)
        entry = table.get(sig)
    except TypeError:   # not weak-referenceable, or an unhashable static argument
        return MISS
    if entry is None:   # a first call takes the ordinary path, whose impl rule weighs
        table[sig] = _SEEN   # compiling against interpreting; a second one compiles
        return MISS
    if entry is _SEEN:
        entry = table[sig] = _front_compile(fun, build, args)
    if entry is _INTERPRET:
        return MISS
    eager_loop_stats["compiled"] += 1
    return entry(*args)


def _front_compile(fun: Any, build: Any, args: tuple) -> Any:
    jit = _jit()
    if jit is None:
        return _INTERPRET
    jitted = jit(build(weakref.ref(fun)))
    try:
        jitted.lower(*args)   # trace and lower now: a failure here has run nothing
    except Exception:   # the ordinary path raises the user's error, or interprets
        return _INTERPRET
    eager_loop_stats["compilations"] += 1
    return jitted
