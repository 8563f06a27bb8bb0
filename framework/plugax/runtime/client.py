"""The PJRT client and host-to-device transfers.

Why a subclass of jaxlib's `SingleDeviceSharding`: jaxlib's transfer and
result-handler functions expect a sharding object that behaves like JAX's
Python sharding classes (a `memory_kind`, an `_internal_device_list`, an
`_to_xla_hlo_sharding` method). We only ever place a whole array on one
device, so replication is the whole story.
"""
from __future__ import annotations

import os
import threading
from typing import Any

import numpy as np

from .. import dtypes
from ..core.array import Array
from ..core.avals import ShapedArray
from ..core.device_arrays import register_device_array_type
from ..errors import PlugaxError

__all__ = ["Backend", "backend", "device_put", "to_device", "set_distributed",
           "backend_started"]

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")  # keep PJRT's start-up chatter quiet

from jaxlib import xla_client as xc  # noqa: E402  (after the logging setting)


class _Sharding(xc.SingleDeviceSharding):
    memory_kind = None

    def __init__(self, device: Any):
        super().__init__(device)
        self._devices = xc.DeviceList((device,))

    @property
    def _internal_device_list(self) -> Any:
        return self._devices

    def _to_xla_hlo_sharding(self, ndim: int) -> Any:
        return xc.HloSharding.replicate()


class Backend:
    """A PJRT client with its default device and the sharding objects jaxlib wants."""

    def __init__(self, platform: str):
        self.client = _make_client(platform)
        self.platform = self.client.platform
        self.device = self.client.local_devices()[0]
        self.device_list = xc.DeviceList((self.device,))
        self.sharding = _Sharding(self.device)
        # device results are jaxlib's own arrays, accepted as plugax Arrays
        register_device_array_type(xc.ArrayImpl)

    def result_handler(self, aval: ShapedArray) -> Any:
        try:
            return xc.array_result_handler(aval, self.sharding, True, _skip_checks=True)
        except TypeError:   # jaxlib 0.11 dropped the `_skip_checks` keyword
            return xc.array_result_handler(aval, self.sharding, True)

    def compile_options(self) -> Any:
        return xc.CompileOptions()


def _make_client(platform: str) -> Any:
    if platform == "cpu":
        n = dtypes.config.num_cpu_devices
        if _distributed:     # one process of several (plugax.distributed.initialize)
            return xc.make_cpu_client(num_devices=n or None, **_cpu_distributed_options())
        return xc.make_cpu_client(num_devices=n) if n else xc.make_cpu_client()
    if platform in ("cuda", "gpu", "rocm"):
        return _make_plugin_client(platform)
    raise PlugaxError(f"PLUGAX_PLATFORM={platform!r} is not a platform plugax knows; "
                      f"use 'cpu' or 'cuda'")


def _make_plugin_client(platform: str) -> Any:
    """A GPU client from an installed PJRT plugin (e.g. `pip install jax-cuda12-pjrt`)."""
    import glob
    import importlib.util
    for package in ("jax_plugins.xla_cuda13", "jax_plugins.xla_cuda12"):
        try:
            spec = importlib.util.find_spec(package)
        except ModuleNotFoundError:
            spec = None
        if spec is None or not spec.submodule_search_locations:
            continue
        libraries = glob.glob(os.path.join(spec.submodule_search_locations[0], "*.so"))
        if libraries:
            name = "cuda"
            c_api = xc.load_pjrt_plugin_dynamically(name, libraries[0])
            _accept_gpu_kernels(c_api)
            options, distributed_client = _gpu_client_options()
            return xc.make_c_api_client(name, options, distributed_client)
    raise PlugaxError(f"PLUGAX_PLATFORM={platform} but no GPU PJRT plugin is installed "
                      f"(pip install jax-cuda12-pjrt); unset PLUGAX_PLATFORM to use the CPU")


