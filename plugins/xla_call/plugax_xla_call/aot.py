"""Ahead-of-time stages: `jit(f).lower(...)` -> `Lowered` -> `.compile()` -> `Compiled`.

The stages make the steps of a jit call explicit: trace (already done when
`lower` returns), lower to StableHLO (`Lowered.as_text()`), compile
(`Compiled`, with the compiler's cost and memory analyses), execute. A
`Compiled` is specialised to one signature, so calling it with other types, or
passing it tracers of a transformation, is a `TypeError`.
"""
from __future__ import annotations

import pickle
from typing import Any, Sequence

import plugax.tree_util as tu
from plugax.extend import Array, ShapedArray, Tracer, lower_jaxpr_to_module, runtime

__all__ = ["Lowered", "Compiled", "deserialize_compiled"]


class Lowered:
    """A traced and lowered function, not yet compiled."""

    def __init__(self, entry: Any, in_avals: Sequence[ShapedArray], jitted: Any):
        self._entry = entry
        self.in_avals = list(in_avals)
        self.out_avals = list(entry.closed.out_avals)
        self._jitted = jitted
        self._module = lower_jaxpr_to_module(entry.closed, entry.name,
                                             runtime().backend().platform)

    def as_text(self) -> str:
        """The StableHLO module, as text."""
        return self._module.text

    def compile(self) -> "Compiled":
        exe = runtime().compile_module(self._module.text, self._module.in_avals,
                                       self._module.out_avals)
        return Compiled(exe, self._entry.out_tree, self._jitted.static_argnums)

    def jaxpr(self) -> Any:
        return self._entry.closed

    def __repr__(self) -> str:
        return f"Lowered({self._entry.name})"


class Compiled:
    """An executable for exactly one signature."""

    def __init__(self, exe: Any, out_tree: Any, static_argnums: Sequence[int] = ()):
        self._exe = exe
        self._out_tree = out_tree
        self._static_argnums = tuple(static_argnums)
        self.in_avals = exe.in_avals
        self.out_avals = exe.out_avals

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        leaves = tu.tree_leaves((args, kwargs))
        tracer = next((x for x in leaves if isinstance(x, Tracer)), None)
        if tracer is not None:
            raise TypeError(
                f"Cannot apply plugax transformations to a function lowered and compiled for "
                f"a particular signature. Detected argument of Tracer type {type(tracer)}.")
        arrays = [_as_array(x) for x in leaves]
        self._check_types(arrays)
        outs = self._exe(arrays)
        return tu.tree_unflatten(self._out_tree, outs)

    def _check_types(self, arrays: list) -> None:
        called = [a.aval for a in arrays]
        if len(called) != len(self.in_avals) or any(
                (c.shape, c.dtype) != (e.shape, e.dtype) for c, e in zip(called, self.in_avals)):
            raise TypeError("Computation compiled for input types:\n  "
                            + ", ".join(map(_show, self.in_avals))
                            + "\ncalled with:\n  " + ", ".join(map(_show, called)))

    def as_text(self) -> str:
        """The optimised HLO XLA compiled."""
        return self._exe.hlo_text()

    def cost_analysis(self) -> dict | None:
        """The compiler's estimates (`flops`, `bytes accessed`, ...); None if unavailable."""
        try:
            return self._exe.cost_analysis()
        except Exception:  # the backend has none
            return None

    def memory_analysis(self) -> Any:
        try:
            return self._exe.memory_analysis()
        except Exception:
            return None

    def serialize(self) -> bytes:
        """Bytes that `deserialize_compiled` turns back into a Compiled (same jaxlib)."""
        payload = (self._exe.serialize(), self.in_avals, self.out_avals, self._out_tree,
                   self._static_argnums)
        return pickle.dumps(payload)

    def __repr__(self) -> str:
        return f"Compiled({', '.join(map(_show, self.in_avals))})"


def deserialize_compiled(data: bytes) -> Compiled:
    """The Compiled that `Compiled.serialize` wrote. Only load bytes you trust."""
    exe_bytes, in_avals, out_avals, out_tree, static_argnums = pickle.loads(data)
    exe = runtime().deserialize_executable(exe_bytes, in_avals, out_avals)
    return Compiled(exe, out_tree, static_argnums)


def _show(aval: ShapedArray) -> str:
    return f"ShapedArray({aval.dtype.name}[{','.join(map(str, aval.shape))}])"


def _as_array(x: Any) -> Array:
    from plugax.extend import get_aval
    if type(x) is Array:
        return x
    aval = get_aval(x)
    import numpy as np
    return Array(np.asarray(x, aval.dtype), aval.weak_type)
