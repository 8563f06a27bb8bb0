"""`device_put`, `device_get` and the device queries, as JAX spells them.

Why in this family: a plugax Array lives on the host (a NumPy value) until jit
needs it on the device; `device_put` does that transfer up front, so a loop of
jitted calls pays it once, and is the name ported JAX programs use for it.
Under a transformation a value is abstract, and `device_put` returns it as it
is (JAX stages an identity there).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from plugax import tree_util as tu
from plugax.extend import Array, Tracer, get_aval, runtime

__all__ = ["device_put", "device_get", "devices", "local_devices", "default_backend",
           "device_count", "local_device_count", "process_count", "process_index"]


def _put(leaf: Any) -> Any:
    if isinstance(leaf, Tracer):
        return leaf
    if type(leaf) is not Array:
        aval = get_aval(leaf)      # refuses None, strings, object arrays, naming them
        leaf = Array(np.asarray(leaf, dtype=aval.dtype), aval.weak_type)
    runtime().to_device(leaf)
    return leaf


def device_put(x: Any, device: Any = None, *, src: Any = None, donate: bool = False,
               may_alias: bool | None = None) -> Any:
    """Each array leaf of the pytree `x` as an Array whose buffer is on the device.

    `device` may be None, one of `devices()`, or a sharding (`NamedSharding`,
    `SingleDeviceSharding`): each leaf is then split over the sharding's devices."""
    from .sharding import Sharding
    if isinstance(device, Sharding):
        from .global_arrays import put_sharded
        return tu.tree_map(lambda leaf: put_sharded(leaf, device), x)
    if device is not None and device not in devices():
        raise ValueError(f"device_put: {device!r} is not one of this process's devices "
                         f"{devices()}")
    return tu.tree_map(_put, x)


def _get(leaf: Any) -> Any:
    return np.asarray(leaf) if isinstance(leaf, (Array, Tracer)) else leaf


def device_get(x: Any) -> Any:
    """Each Array leaf of the pytree `x` as a NumPy array on the host (other leaves as
    they are); a traced value raises, as it has no value yet."""
    return tu.tree_map(_get, x)


def devices(backend: str | None = None) -> list:
    """The devices jit runs on (jaxlib's device objects)."""
    return list(runtime().backend().client.devices())


def local_devices(process_index: int | None = None, backend: str | None = None) -> list:
    """This process's devices (all of them, unless plugax.distributed joined a run)."""
    if process_index is None:
        return list(runtime().backend().client.local_devices())
    return [d for d in devices(backend) if d.process_index == process_index]


def default_backend() -> str:
    """The platform jit compiles for: "cpu", or "gpu" with a GPU plugin."""
    platform = runtime().backend().platform
    return "gpu" if platform in ("cuda", "rocm") else platform


def device_count(backend: str | None = None) -> int:
    return len(devices(backend))


def local_device_count(backend: str | None = None) -> int:
    return len(local_devices(backend=backend))


def process_count(backend: str | None = None) -> int:
    return len({d.process_index for d in devices(backend)})


def process_index(backend: str | None = None) -> int:
    return runtime().backend().client.process_index()
