"""Meshes and shardings, as JAX spells them: `Mesh`, `PartitionSpec`, `NamedSharding`.

Why these are plain Python: a sharding is a *description* (which piece of an
array each device holds); XLA's partitioner (Shardy) does the work. Each
sharding converts to the two forms jaxlib reads: an `HloSharding` (for
transfers and result handlers, `_hlo`) and a Shardy attribute (for the module
text, `_sdy`). A mesh's devices are in the order of its array, and every
program compiled over a mesh uses that order as its device assignment, so the
Shardy mesh needs no explicit device ids.

plugax meshes behave as JAX's with `AxisType.Auto` axes (the partitioner
propagates shardings); JAX 0.10's `make_mesh` defaults to Explicit axes,
whose sharding-in-types plugax does not model.
"""
from __future__ import annotations

import itertools
import math
from typing import Any, Iterable, Sequence

import numpy as np

from plugax.extend import Array, Tracer, runtime

from .devices import devices as all_devices

__all__ = ["Mesh", "PartitionSpec", "P", "NamedSharding", "SingleDeviceSharding", "Sharding",
           "make_mesh", "Shard", "sharding_of", "ARRAY_METHODS", "set_mesh"]


class PartitionSpec(tuple):
    """For each array dimension, the mesh axis (a name, a tuple of names, or None)
    it is split over; missing trailing dimensions are not split."""

    def __new__(cls, *parts: Any) -> "PartitionSpec":
        for p in parts:
            if not (p is None or isinstance(p, str) or
                    (isinstance(p, tuple) and all(isinstance(a, str) for a in p))):
                raise TypeError(f"PartitionSpec entries are None, a mesh axis name or a tuple "
                                f"of names; got {p!r}")
        return super().__new__(cls, parts)

    def __repr__(self) -> str:
        return "P" + tuple.__repr__(self)

    def axes(self, i: int) -> tuple[str, ...]:
        """The mesh axes dimension `i` is split over (none past the spec's end)."""
        p = self[i] if i < len(self) else None
        return () if p is None else (p,) if isinstance(p, str) else tuple(p)


P = PartitionSpec


class Mesh:
    """Devices arranged in an n-dimensional array with a name per axis.

    `with mesh:` makes it the mesh that a bare `PartitionSpec` refers to (in
    `with_sharding_constraint`, `shard_map`)."""

    _stack: list = []

    def __init__(self, devices: Any, axis_names: str | Sequence[str], *,
                 axis_types: Any = None):
        devs = np.array(devices, dtype=object)
        names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        if devs.ndim != len(names):
            raise ValueError(f"Mesh: devices has {devs.ndim} dimensions {devs.shape} but "
                             f"{len(names)} axis names {names} were given")
        if len(set(names)) != len(names):
            raise ValueError(f"Mesh: axis names must be distinct, got {names}")
        ids = [d.id for d in devs.flat]
        if len(set(ids)) != len(ids):
            raise ValueError(f"Mesh: a device appears twice in {devs.shape} devices")
        self.devices = devs
        self.axis_names = names
        self.shape = dict(zip(names, devs.shape))
        self.axis_sizes = tuple(devs.shape)
        self.size = devs.size
        self.device_ids = np.array(ids).reshape(devs.shape)
        self._key = (tuple(ids), names, self.axis_sizes)

    @property
    def devices_flat(self) -> list:
        return list(self.devices.flat)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Mesh) and other._key == self._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        axes = ", ".join(f"'{n}': {s}" for n, s in self.shape.items())
        return f"Mesh({axes}, axis_types=({', '.join('Auto' for _ in self.axis_names)}))"

    def __enter__(self) -> "Mesh":
        Mesh._stack.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        Mesh._stack.pop()

    @staticmethod
    def current() -> "Mesh | None":
        return Mesh._stack[-1] if Mesh._stack else None

    def sdy_mesh(self) -> str:
        """The body of the module's `sdy.mesh @mesh = <...>` declaration."""
        return "<[" + ", ".join(f'"{n}"={s}' for n, s in self.shape.items()) + "]>"


