"""Abstract values: what a transformation knows about a value without its data.

A `ShapedArray` is the type of an array in a jaxpr: shape, dtype and whether
the dtype is *weak* (came from a Python scalar and yields to other operands in
promotion). Tracers carry one; rules compute them.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import dtypes

__all__ = ["ShapedArray", "interned_aval", "aval_of", "get_aval", "register_aval_handler", "signature_id", "format_operands"]

_signature_ids: dict[tuple, int] = {}


def signature_id(shape: tuple, dtype: Any, weak_type: bool) -> int:
    """A small int naming (shape, dtype, weak type), the same for equal triples.

    Hot caches key on these: a tuple of ints hashes and compares far faster
    than a tuple of shapes and NumPy dtypes. jit's cached-call path keys on an
    Array's id (`Array._sig`, computed once, or born with it out of a jitted
    call), and the memoised abstract_eval keys on the ids of its operands
    (`ShapedArray._sig` or `Array._sig`: one space, so an eager bind and a
    staged one share cache entries).
    """
    key = (shape, dtype, weak_type)
    sig = _signature_ids.get(key)
    if sig is None:
        sig = _signature_ids.setdefault(key, len(_signature_ids))
    return sig


class ShapedArray:
    """The set of all arrays with a given shape, dtype and weak type.

    Its signature id `_sig` is computed once, here: caches key on it (the memoised
    abstract_eval, eager fast paths) and it is the hash. No `__getattr__`: a class
    with one defeats CPython's attribute-load specialisation for all its attributes.
    """

    __slots__ = ("shape", "dtype", "weak_type", "_sig")
    array_abstraction_level = 1

    def __init__(self, shape: tuple[int, ...], dtype: Any, weak_type: bool = False):
        self.shape = shape = _normal_shape(shape)
        self.dtype = dtype = np.dtype(dtype)
        self.weak_type = weak_type = bool(weak_type)
        self._sig = signature_id(shape, dtype, weak_type)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def update(self, shape=None, dtype=None, weak_type=None) -> "ShapedArray":
        return ShapedArray(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type)

    def strip_weak_type(self) -> "ShapedArray":
        return self if not self.weak_type else ShapedArray(self.shape, self.dtype, False)

    def str_short(self) -> str:
        return f"{dtypes.short_name(self.dtype)}[{','.join(map(str, self.shape))}]"

    def __hash__(self) -> int:
        return self._sig

    def __eq__(self, other: object) -> bool:
        return (type(other) is ShapedArray and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.dtype.name}[{','.join(map(str, self.shape))}]{weak})"

    __str__ = __repr__


_interned: dict[int, ShapedArray] = {}


def interned_aval(aval: ShapedArray) -> ShapedArray:
    """The one shared ShapedArray equal to `aval` (a plain ShapedArray).

    Arrays and the memoised abstract_eval hold interned avals, so an eager fast
    path tells "same shape, dtype and weak type" by identity (`a is b`), and an
    eager result is born with its aval instead of building one."""
    shared = _interned.get(aval._sig)
    if shared is None:
        shared = _interned.setdefault(aval._sig, aval)
    return shared


def aval_of(shape: tuple, dtype: np.dtype, weak_type: bool) -> ShapedArray:
    """The interned ShapedArray of (shape, dtype, weak type): shape a tuple of ints."""
    shared = _interned.get(signature_id(shape, dtype, weak_type))
    return shared if shared is not None else interned_aval(ShapedArray(shape, dtype, weak_type))


_normal_shapes: dict[tuple, tuple] = {}


def _normal_shape(shape: Any) -> tuple[int, ...]:
    """`shape` as a tuple of Python ints. Rules build avals all the time from shapes that
    are already such tuples, so known ones are looked up instead of rebuilt."""
    if type(shape) is tuple:
        try:
            known = _normal_shapes.get(shape)
        except TypeError:   # an unhashable entry: int() below explains
            known = None
        if known is not None:
            return known
    normal = tuple(int(d) for d in shape)
    if type(shape) is tuple and len(_normal_shapes) < 4096:
        _normal_shapes[shape] = normal
    return normal


_scalar_types = (bool, int, float, complex)
_aval_handlers: dict[type, Any] = {}


def register_aval_handler(ty: type, handler) -> None:
    """Teach `get_aval` a new value type (used by Array and by plugins' own types)."""
    _aval_handlers[ty] = handler


def get_aval(x: Any) -> ShapedArray:
    """The abstract value of any value plugax accepts as an array."""
    handler = _aval_handlers.get(type(x))
    if handler is not None:
        return handler(x)
    aval = getattr(x, "aval", None)
    if isinstance(aval, ShapedArray):
        return aval
    if type(x) in _scalar_types:   # Python ints, floats, complexes are weak; bools not (JAX)
        return ShapedArray((), dtypes.python_scalar_dtype(x), weak_type=type(x) is not bool)
    if isinstance(x, (np.ndarray, np.generic)):
        return ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype), False)
    if hasattr(x, "shape") and hasattr(x, "dtype") and hasattr(x, "__array__"):
        return ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype), False)
    raise TypeError(f"value {x!r} of type {type(x).__name__} is not a valid plugax array type "
                    f"(expected an Array, a NumPy array or a Python scalar)")


def format_operands(avals: Any) -> str:
    """Operand types as error messages show them: "f32[3], i32[]".

    One spelling for every message that names what a primitive got, so the kernel's
    and every plugin's errors read alike (plugins reach it as
    `plugax.extend.format_operands`)."""
    return ", ".join(a.str_short() for a in avals)
