"""plugax.numpy's complex names: real, imag, conj, angle, the is*complex/real tests, the
complex dtypes, and the Array attributes `.real`, `.imag`, `.conj()`.

Why real inputs get their own answers here rather than at the primitives: lax's
real/imag refuse real operands (as JAX's do), while NumPy's functions accept
anything: `real(x)` of a real x is x itself, `imag(x)` is zeros of x's type,
`conj(x)` is x (not a complex copy, unlike lax.conj). Each follows JAX's jnp.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import plugax.lax as lax
from plugax.extend import get_aval, promote_dtypes, scalar_like

from . import complex_ops as C, logic as L, transcendental as T
from .common import zeros_like

__all__ = ["NUMPY_COMPLEX", "METHODS_COMPLEX"]


def _array(name: str, x: Any) -> Any:
    """x as an array (or tracer) of its own dtype, as the functions below take it."""
    x, = promote_dtypes(name, x)
    return x


def _is_complex(x: Any) -> bool:
    return get_aval(x).dtype.kind == "c"


def real(val: Any, /) -> Any:
    """The real part; a real array is returned as it is."""
    x = _array("real", val)
    return C.real_p.bind(x) if _is_complex(x) else x


def imag(val: Any, /) -> Any:
    """The imaginary part; zeros of a real array's dtype for a real array."""
    x = _array("imag", val)
    return C.imag_p.bind(x) if _is_complex(x) else zeros_like(x)


def conjugate(x: Any, /) -> Any:
    """The complex conjugate; a real array is returned as it is (lax.conj would make it
    complex)."""
    x = _array("conjugate", x)
    return C.conj_p.bind(x, input_dtype=get_aval(x).dtype) if _is_complex(x) else x


def conj(x: Any, /) -> Any:
    """The complex conjugate (numpy.conj is numpy.conjugate)."""
    return conjugate(x)


def angle(z: Any, deg: bool = False) -> Any:
    """The argument atan2(imag, real) of each element (in degrees if `deg`); integers
    give the default float, a real array the angle 0 or pi."""
    x = _array("angle", z)
    if not _is_complex(x):
        x, = promote_dtypes("angle", x, category="inexact")
    re, im = real(x), imag(x)
    out = T.atan2_p.bind(im, re)
    if deg:
        out = lax.mul(out, scalar_like(out, 180 / np.pi))
    return out


def iscomplex(x: Any) -> Any:
    """Elementwise: the imaginary part is nonzero (always False for a real array)."""
    i = imag(x)
    return L.ne_p.bind(i, scalar_like(i, 0))


def isreal(x: Any) -> Any:
    """Elementwise: the imaginary part is zero (always True for a real array)."""
    i = imag(x)
    return L.eq_p.bind(i, scalar_like(i, 0))


def iscomplexobj(x: Any) -> bool:
    """Whether x has a complex dtype (its values do not matter)."""
    if x is None:
        return False
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        dtype = np.asarray(x).dtype
    return np.issubdtype(dtype, np.complexfloating)


def isrealobj(x: Any) -> bool:
    """Whether x does not have a complex dtype."""
    return not iscomplexobj(x)


NUMPY_COMPLEX: dict[str, Any] = {
    "real": real, "imag": imag, "conj": conj, "conjugate": conjugate, "angle": angle,
    "iscomplex": iscomplex, "isreal": isreal, "iscomplexobj": iscomplexobj,
    "isrealobj": isrealobj,
    # the dtypes (NumPy's scalar types, as plugax.numpy.float32 is)
    "complex64": np.complex64, "complex128": np.complex128, "complex_": np.complex128,
    "csingle": np.complex64, "cdouble": np.complex128, "complexfloating": np.complexfloating,
}

METHODS_COMPLEX: dict[str, Any] = {
    "real": property(real), "imag": property(imag),
    "conj": conj, "conjugate": conjugate,
}