class set_mesh:  # noqa: N801 - used like a function, as JAX's
    """Make `mesh` the mesh that bare PartitionSpecs and shard_map refer to: for the
    rest of the program, or, used as `with set_mesh(mesh):`, for the block."""

    def __init__(self, mesh: Mesh):
        if not isinstance(mesh, Mesh):
            raise TypeError(f"set_mesh expects a plugax.sharding.Mesh, got {mesh!r}")
        self.mesh = mesh
        Mesh._stack.append(mesh)

    def __enter__(self) -> Mesh:
        return self.mesh

    def __exit__(self, *exc: Any) -> None:
        if Mesh._stack and Mesh._stack[-1] is self.mesh:
            Mesh._stack.pop()


def make_mesh(axis_shapes: Sequence[int], axis_names: Sequence[str], *,
              devices: Sequence[Any] | None = None, axis_types: Any = None) -> Mesh:
    """A mesh of the first prod(axis_shapes) devices (or `devices`), in order."""
    axis_shapes = tuple(int(s) for s in axis_shapes)
    if len(axis_shapes) != len(tuple(axis_names)):
        raise ValueError(f"make_mesh: {len(axis_shapes)} axis sizes {axis_shapes} but "
                         f"{len(tuple(axis_names))} names {tuple(axis_names)}")
    devs = list(devices) if devices is not None else all_devices()
    n = math.prod(axis_shapes)
    if n > len(devs) or (devices is not None and n != len(devs)):
        raise ValueError(f"make_mesh: a mesh of shape {axis_shapes} needs {n} devices, "
                         f"but {len(devs)} are available (start more CPU devices with "
                         f"XLA_FLAGS=--xla_force_host_platform_device_count={n} or "
                         f"plugax.config.update('num_cpu_devices', {n}) before the first "
                         f"computation)")
    return Mesh(np.array(devs[:n], dtype=object).reshape(axis_shapes), axis_names)


class Sharding:
    """What every sharding answers: its devices and each device's piece."""

    def _device_list(self) -> list:
        raise NotImplementedError

    def _hlo(self, ndim: int) -> Any:
        raise NotImplementedError

    @property
    def device_set(self) -> set:
        return set(self._device_list())

    @property
    def num_devices(self) -> int:
        return len(self._device_list())

    @property
    def addressable_devices(self) -> set:
        me = runtime().backend().client.process_index()
        return {d for d in self._device_list() if d.process_index == me}

    @property
    def is_fully_addressable(self) -> bool:
        """Whether every device is this process's (False in a multi-process run when
        the sharding spans other processes' devices)."""
        me = runtime().backend().client.process_index()
        return all(d.process_index == me for d in self._device_list())

    @property
    def memory_kind(self) -> str:
        return "device"

    def devices_indices_map(self, shape: Sequence[int]) -> dict:
        """device -> the index (tuple of slices) of the piece it holds."""
        sharded = runtime().sharded
        devs = self._device_list()
        idx = sharded.device_indices(self._hlo(len(shape)), tuple(shape), len(devs))
        return dict(zip(devs, idx))

    addressable_devices_indices_map = devices_indices_map

    def shard_shape(self, shape: Sequence[int]) -> tuple:
        idx = next(iter(self.devices_indices_map(shape).values()))
        return tuple(len(range(*s.indices(n))) for s, n in zip(idx, shape))

    def is_equivalent_to(self, other: "Sharding", ndim: int) -> bool:
        return (self._device_list() == other._device_list() and
                self._hlo(ndim) == other._hlo(ndim))

    def _device_sharding(self, ndim: int) -> Any:
        """jaxlib's form (runtime.sharded.DeviceSharding), carrying this one as `.user`."""
        return runtime().sharded.make(self._device_list(), self._hlo(ndim), self)


class SingleDeviceSharding(Sharding):
    """The whole array on one device."""

    def __init__(self, device: Any, *, memory_kind: str | None = None):
        self._device = device

    def _device_list(self) -> list:
        return [self._device]

    def _hlo(self, ndim: int) -> Any:
        from jaxlib import xla_client as xc
        return xc.HloSharding.replicate()

    @property
    def is_fully_replicated(self) -> bool:
        return True

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, SingleDeviceSharding) and other._device == self._device

    def __hash__(self) -> int:
        return hash(("single", self._device.id))

    def __repr__(self) -> str:
        return f"SingleDeviceSharding(device={self._device!r}, memory_kind=device)"


