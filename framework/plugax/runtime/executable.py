"""Compiled executables: compile a StableHLO module once, call it many times.

Calling is the hot path of every jitted function, so everything that can be
decided once per executable is: the result handlers, the output avals, and
whether an on-disk cache entry exists. A call is then: gather device buffers,
`execute_sharded`, `consume_with_handlers`, wrap each result as an Array.
(`disassemble_into_single_device_arrays` is avoided on purpose: without the
`jax` package installed it retries an import on every call; see the notes in
docs/jit.md.)
"""
from __future__ import annotations

import operator
import os
import threading
from collections import OrderedDict
from typing import Any, Sequence

import numpy as np

from ..core.array import Array, signature_id
from ..core.device_types import is_device_array
from ..core.avals import ShapedArray
from .. import dtypes
from .client import backend, to_device
from . import disk_cache

__all__ = ["Executable", "compile_module", "deserialize_executable", "clear_compiled_cache"]

_buffer_of = operator.attrgetter("_buf")


class Executable:
    """A loaded XLA executable with the avals it was compiled for."""

    __slots__ = ("loaded", "in_avals", "out_avals", "out_sigs", "handlers", "text", "_run",
                 "float0_outs", "host_callbacks")

    def __init__(self, loaded: Any, in_avals: Sequence[ShapedArray],
                 out_avals: Sequence[ShapedArray], text: str = "",
                 host_callbacks: Sequence[Any] = ()):
        b = backend()
        self.loaded = loaded
        self.in_avals = list(in_avals)
        self.out_avals = list(out_avals)
        self.out_sigs = [signature_id(a.shape, a.dtype, a.weak_type) for a in self.out_avals]
        self.handlers = [b.result_handler(_device_aval(a)) for a in self.out_avals]
        self.text = text
        self._run = loaded.execute_sharded
        self.host_callbacks = list(host_callbacks)
        if self.host_callbacks:
            self._run = _CallbackRun(loaded.execute_sharded, self.host_callbacks)
        # float0 results come back from the device as bool; they are given back as
        # float0 (as eagerly, and as in JAX), so jit and eager agree on the type
        self.float0_outs = [i for i, a in enumerate(self.out_avals) if a.dtype == dtypes.float0]

    def __call__(self, leaves: Sequence[Any]) -> list[Array]:
        """Run on Arrays (or NumPy values and scalars of the compiled types).

        This is the per-call work of every cached jit call. Device-backed Arrays
        pass their buffers straight in (one C-level `map`); anything else is
        transferred once. Results are device-backed Arrays, born with their
        signature ids, returned before the computation finishes: jaxlib's own
        `ArrayImpl`s, which count as Arrays (core/device_arrays.py).
        """
        try:
            bufs = list(map(_buffer_of, leaves))
            on_device = None not in bufs
        except AttributeError:  # a NumPy value or Python scalar among the leaves
            on_device = False
        if not on_device:
            bufs = [_buffer(x, aval) for x, aval in zip(leaves, self.in_avals)]
        results = self._run(bufs).consume_with_handlers(self.handlers)
        if self.float0_outs:
            for i in self.float0_outs:
                results[i] = Array(np.zeros(self.out_avals[i].shape, dtypes.float0), False)
        return results

    def serialize(self) -> bytes:
        if self.host_callbacks:
            raise ValueError("an executable that calls back into Python (pure_callback, "
                             "debug.print, debug.callback) cannot be serialized: the Python "
                             "functions it calls are not part of it")
        return backend().client.serialize_executable(self.loaded)

    def cost_analysis(self) -> dict:
        return dict(self.loaded.cost_analysis())

    def memory_analysis(self) -> Any:
        return self.loaded.get_compiled_memory_stats()

    def hlo_text(self) -> str:
        return self.loaded.get_hlo_text()


class _CallbackRun:
    """`execute_sharded` of an executable with host callbacks: a Python exception in a
    callback reaches here as jaxlib's "CpuCallback error"; it is raised again as a
    CallbackError caused by the user's exception (lowering/host_callback.py)."""

    __slots__ = ("run", "callbacks")

    def __init__(self, run: Any, callbacks: list):
        self.run, self.callbacks = run, callbacks

    def __call__(self, bufs: list) -> "_CallbackResults":
        try:
            return _CallbackResults(self.run(bufs), self.callbacks)
        except Exception as err:
            failure = _callback_failure(self.callbacks, err)
            raise failure from failure.__cause__


