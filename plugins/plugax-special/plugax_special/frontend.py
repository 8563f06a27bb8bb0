"""User-facing functions: `plugax.lax.erf` ... and `plugax.scipy.special`.

The lax functions bind the primitive as is (lax does not promote). The
scipy.special ones behave like SciPy's: integer inputs become the default
float dtype first, and `logsumexp` is not a primitive at all — it is written
with existing primitives (max, exp, sum, log), so jvp, grad, vmap and
make_jaxpr work on it with no rules of its own.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

import plugax.lax as lax
import plugax.numpy as pnp
from plugax.extend import default_float_dtype, get_aval

from .primitives import digamma_p, erf_inv_p, erf_p, erfc_p, lgamma_p, polygamma_p

LAX = {"erf": erf_p.bind, "erfc": erfc_p.bind, "erf_inv": erf_inv_p.bind,
       "lgamma": lgamma_p.bind, "digamma": digamma_p.bind, "polygamma": polygamma_p.bind}


def _float(x: Any) -> Any:
    """x as an array of a floating dtype (integers and bools become the default float)."""
    x = pnp.asarray(x)
    dtype = get_aval(x).dtype
    if dtype.kind in "fc" or dtype.name == "bfloat16":
        return x
    return lax.convert_element_type(x, default_float_dtype())


def erf(x: Any) -> Any:
    """The error function, 2/sqrt(pi) * integral of exp(-t^2) from 0 to x."""
    return erf_p.bind(_float(x))


def erfc(x: Any) -> Any:
    """1 - erf(x), accurate for large x."""
    return erfc_p.bind(_float(x))


def erfinv(x: Any) -> Any:
    """The inverse of erf on (-1, 1)."""
    return erf_inv_p.bind(_float(x))


def gammaln(x: Any) -> Any:
    """log |Gamma(x)|."""
    return lgamma_p.bind(_float(x))


def digamma(x: Any) -> Any:
    """The logarithmic derivative of Gamma."""
    return digamma_p.bind(_float(x))


def polygamma(n: Any, x: Any) -> Any:
    """The n-th derivative of digamma (n a whole number; not differentiable in n)."""
    x = _float(x)
    n = lax.convert_element_type(pnp.asarray(n), get_aval(x).dtype)
    n, x = pnp.broadcast_arrays(n, x)
    return polygamma_p.bind(n, x)


def logsumexp(a: Any, axis: int | Sequence[int] | None = None, b: Any = None,
              keepdims: bool = False) -> Any:
    """log(sum(b * exp(a), axis)) without overflow: the max is subtracted first.

    The shift m cancels exactly in the derivative, so the gradient is
    softmax(a) * b / sum(...) whichever element the max picks.
    """
    a = _float(a)
    m = pnp.max(a, axis=axis, keepdims=True)
    m = pnp.where(pnp.isfinite(m), m, pnp.zeros_like(m))   # all -inf: log(0) = -inf, not nan
    e = pnp.exp(a - m)
    if b is not None:
        e = e * b
    out = pnp.log(pnp.sum(e, axis=axis, keepdims=True)) + m
    return out if keepdims else pnp.squeeze(out, axis=_axes(axis, np.ndim(a)))


def _axes(axis: int | Sequence[int] | None, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    return tuple(int(a) % ndim for a in ((axis,) if isinstance(axis, int) else axis))


SCIPY_SPECIAL = {"erf": erf, "erfc": erfc, "erfinv": erfinv, "gammaln": gammaln,
                 "digamma": digamma, "polygamma": polygamma, "logsumexp": logsumexp}
