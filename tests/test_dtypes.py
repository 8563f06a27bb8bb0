"""dtypes: JAX's type-promotion lattice, canonicalisation and short names.

The expected tables below were computed once with JAX 0.10.2
(`jax.dtypes.result_type(a, b, return_weak_type_flag=True)`, with Python
`int`/`float` as the weak types) and pasted here; the tests never import JAX.
A trailing ``*`` marks a weakly typed result. Rows and columns: i* and f* are
Python int and float scalars.
"""
from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest

import plugax
from plugax import dtypes

JAX_TABLE_X32 = """
     bool    u8   u16   u32    i8   i16   i32   f16  bf16   f32    i*    f*
bool  bool    u8   u16   u32    i8   i16   i32   f16  bf16   f32  i32*  f32*
  u8    u8    u8   u16   u32   i16   i16   i32   f16  bf16   f32    u8  f32*
 u16   u16   u16   u16   u32   i32   i32   i32   f16  bf16   f32   u16  f32*
 u32   u32   u32   u32   u32   i32   i32   i32   f16  bf16   f32   u32  f32*
  i8    i8   i16   i32   i32    i8   i16   i32   f16  bf16   f32    i8  f32*
 i16   i16   i16   i32   i32   i16   i16   i32   f16  bf16   f32   i16  f32*
 i32   i32   i32   i32   i32   i32   i32   i32   f16  bf16   f32   i32  f32*
 f16   f16   f16   f16   f16   f16   f16   f16   f16   f32   f32   f16   f16
bf16  bf16  bf16  bf16  bf16  bf16  bf16  bf16   f32  bf16   f32  bf16  bf16
 f32   f32   f32   f32   f32   f32   f32   f32   f32   f32   f32   f32   f32
  i*  i32*    u8   u16   u32    i8   i16   i32   f16  bf16   f32  i32*  f32*
  f*  f32*  f32*  f32*  f32*  f32*  f32*  f32*   f16  bf16   f32  f32*  f32*
"""

JAX_TABLE_X64 = """
     bool    u8   u16   u32    i8   i16   i32   f16  bf16   f32    i*    f*
bool  bool    u8   u16   u32    i8   i16   i32   f16  bf16   f32  i64*  f64*
  u8    u8    u8   u16   u32   i16   i16   i32   f16  bf16   f32    u8  f64*
 u16   u16   u16   u16   u32   i32   i32   i32   f16  bf16   f32   u16  f64*
 u32   u32   u32   u32   u32   i64   i64   i64   f16  bf16   f32   u32  f64*
  i8    i8   i16   i32   i64    i8   i16   i32   f16  bf16   f32    i8  f64*
 i16   i16   i16   i32   i64   i16   i16   i32   f16  bf16   f32   i16  f64*
 i32   i32   i32   i32   i64   i32   i32   i32   f16  bf16   f32   i32  f64*
 f16   f16   f16   f16   f16   f16   f16   f16   f16   f32   f32   f16   f16
bf16  bf16  bf16  bf16  bf16  bf16  bf16  bf16   f32  bf16   f32  bf16  bf16
 f32   f32   f32   f32   f32   f32   f32   f32   f32   f32   f32   f32   f32
  i*  i64*    u8   u16   u32    i8   i16   i32   f16  bf16   f32  i64*  f64*
  f*  f64*  f64*  f64*  f64*  f64*  f64*  f64*   f16  bf16   f32  f64*  f64*
"""

DTYPES = {"bool": np.dtype(np.bool_), "u8": np.dtype(np.uint8), "u16": np.dtype(np.uint16),
          "u32": np.dtype(np.uint32), "u64": np.dtype(np.uint64), "i8": np.dtype(np.int8),
          "i16": np.dtype(np.int16), "i32": np.dtype(np.int32), "i64": np.dtype(np.int64),
          "f16": np.dtype(np.float16), "bf16": np.dtype(ml_dtypes.bfloat16),
          "f32": np.dtype(np.float32), "f64": np.dtype(np.float64)}
PY_SCALARS = {"i*": 3, "f*": 2.5}


def _parse(table: str) -> dict[tuple[str, str], tuple[np.dtype, bool]]:
    header, *rows = [line.split() for line in table.strip().splitlines()]
    out = {}
    for row in rows:
        for col, cell in zip(header, row[1:]):
            out[row[0], col] = (DTYPES[cell.rstrip("*")], cell.endswith("*"))
    return out


TABLES = {False: _parse(JAX_TABLE_X32), True: _parse(JAX_TABLE_X64)}
NAMES = ["bool", "u8", "u16", "u32", "i8", "i16", "i32", "f16", "bf16",
                            "f32", "i*", "f*"]


@pytest.fixture(params=[False, True], ids=["x32", "x64"])
def x64(request):
    previous = plugax.config.enable_x64
    plugax.config.update("enable_x64", request.param)
    try:
        yield request.param
    finally:
        plugax.config.update("enable_x64", previous)


def _operand(name: str) -> tuple[np.dtype, bool]:
    """(dtype, weak) of a table entry; Python scalars take the default width."""
    if name in PY_SCALARS:
        return dtypes.python_scalar_dtype(PY_SCALARS[name]), True
    return DTYPES[name], False


