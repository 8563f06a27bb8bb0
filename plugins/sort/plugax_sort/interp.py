"""`interp`: piecewise-linear interpolation, JAX's semantics (`left`/`right` values or
"extrapolate", `period`).

Built on `searchsorted`: each query finds the segment [xp[i-1], xp[i]] it falls in,
then a linear blend. Where a segment has zero width the left value is taken, so
the gradient stays finite (as in JAX).
"""
from __future__ import annotations

from typing import Any

import numpy as np

import plugax.lax as lax
import plugax.numpy as pnp
from plugax.extend import get_aval, result_type

from .numpy_api import searchsorted

__all__ = ["interp", "NUMPY"]


def _extrapolates(side: Any, name: str) -> bool:
    if isinstance(side, str):
        if side != "extrapolate":
            raise ValueError(f"the only valid string value of `{name}` is 'extrapolate', "
                             f"but got: {side!r}")
        return True
    return False


def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None,
           period: Any = None) -> Any:
    """fp interpolated at x, for increasing sample points xp."""
    xp_shape, fp_shape = get_aval(pnp.asarray(xp)).shape, get_aval(pnp.asarray(fp)).shape
    if xp_shape != fp_shape or len(xp_shape) != 1:
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    x, xp, fp = pnp.asarray(x) / 1, pnp.asarray(xp) / 1, pnp.asarray(fp) / 1   # floats
    common, _ = result_type(x, xp)      # x and xp are compared, so they share a dtype
    x, xp = x.astype(common), xp.astype(common)
    extrapolate_left, extrapolate_right = _extrapolates(left, "left"), _extrapolates(right, "right")
    if period is not None:
        if np.ndim(period) != 0:
            raise ValueError(f"period must be a scalar; got {period}")
        period = pnp.abs(period)
        x, xp = x % period, xp % period
        xp, fp = lax.sort_key_val(xp, fp)
        xp = pnp.concatenate([xp[-1:] - period, xp, xp[:1] + period])
        fp = pnp.concatenate([fp[-1:], fp, fp[:1]])
    n = get_aval(xp).shape[0]
    i = pnp.clip(searchsorted(xp, x, side="right"), 1, n - 1)
    lo_x, hi_x, lo_f, hi_f = xp[i - 1], xp[i], fp[i - 1], fp[i]
    dx = hi_x - lo_x
    flat = pnp.abs(dx) <= np.spacing(np.finfo(get_aval(xp).dtype).eps)
    f = pnp.where(flat, lo_f, lo_f + (x - lo_x) / pnp.where(flat, 1, dx) * (hi_f - lo_f))
    if period is None and not extrapolate_left:
        f = pnp.where(x < xp[0], fp[0] if left is None else left, f)
    if period is None and not extrapolate_right:
        f = pnp.where(x > xp[-1], fp[-1] if right is None else right, f)
    return f


NUMPY = {"interp": interp}
