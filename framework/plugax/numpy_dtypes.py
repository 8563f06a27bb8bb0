"""`plugax.numpy`'s dtype names and dtype helpers (JAX's `jnp.iinfo`, `promote_types`, ...).

The scalar types are NumPy's (as plugax.numpy's float32 etc. already are) and the
narrow types are ml_dtypes', which is where JAX takes them from. The helpers apply
plugax's own promotion lattice (`plugax.dtypes`), which is JAX's: Python scalars are
weak, bool < int < float, bfloat16 and float16 join to float32 -- so that
`result_type` says what an operation on those values would actually produce.
"""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from . import dtypes as _d

# --- scalar types and the abstract hierarchy: NumPy's --------------------------------------
bool = np.bool_   # noqa: A001  (JAX's name; shadows the builtin only inside this module)
float_ = np.float64
int_ = np.int64
uint = np.uint64
double = np.float64
single = np.float32
generic, number, integer = np.generic, np.number, np.integer
signedinteger, unsignedinteger = np.signedinteger, np.unsignedinteger
floating, inexact, flexible, character, object_ = (np.floating, np.inexact, np.flexible,
                                                    np.character, np.object_)
euler_gamma = np.euler_gamma
ComplexWarning = np.exceptions.ComplexWarning

# --- the narrow types JAX takes from ml_dtypes (storage types: plugax computes in them only
# through convert_element_type; see docs/faq.md) -------------------------------------------
_ML_INTS = ("int4", "uint4", "int2", "uint2", "int1", "uint1")
_ML_FLOATS = ("float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn",
              "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
              "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn")
NARROW = {n: getattr(ml_dtypes, n) for n in (*_ML_INTS, *_ML_FLOATS) if hasattr(ml_dtypes, n)}
globals().update(NARROW)
_CUSTOM_FLOATS = frozenset(np.dtype(t) for n, t in NARROW.items() if n.startswith("float")) | {
    np.dtype(ml_dtypes.bfloat16)}
_CUSTOM_INTS = frozenset(np.dtype(t) for n, t in NARROW.items() if not n.startswith("float"))

# ml_dtypes' iinfo/finfo extend NumPy's to bfloat16, int4 and the float8 types (as JAX's)
iinfo = ml_dtypes.iinfo
finfo = ml_dtypes.finfo
can_cast = np.can_cast

_WEAK_TYPES = {int: "i*", float: "f*", complex: "c*"}
_WIDEST = {"i*": np.dtype(np.int64), "f*": np.dtype(np.float64), "c*": np.dtype(np.complex128)}


def _node(x: Any) -> Any:
    """A promotion-lattice node of a dtype specifier: Python's int/float/complex are weak."""
    if isinstance(x, type) and x in _WEAK_TYPES:
        return _WEAK_TYPES[x]
    return np.dtype(x)


def promote_types(a: Any, b: Any) -> np.dtype:
    """The dtype a binary operation casts `a` and `b` to, by JAX's lattice (not NumPy's:
    int32 and float16 give float16, uint8 and int give uint8). Not canonicalised, as in
    JAX: promote_types('float64', 'int32') is float64 with or without x64."""
    node = _d._join(_node(a), _node(b))
    return _WIDEST[node] if isinstance(node, str) else np.dtype(node)


def _is_dtype_spec(x: Any) -> Any:
    return isinstance(x, (str, np.dtype)) or (isinstance(x, type) and (
        issubclass(x, np.generic) or x in (*_WEAK_TYPES, type(True))))


def result_type(*args: Any) -> np.dtype:
    """The dtype of an operation on `args` (arrays, scalars or dtype specifiers), by JAX's
    rules: weak Python scalars, then canonicalised to 32 bits unless x64 is on."""
    if not args:
        raise ValueError("at least one array or dtype is required")
    pairs = []
    for x in args:
        if isinstance(x, type) and x in _WEAK_TYPES:
            pairs.append((_d.python_scalar_dtype(x(0)), True))
        elif _is_dtype_spec(x):
            pairs.append((np.dtype(x), False))
        else:
            pairs.append((_d.dtype_of_value(x), _d.is_weakly_typed_value(x)))
    return _d.promote_types(*pairs)[0]


