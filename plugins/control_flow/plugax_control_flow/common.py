"""What cond, while and scan share: tracing user functions to sub-jaxprs, type
checks with readable errors, small jaxpr surgery, and running a sub-jaxpr.

Sub-jaxprs in params close over nothing: every value a user function closes
over (an array, or a tracer of an enclosing transformation) becomes an
explicit operand of the primitive, so enclosing transformations see it like
any other input. That is why `trace_function` returns the consts separately.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

import plugax.lax as lax
import plugax.tree_util as tu
from plugax.extend import (ClosedJaxpr, Jaxpr, ShapedArray, Tracer, Var, Zero,
                           close_over_nothing, eval_jaxpr, format_operands, get_aval,
                           trace_to_jaxpr)

__all__ = ["trace_function", "same_type", "types_str", "check_same_types", "join_weak",
           "closed_call", "run_closed", "permute_invars", "with_ignored_invars",
           "permute_outvars", "zeros_of", "split", "strong", "is_static", "retrace", "fixpoint",
           "materialize"]


def trace_function(fun: Callable, in_tree: Any, in_avals: Sequence[ShapedArray]
                   ) -> tuple[ClosedJaxpr, list, Any]:
    """Trace `fun(*unflattened args)` at `in_avals`.

    Returns a jaxpr taking ``[*consts, *flat_args]`` (consts are what `fun`
    closes over), the consts, and the output tree.
    """
    out_tree: list = []

    def flat_fun(*flat_args: Any) -> list:
        out = fun(*tu.tree_unflatten(in_tree, flat_args))
        leaves, tree = tu.tree_flatten(out)
        out_tree.append(tree)
        return leaves

    closed = trace_to_jaxpr(flat_fun, in_avals)
    return ClosedJaxpr(close_over_nothing(closed.jaxpr), []), list(closed.consts), out_tree[0]


def retrace(closed: ClosedJaxpr, fun: Callable) -> ClosedJaxpr:
    """A jaxpr computing `fun(*closed's inputs)`, where `fun` may call `closed_call`."""
    return trace_to_jaxpr(fun, closed.in_avals)


def closed_call(closed: ClosedJaxpr, *args: Any) -> list:
    """Evaluate a sub-jaxpr under the current trace (so it is transformed or staged)."""
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


def run_closed(closed: ClosedJaxpr, *args: Any) -> list:
    """Evaluate a sub-jaxpr on NumPy values, for impl rules: NumPy out, typed as declared."""
    outs = closed_call(closed, *args)
    return [np.asarray(o, dtype=a.dtype) for o, a in zip(outs, closed.out_avals)]


def same_type(a: ShapedArray, b: ShapedArray) -> bool:
    """Equal shape and dtype; weak types may differ (they only steer promotion)."""
    return a.shape == b.shape and a.dtype == b.dtype


def types_str(tree: Any, avals: Sequence[ShapedArray]) -> str:
    return f"{tree} with types ({format_operands(avals)})"


def check_same_types(what: str, tree_a: Any, avals_a: Sequence[ShapedArray], label_a: str,
                     tree_b: Any, avals_b: Sequence[ShapedArray], label_b: str) -> None:
    """Raise a TypeError showing both structures and types unless they agree."""
    if tree_a == tree_b and len(avals_a) == len(avals_b) and all(
            map(same_type, avals_a, avals_b)):
        return
    problem = "structures" if tree_a != tree_b else "types"
    raise TypeError(f"{what} must have identical {problem}, got\n"
                    f"  {label_a}: {types_str(tree_a, avals_a)}\n"
                    f"  {label_b}: {types_str(tree_b, avals_b)}")


def join_weak(*aval_lists: Sequence[ShapedArray]) -> list[ShapedArray]:
    """Position-wise: weak only where every list is weak (the strong type wins)."""
    return [avals[0].update(weak_type=all(a.weak_type for a in avals))
            for avals in zip(*aval_lists)]


def strong(x: Any, target: ShapedArray) -> Any:
    """`x` with a strong type where `target` is strong, so loop carries keep one type."""
    if get_aval(x).weak_type and not target.weak_type:
        return lax.convert_element_type(x, target.dtype)
    return x


def split(xs: Sequence[Any], *sizes: int) -> list[list]:
    """`xs` cut into consecutive pieces of `sizes`, and the rest."""
    out, start = [], 0
    for n in sizes:
        out.append(list(xs[start:start + n]))
        start += n
    out.append(list(xs[start:]))
    return out


def permute_invars(closed: ClosedJaxpr, order: Sequence[int]) -> ClosedJaxpr:
    """The same program taking its inputs in a new order: input k is old input order[k]."""
    jaxpr = closed.jaxpr
    invars = [jaxpr.invars[i] for i in order]
    return ClosedJaxpr(Jaxpr(jaxpr.constvars, invars, jaxpr.eqns, jaxpr.outvars), closed.consts)


def permute_outvars(closed: ClosedJaxpr, order: Sequence[int]) -> ClosedJaxpr:
    jaxpr = closed.jaxpr
    outvars = [jaxpr.outvars[i] for i in order]
    return ClosedJaxpr(Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.eqns, outvars), closed.consts)


def with_ignored_invars(closed: ClosedJaxpr, avals: Sequence[ShapedArray],
                        at: int | None = None) -> ClosedJaxpr:
    """The same program with extra, unused inputs of `avals` inserted at `at` (default end)."""
    jaxpr = closed.jaxpr
    at = len(jaxpr.invars) if at is None else at
    invars = [*jaxpr.invars[:at], *[Var(a) for a in avals], *jaxpr.invars[at:]]
    return ClosedJaxpr(Jaxpr(jaxpr.constvars, invars, jaxpr.eqns, jaxpr.outvars), closed.consts)


def zeros_of(aval: ShapedArray) -> Any:
    """Zeros of `aval`, staged as a broadcast scalar (no array constant in jaxprs)."""
    zero = np.zeros((), aval.dtype)
    return zero if aval.shape == () else lax.broadcast_in_dim(zero, aval.shape, ())


def fixpoint(flags_of: Callable[[list], list], start: list) -> list:
    """Grow per-carry booleans `start` (unknown, nonzero tangent, batched...) until the
    loop body maps them into themselves: what holds of a carry in any iteration."""
    flags = list(start)
    for _ in range(len(flags) + 1):
        new = [a or b for a, b in zip(flags, flags_of(flags))]
        if new == flags:
            return flags
        flags = new
    return flags


def materialize(t: Any) -> Any:
    """A symbolic Zero (co)tangent as staged zeros (a broadcast, not an array constant)."""
    return zeros_of(t.aval) if type(t) is Zero else t


def is_static(x: Any) -> bool:
    """A value Python can read now (not an abstract tracer): a static loop bound."""
    return not isinstance(x, Tracer) or x.to_concrete_value() is not None
