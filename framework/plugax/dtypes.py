"""Dtypes: canonicalisation, weak types and JAX's type-promotion lattice.

Why a lattice instead of NumPy's rules: promotion must not depend on values,
must keep `f32_array * 3.0` in float32 (Python scalars are *weakly typed*), and
must never silently widen to 64 bits while x64 is off. JAX documents this as a
lattice whose least upper bound is the result type; we implement the same one.
"""
from __future__ import annotations

import functools
from typing import Any

import ml_dtypes
import numpy as np

from .config import config

__all__ = [
    "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128", "float0",
    "canonicalize_dtype", "dtype_of_value", "is_weakly_typed_value", "result_type",
    "promote_types", "short_name", "issubdtype_inexact", "is_float", "is_integer",
    "default_float_dtype", "default_int_dtype", "python_scalar_dtype", "supported_dtypes",
    "to_inexact_dtype",
    "float_dtypes", "complex_dtypes", "REAL_OF_COMPLEX", "COMPLEX_OF_REAL",
    "TypePromotionError",
]

bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
float16, float32, float64 = (np.dtype(t) for t in (np.float16, np.float32, np.float64))
bfloat16 = np.dtype(ml_dtypes.bfloat16)
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)
# The tangent dtype of integer and boolean values: a zero-sized "no gradient" type.
float0 = np.dtype([("float0", np.void, 0)])

supported_dtypes = (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
                    float16, bfloat16, float32, float64, complex64, complex128)
# complex64 and complex128 (complex128 only under x64, as float64): each primitive's dtype
# rule says whether it takes them, as JAX's do (exp does, floor and lt do not).
complex_dtypes = frozenset((complex64, complex128))
# complex -> its real part's dtype (abs, real, imag); real -> the complex that holds it
REAL_OF_COMPLEX = {complex64: float32, complex128: float64}
COMPLEX_OF_REAL = {float16: complex64, bfloat16: complex64, float32: complex64,
                   float64: complex128}
# The floating-point dtypes, as a set: dtype rules test membership on every trace.
float_dtypes = frozenset((float16, bfloat16, float32, float64))

_SHORT = {bool_: "bool", int8: "i8", int16: "i16", int32: "i32", int64: "i64",
          uint8: "u8", uint16: "u16", uint32: "u32", uint64: "u64", float16: "f16",
          bfloat16: "bf16", float32: "f32", float64: "f64", complex64: "c64",
          complex128: "c128", float0: "float0"}

_TO_32 = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}


class TypePromotionError(TypeError):
    """Two dtypes have no common type (never raised by the lattice itself)."""


def short_name(dtype: np.dtype) -> str:
    """The dtype as jaxprs print it: f32, i32, bool, bf16, ..."""
    return _SHORT.get(dtype, str(dtype))


def canonicalize_dtype(dtype: Any) -> np.dtype:
    """Map 64-bit dtypes to their 32-bit partners unless x64 is enabled.

    Every value entering plugax passes here, so this is where non-numeric data is
    refused: an object, string or datetime array would otherwise be accepted and fail
    later (under jit, with a KeyError naming the dtype) or compute nonsense."""
    dtype = np.dtype(dtype)
    if dtype.kind in _NOT_ARRAY_KINDS and dtype != float0 and (
            dtype.kind != "V" or dtype.type is np.void):   # ml_dtypes' floats are kind V
        raise TypeError(f"plugax arrays hold booleans and numbers; got dtype {dtype} "
                        f"({_KIND_NAMES.get(dtype.kind, 'not numeric')}). Convert the data to "
                        f"a numeric NumPy array first.")
    if config.enable_x64:
        return dtype
    return _TO_32.get(dtype, dtype)


_NOT_ARRAY_KINDS = frozenset("OSUVMm")
_KIND_NAMES = {"O": "Python objects", "S": "bytes", "U": "strings", "V": "raw bytes",
               "M": "datetimes", "m": "timedeltas"}


def default_float_dtype() -> np.dtype:
    return float64 if config.enable_x64 else float32


def default_int_dtype() -> np.dtype:
    return int64 if config.enable_x64 else int32


