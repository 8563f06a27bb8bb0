"""check_lowering: a primitive compiled through its lowering rule computes what its impl does.

Why compare with the impl: eager code runs the impl (NumPy), jitted code runs
the lowering (XLA). The same program must give the same shapes, dtypes and
values both ways, up to the rounding differences two math libraries have. So
integers and booleans must match exactly, floats within a tolerance that
depends on their precision.

Why a batched form (`check_lowerings`): compiling a module costs tens of
milliseconds, far more than running it. A family checking every primitive on
every dtype lowers all those cases into ONE module (one output group per
case) and compiles once; a failure still names the one case that disagreed.

jaxlib is imported only when a check runs, so `import plugax.testing` stays free of it.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .. import dtypes
from ..core import rules as R
from ..core.avals import get_aval
from ..core.trace import Primitive
from ..interpreters.staging import trace_to_jaxpr
from .failures import RuleCheckError, error_summary, fail
from .values import Target, to_array

__all__ = ["check_lowering", "check_lowerings", "LoweringMismatch", "lowering_tolerance",
           "has_lowering", "matmul_rtol"]


class LoweringMismatch(RuleCheckError):
    """The compiled lowering disagrees with the impl (shape, dtype or values)."""

    rule = "lowering"


# (rtol, atol) by dtype name: XLA's and NumPy's math libraries differ by a few ulps,
# more for the half-precision types (XLA may compute them in float32 and round).
_TOLERANCES = {"float16": (2e-3, 2e-3), "bfloat16": (1.6e-2, 1.6e-2),
               "float32": (2e-5, 1e-6), "float64": (1e-10, 1e-12),
               "complex64": (2e-5, 1e-6), "complex128": (1e-10, 1e-12)}


def lowering_tolerance(dtype: Any) -> tuple[float, float]:
    """(rtol, atol) for comparing compiled and eager results of `dtype` (ints, bools: exact)."""
    return _TOLERANCES.get(np.dtype(dtype).name, (0.0, 0.0))


def matmul_rtol(dtype: Any = np.float32) -> float:
    """rtol at which compiled matrix products of `dtype` match NumPy's on this platform.

    XLA on NVIDIA GPUs multiplies float32 matrices in TF32 by default (10-bit
    mantissa), as JAX does unless asked for higher precision; on the CPU they are
    plain float32. Tests of matrix products that may run on a GPU
    (PLUGAX_PLATFORM=cuda) use this instead of a fixed tolerance."""
    from ..runtime import backend
    rtol = lowering_tolerance(dtype)[0]
    if backend().platform == "gpu" and np.dtype(dtype) in (np.float32, np.complex64):
        return max(rtol, 1e-2)
    return rtol


def has_lowering(prim: Primitive) -> bool:
    """Whether some platform (or "default") has a lowering rule for `prim`."""
    return any(prim in table for table in R.lowering_rules.values())


def check_lowering(prim: Primitive | Callable, *args: Any, rtol: float | None = None,
                   atol: float | None = None, **params: Any) -> list:
    """Assert that `prim` (bound with `params`), or a function, jitted equals eager on `args`.

    Traces to a jaxpr, lowers it with the lowering rules, compiles and runs it,
    and compares with eager evaluation: same shape, same dtype, values equal
    (ints, bools) or close (floats; `rtol`/`atol` override the dtype's
    default). Returns the compiled outputs.
    """
    return check_lowerings([(prim, args, params)], rtol=rtol, atol=atol)[0]


def check_lowerings(cases: Sequence[tuple], *, rtol: float | None = None,
                    atol: float | None = None) -> list[list]:
    """check_lowering for many `(prim_or_fn, args, params)` cases, compiled as one module.

    `params` may be omitted (a 2-tuple). Returns the compiled outputs per case.
    """
    targets, arg_lists = [], []
    for case in cases:
        prim, args, params = (*case, {}) if len(case) == 2 else case
        targets.append(Target(prim, params))
        arg_lists.append([to_array(a) for a in args])
    for t, args in zip(targets, arg_lists):
        _require_rule(t, args)
    expected = [t.eval(args) for t, args in zip(targets, arg_lists)]
    got = _run_compiled(targets, arg_lists, [len(e) for e in expected])
    for t, args, g, e in zip(targets, arg_lists, got, expected):
        _compare(t, args, g, e, rtol, atol)
    return got


def _require_rule(target: Target, args: list) -> None:
    if target.prim is not None and not has_lowering(target.prim):
        fail(LoweringMismatch, target.name, "no lowering rule is registered", args,
             target.params, "add `lowering={'default': rule}` to the primitive's RuleSet")


def _run_compiled(targets: list, arg_lists: list, n_outs: list[int]) -> list[list]:
    """Trace every case into one jaxpr, lower, compile, run; outputs split per case."""
    from ..lowering import lower_jaxpr_to_module
    from ..runtime import backend, compile_module
    sizes = [len(a) for a in arg_lists]
    flat_args = [a for args in arg_lists for a in args]

    def all_cases(*xs: Any) -> list:
        outs, start = [], 0
        for t, n in zip(targets, sizes):
            outs += t.eval(xs[start:start + n])
            start += n
        return outs

    closed = trace_to_jaxpr(all_cases, [get_aval(a) for a in flat_args])
    platform = backend().platform
    module = lower_jaxpr_to_module(closed, "check", "cuda" if platform == "gpu" else platform)
    exe = _compiled(module, compile_module)
    flat_out = exe(flat_args)
    got, start = [], 0
    for n in n_outs:
        got.append(flat_out[start:start + n])
        start += n
    return got


_EXECUTABLES: dict[str, Any] = {}   # module text -> executable: repeated checks compile once


def _compiled(module: Any, compile_module: Callable) -> Any:
    if module.host_callbacks:   # its text does not say which callables it calls
        return compile_module(module.text, module.in_avals, module.out_avals,
                              module.host_callbacks)
    exe = _EXECUTABLES.get(module.text)
    if exe is None:
        if len(_EXECUTABLES) >= 256:
            _EXECUTABLES.clear()
        exe = _EXECUTABLES[module.text] = compile_module(module.text, module.in_avals,
                                                         module.out_avals)
    return exe


def _compare(target: Target, args: list, got: list, expected: list,
             rtol: float | None, atol: float | None) -> None:
    for i, (g, e) in enumerate(zip(got, expected)):
        which = f"output {i}" if len(expected) > 1 else "the output"
        g_aval, e_aval = get_aval(g), get_aval(e)
        if (g_aval.shape, g_aval.dtype) != (e_aval.shape, e_aval.dtype):
            fail(LoweringMismatch, target.name, f"compiled {which} has the wrong type", args,
                 target.params, f"jit gives {g_aval.str_short()}, eager (impl) gives "
                 f"{e_aval.str_short()}")
        g_val, e_val = np.asarray(g), np.asarray(e)
        if not _close(g_val, e_val, rtol, atol):
            fail(LoweringMismatch, target.name, f"compiled {which} differs from eager (impl)",
                 args, target.params, error_summary(g_val, e_val))


def _close(got: np.ndarray, expected: np.ndarray, rtol: float | None,
           atol: float | None) -> bool:
    if got.dtype == dtypes.float0:
        return True
    default_rtol, default_atol = lowering_tolerance(got.dtype)
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    if rtol == 0 and atol == 0:
        return bool(np.array_equal(got, expected, equal_nan=got.dtype.kind in "fc"))
    wide = np.complex128 if got.dtype.kind == "c" else np.float64
    return bool(np.allclose(got.astype(wide), expected.astype(wide), rtol=rtol, atol=atol,
                            equal_nan=True))
