"""Which values are device arrays plugax made (jaxlib's ArrayImpl with plugax's aval).

Kept apart from core/device_arrays.py (which gives such a type Array's behaviour)
so that `Array` itself, `bind` and the hot paths can ask without importing it.
"""
from __future__ import annotations

from typing import Any

from .avals import ShapedArray

__all__ = ["ArrayType", "device_array_types", "is_device_array"]

#: Device array classes accepted as `plugax.Array` (jaxlib's ArrayImpl once registered).
device_array_types: set = set()


class ArrayType(type):
    """The metaclass of `plugax.Array`: instances of registered device array types are
    Arrays too. An exact `Array` never reaches `__instancecheck__` (CPython tests the
    exact type first), so the common check costs nothing more."""

    def __instancecheck__(cls, x: Any) -> bool:
        return type.__instancecheck__(cls, x) or is_device_array(x)

    def __subclasscheck__(cls, sub: type) -> bool:
        return type.__subclasscheck__(cls, sub) or sub in device_array_types


def is_device_array(x: Any) -> bool:
    """Whether `x` is a device array plugax made (a registered type, with plugax's aval;
    JAX's own arrays share the type but not the aval)."""
    return type(x) in device_array_types and type(x.aval) is ShapedArray