def test_tables_are_complete():
    for table in TABLES.values():
        assert len(table) == len(NAMES) ** 2
        assert set(table) == set(itertools.product(NAMES, NAMES))


def test_promote_types_matches_jax(x64):
    table = TABLES[x64]
    mismatches = []
    for a, b in itertools.product(NAMES, NAMES):
        got = dtypes.promote_types(_operand(a), _operand(b))
        if got != table[a, b]:
            mismatches.append(f"{a} + {b}: got {got}, JAX gives {table[a, b]}")
    assert mismatches == []


def test_result_type_of_values_matches_jax(x64):
    """The same table through values: NumPy arrays are strong, Python scalars weak."""
    table = TABLES[x64]
    def value(name):
        return PY_SCALARS[name] if name in PY_SCALARS else np.zeros((2,), DTYPES[name])
    for a, b in itertools.product(NAMES, NAMES):
        assert dtypes.result_type(value(a), value(b)) == table[a, b], (a, b)


def test_promotion_is_symmetric_and_associative(x64):
    ops = [_operand(n) for n in NAMES]
    for a, b in itertools.product(ops, ops):
        assert dtypes.promote_types(a, b) == dtypes.promote_types(b, a)
    for a, b, c in itertools.product(ops, ops, ops):
        ab_c = dtypes.promote_types(dtypes.promote_types(a, b), c)
        a_bc = dtypes.promote_types(a, dtypes.promote_types(b, c))
        assert ab_c == a_bc == dtypes.promote_types(a, b, c)


def test_weak_arrays_yield_like_python_scalars():
    """A weak f32 array (from a Python scalar) does not widen an f16 or bf16 operand."""
    assert dtypes.promote_types((np.float32, True), (np.float16, False)) == \
        (np.dtype(np.float16), False)
    assert dtypes.promote_types((np.int32, True), (np.uint8, False)) == (np.dtype(np.uint8), False)
    assert dtypes.promote_types((np.float32, True), (np.float32, True)) == \
        (np.dtype(np.float32), True)
    weak = plugax.Array(np.asarray(1.0, np.float32), weak_type=True)
    assert dtypes.result_type(weak, np.zeros(2, ml_dtypes.bfloat16)) == (DTYPES["bf16"], False)


def test_no_silent_64_bit_without_x64():
    previous = plugax.config.enable_x64
    plugax.config.update("enable_x64", False)
    try:
        # Like JAX: an integer array with a Python float gives a *weak* float.
        assert dtypes.result_type(np.zeros(2, np.int64), 1.0) == (np.dtype(np.float32), True)
        assert dtypes.result_type(np.zeros(2, np.float64)) == (np.dtype(np.float32), False)
        assert dtypes.result_type(np.uint32(1), np.int32(1)) == (np.dtype(np.int32), False)
    finally:
        plugax.config.update("enable_x64", previous)


@pytest.mark.parametrize("given,x32,x64", [
    (np.int64, "i32", "i64"), (np.uint64, "u32", "u64"), (np.float64, "f32", "f64"),
    (np.int32, "i32", "i32"), (np.float16, "f16", "f16"), (np.bool_, "bool", "bool"),
    (ml_dtypes.bfloat16, "bf16", "bf16"), ("float64", "f32", "f64"), (int, "i32", "i64"),
    (float, "f32", "f64"),
])
def test_canonicalize_dtype(given, x32, x64):
    previous = plugax.config.enable_x64
    try:
        for flag, expected in ((False, x32), (True, x64)):
            plugax.config.update("enable_x64", flag)
            assert dtypes.canonicalize_dtype(given) == DTYPES[expected]
    finally:
        plugax.config.update("enable_x64", previous)
    assert dtypes.canonicalize_dtype(np.complex128) == np.dtype(np.complex64)


def test_python_scalar_defaults(x64):
    wide = "64" if x64 else "32"
    assert dtypes.python_scalar_dtype(True) == DTYPES["bool"]
    assert dtypes.python_scalar_dtype(1) == DTYPES["i" + wide]
    assert dtypes.python_scalar_dtype(1.0) == DTYPES["f" + wide]
    assert dtypes.default_float_dtype() == DTYPES["f" + wide]
    assert dtypes.default_int_dtype() == DTYPES["i" + wide]
    with pytest.raises(TypeError, match="not a Python scalar"):
        dtypes.python_scalar_dtype("1")


def test_short_names():
    for short, dtype in DTYPES.items():
        assert dtypes.short_name(dtype) == short
    assert dtypes.short_name(np.dtype(np.complex64)) == "c64"
    assert dtypes.short_name(dtypes.float0) == "float0"
    assert plugax.ShapedArray((2, 3), ml_dtypes.bfloat16).str_short() == "bf16[2,3]"
    assert plugax.ShapedArray((), np.bool_).str_short() == "bool[]"


def test_dtype_predicates():
    assert all(dtypes.is_float(DTYPES[n]) for n in ("f16", "bf16", "f32", "f64"))
    assert not any(dtypes.is_float(DTYPES[n]) for n in ("bool", "i32", "u8"))
    assert dtypes.is_integer(DTYPES["u16"]) and not dtypes.is_integer(DTYPES["bool"])


def test_config_rejects_unknown_flags():
    with pytest.raises(AttributeError, match="enable_x64"):
        plugax.config.update("enable_x65", True)
