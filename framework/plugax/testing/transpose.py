"""check_transpose: the dot-product test for a transpose rule.

For a primitive linear in the arguments `linear_argnums` (the others held
fixed), T(x) = prim(x, ...) and its transpose rule Tᵀ must satisfy
<ct, T(x)> == sum_i <Tᵀ(ct)_i, x_i> for random x and ct. That single identity
is what reverse mode relies on, and it holds only for the true adjoint, so it
needs no hand-written expected cotangents. The rule is called the way the
kernel calls it: linear inputs as `UndefPrimal(aval)`, the others as values,
in float64 so rounding cannot mask (or fake) a mismatch.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..core.array import Array
from ..core.avals import get_aval
from ..core.rules import TRANSPOSE_CTX, transpose_rules
from ..core.trace import Primitive
from ..interpreters.ad_util import UndefPrimal, Zero, instantiate
from .failures import TransposeMismatch, fail
from .values import Target, is_differentiable, to_float64, x64

__all__ = ["check_transpose"]


def check_transpose(prim: Primitive, *args: Any, linear_argnums: Sequence[int] | int,
                    rtol: float = 1e-6, atol: float = 1e-9, seed: int = 0,
                    **params: Any) -> None:
    """Assert <Tᵀ(ct), x> == <ct, T(x)> for the transpose rule of `prim`.

    `args` are examples: the non-linear ones are used as given (cast to
    float64 if floating); the linear ones only give shapes and dtypes, their
    values are replaced by random ones.
    """
    target = Target(prim, params)
    if target.prim is None:
        raise TypeError("check_transpose needs a Primitive (transpose rules belong to "
                        f"primitives), got {target.name}")
    nums = (linear_argnums,) if isinstance(linear_argnums, int) else tuple(linear_argnums)
    rule = transpose_rules.get(prim)
    with x64():
        xs = [to_float64(a) for a in args]
        nums = sorted({i % len(xs) for i in nums})
        notes = ["linear" if i in nums else "" for i in range(len(xs))]
        report = lambda what, details: fail(TransposeMismatch, target.name, what, xs, params,
                                            details, notes)
        if rule is None:
            report("no transpose rule is registered", "add 'transpose' to its RuleSet")
        for i in nums:
            if not is_differentiable(xs[i]):
                report(f"x{i} cannot be linear", f"it has dtype {get_aval(xs[i]).dtype.name}")
        rng = np.random.default_rng(seed)
        for i in nums:
            xs[i] = Array(_random_like(rng, np.asarray(xs[i])), xs[i].weak_type)
        out = target.fn(*xs)
        # a multiple-results primitive (split) takes one cotangent per output
        outs = list(out) if prim.multiple_results else [out]
        cts_out = [Array(_random_like(rng, np.asarray(o))) for o in outs]
        ct = cts_out if prim.multiple_results else cts_out[0]
        rule_args = [UndefPrimal(get_aval(x).strip_weak_type()) if i in nums else x
                     for i, x in enumerate(xs)]
        cts = rule(TRANSPOSE_CTX, ct, *rule_args, **params)
        if not isinstance(cts, (list, tuple)) or len(cts) != len(xs):
            report("the rule must return a list with one entry per argument",
                   f"got {cts!r}")
        for i, c in enumerate(cts):
            if i not in nums:
                if c is not None and type(c) is not Zero:
                    report(f"x{i} is not linear, its cotangent must be None",
                           f"got {_show(c)}")
                continue
            want = rule_args[i].aval
            if c is None:
                report(f"cotangent of linear x{i} is None", f"expected {want.str_short()}")
            got = c.aval if type(c) is Zero else get_aval(c)
            if got.shape != want.shape or got.dtype != want.dtype:
                report(f"cotangent of x{i} has the wrong type",
                       f"got {got.str_short()}, the UndefPrimal is {want.str_short()} "
                       f"(a cotangent has exactly the UndefPrimal's shape and dtype; "
                       f"un-broadcast with reduce_sum where an operand was broadcast)")
        lhs = sum(_dot(c, o) for c, o in zip(cts_out, outs))
        rhs = sum(_dot(instantiate(cts[i]), xs[i]) for i in nums)
        err = abs(lhs - rhs)
        scale = max(abs(lhs), abs(rhs))
        if err > atol + rtol * scale:
            report("the transpose is not the adjoint of the primitive",
                   f"<ct, T(x)> = {lhs:.10g} but <T^T(ct), x> = {rhs:.10g}: abs error "
                   f"{err:.3g}, rel error {err / max(scale, 1e-300):.3g} "
                   f"(rtol={rtol:g}, atol={atol:g}; random x and ct, seeded; "
                   f"ct is {', '.join(_show(c) for c in cts_out)})")


def _random_like(rng: np.random.Generator, x: np.ndarray) -> np.ndarray:
    """Random values of x's shape and dtype; complex ones with an imaginary part (a real
    x or ct would leave the imaginary half of a complex transpose untested)."""
    d = rng.standard_normal(x.shape)
    if x.dtype.kind == "c":
        d = d + 1j * rng.standard_normal(x.shape)
    return d.astype(x.dtype)


def _dot(a: Any, b: Any) -> float:
    """<a, b> = Re(sum(a * b)): bilinear, never conjugated, which is the pairing under
    which JAX's complex transposes are transposes (real's is complex(ct, 0), conj's is
    conj); for real values the plain sum of products."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind == "c" or b.dtype.kind == "c":
        return float(np.sum(a.astype(np.complex128) * b.astype(np.complex128)).real)
    return float(np.sum(np.asarray(a, np.float64) * np.asarray(b, np.float64)))


def _show(x: Any) -> str:
    return get_aval(x).str_short() if not isinstance(x, Zero) else repr(x)
