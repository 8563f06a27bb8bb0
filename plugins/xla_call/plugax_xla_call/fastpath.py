"""Cached jit calls through jaxlib's C++ dispatcher (`jaxlib._jax.pjit`).

Why: a cached call of a small jitted function is mostly dispatch overhead
(flatten the arguments, look up the signature, gather buffers, execute, wrap
the results), and jaxlib ships JAX's own C++ implementation of exactly that.
`jit` returns the C++ object itself (a `PjitFunction`, as `jax.jit` does); plugax
keeps its Python cache-miss path (tracing, lowering, compiling, the compile
cache, host callbacks, staging under a transformation). The C++ object calls it
on a miss and, when `cache_miss` hands back a *fast-path record*, serves every
later call with the same signature without entering Python.

How plugax's state enters the C++ key:

- Device-backed Arrays *are* jaxlib `ArrayImpl`s (core/device_arrays.py), so
  the C++ path takes them as leaves and returns its results as they are; a
  leaf's weak type is part of its signature (the ArrayImpl's aval says it).
- The trace state: a jitted call inside an outer trace (grad, vmap, another
  jit, `disable_jit`, a rule override) must be staged, not run. The kernel keeps
  a jaxlib Config made with include_in_jit_key=True (`set_dispatch_key`) at
  STAGING in this thread whenever a trace other than the top level's is current,
  so those calls miss and reach `cache_miss`, which stages them and returns no
  record. Its global value is (x64 flag, registry version): a change of either
  makes later calls miss too (new records are made for the new value).
- Anything the record cannot describe declines (`cache_miss` returns no record,
  and the C++ object keeps calling Python for that signature): host-backed
  Arrays, NumPy values and Python scalars as arguments, host callbacks, float0
  results, closures over tracers, buffers committed to anything other than the
  default single device (sharded arrays), and every miss taken at STAGING.

The C++ path is used only when jaxlib has the interface this module was written
against (`check_interface`); otherwise, or when `PLUGAX_JIT_CPP_DISPATCH=0`, the
pure-Python path serves every call, with one log line saying why. Using it means
`jit(f)` imports jaxlib (the Python path imports it on the first call).
"""
from __future__ import annotations

import logging
import os
import sys
import threading
from collections import namedtuple
from typing import Any, Callable

import plugax.tree_util as tu
from plugax.extend import (DISPATCH_STAGING, Array, config as _config, device_array_types,
                           eval_trace, is_device_array, registry_version, set_dispatch_key, trace_state)

from .donation import run_donating

__all__ = ["available", "set_enabled", "enabled", "make_dispatcher", "uses_cpp_dispatch",
           "FastpathData", "TESTED_JAXLIB", "on_rules_published"]

log = logging.getLogger("plugax.jit")

#: jaxlib versions (major, minor) whose `_jax.pjit` this module was checked against.
TESTED_JAXLIB = ((0, 10),)

#: The record `cache_miss` returns for the C++ fast path: the fields of JAX's
#: `MeshExecutableFastpathData`, in that order (the C++ side reads them by name).
FastpathData = namedtuple("FastpathData", [
    "xla_executable", "out_pytree_def", "in_shardings", "out_shardings", "out_avals",
    "out_committed", "kept_var_bitvec", "in_device_local_layouts", "const_args"])


_state: dict = {"checked": False, "jax": None, "reason": None, "enabled": None,
                "registry": None, "cache": None, "key": None}
_lock = threading.Lock()


def _env_enabled() -> bool:
    return os.environ.get("PLUGAX_JIT_CPP_DISPATCH", "1").strip().lower() not in (
        "0", "false", "no", "off")


def set_enabled(value: bool | None) -> None:
    """Use (True) or bypass (False) the C++ dispatcher for functions jitted from now
    on; None goes back to the `PLUGAX_JIT_CPP_DISPATCH` environment variable. Tests
    use it to force the pure-Python path."""
    _state["enabled"] = value


def enabled() -> bool:
    """Whether newly jitted functions will dispatch cached calls in C++."""
    flag = _state["enabled"]
    return (_env_enabled() if flag is None else flag) and available()


