"""The array API's contractions and einsum_path, as JAX has them: vecdot, matvec,
vecmat (over broadcast batch axes, conjugating the first operand where it is
complex) and einsum_path. Compositions of plugax.numpy functions.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import plugax.numpy as pnp
from plugax.extend import get_aval

__all__ = ["vecdot", "matvec", "vecmat", "einsum_path", "NUMPY"]


def _shape(x: Any) -> tuple:
    return get_aval(x).shape


def _dtype(x: Any) -> np.dtype:
    return get_aval(x).dtype


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1, precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    """sum(conj(x1) * x2) along axis, broadcasting the other axes."""
    x1, x2 = pnp.asarray(x1), pnp.asarray(x2)
    if _shape(x1)[axis] != _shape(x2)[axis]:
        raise ValueError(f"vecdot: axes must match; got shapes {_shape(x1)} and {_shape(x2)} "
                         f"with axis={axis}")
    x1, x2 = pnp.moveaxis(x1, axis, -1), pnp.moveaxis(x2, axis, -1)
    if _dtype(x1).kind == "c":
        x1 = pnp.conj(x1)
    return pnp.sum(x1 * x2, axis=-1)


def matvec(x1: Any, x2: Any, /) -> Any:
    """Matrix-vector products over broadcast batch axes: (..., n, m) @ (..., m)."""
    return pnp.matmul(x1, pnp.asarray(x2)[..., None])[..., 0]


def vecmat(x1: Any, x2: Any, /) -> Any:
    """Vector-matrix products: conj(x1) (..., m) @ (..., m, n)."""
    x1 = pnp.asarray(x1)
    if _dtype(x1).kind == "c":
        x1 = pnp.conj(x1)
    return pnp.matmul(x1[..., None, :], x2)[..., 0, :]


def einsum_path(subscripts: str, /, *operands: Any, optimize: Any = "auto") -> tuple:
    """A contraction order for einsum and its report: NumPy's einsum_path evaluated on
    the operands' shapes (JAX's comes from opt_einsum: the same (path, report) pair,
    the path a list of operand-index tuples; the report is NumPy's text)."""
    if isinstance(optimize, bool):
        optimize = "optimal" if optimize else False
    if optimize == "auto":
        optimize = "greedy"
    shapes = [np.empty(_shape(pnp.asarray(o)), np.float32) for o in operands]
    path, report = np.einsum_path(subscripts, *shapes, optimize=optimize or False)
    return path[1:], report     # NumPy's path starts with the tag 'einsum_path'; JAX's not


NUMPY: dict[str, Any] = {name: globals()[name] for name in __all__ if name != "NUMPY"}
