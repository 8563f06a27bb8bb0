"""The elementwise members of `scipy.special` that need no special-function primitive:
expit, logit, xlogy, xlog1py, entr, rel_entr, kl_div.

They live with the elementwise family because each is a line of it (log, log1p,
logistic and selects). Where JAX gives one a custom derivative, so does this
file, for the same reason: `xlogy(0, 0)` is 0 and its gradient must stay finite,
which differentiating the select would not give.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import plugax

from .numpy_api import NUMPY as _N
from .numpy_extra import _inexact

__all__ = ["expit", "logit", "xlogy", "xlog1py", "entr", "rel_entr", "kl_div", "SCIPY_SPECIAL"]


def expit(x: Any) -> Any:
    """The logistic sigmoid 1 / (1 + exp(-x))."""
    return plugax.lax.logistic(_inexact(x))


@plugax.custom_jvp
def logit(x: Any) -> Any:
    """log(x / (1 - x)), the inverse of expit."""
    x = _inexact(x)
    return _N["log"](x / (1 - x))


logit.defjvps(lambda g, ans, x: g / (x * (1 - x)))


def _x_times(name: str, log: Any, dlog: Any) -> Any:
    """`x * log(y)` with 0 where x == 0 (NaN in y still propagates, as SciPy's), and
    JAX's derivative t_x * log(y) + t_y * x * dlog(y), finite at x == 0."""
    @plugax.custom_jvp
    def fn(x: Any, y: Any) -> Any:
        x, y = _inexact(x), _inexact(y)
        keep = _N["logical_or"](_N["not_equal"](x, 0), _N["not_equal"](y, y))
        return _N["where"](keep, x * log(y), 0.0 * x)

    @fn.defjvp
    def _jvp(primals: tuple, tangents: tuple) -> tuple:
        (x, y), (tx, ty) = primals, tangents
        return fn(x, y), tx * log(y) + ty * x * dlog(y)

    fn.__name__ = fn.__qualname__ = name
    return fn


xlogy = _x_times("xlogy", _N["log"], lambda y: 1 / y)
xlog1py = _x_times("xlog1py", _N["log1p"], lambda y: 1 / (1 + y))


@plugax.custom_jvp
def _xlogx(x: Any) -> Any:
    return xlogy(x, x)


_xlogx.defjvps(lambda g, ans, x: g * (1 + _N["log"](x)))


def entr(x: Any) -> Any:
    """-x log x for x >= 0 (0 at 0), -inf for x < 0."""
    x = _inexact(x)
    return _N["where"](_N["less"](x, 0), -np.inf, -_xlogx(x))


def rel_entr(p: Any, q: Any) -> Any:
    """p log(p / q): 0 where p == 0 and q >= 0, inf where it is undefined."""
    p, q = _inexact(p), _inexact(q)
    both = _N["logical_and"](_N["greater"](p, 0), _N["greater"](q, 0))
    one_zero = _N["logical_and"](_N["equal"](p, 0), _N["greater_equal"](q, 0))
    safe_p, safe_q = _N["where"](both, p, 1.0), _N["where"](both, q, 1.0)
    value = _xlogx(safe_p) - xlogy(safe_p, safe_q)
    return _N["where"](both, value, _N["where"](one_zero, 0.0, np.inf))


def kl_div(p: Any, q: Any) -> Any:
    """p log(p / q) - p + q (SciPy's kl_div, the elementwise term of the KL divergence)."""
    return rel_entr(p, q) - _inexact(p) + _inexact(q)


SCIPY_SPECIAL = {name: globals()[name] for name in __all__ if name != "SCIPY_SPECIAL"}
