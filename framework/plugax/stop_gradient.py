"""`lax.stop_gradient`: the identity whose derivative is zero.

Why a primitive of the kernel: it is part of what differentiation means (JAX
keeps it beside its AD utilities), every family's users need it (a target held
fixed in a loss, the max subtracted in a stable logsumexp), and as a primitive
it survives `jit`, `vmap` and nested derivatives, where a Python-level trick
would be traced away. Integer and boolean values are returned as they are, as
in JAX: they have no tangent to stop.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import tree_util as tu
from .core.avals import ShapedArray, get_aval
from .core.trace import Primitive
from .interpreters.ad_util import Zero
from .loader.ruleset import RuleSet

__all__ = ["stop_gradient", "stop_gradient_p", "RULES"]

stop_gradient_p = Primitive("stop_gradient")


def _abstract_eval(ctx, x: ShapedArray) -> ShapedArray:
    return x


def _jvp(ctx, primals, tangents):
    out = stop_gradient_p.bind(primals[0])
    return out, Zero.from_value(out)


def _batching(ctx, args, dims):
    return stop_gradient_p.bind(args[0]), dims[0]


def _vjp(ctx, primals, wanted):
    return stop_gradient_p.bind(primals[0]), None   # no cotangent flows back


RULES = [RuleSet(stop_gradient_p, impl=lambda ctx, x: x, abstract_eval=_abstract_eval,
                 jvp=_jvp, vjp=_vjp, batching=_batching,
                 lowering={"default": lambda ctx, x: x})]


def _stop(x: Any) -> Any:
    dtype = get_aval(x).dtype
    if not np.issubdtype(dtype, np.inexact):
        return x
    return stop_gradient_p.bind(x)


def stop_gradient(x: Any) -> Any:
    """`x` (any pytree of arrays), with a derivative of zero with respect to it."""
    return tu.tree_map(_stop, x)
