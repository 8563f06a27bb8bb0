"""The kernel's core: primitives, bind, traces, tracers and abstract values."""
from .avals import ShapedArray, get_aval
from .trace import (Primitive, Trace, Tracer, EvalTrace, bind, current_trace, set_current_trace,
                    new_trace_context, eval_trace)
from .array import Array, as_array

__all__ = ["ShapedArray", "get_aval", "Primitive", "Trace", "Tracer",
           "EvalTrace", "bind", "current_trace", "set_current_trace", "new_trace_context",
           "eval_trace", "Array", "as_array"]