def issubdtype(arg1: Any, arg2: Any) -> bool:
    """NumPy's issubdtype, extended as JAX's: bfloat16 and the float8 types are floating,
    int4 and the other narrow integers are (un)signed integers."""
    abstract = isinstance(arg1, type) and arg1 in _ABSTRACT
    dt = None if abstract else np.dtype(arg1)
    if dt is not None and (dt in _CUSTOM_FLOATS or dt in _CUSTOM_INTS):
        if isinstance(arg2, type) and issubclass(arg2, np.generic) and arg2 in (
                np.generic, np.number, np.inexact, np.floating, np.integer,
                np.signedinteger, np.unsignedinteger):
            if dt in _CUSTOM_FLOATS:
                return arg2 in (np.generic, np.number, np.inexact, np.floating)
            signed = dt.name.startswith("int")
            return arg2 in (np.generic, np.number, np.integer,
                            np.signedinteger if signed else np.unsignedinteger)
        return dt == np.dtype(arg2)
    return builtins_issubdtype(arg1, arg2)


builtins_issubdtype = np.issubdtype
_ABSTRACT = (np.generic, np.number, np.integer, np.signedinteger, np.unsignedinteger,
             np.inexact, np.floating, np.complexfloating, np.flexible, np.character)

_KINDS: dict[str, Any] = {
    "bool": lambda d: d == np.bool_,
    "signed integer": lambda d: d.kind == "i" or (d in _CUSTOM_INTS and d.name.startswith("i")),
    "unsigned integer": lambda d: d.kind == "u" or (d in _CUSTOM_INTS and d.name.startswith("u")),
    "real floating": lambda d: d.kind == "f" or d in _CUSTOM_FLOATS,
    "complex floating": lambda d: d.kind == "c",
}
_KINDS["integral"] = lambda d: _KINDS["signed integer"](d) or _KINDS["unsigned integer"](d)
_KINDS["numeric"] = lambda d: (_KINDS["integral"](d) or _KINDS["real floating"](d)
                               or _KINDS["complex floating"](d))


def isdtype(dtype: Any, kind: Any) -> bool:
    """The array API's dtype-kind test ('bool', 'signed integer', 'unsigned integer',
    'integral', 'real floating', 'complex floating', 'numeric', a dtype, or a tuple)."""
    d = np.dtype(dtype)
    for k in kind if isinstance(kind, tuple) else (kind,):
        if isinstance(k, str) and k in _KINDS:
            if _KINDS[k](d):
                return True
            continue
        try:
            if d == np.dtype(k):
                return True
        except TypeError as e:
            if isinstance(k, str):
                raise ValueError(f"Unrecognized kind={k!r} expected one of {list(_KINDS)}, "
                                 f"or a compatible input for jnp.dtype()") from e
            raise TypeError(f"Expected kind to be a dtype, string, or tuple; got kind={k!r}") \
                from e
    return False


def isscalar(element: Any) -> bool:
    """JAX's isscalar: a zero-dimensional array counts as a scalar (unlike NumPy's), so
    the answer is the same eagerly and under jit, where scalars become 0-d arrays."""
    if np.isscalar(element):
        return True
    shape = getattr(element, "shape", None)
    if isinstance(element, np.ndarray) or (shape is not None and hasattr(element, "dtype")):
        return len(shape) == 0
    return False


iterable = np.iterable
array_repr, array_str = np.array_repr, np.array_str
printoptions, get_printoptions, set_printoptions = (np.printoptions, np.get_printoptions,
                                                     np.set_printoptions)
save, savez = np.save, np.savez


def load(file: Any, *args: Any, **kwargs: Any) -> Any:
    """numpy.load, returning a plugax array where the file holds one array (as JAX's)."""
    from .core.array import as_array   # the kernel's own conversion (no family needed)
    out = np.load(file, *args, **kwargs)
    if isinstance(out, np.ndarray) and out.dtype.kind not in "OSUV":
        return as_array(out)
    return out


def _unimplemented(name: str, why: str) -> Any:
    def fn(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"plugax.numpy.{name} is not implemented, as in JAX: {why}")
    fn.__name__ = fn.__qualname__ = name
    return fn


fromfile = _unimplemented("fromfile", "reading a file is not a pure function of its arguments; "
                          "use numpy.fromfile and pass the result to plugax.numpy.asarray")
fromiter = _unimplemented("fromiter", "an iterator is consumed as it is read, which a traced "
                          "function cannot repeat; use numpy.fromiter and plugax.numpy.asarray")

__all__ = ["bool", "float_", "int_", "uint", "double", "single", "generic", "number",
           "integer", "signedinteger", "unsignedinteger", "floating", "inexact", "flexible",
           "character", "object_", "euler_gamma", "ComplexWarning", "iinfo", "finfo",
           "can_cast", "promote_types", "result_type", "issubdtype", "isdtype", "isscalar",
           "iterable", "array_repr", "array_str", "printoptions", "get_printoptions",
           "set_printoptions", "save", "savez", "load", "fromfile", "fromiter", *NARROW]
