"""Cached jit calls through jaxlib's C++ dispatcher (`jaxlib._jax.pjit`).

Why: a cached call of a small jitted function is mostly dispatch overhead
(flatten the arguments, look up the signature, gather buffers, execute, wrap
the results), and jaxlib ships JAX's own C++ implementation of exactly that.
plugax keeps its Python cache-miss path (tracing, lowering, compiling, the
compile cache, host callbacks); the C++ object calls it on a miss and, when
`cache_miss` hands back a *fast-path record*, serves every later call with the
same signature without entering Python.

What differs from JAX's use of it, and how it is handled here:

- plugax's `Array` is a Python class wrapping jaxlib's `ArrayImpl`; the C++
  path only takes `ArrayImpl` leaves. `Array` is registered in a *private*
  pytree registry (the one passed to `pjit`) as a dataclass-style node whose
  data field is the device buffer `_buf` and whose metadata is `weak_type`, so
  a leaf's weak type is part of the tree structure and hence of the signature.
  Results are rebuilt as `Array(_buf=..., weak_type=...)`.
- The trace state: a jitted call inside an outer trace (grad, vmap, another
  jit, `disable_jit`, a rule override) must be staged, not run. JAX puts its
  trace state in the C++ key; plugax's lives in a Python thread-local, so the
  function `jit` returns checks it first and only enters the C++ object at the
  top level. The x64 flag selects one of two C++ objects; a change of the set of
  plugins clears their caches.
- Anything the record cannot describe declines (`cache_miss` returns no record,
  and the C++ object keeps calling Python for that signature): host-backed
  Arrays, NumPy values and Python scalars as arguments, host callbacks, float0
  results, closures over tracers, buffers committed to anything other than the
  default single device (sharded arrays).

The C++ path is used only when jaxlib has the interface this module was written
against (`check_interface`); otherwise, or when `PLUGAX_JIT_CPP_DISPATCH=0`, the
pure-Python path serves every call, with one log line saying why.
"""
from __future__ import annotations

import logging
import os
import sys
import threading
from collections import namedtuple
from typing import Any, Callable

import plugax.tree_util as tu
from plugax.extend import Array, config as _config, eval_trace, registry_version, trace_state

from .donation import run_donating

__all__ = ["available", "set_enabled", "enabled", "make_dispatcher", "uses_cpp_dispatch",
           "FastpathData", "TESTED_JAXLIB"]

log = logging.getLogger("plugax.jit")

#: jaxlib versions (major, minor) whose `_jax.pjit` this module was checked against.
TESTED_JAXLIB = ((0, 10),)

#: The record `cache_miss` returns for the C++ fast path: the fields of JAX's
#: `MeshExecutableFastpathData`, in that order (the C++ side reads them by name).
FastpathData = namedtuple("FastpathData", [
    "xla_executable", "out_pytree_def", "in_shardings", "out_shardings", "out_avals",
    "out_committed", "kept_var_bitvec", "in_device_local_layouts", "const_args"])

# how the C++ side words an unhashable static argument (before any Python runs)
_UNHASHABLE = "Non-hashable static arguments are not supported. An error occurred"

_state: dict = {"checked": False, "jax": None, "reason": None, "enabled": None,
                "registry": None, "cache": None}
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
    """The private pytree registry and the process-global states the C++ path reads.

    The x64 and disable-jit states are set only when nobody (JAX itself, in the
    same process) has set them: they are process-global. They do not decide
    anything for plugax's calls: x64 picks the C++ object, disable_jit never
    reaches it (the Python wrapper checks the trace state first)."""
    reg = _jax.pytree.PyTreeRegistry(enable_none=True, enable_tuple=True,
                                     enable_namedtuple=True, enable_list=True,
                                     enable_dict=True)
    reg.register_dataclass_node(Array, ["_buf"], ["weak_type"])
    _state["registry"] = reg
    _state["cache"] = _jax.PjitFunctionCache(capacity=8192)
    if "jax._src.config" not in sys.modules:
        # JAX, once imported, owns these (its import sets them, replacing ours;
        # replacing *its* would break jax.config.update("jax_enable_x64", ...))
        jj, Config = _jax.jax_jit, _jax.config.Config
        for setter, name, value in ((jj.set_enable_x64_state, "plugax_enable_x64", False),
                                    (jj.set_disable_jit_state, "plugax_disable_jit", False),
                                    (jj.set_post_hook_state, "plugax_post_hook", None)):
            setter(Config(name, value, include_in_jit_key=False))
    _state["jax"] = _jax


def _shard_arg_fallback(*args: Any) -> Any:
    """Never reached for plugax's calls: arguments that are not device-backed Arrays
    make `cache_miss` decline, so the C++ path never has to transfer them."""
    raise TypeError("plugax's C++ jit dispatch cannot transfer this argument")


