"""`plugax.Array`: the one array type every plugax function returns.

It holds a NumPy buffer, a device buffer (a jaxlib array made by jit), or
both: a device-backed Array copies itself to the host once, when `host_value`
first reads it, so results of jitted calls stay on the device until someone
looks at them. Shape, dtype and weak type live in one interned aval, which
eager code compares by identity. Operators and methods (`+`, `@`, `.sum()`, indexing, ...) are installed on the
class by plugins through the `plugax_array_methods` hook, so the kernel stays
ignorant of every primitive.
"""
from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from .. import dtypes, first_use
from .avals import ShapedArray, aval_of, register_aval_handler, signature_id
from .device_types import ArrayType

__all__ = ["Array", "as_array", "typed_array", "host_array", "canonicalize_value", "signature_id",
           "shared_constant", "array_value", "signature_of", "host_value"]


class Array(metaclass=ArrayType):
    """An immutable n-dimensional array.

    Three slots: the NumPy value, the device buffer, and the interned aval, which
    is shape, dtype and weak type in one object (an eager result is built with two
    or three slot writes). No `__getattr__`: it would defeat CPython's attribute
    specialisation on every `x._value`/`x.aval` load of the eager hot paths; a
    device-backed Array's `_value` is unset until `host_value` fetches it.
    """

    __slots__ = ("_value", "_buf", "_aval", "__weakref__")
    __array_priority__ = 100

    def __init__(self, value: Any = None, weak_type: bool = False, _buf: Any = None):
        if _buf is not None:
            # a device buffer: how jaxlib's C++ jit dispatch rebuilds a result (the
            # xla_call plugin registers Array as a pytree node of `_buf` and `weak_type`)
            aval = _buf.aval   # the ShapedArray its result handler was made with
            self._buf = _buf
            self._aval = aval if aval.weak_type == weak_type and type(aval) is ShapedArray \
                else aval_of(aval.shape, aval.dtype, bool(weak_type))
            return
        self._value = value
        self._buf = None
        self._aval = aval_of(value.shape, value.dtype, bool(weak_type))

    @classmethod
    def from_buffer(cls, buf: Any, aval: ShapedArray, sig: int | None = None) -> "Array":
        """An Array backed by a device buffer; its NumPy value is fetched lazily."""
        self = object.__new__(cls)
        self._buf = buf
        self._aval = aval
        return self

    # shape, dtype, weak type and signature id are the aval's (C-level getters: no frame)
    shape = property(operator.attrgetter("_aval.shape"))
    dtype = property(operator.attrgetter("_aval.dtype"))
    weak_type = property(operator.attrgetter("_aval.weak_type"))
    _sig = property(operator.attrgetter("_aval._sig"))

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        return np.asarray(host_value(self), dtype=dtype)

    def block_until_ready(self) -> "Array":
        """Wait for the device computation producing this Array (no-op for host values)."""
        if self._buf is not None:
            self._buf.block_until_ready()
        return self

    def is_ready(self) -> bool:
        return self._buf is None or self._buf.is_ready()

    def item(self) -> Any:
        return np.asarray(host_value(self)).item()

    def tolist(self) -> Any:
        return np.asarray(host_value(self)).tolist()

    def __bool__(self) -> bool:
        return bool(host_value(self))

    def __int__(self) -> int:
        return int(host_value(self))

    def __float__(self) -> float:
        return float(host_value(self))

    def __complex__(self) -> complex:
        return complex(host_value(self))

    def __index__(self) -> int:
        return int(np.asarray(host_value(self)).__index__())

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object (a rank-0 Array)")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a rank-0 Array")
        return (self[i] for i in range(self.shape[0]))

    __hash__ = None  # type: ignore[assignment]  # arrays are mutable-looking values

    def __repr__(self) -> str:
        value = np.asarray(host_value(self))
        extra = f", dtype={value.dtype.name}" + (", weak_type=True" if self.weak_type else "")
        body = np.array2string(value, separator=", ", prefix="Array(")
        return f"Array({body}{extra})"

    def __str__(self) -> str:
        return str(np.asarray(host_value(self)))

    def __format__(self, spec: str) -> str:
        if self.ndim == 0:
            return format(np.asarray(host_value(self)).item(), spec)
        return format(str(self), spec)

    def __reduce__(self):
        return (Array, (np.asarray(host_value(self)), self.weak_type))


_NON_CANONICAL = {dtypes.int64: dtypes.int32, dtypes.uint64: dtypes.uint32,
                  dtypes.float64: dtypes.float32,
                  np.dtype(np.complex128): np.dtype(np.complex64)}


