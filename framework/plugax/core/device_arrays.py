"""Device array types that count as `plugax.Array`: jaxlib's `ArrayImpl`.

Why: jaxlib's C++ jit dispatcher takes `ArrayImpl` leaves natively and returns
them; wrapping each in a Python `Array` costs a pytree node per leaf on the way
in and a Python call per result on the way out. So device-backed results of jit
and `device_put` *are* `ArrayImpl`s, and the kernel accepts them as Arrays:
`isinstance(x, plugax.Array)` holds (through `ArrayType.__instancecheck__`),
`get_aval` reads their aval (the plugax `ShapedArray`, weak type included, that
their result handler was made with), and they get `Array`'s Python-level
behaviour (`_value`, `shape`, `dtype`, `weak_type`, printing, `__array__`,
conversions) and every operator and method the plugins install on `Array`.

The kernel imports no jaxlib: a plugin (xla_call) registers the type through
`plugax.extend.register_device_array_type` when it first makes one.

JAX patches the same class with its own methods (its `jax._src.array` module).
When JAX is imported, it owns `ArrayImpl`'s public Python-level names: plugax then
installs only the private names its own code reads (`_value`, `_sig`, `_buf`),
which JAX either lacks or defines with the same meaning (`_value`).
"""
from __future__ import annotations

import sys
from typing import Any

import numpy as np

__all__ = ["ArrayType", "device_array_types", "register_device_array_type", "jax_owns"]

#: Device array classes accepted as `plugax.Array` (jaxlib's ArrayImpl once registered).
device_array_types: set = set()


class ArrayType(type):
    """The metaclass of `plugax.Array`: instances of registered device array types are
    Arrays too. An exact `Array` never reaches `__instancecheck__` (CPython tests the
    exact type first), so the common check costs nothing more."""

    def __instancecheck__(cls, x: Any) -> bool:
        return type.__instancecheck__(cls, x) or type(x) in device_array_types

    def __subclasscheck__(cls, sub: type) -> bool:
        return type.__subclasscheck__(cls, sub) or sub in device_array_types


def jax_owns(cls: type) -> bool:
    """Whether JAX (imported in this process) has installed its methods on `cls`."""
    return "jax._src.array" in sys.modules and cls.__module__.startswith("jaxlib")


def _value(self: Any) -> np.ndarray:
    """The host copy of a device array, fetched once and kept (jaxlib's `_npy_value`)."""
    if self.is_deleted():   # donated to a jitted call (JAX's error and wording)
        aval = self.aval
        raise RuntimeError(f"Array has been deleted with shape={aval.dtype.name}"
                           f"[{','.join(map(str, aval.shape))}].")
    value = self._npy_value
    if value is None:
        try:
            value = np.asarray(memoryview(self))   # the buffer protocol: no jax import
        except BufferError:   # bfloat16 & co., or a buffer over devices
            value = None
        if value is None or value.dtype == object:
            from ..runtime.sharded import host_value
            value = host_value(self)
        if value.flags.writeable:
            value = value.view()
            value.flags.writeable = False
        self._npy_value = value
    return value


# names JAX does not define (or defines alike): installed even when JAX owns the class
_PRIVATE = {
    "_value": property(_value),
    "_sig": property(lambda self: self.aval._sig),
    "_buf": property(lambda self: self),   # the device buffer of a device array is itself
}
_PUBLIC = {
    "shape": property(lambda self: self.aval.shape),
    "dtype": property(lambda self: self.aval.dtype),
    "weak_type": property(lambda self: self.aval.weak_type),
    "ndim": property(lambda self: len(self.aval.shape)),
    "size": property(lambda self: self.aval.size),
    "__hash__": None,
}
# Array's own Python-level methods given to the device type as they are (they read only
# `_value`, `shape`, `dtype`, `weak_type`); the device type's native ones are kept.
_FROM_ARRAY = ("__array__", "item", "tolist", "__bool__", "__int__", "__float__",
               "__complex__", "__index__", "__len__", "__iter__", "__repr__", "__str__",
               "__format__", "__reduce__", "__array_priority__")


def register_device_array_type(cls: type) -> None:
    """Accept `cls` (jaxlib's ArrayImpl) as a `plugax.Array` (see the module docstring).
    Idempotent."""
    from .array import Array
    from .avals import register_aval_handler
    if cls in device_array_types:
        return
    for name, value in _PRIVATE.items():
        if not (name == "_value" and jax_owns(cls)):
            setattr(cls, name, value)
    if not jax_owns(cls):
        for name, value in _PUBLIC.items():
            setattr(cls, name, value)
        for name in _FROM_ARRAY:
            setattr(cls, name, Array.__dict__[name])
    register_aval_handler(cls, _aval_of)
    device_array_types.add(cls)
    from ..loader import namespaces   # the plugins' operators and methods, as on Array
    namespaces.add_method_class(cls)


def _aval_of(x: Any) -> Any:
    return x.aval
