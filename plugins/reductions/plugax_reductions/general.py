"""reduce_xor and cumlogsumexp (lax.reduce, which folds with scan, is the control-flow
family's: plugins/control_flow/.../extras.py).

- `reduce_xor` is one more fold like reduce_and/or (bool or integers, zero derivative),
  lowered to one `stablehlo.reduce` with `xor`.
- `cumlogsumexp` is a cumulative reduction like cumsum (NumPy's
  `logaddexp.accumulate`); as for cumprod, its jvp differentiates JAX's associative
  scan of `logaddexp`, so -inf entries get JAX's derivative.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from plugax.extend import Primitive, bind, defjvp, get_aval, user_reduction_axes

from ._common import LOGICAL
from .cumulative import associative_scan, defcumulative
from .lowering import reduce_values
from .reduce import defreduction

__all__ = ["reduce_xor_p", "cumlogsumexp_p", "RULES", "LAX"]

reduce_xor_p = Primitive("reduce_xor")
cumlogsumexp_p = Primitive("cumlogsumexp")


def _xor_lowering(ctx, x, *, axes):
    dtype = ctx.avals_in[0].dtype
    (out,) = reduce_values(ctx, [x], [ctx.constant(np.zeros((), dtype), dtype)], [dtype], axes,
                           lambda a, b: [ctx.hlo.xor(a, b)])
    return out


def _is_float(dtype: np.dtype) -> bool:
    return dtype.kind == "f" or dtype.name == "bfloat16"


FLOAT = (_is_float, "a floating-point dtype")


def _logaddexp(a: Any, b: Any) -> Any:
    import plugax.numpy as jnp
    return jnp.logaddexp(a, b)


def _cumlogsumexp_lowering(ctx, x, *, axis, reverse):
    """The associative scan of logaddexp, lowered as a composition."""
    return ctx.lower_fun(lambda v: associative_scan(_logaddexp, v, axis, reverse), x)[0]


def _cumlogsumexp_jvp(ctx, primals, tangents, *, axis, reverse):
    """JAX's rule: the jvp of the associative scan of logaddexp (as cumprod's is of mul)."""
    import plugax
    from plugax.extend import Zero
    (x,), (g,) = primals, tangents
    ans = cumlogsumexp_p.bind(x, axis=axis, reverse=reverse)
    if type(g) is Zero:
        return ans, Zero.from_value(ans)
    scan = lambda v: associative_scan(_logaddexp, v, axis, reverse)  # noqa: E731
    return ans, plugax.jvp(scan, (x,), (g,))[1]


class _LogAddExp:
    """np.logaddexp with the `accumulate` defcumulative calls (bfloat16/float16 in f32:
    NumPy has no loop for bfloat16)."""

    @staticmethod
    def accumulate(x: np.ndarray, axis: int, dtype: Any) -> np.ndarray:
        wide = np.float32 if x.dtype.itemsize < 4 else x.dtype
        return np.logaddexp.accumulate(x.astype(wide), axis=axis).astype(dtype)


RULES = [
    defreduction(reduce_xor_p, lambda x, *, axes: np.bitwise_xor.reduce(
                     x, axis=axes, initial=np.zeros((), x.dtype)), accepts=LOGICAL,
                 jvp=defjvp(reduce_xor_p), lowering=_xor_lowering),
    defcumulative(cumlogsumexp_p, _LogAddExp, accepts=FLOAT,
                  jvp=_cumlogsumexp_jvp,
                  lowering=_cumlogsumexp_lowering),
]


# --- the lax functions ---------------------------------------------------------------------
def reduce_xor(operand: Any, axes: Sequence[int]) -> Any:
    """Bitwise (logical, for bool) xor of `operand` over `axes`."""
    return bind(reduce_xor_p, operand,
                axes=user_reduction_axes("lax.reduce_xor", get_aval(operand), axes))


def cumlogsumexp(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """log(cumsum(exp(operand))) along `axis`, computed stably."""
    aval = get_aval(operand)
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"lax.cumlogsumexp: axis must be an int, got {axis!r}")
    if not -aval.ndim <= axis < aval.ndim:
        raise ValueError(f"lax.cumlogsumexp: axis {axis} is out of bounds for an operand "
                         f"{aval.str_short()} (rank {aval.ndim})")
    return bind(cumlogsumexp_p, operand, axis=int(axis) % aval.ndim, reverse=bool(reverse))


LAX = {"reduce_xor": reduce_xor, "cumlogsumexp": cumlogsumexp}
