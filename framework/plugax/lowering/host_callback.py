"""Calling Python from a compiled program: `emit_host_callback`, for lowering rules.

Why the kernel owns this: a callback primitive (`pure_callback`, `debug.callback`)
must run its Python function *when the compiled program runs*, not when it is
traced, and only the walk that builds the module and the runtime that compiles
it can connect the two. jaxlib ships the mechanism JAX uses, and it works without
the `jax` package: the CPU client has a typed-FFI handler,
`xla_ffi_python_cpu_callback` (`xla_ffi_python_gpu_callback` on GPU), whose one
attribute `index` (ui64) selects a Python callable from the list handed to
`Client.compile_and_load(module, devices, options, host_callbacks)`. XLA calls it
with NumPy arrays (one per operand) and expects a tuple of NumPy arrays back, of
exactly the result types.

So a lowering rule calls `emit_host_callback(ctx, fn, operands, result_avals)`:
the callable is appended to the module's `host_callbacks` (the walk's
`ModuleContext` keeps the list; `LoweredModule.host_callbacks` carries it to the
compiler), and the custom call is emitted with that index. Such an executable is
never shared through the compile caches, which key on the module's text: two
programs differing only in their callbacks have the same text.

- `has_side_effect=True` keeps the call when no output uses it (a debug print);
  without it XLA removes an unused call, as JAX's pure_callback allows.
- `ordered=True` threads a token through the ordered callbacks of one function
  body, so they run in program order (XLA may otherwise run independent calls in
  any order).
- A Python exception in the callback is recorded by the `HostCallback` wrapper;
  XLA reports only "CpuCallback error", so the executable re-raises it as a
  `CallbackError` whose `__cause__` is the user's exception (runtime/executable.py).
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Sequence

import numpy as np

from ..dtypes import canonicalize_dtype
from ..errors import PlugaxError

__all__ = ["CallbackError", "HostCallback", "emit_host_callback", "callback_failure"]


class CallbackError(PlugaxError, RuntimeError):
    """A Python callback (`pure_callback`, `debug.callback`, `debug.print`) raised; the
    exception it raised is `__cause__`."""


class HostCallback:
    """The callable XLA calls: runs `fn` at the bottom interpreter, converts and checks
    its results against `result_avals`, and records an exception for the executable.

    `fn` takes and returns NumPy arrays (flat). The trace state is reset for the call:
    the program may run while a transformation is current (a pjit impl under grad), and
    plugax code in the callback must compute on concrete values, not be traced.
    """

    def __init__(self, fn: Callable[..., Sequence[Any]], result_avals: Sequence[Any],
                 name: str, takes_token: bool = False):
        self.fn = fn
        self.result_avals = list(result_avals)
        self.name = name
        self.takes_token = takes_token
        self.failure: BaseException | None = None
        self._lock = threading.Lock()

    def __call__(self, *args: Any) -> tuple:
        from ..core.trace import eval_trace, set_current_trace
        token = None
        if self.takes_token:
            token, *args = args
        try:
            with set_current_trace(eval_trace):
                outs = self.fn(*args)
            outs = checked_outputs(outs, self.result_avals, self.name)
        except BaseException as err:
            with self._lock:
                self.failure = err
            raise
        return (token, *outs) if self.takes_token else tuple(outs)

    def take_failure(self) -> BaseException | None:
        with self._lock:
            err, self.failure = self.failure, None
        return err


def checked_outputs(outs: Sequence[Any], result_avals: Sequence[Any], name: str) -> list:
    """A callback's results as NumPy arrays of exactly `result_avals`' types (64-bit
    NumPy values canonicalized first), or a TypeError naming the result and the declared
    type (JAX checks the same); `name` is the callback's, for the caller's message."""
    outs = list(outs)
    if len(outs) != len(result_avals):
        raise TypeError(f"it returned {len(outs)} value(s) where result_shape_dtypes "
                        f"declares {len(result_avals)}")
    checked = []
    for i, (out, aval) in enumerate(zip(outs, result_avals)):
        value = np.asarray(out)
        canonical = canonicalize_dtype(value.dtype)   # NumPy's float64 is float32 without x64
        if canonical != value.dtype:
            value = value.astype(canonical)
        if value.shape != tuple(aval.shape):
            raise TypeError(f"its result #{i} has shape {value.shape}, but "
                            f"result_shape_dtypes declares {tuple(aval.shape)}")
        if value.dtype != aval.dtype:
            raise TypeError(f"its result #{i} has dtype {value.dtype}, but "
                            f"result_shape_dtypes declares {np.dtype(aval.dtype)}")
        # row-major, as the custom call's layouts declare (not ascontiguousarray: it
        # makes a rank-0 value rank 1)
        checked.append(value if value.flags.c_contiguous else np.array(value, order="C"))
    return checked


def callback_failure(callbacks: Sequence[HostCallback], err: BaseException) -> BaseException:
    """The error to raise when running an executable with `callbacks` failed with `err`:
    a CallbackError caused by the user's exception when a callback raised one."""
    for cb in callbacks:
        failure = cb.take_failure()
        if failure is not None:
            new = CallbackError(f"{cb.name} raised {type(failure).__name__}: {failure}")
            new.__cause__ = failure
            return new
    return err