class NamedSharding(Sharding):
    """An array split over a mesh: dimension i over the mesh axes `spec[i]` names,
    replicated over the axes it does not name."""

    def __init__(self, mesh: Mesh, spec: PartitionSpec = PartitionSpec(), *,
                 memory_kind: str | None = None):
        if not isinstance(mesh, Mesh):
            raise TypeError(f"NamedSharding: mesh must be a plugax.sharding.Mesh, got "
                            f"{type(mesh).__name__}")
        if spec is None:
            spec = PartitionSpec()
        if not isinstance(spec, PartitionSpec):
            spec = PartitionSpec(*spec)
        used: list = []
        for i in range(len(spec)):
            for a in spec.axes(i):
                if a not in mesh.shape:
                    raise ValueError(f"Resource axis: {a} of {spec!r} is not found in mesh: "
                                     f"{mesh.axis_names}.")
                if a in used:
                    raise ValueError(f"A single NamedSharding spec specification can map "
                                     f"every mesh axis to at most one positional dimension, "
                                     f"but {spec!r} has duplicate entries for `{a}`")
                used.append(a)
        self.mesh, self.spec = mesh, spec
        self._hlo_cache: dict = {}

    def _device_list(self) -> list:
        return self.mesh.devices_flat

    def __eq__(self, other: Any) -> bool:
        return (isinstance(other, NamedSharding) and other.mesh == self.mesh and
                _trimmed(other.spec) == _trimmed(self.spec))

    def __hash__(self) -> int:
        return hash((self.mesh, _trimmed(self.spec)))

    def __repr__(self) -> str:
        return f"NamedSharding(mesh={self.mesh!r}, spec={self.spec!r}, memory_kind=device)"

    @property
    def is_fully_replicated(self) -> bool:
        return all(not self.spec.axes(i) for i in range(len(self.spec)))

    def check_shape(self, shape: Sequence[int], what: str = "an argument") -> None:
        """A ValueError naming the dimension when the spec does not fit `shape`."""
        if len(self.spec) > len(shape):
            raise ValueError(f"{what}: sharding {self!r} is only valid for values of rank at "
                             f"least {len(self.spec)}, but the value has shape {tuple(shape)}")
        for i, n in enumerate(shape):
            size = math.prod(self.mesh.shape[a] for a in self.spec.axes(i))
            if n % size:
                raise ValueError(f"{what} was given the sharding of {self!r}, which implies "
                                 f"that the global size of its dimension {i} should be "
                                 f"divisible by {size}, but it is equal to {n} (full shape: "
                                 f"{tuple(shape)})")

    def _hlo(self, ndim: int) -> Any:
        hlo = self._hlo_cache.get(ndim)
        if hlo is None:
            hlo = self._hlo_cache[ndim] = _named_hlo(self.mesh, self.spec, ndim)
        return hlo

    def _sdy(self, ndim: int) -> str:
        """The Shardy sharding `#sdy.sharding<@mesh, [...]>` for rank `ndim`."""
        dims = ", ".join("{" + ", ".join(f'"{a}"' for a in self.spec.axes(i)) + "}"
                         for i in range(ndim))
        return f"<@mesh, [{dims}]>"


def _trimmed(spec: PartitionSpec) -> tuple:
    parts = [tuple(spec.axes(i)) for i in range(len(spec))]
    while parts and not parts[-1]:
        parts.pop()
    return tuple(parts)


def _named_hlo(mesh: Mesh, spec: PartitionSpec, ndim: int) -> Any:
    """The HloSharding of (mesh, spec): a tile per device, devices numbered by their
    position in the mesh's flattened order (the device assignment we compile with)."""
    from jaxlib import xla_client as xc
    names = list(mesh.axis_names)
    used = [a for i in range(ndim) for a in spec.axes(i)]
    if not used:
        return xc.HloSharding.replicate()
    rest = [a for a in names if a not in used]
    positions = np.arange(mesh.size).reshape(mesh.axis_sizes)
    perm = [names.index(a) for a in used + rest]
    dims = [math.prod(mesh.shape[a] for a in spec.axes(i)) for i in range(ndim)]
    replicas = math.prod(mesh.shape[a] for a in rest)
    tile = positions.transpose(perm).reshape(dims + ([replicas] if replicas > 1 else []))
    proto = xc.OpSharding()
    proto.type = xc.OpSharding.Type.OTHER
    proto.tile_assignment_dimensions = list(tile.shape)
    proto.tile_assignment_devices = [int(d) for d in tile.flat]
    proto.replicate_on_last_tile_dim = replicas > 1
    return xc.HloSharding.from_proto(proto)


