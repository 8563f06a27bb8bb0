"""convert_element_type: a value as another dtype (and weak type).

Every family changes dtypes with it (the elementwise family's promotion, the
reductions' `dtype=` and means, control flow's predicates and index clamping),
and it needs no other primitive: its derivative between float types is itself,
its transpose is the conversion back.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes
from ..core.array import Array
from ..core.avals import ShapedArray, get_aval
from ..core.trace import Primitive, is_eager
from ..errors import ShapeError
from ..interpreters.ad_util import Zero
from ..interpreters.vjp_tape.rules import transpose_backward
from ..loader.ruleset import RuleSet
from . import lowering as L

__all__ = ["convert_element_type_p", "convert_element_type", "convert_value", "RULES"]

convert_element_type_p = Primitive("convert_element_type")

_FLOATS = frozenset(d for d in dtypes.supported_dtypes if dtypes.is_float(d))
# the dtypes between which conversion is linear (it has a tangent and a transpose)
_INEXACT = _FLOATS | dtypes.complex_dtypes
_CONSTANTS = (bool, int, float, complex, Array)


def convert_value(x: np.ndarray, new_dtype: np.dtype) -> np.ndarray:
    """NumPy conversion with XLA's float -> int semantics: truncate, saturate at the
    integer range, NaN -> 0 (NumPy leaves those cases undefined)."""
    x, new_dtype = np.asarray(x), np.dtype(new_dtype)
    if x.dtype.kind == "c" and new_dtype.kind != "c":
        if new_dtype == dtypes.bool_:
            return x != 0     # nonzero anywhere: 1j is True
        x = x.real    # complex -> real keeps the real part, as XLA (no ComplexWarning)
    if x.dtype not in _FLOATS or new_dtype.kind not in "iu":
        return x.astype(new_dtype)
    info = np.iinfo(new_dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        out = x.astype(new_dtype)
    out = np.where(x >= float(info.max), info.max, out)
    out = np.where(x <= float(info.min), info.min, out)
    return np.where(np.isnan(x), 0, out).astype(new_dtype)


_SUPPORTED = frozenset(dtypes.supported_dtypes)


def _check_target(x: ShapedArray, new_dtype: Any) -> None:
    if np.dtype(new_dtype) not in _SUPPORTED:
        raise ShapeError(f"primitive 'convert_element_type' cannot convert to dtype "
                         f"{new_dtype}; got ({x.str_short()}); choose one of "
                         f"{', '.join(d.name for d in dtypes.supported_dtypes)}")


def _abstract_eval(ctx, x: ShapedArray, *, new_dtype, weak_type) -> ShapedArray:
    _check_target(x, new_dtype)
    return ShapedArray(x.shape, new_dtype, weak_type)


def _jvp(ctx, primals, tangents, *, new_dtype, weak_type):
    """Between float and complex types the conversion is linear (complex -> real keeps
    the tangent's real part); to or from ints there is no tangent."""
    (x,), (t,), new_dtype = primals, tangents, np.dtype(new_dtype)
    ans = convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)
    if type(t) is Zero or new_dtype not in _INEXACT or get_aval(x).dtype not in _INEXACT:
        return ans, Zero.from_value(ans)
    return ans, convert_element_type(t, new_dtype)


def _transpose(ctx, ct, x, *, new_dtype, weak_type):
    """The conversion back, as JAX's: real -> complex transposes to the real part of the
    cotangent, complex -> real to a complex cotangent with no imaginary part."""
    if x.aval.dtype not in _INEXACT or np.dtype(new_dtype) not in _INEXACT:
        raise ShapeError(f"primitive 'convert_element_type' is linear only between inexact "
                         f"dtypes, not from {x.aval.dtype.name} to {new_dtype.name}")
    return [convert_element_type(ct, x.aval.dtype)]


def _vjp(ctx, primals, wanted, *, new_dtype, weak_type):
    """Linear between inexact dtypes (backward: the transpose); else no cotangent."""
    params = {"new_dtype": np.dtype(new_dtype), "weak_type": weak_type}
    ans = convert_element_type_p.bind(primals[0], **params)
    if params["new_dtype"] not in _INEXACT or get_aval(primals[0]).dtype not in _INEXACT:
        return ans, None
    return ans, transpose_backward(convert_element_type_p, primals, wanted, params)


def _batching(ctx, args, dims, **params):
    return convert_element_type_p.bind(args[0], **params), dims[0]


def convert_element_type(operand: Any, new_dtype: Any, weak_type: bool = False) -> Any:
    """lax.convert_element_type: `operand` as `new_dtype` (canonicalised); a no-op when
    the type already matches.

    Concrete values (Python scalars, NumPy values, Arrays) are converted on the
    spot when no transformation is running (eager code skips a bind), and, as
    JAX's constant folding does, when they are rank-0 (a jaxpr shows them as a
    literal of the new type). Under a transformation a larger constant goes
    through the primitive like a tracer: a jaxpr then hoists it with its own
    dtype and weak type and records the conversion, as JAX's does.
    """
    new_dtype = dtypes.canonicalize_dtype(new_dtype)
    if (type(operand) in _CONSTANTS or isinstance(operand, (np.ndarray, np.generic))) and (
            is_eager() or not np.shape(operand)):
        value = np.asarray(operand)
        if type(operand) is Array and value.dtype == new_dtype and \
                operand.weak_type == weak_type:
            return operand
        if new_dtype not in _SUPPORTED and value.dtype != new_dtype:
            # refused eagerly as under jit (x.astype(complex64) ran eagerly only)
            _check_target(get_aval(operand), new_dtype)
        return Array(convert_value(value, new_dtype), weak_type)
    aval = get_aval(operand)
    if aval.dtype == new_dtype and aval.weak_type == weak_type:
        return operand
    return convert_element_type_p.bind(operand, new_dtype=new_dtype, weak_type=bool(weak_type))


RULES = [
    RuleSet(convert_element_type_p,
            impl=lambda ctx, x, *, new_dtype, weak_type: convert_value(x, new_dtype),
            abstract_eval=_abstract_eval, jvp=_jvp, vjp=_vjp, transpose=_transpose,
            batching=_batching,
            lowering={"default": L.convert_element_type}),
]
