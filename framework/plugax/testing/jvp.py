"""check_jvp: the jvp rule against central finite differences, in float64.

Why float64: a central difference has truncation error ~eps**2 and rounding
error ~machine_eps/eps; only in float64 are both far below the tolerance, so a
failure means the rule is wrong, not that the arithmetic was noisy. Why each
argument on its own first: the other arguments then carry symbolic `Zero`
tangents, which exercises that path of the rule and lets the message name the
argument whose partial derivative is wrong. A final joint check (all
differentiable arguments perturbed together) catches rules that only work
when a single tangent is nonzero.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .. import api, dtypes
from ..core.array import Array
from ..core.avals import get_aval
from ..core.trace import Primitive
from .failures import JVPMismatch, error_summary, fail
from .values import Target, as_list, is_differentiable, to_float64, x64

__all__ = ["check_jvp"]


def check_jvp(prim: Primitive | Callable, *args: Any, argnums: Sequence[int] | int | None = None,
              eps: float = 1e-6, rtol: float = 1e-4, atol: float = 1e-6, seed: int = 0,
              **params: Any) -> None:
    """Assert that the jvp rule matches central finite differences (in float64).

    `argnums` picks the arguments to differentiate (default: every floating
    one); integer and boolean arguments are skipped, as they have no tangent.
    Also asserts the jvp's primal output equals eager evaluation and that
    tangents have the primal's shape (and dtype float0 for integer outputs).
    Outputs whose dtype a param fixes (say `new_dtype=float32`) stay in that
    dtype, so their differences are noisier: pass a larger `eps` and `rtol`.
    """
    target = Target(prim, params)
    with x64():
        xs = [to_float64(a) for a in args]
        nums = _diff_argnums(xs, argnums)
        if not nums:
            return
        rng = np.random.default_rng(seed)
        directions = {i: _direction(rng, np.asarray(xs[i])) for i in nums}
        expected = target.eval(xs)
        groups = [(i,) for i in nums] + ([tuple(nums)] if len(nums) > 1 else [])
        for group in groups:
            _check_group(target, xs, group, {i: directions[i] for i in group}, expected,
                         eps, rtol, atol)


def _direction(rng: np.random.Generator, x: np.ndarray) -> np.ndarray:
    """A random tangent direction of x's dtype; a complex one moves the imaginary part
    too (a real direction would leave half of a complex jvp rule untested)."""
    d = rng.standard_normal(x.shape)
    if x.dtype.kind == "c":
        d = d + 1j * rng.standard_normal(x.shape)
    return d.astype(x.dtype)


def _diff_argnums(xs: list, argnums: Sequence[int] | int | None) -> list[int]:
    if argnums is None:
        argnums = range(len(xs))
    elif isinstance(argnums, int):
        argnums = (argnums,)
    nums = sorted({i % len(xs) for i in argnums})
    return [i for i in nums if is_differentiable(xs[i])]


def _check_group(target: Target, xs: list, group: tuple, dirs: dict, expected: list,
                 eps: float, rtol: float, atol: float) -> None:
    notes = [("tangent" if i in group else "no tangent") for i in range(len(xs))]
    label = (f"differentiating x{group[0]} alone" if len(group) == 1
             else f"differentiating {', '.join(f'x{i}' for i in group)} together")

    def f(*dyn: Any) -> list:
        full = list(xs)
        for i, d in zip(group, dyn):
            full[i] = d
        return target.eval(full)

    primals = [xs[i] for i in group]
    tangents = [Array(dirs[i]) for i in group]
    p_out, t_out = api.jvp(f, primals, tangents)
    p_out, t_out = as_list(p_out), as_list(t_out)
    report = lambda what, details: fail(JVPMismatch, target.name, f"{what} ({label})", xs,
                                        target.params, details, notes)
    plus = f(*[_shift(xs[i], dirs[i], eps) for i in group])
    minus = f(*[_shift(xs[i], dirs[i], -eps) for i in group])
    for k, (p, t, e, hi, lo) in enumerate(zip(p_out, t_out, expected, plus, minus)):
        which = f" of output {k}" if len(expected) > 1 else ""
        _check_primal(report, which, p, e, rtol, atol)
        p_aval, t_aval = get_aval(e), get_aval(t)
        if t_aval.shape != p_aval.shape:
            report(f"tangent{which} has the wrong shape",
                   f"tangent {t_aval.str_short()} for primal output {p_aval.str_short()}")
        if not dtypes.issubdtype_inexact(p_aval.dtype):
            if t_aval.dtype != dtypes.float0:
                report(f"tangent{which} of a non-float output must be float0",
                       f"got a {t_aval.str_short()} tangent for a {p_aval.str_short()} output; "
                       f"return Zero.from_value(primal_out)")
            continue
        if t_aval.dtype != p_aval.dtype:
            report(f"tangent{which} has the wrong dtype",
                   f"tangent {t_aval.str_short()} for primal output {p_aval.str_short()}")
        wide = np.complex128 if p_aval.dtype.kind == "c" else np.float64
        fd = (np.asarray(hi, wide) - np.asarray(lo, wide)) / (2 * eps)
        got = np.asarray(t, wide)
        if not np.allclose(got, fd, rtol=rtol, atol=atol, equal_nan=True):
            report(f"tangent{which} disagrees with central finite differences",
                   f"{error_summary(got, fd)}\n(eps={eps:g}, rtol={rtol:g}, atol={atol:g}, "
                   f"random tangent directions, seeded)")


def _check_primal(report: Callable, which: str, got: Any, expected: Any,
                  rtol: float, atol: float) -> None:
    g, e = get_aval(got), get_aval(expected)
    if (g.shape, g.dtype) != (e.shape, e.dtype):
        report(f"primal output{which} differs from eager evaluation",
               f"jvp gives {g.str_short()}, evaluation gives {e.str_short()}")
    gv, ev = np.asarray(got), np.asarray(expected)
    same = (np.array_equal(gv, ev) if not dtypes.issubdtype_inexact(e.dtype)
            else np.allclose(gv, ev, rtol=rtol, atol=atol, equal_nan=True))
    if not same:
        report(f"primal output{which} differs from eager evaluation",
               error_summary(np.asarray(got), np.asarray(expected)))


def _shift(x: Array, direction: np.ndarray, step: float) -> Array:
    """x + step * direction, keeping x's dtype and weak type."""
    value = np.asarray(x)
    return Array((value + step * direction).astype(value.dtype), x.weak_type)