def named_from_hlo(mesh: Mesh, hlo: Any, ndim: int) -> NamedSharding | None:
    """The NamedSharding on `mesh` whose HloSharding is `hlo` (how an output whose
    sharding the partitioner chose is named), or None when no spec gives it."""
    names = mesh.axis_names
    options = [()] + [p for k in range(1, len(names) + 1)
                      for p in itertools.permutations(names, k)]
    if len(options) ** ndim > 4096:
        return None
    for combo in itertools.product(options, repeat=ndim):
        flat = [a for c in combo for a in c]
        if len(flat) != len(set(flat)):
            continue
        spec = PartitionSpec(*[None if not c else c[0] if len(c) == 1 else c for c in combo])
        if _named_hlo(mesh, spec, ndim) == hlo:
            while spec and spec[-1] is None:
                spec = PartitionSpec(*spec[:-1])
            return NamedSharding(mesh, spec)
    return None


# --- what Arrays answer ------------------------------------------------------

class Shard:
    """One device's piece of an Array (JAX's `Shard`)."""

    def __init__(self, device: Any, index: tuple, data: Any, replica_id: int = 0):
        self.device, self.index, self.data, self.replica_id = device, index, data, replica_id

    def __repr__(self) -> str:
        return (f"Shard(device={self.device!r}, index={self.index}, "
                f"replica_id={self.replica_id}, data={np.asarray(self.data)})")


def sharding_of(x: Any) -> Sharding:
    """An Array's sharding: the one it was placed or computed with, else its device."""
    buf = getattr(x, "_buf", None)
    if buf is not None:
        s = buf._sharding
        user = getattr(s, "user", None)
        if user is not None:
            return user
        return SingleDeviceSharding(list(s._internal_device_list)[0])
    return SingleDeviceSharding(runtime().backend().device)


def _addressable_shards(x: Any) -> list[Shard]:
    if isinstance(x, Tracer):
        raise TypeError("addressable_shards of a traced value: it has no value yet")
    s = sharding_of(x)
    buf = x._buf
    if buf is None or not runtime().sharded.is_sharded(buf):
        return [Shard(s._device_list()[0], tuple(slice(None) for _ in x.shape), x)]
    sharded = runtime().sharded
    parts = sharded.shard_buffers(buf)
    devs = s._device_list()
    idx = sharded.device_indices(buf._sharding._hlo_sharding, tuple(x.shape), len(devs))
    shards, seen = [], {}
    me = runtime().backend().client.process_index()
    local = [k for k, d in enumerate(devs) if d.process_index == me]
    for k, part in zip(local, parts):
        dev, i = devs[k], idx[k]
        key = tuple((sl.start, sl.stop) for sl in i)
        replica = seen[key] = seen.get(key, -1) + 1
        aval = type(x.aval)(tuple(len(range(*sl.indices(n))) for sl, n in zip(i, x.shape)),
                            x.dtype, x.weak_type)
        shards.append(Shard(dev, i, Array.from_buffer(part, aval), replica))
    return shards


def _is_sharded(x: Any) -> bool:
    buf = getattr(x, "_buf", None)
    return buf is not None and runtime().sharded.is_sharded(buf)


def _tracer_guard(fn):
    def get(self):
        if isinstance(self, Tracer):
            raise AttributeError(f"a traced value has no concrete {fn.__name__.strip('_')}")
        return fn(self)
    get.__name__ = fn.__name__
    return property(get)


ARRAY_METHODS = {
    "sharding": _tracer_guard(sharding_of),
    "addressable_shards": _tracer_guard(_addressable_shards),
    "global_shards": _tracer_guard(_addressable_shards),
    "is_fully_addressable": _tracer_guard(lambda self: sharding_of(self).is_fully_addressable),
    "is_fully_replicated": _tracer_guard(lambda self: sharding_of(self).is_fully_replicated),
    "committed": _tracer_guard(_is_sharded),
    "devices": lambda self: sharding_of(self).device_set,
}


def _iterable(x: Any) -> Iterable:
    return x if isinstance(x, (list, tuple)) else (x,)
