"""Buffers spread over several devices: placing host values, reading them back.

Why here, in the kernel's runtime: an Array whose device buffer is split over
devices must still give its NumPy value (`np.asarray`, printing), and the Array
type is the kernel's. The user-level sharding classes (Mesh, NamedSharding, ...)
belong to the xla_call plugin; what reaches this module is jaxlib's own
description, an `HloSharding`, plus the devices it is laid over.

jaxlib's transfer and result-handler functions want a sharding object shaped
like JAX's Python classes (`memory_kind`, `_internal_device_list`,
`_to_xla_hlo_sharding`); `DeviceSharding` is jaxlib's `GSPMDSharding` with those
added, and it carries the user-level sharding as `.user` so that an Array made
by a sharded jit can say which `NamedSharding` it has.

Reading shards back: jaxlib splits a sharded buffer into per-device buffers
(`_arrays`), but on the way it imports `jax`'s sharding module when `jax` is
installed (hundreds of ms, and plugax must not depend on jax). While splitting
(when `jax` is not already imported), that import is made to fail, which jaxlib
handles (it is what happens when jax is not installed).
"""
from __future__ import annotations

import math
import sys
from typing import Any, Sequence

import numpy as np

from .. import dtypes

__all__ = ["DeviceSharding", "device_indices", "put", "put_pieces", "host_value",
           "shard_buffers", "is_sharded", "result_handler", "local_positions"]

from jaxlib import _jax  # noqa: E402  (the runtime package is imported lazily)
from jaxlib import xla_client as xc  # noqa: E402


class DeviceSharding(_jax.GSPMDSharding):
    """An HloSharding over a list of devices, as jaxlib's transfers want it."""

    memory_kind = None
    user: Any = None

    def _to_xla_hlo_sharding(self, ndim: int) -> Any:
        return self._hlo_sharding


def make(devices: Sequence[Any], hlo: Any, user: Any = None) -> DeviceSharding:
    s = DeviceSharding(xc.DeviceList(tuple(devices)), hlo)
    s.user = user
    return s


def device_indices(hlo: Any, shape: Sequence[int], num_devices: int) -> list[tuple]:
    """For each device position (0..num_devices-1), the index (a tuple of slices) of
    the global array it holds under `hlo`; several positions may hold the same
    piece (replication)."""
    full = tuple(slice(None) for _ in shape)
    if hlo.is_replicated():
        return [full] * num_devices
    dims = list(hlo.tile_assignment_dimensions())
    devs = list(hlo.tile_assignment_devices())
    ndim = len(shape)
    out: list = [full] * num_devices
    for flat, pos in enumerate(np.ndindex(*dims)):
        idx = []
        for i in range(ndim):
            n = dims[i]
            if n == 1:
                idx.append(slice(None))
                continue
            chunk = math.ceil(shape[i] / n)
            start = min(pos[i] * chunk, shape[i])
            idx.append(slice(start, min(start + chunk, shape[i])))
        out[devs[flat]] = tuple(idx)
    return out


def is_sharded(buf: Any) -> bool:
    """Whether a jaxlib buffer spans more than one device."""
    return len(buf._sharding._internal_device_list) > 1


def put(value: np.ndarray, aval: Any, sharding: DeviceSharding) -> Any:
    """Copy a host value onto the devices of `sharding`, each device its piece."""
    if value.dtype == dtypes.float0:
        value = np.zeros(value.shape, np.bool_)
    devices = list(sharding._internal_device_list)
    idx = device_indices(sharding._hlo_sharding, value.shape, len(devices))
    mine = _local_positions(devices)   # in a multi-process run, this process's devices
    pieces = [np.ascontiguousarray(value[idx[i]]) for i in mine]
    return xc.batched_device_put(aval, sharding, pieces, [devices[i] for i in mine], True,
                                 False, enable_x64=dtypes.config.enable_x64)


def put_pieces(pieces: dict, aval: Any, sharding: DeviceSharding) -> Any:
    """An array made from this process's pieces (`pieces`: device position -> value)."""
    devices = list(sharding._internal_device_list)
    mine = _local_positions(devices)
    values = [np.ascontiguousarray(pieces[i], dtype=aval.dtype) for i in mine]
    return xc.batched_device_put(aval, sharding, values, [devices[i] for i in mine], True,
                                 False, enable_x64=dtypes.config.enable_x64)


def local_positions(devices: Sequence[Any]) -> list[int]:
    """Positions in `devices` of this process's devices."""
    return _local_positions(devices)


def _local_positions(devices: Sequence[Any]) -> list[int]:
    if not devices:
        return []
    me = devices[0].client.process_index()    # this process's index (each device knows)
    return [i for i, d in enumerate(devices) if d.process_index == me]


class _NoJaxSharding:
    """While active, `import jax._src.sharding_impls` fails (see the module doc)."""

    name = "jax"   # the parent package: importing the submodule imports it first

    def __enter__(self) -> None:
        self.block = self.name not in sys.modules
        if self.block:
            sys.modules[self.name] = None  # type: ignore[assignment]

    def __exit__(self, *exc: Any) -> None:
        if self.block and sys.modules.get(self.name, 0) is None:
            del sys.modules[self.name]


def shard_buffers(buf: Any) -> list:
    """The per-device buffers of a sharded buffer, in its device list's order."""
    with _NoJaxSharding():
        return list(buf._arrays)


def _single_host(part: Any) -> np.ndarray:
    try:   # the buffer protocol (not np.asarray: device arrays' `__array__` lands here)
        return np.asarray(memoryview(part))
    except BufferError:   # bfloat16 & co. have no buffer-protocol format
        pass
    with _NoJaxSharding():
        return part._single_device_array_to_np_array_did_copy()[0]


def host_value(buf: Any) -> np.ndarray:
    """The whole value of a (possibly sharded) buffer, gathered on the host."""
    if not is_sharded(buf):
        return _single_host(buf)
    parts = shard_buffers(buf)     # this process's shards, in the device list's order
    shape = tuple(buf.aval.shape)
    devices = list(buf._sharding._internal_device_list)
    idx = device_indices(buf._sharding._to_xla_hlo_sharding(len(shape)), shape, len(devices))
    out, seen = None, np.zeros(shape, bool)
    for part, pos in zip(parts, _local_positions(devices)):
        v = _single_host(part)
        if out is None:
            out = np.empty(shape, v.dtype)
        out[idx[pos]] = v
        seen[idx[pos]] = True
    if not seen.all():
        raise RuntimeError(f"Fetching the value of an Array of shape {shape} that spans "
                           f"devices of other processes is not possible: this process holds "
                           f"only part of it. Replicate it first (e.g. jit with "
                           f"out_shardings=NamedSharding(mesh, P())), or read "
                           f"`addressable_shards`")
    return out


def result_handler(aval: Any, sharding: DeviceSharding) -> Any:
    try:
        return xc.array_result_handler(aval, sharding, True, _skip_checks=True)
    except TypeError:   # jaxlib 0.11 dropped the `_skip_checks` keyword
        return xc.array_result_handler(aval, sharding, True)