def make_dispatcher(jf: Any, python_call: Callable) -> Callable | None:
    """The function `jit` returns when the C++ path may serve `jf` (a JitFunction),
    else None (then `jit` returns `python_call`, its pure-Python function).

    jaxlib is not imported here (importing plugax and jitting stay free of it):
    the first top-level call checks the dispatcher and builds the C++ object,
    and every call goes to `python_call` if the dispatcher is unavailable."""
    flag = _state["enabled"]
    if not (_env_enabled() if flag is None else flag):
        return None
    if any(i < 0 for i in jf.static_argnums + jf.donate_argnums):
        return None     # the C++ side matches positions literally
    slow = jf._call
    key = (jf.static_argnums, jf.static_argnames, jf.donate_argnums, jf.donate_argnames)
    cpps: list = [None, None]   # one C++ object per x64 setting, built on first use
    seen = [registry_version()]
    wide = [False]              # set once a call returned more than MOST_RESULTS results

    def build(x64: int) -> Any:
        if not available():
            return python_call
        return _state["jax"].pjit(jf.name, jf.fun, _CacheMiss(jf, _state["registry"], wide),
                                  list(jf.static_argnums), list(jf.static_argnames),
                                  (key, x64), _state["registry"], _shard_arg_fallback,
                                  _state["cache"])

    state, top, version_of = trace_state, eval_trace, registry_version

    def call(*args: Any, **kwargs: Any) -> Any:
        if wide[0]:
            return python_call(*args, **kwargs)   # many results: Python's path is faster
        if state.trace is top:
            x64 = 1 if _config.enable_x64 else 0
            cpp = cpps[x64]
            if cpp is None or seen[0] != version_of():
                cpp = _refresh(cpps, seen, build, x64)
            try:
                return cpp(*args, **kwargs)
            except ValueError as err:
                if not str(err).startswith(_UNHASHABLE):
                    raise
                return slow(args, kwargs)   # raises plugax's own wording of that error
        return slow(args, kwargs)

    call._cpp_functions, call._many_results = cpps, wide
    return call


def _refresh(cpps: list, seen: list, build: Callable, x64: int) -> Any:
    """(Re)build the C++ objects: on first use, and when the plugins changed (their
    cached executables may have been compiled with rules that no longer apply)."""
    version = registry_version()
    if seen[0] != version:
        for c in cpps:
            if c is not None and hasattr(c, "_clear_cache"):
                c._clear_cache()
        seen[0] = version
    if cpps[x64] is None:
        cpps[x64] = build(x64)
    return cpps[x64]


def uses_cpp_dispatch(fn: Callable) -> bool:
    """Whether a function returned by `plugax.jit` dispatches its cached calls through
    jaxlib's C++ dispatcher (False: the pure-Python path serves every call). Asking
    checks the dispatcher, which imports jaxlib. A function that returned more than
    MOST_RESULTS results has moved to the Python path (False from then on)."""
    return (getattr(fn, "_cpp_functions", None) is not None and available()
            and not fn._many_results[0])


class _CacheMiss:
    """What the C++ object calls when it has no record for a signature: the Python
    path (trace, compile, run), then the record for the next call, if one can be made."""

    __slots__ = ("jf", "reg", "wide")

    def __init__(self, jf: Any, reg: Any, wide: list):
        self.jf, self.reg, self.wide = jf, reg, wide

    def __call__(self, *args: Any, **kwargs: Any) -> tuple:
        jf = self.jf
        if trace_state.trace is not eval_trace or _placed_elsewhere(args, kwargs):
            # staged calls never come through `call`; sharded inputs take jit's own path
            return jf._call(args, kwargs), None, False
        entry, leaves = jf._entry(args, kwargs)
        if entry.const_tracers:
            return jf._call(args, kwargs), None, False
        # which leaves are device-backed must be read *before* running: the call
        # transfers host values, and the C++ side keyed this miss on what it saw
        bufs = [x._buf if type(x) is Array else None for x in leaves]
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
        out_bufs = []
        for o in out_flat:
            if type(o).__name__ != "ArrayImpl":
                return None
            out_bufs.append(o)
        if len(out_bufs) > MOST_RESULTS:
            self.wide[0] = True      # this function's calls go straight to the Python path
            return None
        if len(out_bufs) != len(exe.out_avals):
            return None
        n = len(bufs)
        try:
            return FastpathData(
                exe.loaded, out_tree, [b._sharding for b in bufs],
                [o._sharding for o in out_bufs], [o.aval for o in out_bufs],
                [o._committed for o in out_bufs], [True] * n, [None] * n, [])
        except AttributeError:
            return None


# The C++ dispatcher wraps each result by calling back into Python (`Array(_buf=...)`),
# ~0.4 µs a result more than the Python path's own wrapping, which the C++ call saves
# only once per call (~1.5 µs): measured on f32[16] leaves, a function of 3 results was
# ~1 µs faster through C++, one of 10 ~2 µs slower. A function that returns more results
# than this is served by the Python path from then on.
MOST_RESULTS = 4


def _placed_elsewhere(args: tuple, kwargs: dict) -> bool:
    """Whether an argument is an Array on anything but one device (a sharded array)."""
    return any(type(x) is Array and x._buf is not None and not _default_placed(x._buf)
               for x in tu.tree_leaves((args, kwargs)))


def _default_placed(buf: Any) -> bool:
    """A buffer on the one default device (sharded or elsewhere-committed arrays
    take the Python path, which knows how to handle them)."""
    try:
        return len(buf._sharding._internal_device_list) == 1
    except AttributeError:
        return False
