"""The two functions a Transformation record carries besides its trace.

`derive_jet_rule`: a primitive defined only by an `expand` decomposition (a
composite, a custom-derivative call) gets its jet rule by running the
decomposition under jet, so every primitive written in terms of covered
ones is covered too. The registry calls it for each such primitive.

`check_jet`: what the conformance kit runs for a declared test case of a
primitive that has a jet rule. The reference is independent of every jet
rule: the k-th term along a curve x(t) is the k-th derivative in t of
f(x(t)), computed by k nested `plugax.jvp`s (which use only jvp rules).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import plugax
from plugax.extend import Primitive, get_aval

from .frontend import jet
from .generic import is_float
from .trace import jet_flat, jet_rules, zero_series

__all__ = ["derive_jet_rule", "check_jet", "nested_jvp_series", "JetMismatch"]


class JetMismatch(AssertionError):
    """A jet rule disagrees with nested jvp (names the primitive, order and error)."""


def derive_jet_rule(prim: Primitive, expand: Callable) -> Callable:
    def rule(ctx, primals_in, series_in, **params):
        def fun(*xs: Any) -> list:
            out = expand(ctx, *xs, **params)
            return list(out) if prim.multiple_results else [out]
        p_out, s_out = jet_flat(fun, primals_in, series_in, len(series_in[0]))
        return (p_out, s_out) if prim.multiple_results else (p_out[0], s_out[0])
    rule.__name__ = f"{prim.name}_jet_from_expand"
    return rule


def nested_jvp_series(fun: Callable, primals: list, series: list) -> list:
    """The derivative-scaled series of fun(x(t)), x(t) = x + sum_k h_k t^k / k!, by
    nested jvp in t (2^k work: a reference, not an implementation)."""
    order = max((len(s) for s in series if s is not zero_series), default=0)

    def along(t):
        xs = []
        for x, s in zip(primals, series):
            if s is zero_series:
                xs.append(x)
                continue
            point, power, fact = x, t, 1.0
            for k, h in enumerate(s, start=1):
                fact *= k
                point = point + h * (power / fact)
                power = power * t
            xs.append(point)
        out = fun(*xs)
        return list(out) if isinstance(out, (list, tuple)) else [out]

    dtype = next(get_aval(x).dtype for x, s in zip(primals, series) if s is not zero_series)
    terms, f = [], along
    for _ in range(order):
        f = _derivative(f)
        terms.append([np.asarray(v) for v in f(plugax.numpy.zeros((), dtype))])
    return [list(per_output) for per_output in zip(*terms)]


def _skip(reason: str) -> list:
    """Under the kit, a skip it records (`plugax.testing.SkipCheck`); else nothing ran."""
    try:
        from plugax.testing import SkipCheck   # test-only: present where the kit runs
    except ImportError:
        return []
    raise SkipCheck(f"jet: {reason}")


def _derivative(f: Callable) -> Callable:
    return lambda t: plugax.jvp(f, (t,), (plugax.numpy.ones_like(t),))[1]


def check_jet(case: Any, order: int = 3, seed: int = 0) -> list[str]:
    """Check a declared Case's jet rule against nested jvp; return ["jet"] if it ran.

    Skipped (returns []) for a case whose primitive has no jet rule or no
    floating operand. Raises JetMismatch with the primitive, order and error.
    """
    prim, args, params = case.prim, list(case.args), dict(case.params)
    if not isinstance(prim, Primitive) or prim not in jet_rules():
        return _skip(f"primitive {prim} has no jet rule")
    if not any(is_float(a) for a in args):
        return _skip("no floating-point operand: nothing has a Taylor series")
    rng = np.random.default_rng(seed)
    series = [[np.asarray(rng.normal(size=np.shape(a)) * 0.5, get_aval(a).dtype)
               for _ in range(order)] if is_float(a) else zero_series for a in args]

    def fun(*xs):
        return prim.bind(*xs, **params)

    _, got = jet(fun, args, series)
    want = nested_jvp_series(fun, args, series)
    got = got if prim.multiple_results else [got]
    f32 = any(get_aval(a).dtype.itemsize < 8 for a in args if is_float(a))
    rtol, atol = (2e-3, 2e-3) if f32 else (1e-8, 1e-8)
    for j, (g_out, w_out) in enumerate(zip(got, want)):
        for k, (g, w) in enumerate(zip(g_out, w_out), start=1):
            g = np.asarray(g)
            if w.dtype.kind not in "fc":   # a float0 tangent: the output cannot vary
                w = np.zeros(g.shape, g.dtype)
            if not np.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True):
                err = np.max(np.abs(g - w)) if g.size else 0.0
                raise JetMismatch(
                    f"jet rule of primitive '{prim}' disagrees with nested jvp at order {k}"
                    f"{f' (output {j})' if prim.multiple_results else ''} for case "
                    f"{getattr(case, 'id', case)}: max abs error {err:.3g}\n  jet:  {g}\n"
                    f"  jvp:  {w}")
    return ["jet"]
