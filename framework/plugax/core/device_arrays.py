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

JAX patches the same class with its own methods (`jax._src.array`,
`jax._src.numpy.array_methods`), for arrays whose aval is JAX's. Both can live in
one process: where both define a name, the class gets a dispatcher that picks
plugax's attribute for an array whose aval is plugax's `ShapedArray` (one plugax
made) and JAX's otherwise. Whichever is imported first, the dispatchers are
(re)installed once JAX's import ends (a `sys.meta_path` hook waits for it). Only
plugax-made device arrays count as plugax Arrays (`is_device_array`); JAX's own
are foreign array-likes to plugax, converted through `__array__` as before.
"""
from __future__ import annotations

import importlib.util
import sys
from typing import Any

import numpy as np

from .array import Array
from .avals import ShapedArray, register_aval_handler
from .device_types import device_array_types, is_device_array

__all__ = ["register_device_array_type", "set_device_method", "del_device_method",
           "on_register", "device_array_types", "is_device_array"]

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


# Array's behaviour given to the device type: attributes reading the aval, and Array's
# own Python-level methods as they are (they read only `_value`, `shape`, `dtype`,
# `weak_type`); the device type's native ones (aval, block_until_ready, ...) are kept.
_OWN = {
    "_value": property(_value),
    "_aval": property(lambda self: _aval_of(self)),   # what Array keeps in its slot
    "_sig": property(lambda self: _aval_of(self)._sig),
    # the device buffer of a device array is itself (a JAX-made one is not plugax's)
    "_buf": property(lambda self: self if type(self.aval) is ShapedArray else None),
    "shape": property(lambda self: self.aval.shape),
    "dtype": property(lambda self: self.aval.dtype),
    "weak_type": property(lambda self: self.aval.weak_type),
    "ndim": property(lambda self: len(self.aval.shape)),
    "size": property(lambda self: self.aval.size),
}
_FROM_ARRAY = ("__array__", "item", "tolist", "__bool__", "__int__", "__float__",
               "__complex__", "__index__", "__len__", "__iter__", "__repr__", "__str__",
               "__format__", "__reduce__")
_ours: dict = {}    # device type -> {name: plugax's attribute}


def register_device_array_type(cls: type) -> None:
    """Accept `cls` (jaxlib's ArrayImpl) as a `plugax.Array` (see the module docstring).
    Idempotent."""
    if cls in device_array_types:
        return
    _ours[cls] = {}
    for name, value in _OWN.items():
        set_device_method(cls, name, value)
    for name in _FROM_ARRAY:
        set_device_method(cls, name, Array.__dict__[name])
    register_aval_handler(cls, _aval_of)
    device_array_types.add(cls)
    _watch_jax()
    for callback in _on_register:   # the plugins' operators and methods, as on Array
        callback(cls)


_on_register: list = []


def on_register(callback: Any) -> None:
    """Call `callback(cls)` for every device type registered, before and after now
    (loader/namespaces.py gives them the plugins' methods this way)."""
    _on_register.append(callback)
    for cls in list(device_array_types):
        callback(cls)


def set_device_method(cls: type, name: str, value: Any) -> None:
    """Install plugax's `value` as `cls.name`, beside JAX's if JAX defines it."""
    _ours[cls][name] = value
    theirs = cls.__dict__.get(name)
    if theirs is not None and _jax_imported() and not getattr(theirs, "_plugax_either", 0):
        value = _either(value, theirs)
    setattr(cls, name, value)


def del_device_method(cls: type, name: str) -> None:
    """Remove plugax's `cls.name` (a plugin that gave it is gone); JAX's stays."""
    if _ours[cls].pop(name, None) is None:
        return
    current = cls.__dict__.get(name)
    if getattr(current, "_plugax_either", 0):
        setattr(cls, name, current.theirs)
    elif current is not None:
        delattr(cls, name)


class _EitherProperty(property):
    """A property dispatching between plugax's and JAX's (it remembers JAX's)."""
    _plugax_either = 1


def _either(ours: Any, theirs: Any) -> Any:
    """One attribute that is plugax's for plugax's arrays and JAX's for JAX's."""
    if not (callable(ours) or isinstance(ours, property)) or \
            not (callable(theirs) or isinstance(theirs, property)):
        return theirs      # a constant (__array_priority__, __hash__ = None): JAX's
    if isinstance(ours, property) or isinstance(theirs, property):
        def get(self: Any) -> Any:
            attr = ours if type(self.aval) is ShapedArray else theirs
            return attr.__get__(self, type(self)) if hasattr(attr, "__get__") else attr
        either = _EitherProperty(get)
        either.theirs = theirs
        return either

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        fn = ours if type(self.aval) is ShapedArray else theirs
        return fn(self, *args, **kwargs)
    method.__name__ = getattr(ours, "__name__", "method")
    method._plugax_either, method.theirs = 1, theirs
    return method


def _reinstall() -> None:
    """After JAX's import: put the dispatchers back where JAX replaced plugax's names."""
    for cls, names in _ours.items():
        for name, value in list(names.items()):
            current = cls.__dict__.get(name)
            if current is not value and not getattr(current, "_plugax_either", 0):
                set_device_method(cls, name, value)


def _jax_imported() -> bool:
    return "jax._src.array" in sys.modules


class _AfterJax:
    """A `sys.meta_path` finder that runs `_reinstall` when `jax` or `jax.numpy` has
    been imported (JAX installs its array methods during those imports)."""

    names = ("jax", "jax.numpy")

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name not in self.names:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader = spec.loader
        run = loader.exec_module

        def exec_module(module: Any) -> None:
            run(module)
            _reinstall()
        loader.exec_module = exec_module
        return spec


_hook: list = []


def _watch_jax() -> None:
    if not _hook:
        _hook.append(_AfterJax())
        sys.meta_path.insert(0, _hook[0])


def _aval_of(x: Any) -> ShapedArray:
    aval = x.aval
    if type(aval) is ShapedArray:
        return aval
    return ShapedArray(aval.shape, aval.dtype, aval.weak_type)   # a JAX array's