def canonicalize_value(value: Any) -> Any:
    """A NumPy value with 64-bit dtypes narrowed to 32 bits while x64 is off."""
    if not dtypes.config.enable_x64:
        target = _NON_CANONICAL.get(value.dtype)
        if target is not None:
            return value.astype(target)
    return value


def typed_array(value: np.ndarray, aval: ShapedArray) -> Array:
    """An Array of the ndarray `value`, whose type `aval` is already known.

    Eager evaluation knows each result's aval before it wraps it (abstract_eval
    ran first), so the Array is born with that aval: three slot writes. `value`
    must already have `aval`'s shape and dtype; `aval` should be interned
    (`interned_aval`), so eager fast paths recognise it by identity."""
    self = _new_object(Array)
    self._value = value
    self._buf = None
    self._aval = aval
    return self


def host_value(x: Array) -> np.ndarray:
    """The NumPy value of an Array, copied from its device buffer on the first read.

    A device-backed Array (a jitted call's result) leaves `_value` unset until
    someone looks at it, so results stay on the device until needed."""
    try:
        return x._value
    except AttributeError:
        pass
    buf = x._buf
    if buf is None:
        raise AttributeError("'Array' object has no attribute '_value'")
    if buf.is_deleted():   # donated to a jitted call (JAX's error and wording)
        raise RuntimeError(f"Array has been deleted with shape={x.dtype.name}"
                           f"[{','.join(map(str, x.shape))}].")
    value = np.asarray(buf)
    if value.dtype == object:  # bfloat16 & co., or a buffer over devices
        from ..runtime.sharded import host_value as sharded_value
        value = sharded_value(buf)
    x._value = value
    return value


def host_array(value: np.ndarray, shape: tuple, dtype: np.dtype, weak_type: bool) -> Array:
    """An Array of the ndarray `value` whose shape and dtype the caller already holds.

    For the eager fast paths of the elementwise front ends: the result of a same-shape
    ufunc keeps the operand's shape tuple (ndarray.shape builds a new tuple per read),
    and building the slots directly is cheaper than `Array.__init__`'s checks."""
    self = _new_object(Array)
    self._value = value
    self._buf = None
    self._aval = aval_of(shape, dtype, weak_type)
    return self


def as_array(x: Any, dtype: Any = None) -> Array:
    """Convert an array-like to an Array with a canonical dtype (no copy when possible)."""
    if type(x) is Array and dtype is None:
        return x
    weak = dtype is None and type(x) in (bool, int, float, complex)
    if dtype is None:
        dtype = dtypes.dtype_of_value(x) if not isinstance(x, (list, tuple)) else None
    value = np.asarray(x, dtype=dtype)
    if dtype is None:
        value = value.astype(dtypes.canonicalize_dtype(value.dtype), copy=False)
    return Array(value, weak)


_constants: dict[tuple, Array] = {}


def shared_constant(value: Any, dtype: Any, weak_type: bool = False) -> Array:
    """The rank-0 Array `value` of `dtype`, made once and shared.

    Rules ask for the same few constants on every call (a derivative's 2 or 1/2,
    grad's starting cotangent 1, a mean's count). Arrays are immutable, so one
    serves every caller; its NumPy value is read-only, so nobody can change it
    through `np.asarray(result)` either (as with JAX's buffers)."""
    key = (value, np.dtype(dtype), bool(weak_type))
    try:
        c = _constants.get(key)
    except TypeError:   # an unhashable value: nothing to share
        return Array(np.asarray(value, dtype=dtype), weak_type)
    if c is None:
        shared = np.asarray(value, dtype=dtype)
        shared.flags.writeable = False
        c = Array(shared, weak_type)
        if len(_constants) < 1024:
            _constants[key] = c
    return c


_new_object = object.__new__

# Public, C-level readers of an Array's NumPy value and signature id, for plugins'
# fast paths (eager shortcuts, jit's cache key): the attributes themselves stay private.
array_value = host_value
signature_of = operator.attrgetter("_aval._sig")
# `x.aval` is the `_aval` slot itself (a specialised slot load, no property call)
Array.aval = Array.__dict__["_aval"]
register_aval_handler(Array, operator.attrgetter("_aval"))
# Until the plugins load (on first use), Array's operators and plugin-given methods are
# trampolines that load them (plugax/first_use.py); the loader removes what is left.
first_use.install_trampolines(Array)
