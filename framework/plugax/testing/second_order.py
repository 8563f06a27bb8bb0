"""check_second_order: the jvp rule is itself differentiable.

Why it matters: `hessian`, `jacfwd(grad(f))` and every higher-order use
differentiate the *jvp rule's own computation*. A rule that computes its
tangent in NumPy (instead of binding primitives) gives right first
derivatives and silently wrong (or missing) second ones. The check compares
the jvp of "the tangent as a function of the primal" with central finite
differences of that same function, in float64, for a random pair of
directions (u for the outer derivative, v for the inner one). Use it for
smooth primitives only: at a kink the second derivative is a distribution.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .. import api
from ..core.array import Array
from ..core.trace import Primitive
from .failures import JVPMismatch, error_summary, fail
from .values import Target, as_list, is_differentiable, to_float64, x64

__all__ = ["check_second_order"]


def check_second_order(prim: Primitive | Callable, *args: Any,
                       argnums: Sequence[int] | int | None = None, eps: float = 1e-5,
                       rtol: float = 1e-3, atol: float = 1e-5, seed: int = 1,
                       **params: Any) -> None:
    """Assert d/du [jvp(prim)(x; v)] matches central finite differences (float64).

    All floating arguments (or those in `argnums`) are perturbed together,
    along random directions u (outer) and v (inner).
    """
    target = Target(prim, params)
    with x64():
        xs = [to_float64(a) for a in args]
        picked = range(len(xs)) if argnums is None else (
            (argnums,) if isinstance(argnums, int) else argnums)
        nums = sorted({i % len(xs) for i in picked if is_differentiable(xs[i % len(xs)])})
        if not nums:
            return
        rng = np.random.default_rng(seed)
        u = [_direction(xs[i], rng) for i in nums]
        v = [_direction(xs[i], rng) for i in nums]

        def tangent(*dyn: Any) -> list:
            def f(*inner: Any) -> list:
                full = list(xs)
                for i, d in zip(nums, inner):
                    full[i] = d
                return target.eval(full)
            return as_list(api.jvp(f, list(dyn), [Array(d) for d in v])[1])

        primals = [xs[i] for i in nums]
        _, second = api.jvp(tangent, primals, [Array(d) for d in u])
        plus = tangent(*[_shift(x, d, eps) for x, d in zip(primals, u)])
        minus = tangent(*[_shift(x, d, -eps) for x, d in zip(primals, u)])
        notes = ["tangent" if i in nums else "no tangent" for i in range(len(xs))]
        for k, (got, hi, lo) in enumerate(zip(as_list(second), plus, minus)):
            fd = (np.asarray(hi, np.float64) - np.asarray(lo, np.float64)) / (2 * eps)
            got = np.asarray(got, np.float64)
            if not np.allclose(got, fd, rtol=rtol, atol=atol, equal_nan=True):
                which = f" of output {k}" if len(plus) > 1 else ""
                fail(JVPMismatch, target.name,
                     f"second derivative{which} disagrees with finite differences of the jvp "
                     f"(is the jvp rule computed with primitives, via bind?)", xs,
                     target.params,
                     f"{error_summary(got, fd)}\n(eps={eps:g}, rtol={rtol:g}, atol={atol:g}, "
                     f"random directions, seeded)", notes)


def _direction(x: Array, rng: np.random.Generator) -> np.ndarray:
    return rng.standard_normal(np.shape(x)).astype(np.asarray(x).dtype)


def _shift(x: Array, direction: np.ndarray, step: float) -> Array:
    value = np.asarray(x)
    return Array((value + step * direction).astype(value.dtype), x.weak_type)
