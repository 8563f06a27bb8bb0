"""check_abstract_eval: the type a rule predicts is the type evaluation produces.

Why it matters: jit, make_jaxpr and every staged transformation trust
abstract_eval alone, while eager code trusts impl (and the weak-type rule). A
disagreement means the same program has different dtypes traced and untraced.
"""
from __future__ import annotations

from typing import Any, Callable

from ..core.avals import ShapedArray, get_aval
from ..core.trace import Primitive
from ..interpreters.staging import trace_to_jaxpr
from .failures import AbstractEvalMismatch, fail
from .values import Target, to_array

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
    actual = [get_aval(o) for o in target.eval(arrays)]
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


def _show(aval: ShapedArray) -> str:
    return aval.str_short() + (" weak" if aval.weak_type else "")
