"""check_abstract_eval: the type a rule predicts is the type evaluation produces.

Why it matters: every bind types its result by abstract_eval (eager evaluation
too: it casts NumPy's result to the predicted dtype), so a rule that
disagrees with what the impl computes (or with the primitive's own weak-type
rule) silently changes results: an int32 `sin` would truncate. For a
primitive the check therefore compares abstract_eval with the impl rule's raw
NumPy output (dtype, canonicalised as eager code always did, and shape) and
with the weak-type rule; for a function, with an eager call.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..core.array import Array, array_value, canonicalize_value
from ..core.avals import ShapedArray, get_aval
from ..core.rules import IMPL_CTX, impl_rules
from ..core.trace import Primitive
from ..interpreters.staging import trace_to_jaxpr
from .failures import AbstractEvalMismatch, fail
from .values import Target, as_list, to_array

__all__ = ["check_abstract_eval"]


def check_abstract_eval(prim: Primitive | Callable, *args: Any, **params: Any) -> list[ShapedArray]:
    """Assert that abstract_eval agrees with the impl on shape, dtype and weak type.

    The abstract result comes from tracing a bind to a jaxpr (the kernel's own
    path into abstract_eval); the concrete one from an eager bind on `args`.
    Returns the output avals.
    """
    target = Target(prim, params)
    arrays = [to_array(a) for a in args]
    closed = trace_to_jaxpr(lambda *xs: target.eval(xs), [get_aval(a) for a in arrays])
    predicted = list(closed.out_avals)
    actual = _evaluated(target, arrays, predicted)
    if len(predicted) != len(actual):
        fail(AbstractEvalMismatch, target.name, "wrong number of outputs", arrays, params,
             f"abstract_eval gives {len(predicted)}, impl gives {len(actual)}")
    for i, (p, a) in enumerate(zip(predicted, actual)):
        wrong = [f"{field}: abstract_eval says {getattr(p, field)}, impl gives "
                 f"{getattr(a, field)}" for field in ("shape", "dtype", "weak_type")
                 if getattr(p, field) != getattr(a, field)]
        if wrong:
            which = f"output {i}" if len(actual) > 1 else "the output"
            fail(AbstractEvalMismatch, target.name,
                 f"abstract_eval disagrees with impl about {which}", arrays, params,
                 "\n".join(wrong) + f"\n(predicted {_show(p)}, evaluated {_show(a)})")
    return predicted


def _evaluated(target: Target, arrays: list, predicted: list) -> list[ShapedArray]:
    """The types evaluation computes on its own: a primitive's impl output (before
    eager typing casts it) with its weak-type rule's answer; a function's eager result."""
    impl = impl_rules.get(target.prim) if target.prim is not None else None
    if impl is None:
        return [get_aval(o) for o in target.eval(arrays)]
    outs = as_list(impl(IMPL_CTX, *map(array_value, arrays), **target.params))
    weaks = [p.weak_type for p in predicted]   # NumPy has no weak types: nothing to compare
    return [get_aval(o) if type(o) is Array else
            ShapedArray(np.shape(o), canonicalize_value(np.asarray(o)).dtype, w)
            for o, w in zip(outs, weaks)]


def _show(aval: ShapedArray) -> str:
    return aval.str_short() + (" weak" if aval.weak_type else "")
