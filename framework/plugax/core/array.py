"""`plugax.Array`: the one array type every plugax function returns.

It holds a NumPy buffer, a device buffer (a jaxlib array made by jit), or
both: a device-backed Array copies itself to the host once, on the first read of
`_value` (see `__getattr__`), so results of jitted calls stay on the device
until someone looks at them. Shape, dtype and weak type are plain attributes
because eager code reads them on every operation. Operators and methods (`+`, `@`, `.sum()`, indexing, ...) are installed on the
class by plugins through the `plugax_array_methods` hook, so the kernel stays
ignorant of every primitive.
"""
from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from .. import dtypes, first_use
from .avals import ShapedArray, register_aval_handler, signature_id
from .device_types import ArrayType

__all__ = ["Array", "as_array", "typed_array", "host_array", "canonicalize_value", "signature_id",
           "shared_constant", "array_value", "signature_of"]


class Array(metaclass=ArrayType):
    """An immutable n-dimensional array (host- or device-backed; jaxlib's device
    arrays, once registered, are Arrays too: core/device_arrays.py)."""

    __slots__ = ("_value", "_buf", "_sig", "_aval", "shape", "dtype", "weak_type",
                 "__weakref__")
    __array_priority__ = 100

    def __init__(self, value: Any = None, weak_type: bool = False, _buf: Any = None):
        if _buf is not None:
            # a device buffer: how jaxlib's C++ jit dispatch rebuilds a result (the
            # xla_call plugin registers Array as a pytree node of `_buf` and `weak_type`)
            aval = _buf.aval   # the ShapedArray its result handler was made with
            self._buf = _buf
            self._aval = aval
            self.shape = aval.shape
            self.dtype = aval.dtype
            self.weak_type = weak_type
            return
        self._value = value
        self._buf = None
        self._aval = None   # built on first use, then kept: transformations ask repeatedly
        self.shape = value.shape
        self.dtype = value.dtype
        self.weak_type = weak_type

    @classmethod
    def from_buffer(cls, buf: Any, aval: ShapedArray, sig: int | None = None) -> "Array":
        """An Array backed by a device buffer; its NumPy value is fetched lazily."""
        self = object.__new__(cls)
        self._buf = buf
        self._aval = aval
        self.shape = aval.shape
        self.dtype = aval.dtype
        self.weak_type = aval.weak_type
        if sig is not None:
            self._sig = sig
        return self

    def __getattr__(self, name: str) -> Any:
        # Only reached for unset slots: `_value` of a device-backed Array, and
        # `_sig`, computed on first use.
        if name == "_sig":
            sig = self._sig = signature_id(self.shape, self.dtype, self.weak_type)
            return sig
        if name == "_value":
            buf = object.__getattribute__(self, "_buf")
            if buf is not None:
                if buf.is_deleted():   # donated to a jitted call (JAX's error and wording)
                    raise RuntimeError(f"Array has been deleted with shape={self.dtype.name}"
                                       f"[{','.join(map(str, self.shape))}].")
                value = np.asarray(buf)
                if value.dtype == object:  # bfloat16 & co., or a buffer over devices
                    from ..runtime.sharded import host_value
                    value = host_value(buf)
                self._value = value
                return value
        raise AttributeError(f"'Array' object has no attribute '{name}'")

    @property
    def aval(self) -> ShapedArray:
        return _array_aval(self)

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        return np.asarray(self._value, dtype=dtype)

    def block_until_ready(self) -> "Array":
        """Wait for the device computation producing this Array (no-op for host values)."""
        if self._buf is not None:
            self._buf.block_until_ready()
        return self

    def is_ready(self) -> bool:
        return self._buf is None or self._buf.is_ready()

    def item(self) -> Any:
        return np.asarray(self._value).item()

    def tolist(self) -> Any:
        return np.asarray(self._value).tolist()

    def __bool__(self) -> bool:
        return bool(self._value)

    def __int__(self) -> int:
        return int(self._value)

    def __float__(self) -> float:
        return float(self._value)

    def __complex__(self) -> complex:
        return complex(self._value)

    def __index__(self) -> int:
        return int(np.asarray(self._value).__index__())

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
        value = np.asarray(self._value)
        extra = f", dtype={value.dtype.name}" + (", weak_type=True" if self.weak_type else "")
        body = np.array2string(value, separator=", ", prefix="Array(")
        return f"Array({body}{extra})"

    def __str__(self) -> str:
        return str(np.asarray(self._value))

    def __format__(self, spec: str) -> str:
        if self.ndim == 0:
            return format(np.asarray(self._value).item(), spec)
        return format(str(self), spec)

    def __reduce__(self):
        return (Array, (np.asarray(self._value), self.weak_type))


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
    ran first), so the Array is born with that aval and its signature id instead
    of rebuilding them when it is next used as an operand."""
    self = _new_object(Array)
    self._value = value
    self._buf = None
    self._aval = aval
    self._sig = aval._sig
    self.shape = aval.shape
    self.dtype = aval.dtype
    self.weak_type = aval.weak_type
    return self


def host_array(value: np.ndarray, shape: tuple, dtype: np.dtype, weak_type: bool) -> Array:
    """An Array of the ndarray `value` whose shape and dtype the caller already holds.

    For the eager fast paths of the elementwise front ends: the result of a same-shape
    ufunc keeps the operand's shape tuple (ndarray.shape builds a new tuple per read),
    and building the slots directly is cheaper than `Array.__init__`'s checks."""
    self = _new_object(Array)
    self._value = value
    self._buf = self._aval = None
    self.shape = shape
    self.dtype = dtype
    self.weak_type = weak_type
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


def _array_aval(x: Array) -> ShapedArray:
    """The aval of an Array: made once per Array (this runs for nearly every operation
    under a transformation, often several times for the same value), and without
    ShapedArray's normalisation, since an Array's shape is already a tuple of ints and
    its dtype a NumPy dtype."""
    aval = x._aval
    if aval is None:
        aval = x._aval = _new_object(ShapedArray)
        aval.shape = x.shape
        aval.dtype = x.dtype
        aval.weak_type = bool(x.weak_type)
    return aval


_new_object = object.__new__

# Public, C-level readers of an Array's NumPy value and signature id, for plugins'
# fast paths (eager shortcuts, jit's cache key): the attributes themselves stay private.
array_value = operator.attrgetter("_value")
signature_of = operator.attrgetter("_sig")
register_aval_handler(Array, _array_aval)
# Until the plugins load (on first use), Array's operators and plugin-given methods are
# trampolines that load them (plugax/first_use.py); the loader removes what is left.
first_use.install_trampolines(Array)
