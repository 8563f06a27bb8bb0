"""`device_put` and `device_get`, as JAX spells them.

Why in this family: a plugax Array lives on the host (a NumPy value) until jit
needs it on the device; `device_put` does that transfer up front, so a loop of
jitted calls pays it once, and is the name ported JAX programs use for it.
Under a transformation a value is abstract, and `device_put` returns it as it
is (JAX stages an identity there; to a sharding, a sharding constraint).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from plugax import tree_util as tu
from plugax.extend import Array, Tracer, get_aval, is_device_array, runtime

from .devices import devices
from .global_arrays import put_sharded
from .sharding import Sharding
from .spmd import with_sharding_constraint

__all__ = ["device_put", "device_get"]


def _put(leaf: Any) -> Any:
    if isinstance(leaf, Tracer):
        return leaf
    if is_device_array(leaf):
        return leaf
    if type(leaf) is not Array:
        aval = get_aval(leaf)      # refuses None, strings, object arrays, naming them
        leaf = Array(np.asarray(leaf, dtype=aval.dtype), aval.weak_type)
    buf = runtime().to_device(leaf)
    if leaf.dtype == buf.dtype and is_device_array(buf):
        return buf    # jaxlib's array itself (core/device_arrays.py), as jit returns
    return leaf       # float0 (bool on the device) or an array over several devices


def _put_sharded(leaf: Any, sharding: Sharding) -> Any:
    if isinstance(leaf, Tracer):   # staged, as JAX does: a sharding constraint
        return with_sharding_constraint(leaf, sharding)
    return put_sharded(leaf, sharding)


def device_put(x: Any, device: Any = None, *, src: Any = None, donate: bool = False,
               may_alias: bool | None = None) -> Any:
    """Each array leaf of the pytree `x` as an Array whose buffer is on the device.

    `device` may be None, one of `devices()`, or a sharding (`NamedSharding`,
    `SingleDeviceSharding`): each leaf is then split over the sharding's devices."""
    if isinstance(device, Sharding):
        return tu.tree_map(lambda leaf: _put_sharded(leaf, device), x)
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