def _accept_gpu_kernels(c_api: Any) -> None:
    """Route custom-call targets registered for "CUDA" (jaxlib's cuSOLVER kernels, see
    lowering/custom_call.py) to the plugin just loaded, as JAX's CUDA plugin does: the
    plugin is a separate library with its own XLA, reached only through its C API
    extension, which jaxlib's CUDA kernel package provides. Without that package the
    GPU runs everything but the custom calls (the linear-algebra factorisations)."""
    import functools
    import importlib
    for package in ("jax_cuda13_plugin", "jax_cuda12_plugin"):
        try:
            ext = importlib.import_module(f"{package}.cuda_plugin_extension")
        except ImportError:
            continue
        xc.register_custom_call_handler(
            "CUDA", functools.partial(ext.register_custom_call_target, c_api))
        if hasattr(ext, "register_custom_type") and hasattr(xc, "register_custom_type_handler"):
            xc.register_custom_type_handler(
                "CUDA", functools.partial(ext.register_custom_type, c_api))
        # the extension's own handlers, e.g. xla_ffi_python_gpu_callback (host callbacks)
        for name, handler in getattr(ext, "ffi_handlers", dict)().items():
            xc.register_custom_call_target(name, handler, platform="CUDA", api_version=1)
        return


def _gpu_options() -> dict:
    """The GPU client's options as JAX's CUDA plugin sets them: allocator, memory fraction
    and preallocation from the XLA_PYTHON_CLIENT_* variables JAX users already know."""
    generate = getattr(xc, "generate_pjrt_gpu_plugin_options", None)
    return dict(generate()) if generate is not None else {}


def _cpu_distributed_options() -> dict:
    """make_cpu_client's keywords for one process of a run: the CPU client reaches the
    others through the gloo TCP collectives made by `plugax.distributed.initialize`."""
    keys = ("distributed_client", "node_id", "num_nodes", "collectives")
    return {k: _distributed[k] for k in keys if k in _distributed}


def _gpu_client_options() -> tuple[dict, Any]:
    """The GPU plugin client's options and distributed client. In a run of several
    processes the plugin gets `node_id`/`num_nodes` and the distributed client, as JAX
    passes them: the plugin then exchanges its topology through the coordination
    service and its collectives are NCCL's (the gloo ones are for the CPU client).
    `local_device_ids` become the plugin's `visible_devices`."""
    options = _gpu_options()
    if not _distributed:
        return options, None
    options.update(node_id=_distributed["node_id"], num_nodes=_distributed["num_nodes"])
    if _distributed.get("local_device_ids") is not None:
        options["visible_devices"] = [int(i) for i in _distributed["local_device_ids"]]
    return options, _distributed["distributed_client"]


_backend: Backend | None = None
_lock = threading.Lock()
_distributed: dict = {}   # make_cpu_client's keywords for a process of a distributed run


def set_distributed(options: dict | None) -> None:
    """Make the (not yet created) client part of a multi-process run: `options` hold
    `distributed_client`, `node_id`, `num_nodes`, `collectives` (the CPU client's) and
    `local_device_ids` (the GPU client's visible devices, or None for all); None forgets
    them and the client, so that the next use makes a fresh one."""
    global _backend
    with _lock:
        if options is not None and _backend is not None:
            raise RuntimeError("distributed.initialize() must be called before any "
                               "computation: this process already made its device client")
        _distributed.clear()
        if options:
            _distributed.update(options)
        else:
            _backend = None


def backend_started() -> bool:
    return _backend is not None


def backend() -> Backend:
    """The process-wide backend, made on first use (platform from PLUGAX_PLATFORM, default cpu)."""
    global _backend
    if _backend is None:
        with _lock:
            if _backend is None:
                _backend = Backend(os.environ.get("PLUGAX_PLATFORM", "cpu").lower())
    return _backend


def device_put(value: np.ndarray, aval: ShapedArray) -> Any:
    """Copy a host value to the device; returns a jaxlib buffer."""
    b = backend()
    return xc.batched_device_put(aval, b.sharding, [value], [b.device], True, False,
                                 enable_x64=dtypes.config.enable_x64)


def to_device(x: Array) -> Any:
    """The device buffer of an Array, transferring (once) if it only lives on the host."""
    buf = x._buf
    if buf is None:
        value = np.asarray(x._value)
        if value.dtype == dtypes.float0:
            value = np.zeros(value.shape, np.bool_)
        buf = x._buf = device_put(value, x.aval)
    return buf