def check_interface(jax_mod: Any, version: str) -> str | None:
    """Why jaxlib's dispatcher cannot be used (None when it can): the version is
    outside the tested range, or a name this module needs is missing."""
    try:
        major_minor = tuple(int(p) for p in version.split(".")[:2])
    except ValueError:
        return f"jaxlib version {version!r} could not be parsed"
    if major_minor not in TESTED_JAXLIB:
        tested = ", ".join(f"{a}.{b}" for a, b in TESTED_JAXLIB)
        return f"jaxlib {version} is not a version plugax's C++ dispatch was tested with ({tested})"
    needed = ("pjit", "PjitFunctionCache", "pytree", "jax_jit", "config")
    missing = [n for n in needed if not hasattr(jax_mod, n)]
    if missing:
        return f"jaxlib {version} has no _jax.{', _jax.'.join(missing)}"
    for owner, names in ((jax_mod.jax_jit, ("set_enable_x64_state", "set_disable_jit_state",
                                            "set_post_hook_state")),
                         (jax_mod.config, ("Config",)),
                         (jax_mod.pytree, ("PyTreeRegistry",))):
        gone = [n for n in names if not hasattr(owner, n)]
        if gone:
            return f"jaxlib {version}'s dispatcher interface changed (missing {', '.join(gone)})"
    return None


def available() -> bool:
    """Whether jaxlib's C++ dispatcher is present with the expected interface
    (checked once; the reason is logged once when it is not)."""
    if not _state["checked"]:
        with _lock:
            if not _state["checked"]:
                _state["reason"] = _check()
                _state["checked"] = True
                if _state["reason"] is not None:
                    log.warning("plugax.jit: using the pure-Python dispatch path: %s",
                                _state["reason"])
    return _state["reason"] is None


def unavailable_reason() -> str | None:
    available()
    return _state["reason"]


def _check() -> str | None:
    try:
        import jaxlib
        from jaxlib import _jax
    except ImportError as err:  # pragma: no cover - jaxlib is a dependency
        return f"jaxlib's C++ dispatcher cannot be imported ({err})"
    reason = check_interface(_jax, getattr(jaxlib, "__version__", "?"))
    if reason is not None:
        return reason
    try:
        _setup(_jax)
    except Exception as err:  # an interface that looks right but does not behave
        return f"jaxlib's dispatcher could not be set up ({type(err).__name__}: {err})"
    return None


def _setup(_jax: Any) -> None:
    """The private pytree registry, the dispatch key and the process-global states the
    C++ path reads.

    The x64 and disable-jit states are set only when nobody (JAX itself, in the
    same process) has set them: they are process-global. They do not decide
    anything for plugax's calls: plugax's x64 flag is in the dispatch key, and
    plugax's disable_jit makes calls miss through the trace state."""
    _state["registry"] = _jax.pytree.PyTreeRegistry(
        enable_none=True, enable_tuple=True, enable_namedtuple=True, enable_list=True,
        enable_dict=True)
    # a host-backed Array is a node whose one child is its device copy (`_buf`, made by
    # its first call's transfer): later calls with the same Array take the C++ path
    _state["registry"].register_dataclass_node(Array, ["_buf"], ["weak_type"])
    _state["cache"] = _jax.PjitFunctionCache(capacity=8192)
    Config = _jax.config.Config
    if "jax._src.config" not in sys.modules:
        # JAX, once imported, owns these (its import sets them, replacing ours;
        # replacing *its* would break jax.config.update("jax_enable_x64", ...))
        jj = _jax.jax_jit
        for setter, name, value in ((jj.set_enable_x64_state, "plugax_enable_x64", False),
                                    (jj.set_disable_jit_state, "plugax_disable_jit", False),
                                    (jj.set_post_hook_state, "plugax_post_hook", None)):
            setter(Config(name, value, include_in_jit_key=False))
    key = Config("plugax_dispatch", _top_value(), include_in_jit_key=True)
    _state["key"] = key
    _config.on_change(_refresh_key)
    set_dispatch_key(key, _jax.config.unset)
    _state["jax"] = _jax


def _top_value() -> tuple:
    """The dispatch key's value at the top level: what a cached executable depends on
    besides its arguments (a function traced with x64 on may make 64-bit values from
    32-bit arguments; a change of plugins may change every rule)."""
    return (bool(_config.enable_x64), registry_version())


def _refresh_key(*_: Any) -> None:
    """After x64 changes or plugins are rebuilt: later top-level calls use a new key."""
    key = _state.get("key")
    if key is not None:
        key.set_global(_top_value())


def on_rules_published() -> None:
    """The plugins changed (the plugax_rules_published hook): cached executables may
    have been compiled with rules that no longer apply."""
    _refresh_key()


