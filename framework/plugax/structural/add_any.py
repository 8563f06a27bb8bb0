"""add_any: the sum of two tangents (or cotangents) of one type; and `add_tangents`.

Differentiation adds tangents wherever a value is used twice: the jvp of a
function of several arguments sums their contributions, and a backward pass sums
the cotangents flowing into one variable. That sum belongs to the kernel, not to
the elementwise family's `add` (which promotes dtypes and broadcasts rank-0
operands, neither of which a tangent sum may do), so it has its own primitive,
named as JAX names it. Its operands have one shape and dtype.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..core.avals import ShapedArray, get_aval
from ..core.trace import Primitive, bind
from ..interpreters.ad_util import Zero, is_undefined_primal
from ..interpreters.vjp_tape.rules import linear_vjp
from ..loader.ruleset import RuleSet
from . import lowering as L
from .broadcast import broadcast_in_dim
from .layout import moveaxis
from .rules import shape_error

__all__ = ["add_any_p", "add_any", "add_tangents", "RULES"]

add_any_p = Primitive("add_any")


def add_any(x: Any, y: Any) -> Any:
    """x + y for two (co)tangents of one shape and dtype."""
    return bind(add_any_p, x, y)


def add_tangents(a: Any, b: Any) -> Any:
    """The sum of two tangents, either of which may be a symbolic `Zero`."""
    if type(a) is Zero:
        return b
    if type(b) is Zero:
        return a
    return bind(add_any_p, a, b)


def _add_any_abstract_eval(ctx, x: ShapedArray, y: ShapedArray) -> ShapedArray:
    if x.shape != y.shape or x.dtype != y.dtype:
        raise shape_error(add_any_p, [x, y], "adds tangents of one shape and dtype only",
                          "a rule produced a tangent of the wrong type: give it its "
                          "primal's shape and (tangent) dtype")
    return ShapedArray(x.shape, x.dtype, x.weak_type and y.weak_type)


def _add_any_jvp(ctx, primals, tangents):
    return add_any(*primals), add_tangents(*tangents)


def _add_any_transpose(ctx, ct, x, y):
    return [ct if is_undefined_primal(x) else None, ct if is_undefined_primal(y) else None]


def _add_any_batching(ctx, args, dims):
    """Both operands batched at one axis; an unbatched one is broadcast to the other."""
    (x, y), (dx, dy) = args, dims
    if dx is None or dy is None:
        batched, d = (y, dy) if dx is None else (x, dx)
        shape = get_aval(batched).shape
        kept = tuple(i for i in range(len(shape)) if i != d)
        if dx is None:
            x = broadcast_in_dim(x, shape, kept)
        else:
            y = broadcast_in_dim(y, shape, kept)
        return add_any(x, y), d
    return add_any(x, moveaxis(y, dy, dx)), dx


RULES = [
    RuleSet(add_any_p, impl=lambda ctx, x, y: np.add(x, y),
            abstract_eval=_add_any_abstract_eval, jvp=_add_any_jvp, vjp=linear_vjp(add_any_p),
            transpose=_add_any_transpose, batching=_add_any_batching,
            lowering={"default": L.add_any}),
]
