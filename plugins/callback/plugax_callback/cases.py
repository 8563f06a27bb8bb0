"""Test cases the callback family declares (hook `plugax_test_cases`).

Imported only when a test suite asks. The callbacks are NumPy functions of their
operands; the cases run abstract_eval, vmap against a Python loop (every batch-axis
placement, empty batches) and jit against eager. No jvp check: pure_callback has no
derivative (JAX's rule), and debug_callback has no outputs to differentiate.
"""
from __future__ import annotations

import numpy as np

from plugax.extend import ShapedArray
from plugax.testing import Case

from .iocallback import io_callback_p
from .primitives import debug_callback_p, pure_callback_p
from .printing import debug_print_p, split_static

X = np.linspace(-1.0, 1.0, 6).astype(np.float32).reshape(2, 3)


def _tanh_plus_one(x):
    # returns the float32 it declares whatever the operand's dtype (a callback's contract),
    # so cases that recast the operand (bool, int, float16) still get a well-typed result
    return [np.asarray(np.tanh(np.asarray(x, np.float32)) + 1, np.float32)]


def _ignore(*xs):
    return []


_TREE = split_static((X,), {})[0]   # one positional array argument


def cases() -> list[Case]:
    out = (ShapedArray((2, 3), np.dtype(np.float32)),)
    return [
        Case(pure_callback_p, X, callback=_tanh_plus_one, result_avals=out,
             vmap_method=method, rules=("abstract_eval", "vmap", "jit"), lowering=True,
             id=f"pure_callback-{method}")
        for method in ("sequential", "expand_dims", "broadcast_all")
    ] + [Case(debug_callback_p, X, callback=_ignore, ordered=ordered,
              rules=("abstract_eval", "vmap", "jit"), lowering=True,
              id=f"debug_callback-ordered={ordered}") for ordered in (False, True)
    ] + [Case(debug_print_p, X, fmt="{}", ordered=False, in_tree=_TREE, static_args=(),
              np_printoptions=(), has_placeholders=True, logging_record=None,
              rules=("abstract_eval", "vmap", "jit"), lowering=True, id="debug_print"),
        Case(io_callback_p, X, callback=_tanh_plus_one, result_avals=out, ordered=False,
             rules=("abstract_eval", "vmap", "jit"), lowering=True, id="io_callback")]