def _shard_arg_fallback(*args: Any) -> Any:
    """Never reached for plugax's calls: arguments that are not device-backed Arrays
    make `cache_miss` decline, so the C++ path never has to transfer them."""
    raise TypeError("plugax's C++ jit dispatch cannot transfer this argument")


def make_dispatcher(jf: Any) -> Callable | None:
    """The C++ object `jit` returns for `jf` (a JitFunction), or None when the C++ path
    is disabled or unavailable (then `jit` returns its pure-Python function). Builds
    the dispatcher on first use, which imports jaxlib."""
    flag = _state["enabled"]
    if not (_env_enabled() if flag is None else flag) or not available():
        return None
    if any(i < 0 for i in jf.static_argnums + jf.donate_argnums):
        return None     # the C++ side matches positions literally
    key = (jf.static_argnums, jf.static_argnames, jf.donate_argnums, jf.donate_argnames)
    cpp = _state["jax"].pjit(jf.name, jf.fun, _CacheMiss(jf, _state["registry"]),
                             list(jf.static_argnums), list(jf.static_argnames), key,
                             _state["registry"], _shard_arg_fallback, _state["cache"])
    cpp._plugax_cpp = True
    return cpp


def uses_cpp_dispatch(fn: Callable) -> bool:
    """Whether a function returned by `plugax.jit` dispatches its cached calls through
    jaxlib's C++ dispatcher (False: the pure-Python path serves every call)."""
    return getattr(fn, "_plugax_cpp", False) is True


class _CacheMiss:
    """What the C++ object calls when it has no record for a signature: the Python
    path (trace, compile, run, or stage), then the record for the next call, if one
    can be made."""

    __slots__ = ("jf", "reg")

    def __init__(self, jf: Any, reg: Any):
        self.jf, self.reg = jf, reg

    def __call__(self, *args: Any, **kwargs: Any) -> tuple:
        jf = self.jf
        if (trace_state.trace is not eval_trace or _state["key"].value == DISPATCH_STAGING
                or _placed_elsewhere(args, kwargs)):
            # staged (or a rule running at its parent's top level while the key says
            # STAGING: a record would be filed under STAGING); sharded inputs take
            # jit's own path
            return jf._call(args, kwargs), None, False
        entry, leaves = jf._entry(args, kwargs)
        if entry.const_tracers:
            return jf._call(args, kwargs), None, False
        # which leaves are device-backed must be read *before* running: the call
        # transfers host values, and the C++ side keyed this miss on what it saw
        bufs = [x if is_device_array(x) else x._buf if type(x) is Array else None
                for x in leaves]
        out = run_donating(entry, leaves)
        return out, self._record(entry, bufs, args, kwargs, out), False

    def _record(self, entry: Any, bufs: list, args: tuple, kwargs: dict,
                out: Any) -> FastpathData | None:
        exe = entry._exe
        if exe is None or exe.host_callbacks or exe.float0_outs or getattr(
                exe, "partitioned", False):   # SPMD programs (spmd.py) take the Python path
            return None
        if any(b is None or not _default_placed(b) for b in bufs):
            return None
        dyn_args, dyn_kwargs, _ = self.jf._split_static(args, kwargs)
        flat, _ = self.reg.flatten((dyn_args, dyn_kwargs))
        if len(flat) != len(bufs) or any(a is not b for a, b in zip(flat, bufs)):
            return None     # a structure the private registry reads differently
        out_flat, out_tree = self.reg.flatten(out)
        if len(out_flat) != len(exe.out_avals) or any(
                type(o) not in device_array_types for o in out_flat):
            return None
        n = len(bufs)
        try:
            return FastpathData(
                exe.loaded, out_tree, [b._sharding for b in bufs],
                [o._sharding for o in out_flat], [o.aval for o in out_flat],
                [o._committed for o in out_flat], [True] * n, [None] * n, [])
        except AttributeError:
            return None


def _placed_elsewhere(args: tuple, kwargs: dict) -> bool:
    """Whether an argument is an Array on anything but one device (a sharded array)."""
    for x in tu.tree_leaves((args, kwargs)):
        buf = x if type(x) in device_array_types else (
            x._buf if type(x) is Array else None)
        if buf is not None and not _default_placed(buf):
            return True
    return False


def _default_placed(buf: Any) -> bool:
    """A buffer on the one default device (sharded or elsewhere-committed arrays
    take the Python path, which knows how to handle them)."""
    try:
        return len(buf._sharding._internal_device_list) == 1
    except AttributeError:
        return False
