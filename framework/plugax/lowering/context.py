"""What a lowering rule receives: `LoweringRuleContext`.

A lowering rule has the signature ``rule(ctx, *operands, **params)`` where the
operands are MLIR values (one per primitive input) and the params are the
equation's params. It returns the MLIR values of the outputs: a list, or a
single value for a single-result primitive. Through `ctx` it reaches

- the dialect builders, ``ctx.hlo`` (StableHLO), ``ctx.chlo``, ``ctx.ir``,
  ``ctx.func``, so a plugin never imports jaxlib itself (and `import plugax`
  stays free of it);
- the types: ``ctx.avals_in``, ``ctx.avals_out``, ``ctx.aval_out`` (the only
  output of a single-result primitive) and ``ctx.ir_type(aval)``;
- constants: ``ctx.constant(value, dtype)`` (a NumPy value, splatted when scalar
  and a shape is given);
- broadcasting: ``ctx.broadcast_in_dim(value, dtype, shape, dims)`` and
  ``ctx.broadcast_scalars(*operands)`` (rank-0 operands of an elementwise op
  broadcast to the output shape, as lax allows);
- sub-computations: ``ctx.lower_jaxpr(closed_jaxpr, *values)`` inlines a jaxpr,
  ``ctx.call_jaxpr(closed_jaxpr, name, *values)`` emits it once as a private
  function and calls it, ``ctx.lower_fun(fn, *values)`` lowers a Python function
  written with primitives (how a rule can reuse other primitives' lowerings);
- ``ctx.platform`` ("cpu", "cuda") for platform-specific choices.

docs/plugin-api.md ("Lowering rules") lists every field with a worked example.
What the rule returns is checked against ``ctx.avals_out`` (see checks.py).
The sub-computation methods hand the jaxpr to ``ctx.module``, the walk's
`ModuleContext` (lower.py), which lowers it into the same module: this module
describes the rule's view and knows nothing of the walk.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..core.avals import ShapedArray
from ..interpreters.staging import trace_to_jaxpr
from .mlir import dense_attr, element_type, ir_type

__all__ = ["LoweringRuleContext"]


class LoweringRuleContext:
    """The first argument of a lowering rule (see the module docstring)."""

    __slots__ = ("module", "primitive", "avals_in", "avals_out")

    def __init__(self, module: Any, primitive: Any,
                 avals_in: Sequence[ShapedArray], avals_out: Sequence[ShapedArray]):
        self.module = module
        self.primitive = primitive
        self.avals_in = list(avals_in)
        self.avals_out = list(avals_out)

    hlo = property(lambda self: self.module.dialects.hlo)
    chlo = property(lambda self: self.module.dialects.chlo)
    ir = property(lambda self: self.module.dialects.ir)
    func = property(lambda self: self.module.dialects.func)
    platform = property(lambda self: self.module.platform)

    @property
    def aval_out(self) -> ShapedArray:
        (aval,) = self.avals_out
        return aval

    @staticmethod
    def ir_type(aval: Any) -> Any:
        return ir_type(aval)

    @staticmethod
    def element_type(dtype: Any) -> Any:
        return element_type(dtype)

    def constant(self, value: Any, dtype: Any = None, shape: Sequence[int] | None = None) -> Any:
        """A StableHLO constant; a scalar with `shape` becomes a splat of that shape."""
        value = np.asarray(value, dtype)
        scalar = self.hlo.constant(dense_attr(value))
        if shape is None or tuple(shape) == value.shape:
            return scalar
        if value.ndim:
            raise ValueError(f"constant: only a scalar can be splatted to shape {shape}, "
                             f"got shape {value.shape}")
        return self.broadcast_in_dim(scalar, value.dtype, shape, ())  # no big dense attr

    def broadcast_in_dim(self, value: Any, dtype: Any, shape: Sequence[int],
                         dims: Sequence[int]) -> Any:
        """`value` broadcast to `shape`, its axes landing at `dims`."""
        out_type = ir_type(ShapedArray(tuple(shape), np.dtype(dtype)))
        return self.hlo.broadcast_in_dim(out_type, value,
                                         self.ir.DenseI64ArrayAttr.get(list(dims)))

    def broadcast_scalars(self, *values: Any) -> list:
        """Operands with rank-0 ones broadcast to the output shape (lax's binary-op rule)."""
        shape = self.avals_out[0].shape
        return [self.broadcast_in_dim(v, a.dtype, shape, ()) if a.ndim == 0 and shape else v
                for v, a in zip(values, self.avals_in)]

    def lower_jaxpr(self, closed: Any, *args: Any) -> list:
        """Emit `closed` (a ClosedJaxpr) inline on `args`; returns its output values."""
        return self.module.lower_jaxpr(closed, list(args))

    def call_jaxpr(self, closed: Any, name: str, *args: Any) -> list:
        """Emit `closed` once as a private function `name` of the module, and call it."""
        return self.module.call_jaxpr(closed, name, list(args))

    def lower_fun(self, fn: Callable, *args: Any, multiple_results: bool = False) -> list:
        """Lower `fn` (written with primitives) applied to `args` of types `avals_in`."""
        closed = trace_to_jaxpr(lambda *xs: _as_list(fn(*xs), multiple_results), self.avals_in)
        return self.lower_jaxpr(closed, *args)


def _as_list(out: Any, multiple: bool) -> list:
    return list(out) if multiple else [out]