# The float an integer or bool array becomes where a float is needed (sin, mean, true
# division): 64-bit integers become float64, narrower ones float32, as in JAX 0.10
# (under x64 too). canonicalize_dtype then narrows float64 when x64 is off.
_TO_INEXACT = {np.dtype(k): np.dtype(v) for k, v in [
    ("bool", "float32"), ("int8", "float32"), ("uint8", "float32"), ("int16", "float32"),
    ("uint16", "float32"), ("int32", "float32"), ("uint32", "float32"),
    ("int64", "float64"), ("uint64", "float64")]}


def to_inexact_dtype(dtype: Any) -> np.dtype:
    """The inexact dtype `dtype` promotes to (itself if it is already inexact)."""
    dtype = np.dtype(dtype)
    return canonicalize_dtype(_TO_INEXACT.get(dtype, dtype))


def python_scalar_dtype(x: Any) -> np.dtype:
    """Dtype a Python scalar takes when it becomes an array (weakly typed)."""
    if isinstance(x, bool):
        return bool_
    if isinstance(x, int):
        return default_int_dtype()
    if isinstance(x, float):
        return default_float_dtype()
    if isinstance(x, complex):
        return complex128 if config.enable_x64 else complex64
    raise TypeError(f"{type(x).__name__} is not a Python scalar")


def is_weakly_typed_value(x: Any) -> bool:
    return type(x) in (int, float, complex) or getattr(x, "weak_type", False)


def dtype_of_value(x: Any) -> np.dtype:
    """Canonical dtype of any array-like value plugax accepts."""
    if type(x) in (bool, int, float, complex):
        return python_scalar_dtype(x)
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        dtype = np.asarray(x).dtype
    return canonicalize_dtype(dtype)


def is_float(dtype: np.dtype) -> bool:
    return dtype in float_dtypes


def is_integer(dtype: np.dtype) -> bool:
    return dtype.kind in "iu"


def issubdtype_inexact(dtype: np.dtype) -> bool:
    return is_float(dtype) or dtype.kind == "c"


# --- the promotion lattice --------------------------------------------------
# Nodes are dtypes plus the weak categories "i*", "f*", "c*" (Python scalars).
_I, _F, _C = "i*", "f*", "c*"
_LATTICE_UP: dict[Any, list[Any]] = {
    bool_: [_I],
    _I: [uint8, int8],
    uint8: [int16, uint16], uint16: [int32, uint32], uint32: [int64, uint64], uint64: [_F],
    int8: [int16], int16: [int32], int32: [int64], int64: [_F],
    _F: [_C, bfloat16, float16],
    bfloat16: [float32], float16: [float32], float32: [float64, complex64],
    float64: [complex128],
    _C: [complex64], complex64: [complex128], complex128: [],
}


@functools.lru_cache(maxsize=None)
def _upper_bounds(node: Any) -> frozenset:
    seen = {node}
    for parent in _LATTICE_UP[node]:
        seen |= _upper_bounds(parent)
    return frozenset(seen)


def _lattice_node(dtype: np.dtype, weak: bool) -> Any:
    if not weak:
        return dtype
    if dtype == bool_:
        return bool_
    return _I if dtype.kind in "iu" else _C if dtype.kind == "c" else _F


@functools.lru_cache(maxsize=None)
def _join(a: Any, b: Any) -> Any:
    common = _upper_bounds(a) & _upper_bounds(b)
    # The least upper bound is the common bound all others lie above.
    for node in common:
        if all(other in _upper_bounds(node) for other in common):
            return node
    raise TypePromotionError(f"no common type for {a} and {b}")


def _node_to_dtype(node: Any) -> np.dtype:
    if node == _I:
        return default_int_dtype()
    if node == _F:
        return default_float_dtype()
    if node == _C:
        return complex128 if config.enable_x64 else complex64
    return canonicalize_dtype(node)


def promote_types(*dtypes_and_weak: tuple[np.dtype, bool]) -> tuple[np.dtype, bool]:
    """Join `(dtype, weak_type)` pairs; returns the result `(dtype, weak_type)`."""
    node = None
    for dtype, weak in dtypes_and_weak:
        n = _lattice_node(np.dtype(dtype), weak)
        node = n if node is None else _join(node, n)
    weak = node in (_I, _F, _C)
    return _node_to_dtype(node), weak


def result_type(*values: Any) -> tuple[np.dtype, bool]:
    """Result dtype and weak type of combining `values` (arrays, tracers, scalars)."""
    return promote_types(*((dtype_of_value(v), is_weakly_typed_value(v)) for v in values))

