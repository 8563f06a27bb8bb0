"""More of NumPy's elementwise functions, written with this family's own front ends.

None needs a primitive of its own: each is a short formula in plugax.numpy
functions this family already gives (so the dtype promotion, weak types and
every transformation come with them). `logaddexp` has JAX's custom derivative,
which stays finite where an input is -inf.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import plugax
from plugax.extend import get_aval

from .numpy_api import NUMPY as _N

__all__ = ["logaddexp", "logaddexp2", "hypot", "deg2rad", "rad2deg", "degrees", "radians",
           "copysign", "fmax", "fmin", "fmod", "nan_to_num", "isneginf", "isposinf", "signbit",
           "reciprocal", "trunc", "rint", "fix", "polyval", "NUMPY_EXTRA"]


def _inexact(x: Any) -> Any:
    """x as a float array (integers and bools become JAX's float for them)."""
    return _N["true_divide"](x, 1)


def _isnan(x: Any) -> Any:
    return _N["not_equal"](x, x)


def _isinf(x: Any) -> Any:
    return _N["equal"](_N["abs"](x), np.inf)


@plugax.custom_jvp
def logaddexp(x1: Any, x2: Any) -> Any:
    """log(exp(x1) + exp(x2)), without overflow."""
    x1, x2 = _inexact(x1), _inexact(x2)
    amax = _N["maximum"](x1, x2)
    if get_aval(amax).dtype.kind == "c":   # JAX's complex branch: the phase wrapped to [-pi, pi]
        from .numpy_complex import imag, real
        delta = _N["subtract"](_N["add"](x1, x2), _N["multiply"](amax, 2))
        out = amax + _N["log1p"](_N["exp"](delta))
        phase = _N["remainder"](_N["add"](imag(out), np.pi), 2 * np.pi)
        return plugax.lax.complex(real(out), _N["subtract"](phase, np.pi))
    delta = _N["subtract"](x1, x2)
    return _N["where"](_isnan(delta), _N["add"](x1, x2),
                       amax + _N["log1p"](_N["exp"](-_N["abs"](delta))))


@logaddexp.defjvp
def _logaddexp_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x1, x2), (t1, t2) = primals, tangents
    out = logaddexp(x1, x2)
    w1 = _N["where"](_N["equal"](x1, -np.inf), 0.0, _N["exp"](_N["subtract"](x1, out)))
    w2 = _N["where"](_N["equal"](x2, -np.inf), 0.0, _N["exp"](_N["subtract"](x2, out)))
    return out, t1 * w1 + t2 * w2


def logaddexp2(x1: Any, x2: Any) -> Any:
    """log2(2**x1 + 2**x2)."""
    ln2 = np.log(2)
    return logaddexp(_inexact(x1) * ln2, _inexact(x2) * ln2) / ln2


def hypot(x1: Any, x2: Any) -> Any:
    """sqrt(x1**2 + x2**2) without overflow: the larger magnitude is factored out."""
    x1, x2 = _inexact(x1), _inexact(x2)
    if get_aval(x1).dtype.kind == "c" or get_aval(x2).dtype.kind == "c":
        raise ValueError("jnp.hypot is not well defined for complex-valued inputs. Please "
                         "convert to real values first, such as by using jnp.real or "
                         "jnp.imag to take the real or imaginary components respectively.")
    a, b = _N["abs"](x1), _N["abs"](x2)
    big, small = _N["maximum"](a, b), _N["minimum"](a, b)
    safe_big = _N["where"](_N["equal"](big, 0), 1.0, big)
    ratio = _N["where"](_N["equal"](big, 0), 0.0, small / safe_big)
    return _N["where"](_isinf(big), big, big * _N["sqrt"](1 + ratio * ratio))


def deg2rad(x: Any) -> Any:
    return _inexact(x) * (np.pi / 180)


def rad2deg(x: Any) -> Any:
    return _inexact(x) * (180 / np.pi)


degrees, radians = rad2deg, deg2rad


def copysign(x1: Any, x2: Any) -> Any:
    """|x1| with the sign bit of x2 (so -0.0 counts as negative)."""
    x1, x2 = _inexact(x1), _inexact(x2)
    return _N["where"](signbit(x2), -_N["abs"](x1), _N["abs"](x1))


def signbit(x: Any) -> Any:
    """Whether the sign bit is set (True for -0.0; NaNs count as positive here)."""
    if get_aval(x).dtype.kind in "iub":
        return _N["less"](x, 0)
    return _N["less"](_N["where"](_N["equal"](x, 0), 1.0 / x, x), 0)


def fmax(x1: Any, x2: Any) -> Any:
    """Elementwise maximum that ignores NaN (a NaN only when both are)."""
    both = _N["where"](_isnan(x2), x1, _N["maximum"](x1, x2))
    return _N["where"](_isnan(x1), x2, both)


def fmin(x1: Any, x2: Any) -> Any:
    both = _N["where"](_isnan(x2), x1, _N["minimum"](x1, x2))
    return _N["where"](_isnan(x1), x2, both)


def fmod(x1: Any, x2: Any) -> Any:
    """The remainder with the sign of the dividend (C's fmod), not NumPy's `%`."""
    r = _N["remainder"](x1, x2)
    fix_sign = _N["logical_and"](_N["not_equal"](r, 0), _N["less"](_N["multiply"](x1, x2), 0))
    return _N["where"](fix_sign, _N["subtract"](r, x2), r)


def nan_to_num(x: Any, copy: bool = True, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Any:
    dtype = get_aval(x).dtype
    if dtype.kind in "iub":
        return x
    if dtype.kind == "c":   # each part on its own, as JAX's
        part = lambda v: nan_to_num(v, nan=nan, posinf=posinf, neginf=neginf)  # noqa: E731
        from .numpy_complex import imag, real
        return plugax.lax.complex(part(real(x)), part(imag(x)))
    info = np.finfo(dtype)
    big = info.max if posinf is None else posinf
    small = info.min if neginf is None else neginf
    x = _N["where"](_isnan(x), nan, x)
    return _N["where"](isposinf(x), big, _N["where"](isneginf(x), small, x))


def isneginf(x: Any) -> Any:
    return _N["logical_and"](_isinf(x), _N["less"](x, 0))


def isposinf(x: Any) -> Any:
    return _N["logical_and"](_isinf(x), _N["greater"](x, 0))


def reciprocal(x: Any) -> Any:
    return _N["floor_divide"](1, x) if get_aval(x).dtype.kind in "iub" else \
        _N["true_divide"](1, x)   # floats (bfloat16 too) and complex: 1 / x


def trunc(x: Any) -> Any:
    """Rounded towards zero."""
    return _N["where"](_N["less"](x, 0), _N["ceil"](x), _N["floor"](x))


fix = trunc


def rint(x: Any) -> Any:
    """Rounded to the nearest integer, halves to even (NumPy's rint)."""
    return _N["round"](x)


def polyval(p: Any, x: Any, *, unroll: int = 16) -> Any:
    """The polynomial with coefficients `p` (highest power first) at `x`, by Horner's
    rule: one multiply-add per coefficient."""
    coeffs = p if isinstance(p, (list, tuple)) else [p[i] for i in range(get_aval(p).shape[0])]
    out = _N["multiply"](x, 0)          # x's shape and (promoted) dtype, all zeros
    for c in coeffs:
        out = _N["add"](_N["multiply"](out, x), c)
    return out


NUMPY_EXTRA = {name: globals()[name] for name in __all__ if name != "NUMPY_EXTRA"}