def _row_major(ndim: int) -> tuple[int, ...]:
    return tuple(range(ndim - 1, -1, -1))


def emit_host_callback(ctx: Any, fn: Callable[..., Sequence[Any]], operands: Sequence[Any],
                       result_avals: Sequence[Any], *, name: str = "callback",
                       has_side_effect: bool = False, ordered: bool = False) -> list:
    """Emit a call of Python `fn` (NumPy arrays in, a sequence of NumPy arrays out) on
    `operands` (MLIR values of types `ctx.avals_in`); returns the result values, one per
    aval of `result_avals`. See the module docstring for the flags."""
    ir, hlo = ctx.ir, ctx.hlo
    module = ctx.module
    device = "cpu" if ctx.platform == "cpu" else "gpu"
    cb = HostCallback(fn, result_avals, name, takes_token=ordered)
    index = len(module.host_callbacks)
    module.host_callbacks.append(cb)

    operands = list(operands)
    operand_layouts = [_row_major(len(a.shape)) for a in ctx.avals_in]
    result_types = [ctx.ir_type(a) for a in result_avals]
    result_layouts = [_row_major(len(a.shape)) for a in result_avals]
    token_type = hlo.TokenType.get()
    if ordered:
        operands = [module.ordered_token(), *operands]
        operand_layouts = [(), *operand_layouts]
        result_types = [token_type, *result_types]
        result_layouts = [(), *result_layouts]

    def layouts(ls: Sequence[Sequence[int]]) -> Any:
        return ir.ArrayAttr.get([ir.DenseIntElementsAttr.get(
            np.asarray(list(l), dtype=np.int64), type=ir.IndexType.get(), shape=[len(l)])
            for l in ls])

    attrs = dict(call_target_name=ir.StringAttr.get(f"xla_ffi_python_{device}_callback"),
                 has_side_effect=ir.BoolAttr.get(bool(has_side_effect or ordered)),
                 backend_config=ir.StringAttr.get(""),
                 api_version=ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 1),
                 called_computations=ir.ArrayAttr.get([]),
                 operand_layouts=layouts(operand_layouts),
                 result_layouts=layouts(result_layouts))
    op = hlo.CustomCallOp.build_generic(results=result_types, operands=operands,
                                        attributes=attrs)
    op.operation.attributes["mhlo.backend_config"] = ir.DictAttr.get(
        {"index": ir.IntegerAttr.get(ir.IntegerType.get_unsigned(64), index)})
    results = list(op.results)
    if ordered:
        module.set_ordered_token(results[0])
        results = results[1:]
    return results