class _CallbackResults:
    __slots__ = ("results", "callbacks")

    def __init__(self, results: Any, callbacks: list):
        self.results, self.callbacks = results, callbacks

    def consume_with_handlers(self, handlers: list) -> list:
        try:
            outs = self.results.consume_with_handlers(handlers)
            for out in outs:   # a failed callback marks every output as failed
                out.block_until_ready()
            return outs
        except Exception as err:
            failure = _callback_failure(self.callbacks, err)
            raise failure from failure.__cause__


def _callback_failure(callbacks: list, err: Exception) -> BaseException:
    from ..lowering.host_callback import callback_failure
    return callback_failure(callbacks, err)


def _buffer(x: Any, aval: ShapedArray) -> Any:
    """The device buffer of one argument, converting a non-Array to the compiled type."""
    if is_device_array(x):
        return x
    if type(x) is not Array:
        x = Array(np.asarray(x, aval.dtype), aval.weak_type)
    return x._buf if x._buf is not None else to_device(x)


def _device_aval(aval: ShapedArray) -> ShapedArray:
    """float0 (the tangent type of integers) lives on the device as bool, as in JAX."""
    if aval.dtype == dtypes.float0:
        return ShapedArray(aval.shape, dtypes.bool_, False)
    return aval


_compiled: "OrderedDict[str, Any]" = OrderedDict()   # module text -> loaded executable
_compiled_lock = threading.Lock()
COMPILED_CACHE_SIZE = 256


def compile_module(text: str, in_avals: Sequence[ShapedArray],
                   out_avals: Sequence[ShapedArray],
                   host_callbacks: Sequence[Any] = ()) -> Executable:
    """Compile StableHLO text once per distinct text (an in-memory LRU, so fresh but
    identical functions share an executable), and reuse an on-disk executable when
    PLUGAX_COMPILATION_CACHE_DIR is set. A module with `host_callbacks` (the Python
    callables its callback custom calls index) is compiled afresh and never cached:
    its text does not say which callables it calls."""
    if host_callbacks:
        return Executable(_compile_with_callbacks(text, host_callbacks), in_avals,
                          out_avals, text, host_callbacks)
    if "@xla_ffi_python_" in text:   # XLA would call a missing callable: a crash, not an error
        raise ValueError("compile_module: the module calls Python host callbacks "
                         "(pure_callback, debug.print, ...) but none were given: pass the "
                         "LoweredModule's host_callbacks")
    with _compiled_lock:
        loaded = _compiled.get(text)
        if loaded is not None:
            _compiled.move_to_end(text)
    if loaded is None:
        loaded = _compile(text)
        with _compiled_lock:
            _compiled[text] = loaded
            while len(_compiled) > COMPILED_CACHE_SIZE:
                _compiled.popitem(last=False)
    return Executable(loaded, in_avals, out_avals, text)


def clear_compiled_cache() -> None:
    with _compiled_lock:
        _compiled.clear()


def _compile_with_callbacks(text: str, host_callbacks: Sequence[Any]) -> Any:
    """jaxlib takes host callbacks only with an MLIR module object, not with text."""
    from ..lowering.mlir import make_context
    from jaxlib.mlir import ir
    b = backend()
    with make_context():
        module = ir.Module.parse(text)
        return b.client.compile_and_load(module, b.device_list, b.compile_options(),
                                         list(host_callbacks))


def _compile(text: str) -> Any:
    """Compile, or load the checked on-disk entry (see disk_cache for what is refused)."""
    b = backend()
    cache_dir = os.environ.get("PLUGAX_COMPILATION_CACHE_DIR")
    path = None
    if cache_dir and disk_cache.usable_dir(cache_dir):
        path = disk_cache.entry_path(cache_dir, text, b.platform)
        data = disk_cache.read_entry(path, b.platform)
        if data is not None:
            try:
                return b.client.deserialize_executable(data, b.device_list, b.compile_options())
            except Exception as err:  # checksum fine but jaxlib refuses it: recompile
                disk_cache._warn_entry(path, f"jaxlib could not load it ({err})")
    loaded = b.client.compile_and_load(text, b.device_list, b.compile_options())
    if path:
        try:
            disk_cache.write_entry(path, b.client.serialize_executable(loaded), b.platform)
        except OSError as err:
            disk_cache._warn_entry(path, f"could not be written ({err})")
    return loaded


def deserialize_executable(data: bytes, in_avals: Sequence[ShapedArray],
                           out_avals: Sequence[ShapedArray], text: str = "") -> Executable:
    b = backend()
    loaded = b.client.deserialize_executable(data, b.device_list, b.compile_options())
    return Executable(loaded, in_avals, out_avals, text)
