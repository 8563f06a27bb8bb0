"""What the reduction primitives share: axis checking, error messages, dtype tests.

Every primitive here drops (or scans along) some axes of one operand, so they
validate `axes` the same way and renumber them the same way under vmap.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from plugax.extend import Primitive, ShapedArray, ShapeError

__all__ = ["shape_error", "check_axes", "canonical_axes", "batched_axes", "is_number",
           "is_bool_or_int", "is_real", "NUMBER", "REAL", "REAL_OR_COMPLEX", "REAL_NUMBER", "ORDERED_NUMBER", "LOGICAL", "dtype_check",
           "lowest", "highest"]


def shape_error(prim: Primitive, aval: ShapedArray, problem: str, fix: str,
                **params: Any) -> ShapeError:
    """A ShapeError naming the primitive, the operand type, the params and the fix."""
    shown = " ".join(f"{k}={params[k]}" for k in sorted(params))
    return ShapeError(f"primitive '{prim}' {problem}; got operand {aval.str_short()}"
                      + (f" with {shown}" if shown else "") + f". Fix: {fix}")


def check_axes(prim: Primitive, aval: ShapedArray, axes: Sequence[int], **params: Any) -> None:
    """`axes` must be distinct non-negative ints below the operand rank."""
    if (any(not isinstance(a, (int, np.integer)) or not 0 <= a < aval.ndim for a in axes)
            or len(set(axes)) != len(axes)):
        raise shape_error(prim, aval, f"needs distinct axes in [0, {aval.ndim})",
                          "pass axes within the operand's rank (the lax front ends also "
                          "accept negative axes)", axes=axes, **params)


def canonical_axes(axes: Any, ndim: int) -> tuple[int, ...]:
    """NumPy's axis argument (None, int or sequence, negatives allowed) as a sorted tuple."""
    if axes is None:
        return tuple(range(ndim))
    if not isinstance(axes, (int, np.integer)) and not hasattr(axes, "__iter__"):
        raise TypeError(f"axis must be None, an int or a tuple of ints, got {axes!r}")
    axes = (axes,) if isinstance(axes, (int, np.integer)) else tuple(axes)
    out = []
    for a in axes:
        if not isinstance(a, (int, np.integer)) or isinstance(a, bool):
            # int(1.5) would silently reduce over axis 1
            raise TypeError(f"axis must be None, an int or a tuple of ints, got {axes!r}")
        a = int(a)
        if not -ndim <= a < ndim:
            raise ValueError(f"axis {a} is out of bounds for an array of rank {ndim}")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"repeated axis in {axes}")
    return tuple(sorted(out))


def batched_axes(axes: Sequence[int], bdim: int) -> tuple[int, ...]:
    """Operand axes renumbered for an operand that carries a batch axis at `bdim`."""
    return tuple(a + (a >= bdim) for a in axes)


def is_number(dtype: np.dtype) -> bool:
    return dtype.kind in "iufc" or dtype.name == "bfloat16"


def is_bool_or_int(dtype: np.dtype) -> bool:
    return dtype.kind in "biu"


def is_real(dtype: np.dtype) -> bool:
    return dtype.kind in "biuf" or dtype.name == "bfloat16"


# What a primitive accepts: a dtype test and how error messages describe it.
NUMBER = (is_number, "a number dtype")
REAL = (is_real, "a real dtype")
# reduce_max/min: also complex, ordered lexicographically (NumPy's and JAX's order)
REAL_OR_COMPLEX = (lambda d: is_real(d) or d.kind == "c", "a real or complex dtype")
LOGICAL = (is_bool_or_int, "bool or an integer dtype")
# cummax/cummin: JAX rejects bool there (reduce_max takes it)
REAL_NUMBER = (lambda d: is_real(d) and d.kind != "b", "an integer or floating-point dtype")
# cummax/cummin: also complex, ordered lexicographically (as JAX's lax.cummax)
ORDERED_NUMBER = (lambda d: (is_real(d) and d.kind != "b") or d.kind == "c",
                  "an integer, floating-point or complex dtype")


def dtype_check(prim: Primitive, accepts: tuple[Callable[[np.dtype], bool], str],
                aval: ShapedArray, **params: Any) -> None:
    test, kinds = accepts
    if not test(aval.dtype):
        raise shape_error(prim, aval, f"does not accept dtype {aval.dtype.name} (it needs "
                          f"{kinds})", "convert with plugax.lax.convert_element_type, or "
                          "use plugax.numpy, which converts", **params)


def lowest(dtype: np.dtype) -> Any:
    """The identity of max: -inf, the smallest integer, or False."""
    if dtype.kind == "b":
        return False
    return np.iinfo(dtype).min if dtype.kind in "iu" else -np.inf


def highest(dtype: np.dtype) -> Any:
    """The identity of min: +inf, the largest integer, or True."""
    if dtype.kind == "b":
        return True
    return np.iinfo(dtype).max if dtype.kind in "iu" else np.inf
