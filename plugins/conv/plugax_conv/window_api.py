"""lax.reduce_window and the window reductions' front ends.

`lax.reduce_window(x, init, computation, ...)` recognises, as JAX does, the
monoids whose identity is the init value (lax.add with 0, lax.max with the
lowest value, lax.min with the highest) and binds the fast primitive, which
has every rule (jvp, transpose, vmap, lowering). Any other computation goes to
the generic `reduce_window` primitive (generic.py), as do pytrees of operands.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from plugax.extend import Tracer, bind, get_aval

from .dims import dilate_dim, padtype_to_pads
from .generic import reduce_window_generic, reduce_window_p
from .windows import (identity, reduce_window_max_p, reduce_window_min_p, reduce_window_sum_p,
                      select_and_gather_add_p, select_and_scatter_add_p)

__all__ = ["reduce_window", "LAX"]


def _resolve(aval: Any, window_dimensions, window_strides, padding, base_dilation,
             window_dilation) -> dict:
    nd = len(aval.shape)
    base_dilation = (1,) * nd if base_dilation is None else tuple(base_dilation)
    window_dilation = (1,) * nd if window_dilation is None else tuple(window_dilation)
    if isinstance(padding, str):
        span = [dilate_dim(w, d) for w, d in zip(window_dimensions, window_dilation)]
        base = [dilate_dim(n, d) for n, d in zip(aval.shape, base_dilation)]
        padding = padtype_to_pads(base, span, window_strides, padding)
    return dict(window_dimensions=tuple(int(w) for w in window_dimensions),
                window_strides=tuple(int(s) for s in window_strides),
                padding=tuple((int(lo), int(hi)) for lo, hi in padding),
                base_dilation=tuple(int(d) for d in base_dilation),
                window_dilation=tuple(int(d) for d in window_dilation))


def _monoid(computation: Callable, init: Any, dtype: np.dtype) -> Any:
    """The fast primitive for `computation` if `init` is its identity, else None."""
    import plugax.lax as lax
    kind = {lax.add: "sum", lax.max: "max", lax.min: "min"}.get(computation)
    if kind is None or isinstance(init, Tracer):
        return None
    try:
        value = np.asarray(init)
    except Exception:   # noqa: BLE001 - an Array-like that is not concrete
        return None
    if value.shape != () or value != identity(kind, dtype):
        return None
    return {"sum": reduce_window_sum_p, "max": reduce_window_max_p,
            "min": reduce_window_min_p}[kind]


def reduce_window(operand: Any, init_value: Any, computation: Callable,
                  window_dimensions: Sequence[int], window_strides: Sequence[int],
                  padding: str | Sequence[tuple[int, int]],
                  base_dilation: Sequence[int] | None = None,
                  window_dilation: Sequence[int] | None = None) -> Any:
    """lax.reduce_window: `computation` folded over every window of `operand` (an array,
    or a pytree of arrays of one shape with a matching pytree of init values)."""
    import plugax.numpy as pnp
    import plugax.tree_util as tu
    leaves, treedef = tu.tree_flatten(operand)
    if not tu.treedef_is_leaf(treedef):
        leaves = [x if isinstance(x, Tracer) else pnp.asarray(x) for x in leaves]
        params = _resolve(get_aval(leaves[0]), window_dimensions, window_strides, padding,
                          base_dilation, window_dilation)
        return reduce_window_generic(tu.tree_unflatten(treedef, leaves), init_value,
                                     computation, params)
    operand = operand if isinstance(operand, Tracer) else pnp.asarray(operand)
    aval = get_aval(operand)
    params = _resolve(aval, window_dimensions, window_strides, padding, base_dilation,
                      window_dilation)
    prim = _monoid(computation, init_value, aval.dtype)
    if prim is not None:
        return bind(prim, operand, **params)
    return reduce_window_generic(operand, init_value, computation, params)


LAX = {"reduce_window": reduce_window, "reduce_window_p": reduce_window_p,
       "reduce_window_sum_p": reduce_window_sum_p,
       "reduce_window_max_p": reduce_window_max_p, "reduce_window_min_p": reduce_window_min_p,
       "select_and_gather_add_p": select_and_gather_add_p,
       "select_and_scatter_add_p": select_and_scatter_add_p}
