"""The device queries, as JAX spells them (`devices()`, `device_count()`, ...).

The bottom of this family: shardings, global arrays and placement (placement.py:
`device_put`, `device_get`) ask it which devices exist, and it asks nothing of them.
"""
from __future__ import annotations

from plugax.extend import runtime

__all__ = ["devices", "local_devices", "default_backend",
           "device_count", "local_device_count", "process_count", "process_index"]


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
