"""check_dtype_matrix: one example, every dtype; accepted ones must type-check exactly.

Why a matrix: a family is usually tested in float32 only, while users bring
float16, bfloat16, float64 (with x64), integers and booleans. For every dtype
the check either finds that abstract_eval accepts it — and then the full
abstract_eval check (shape, dtype, weak type against the impl) must pass — or
that it rejects it with an error a user can act on (a TypeError or ValueError
subclass such as `ShapeError`), never a bare KeyError or a NumPy internals
message. With `accepted=` the set of accepted dtypes is asserted too, so a
family cannot start (or stop) accepting a dtype unnoticed.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

import numpy as np

from ..core.array import Array
from ..core.avals import get_aval
from ..core.trace import Primitive
from ..dtypes import canonicalize_dtype
from ..interpreters.staging import trace_to_jaxpr
from .abstract_eval import check_abstract_eval
from .failures import AbstractEvalMismatch, fail
from .values import Target, to_array, x64

__all__ = ["check_dtype_matrix", "DTYPES", "FLOATS", "SIGNED", "UNSIGNED", "INTS", "NUMERIC",
           "ALL_DTYPES"]

# the default of check_dtype_matrix: one of each kind a user brings
DTYPES = ("bool", "int8", "int32", "uint8", "uint32", "int64", "float16", "bfloat16", "float32",
          "float64")
# every dtype plugax computes in, by class (the lowering tests of every family sweep them)
FLOATS = ("float16", "bfloat16", "float32", "float64")
SIGNED = ("int8", "int16", "int32", "int64")
UNSIGNED = ("uint8", "uint32")
INTS = SIGNED + UNSIGNED
NUMERIC = INTS + FLOATS
ALL_DTYPES = ("bool",) + NUMERIC


def check_dtype_matrix(prim: Primitive | Callable, *args: Any,
                       dtypes: Sequence[str] = DTYPES, accepted: Iterable[str] | None = None,
                       argnums: Sequence[int] | None = None, **params: Any) -> dict[str, str]:
    """Cast the example to each dtype and check abstract_eval; return {dtype: outcome}.

    `argnums` picks the arguments to cast (default: every argument whose dtype
    is that of the first one, so index operands keep theirs). Runs with x64 on,
    so 64-bit dtypes are real. Outcome is "ok" or "rejected: <error>".
    """
    target = Target(prim, params)
    with x64():
        xs = [to_array(a) for a in args]
        cast = _argnums(xs, argnums)
        matrix = {name: _one_dtype(target, prim, xs, cast, name, params) for name in dtypes}
    if accepted is not None:
        _compare(target, xs, params, matrix, set(accepted))
    return matrix


def _argnums(xs: list, argnums: Sequence[int] | None) -> set[int]:
    if argnums is not None:
        return {i % len(xs) for i in argnums}
    return {i for i, x in enumerate(xs) if x.dtype == xs[0].dtype} if xs else set()


def _cast(x: Array, name: str) -> Array:
    dtype = canonicalize_dtype(_dtype(name))
    with np.errstate(all="ignore"):
        value = np.asarray(x).astype(dtype)
    return Array(value, False)


def _dtype(name: str) -> np.dtype:
    if name == "bfloat16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def _one_dtype(target: Target, prim: Any, xs: list, cast: set, name: str,
               params: dict) -> str:
    args = [_cast(x, name) if i in cast else x for i, x in enumerate(xs)]
    try:
        with np.errstate(all="ignore"):
            trace_to_jaxpr(lambda *a: target.eval(a), [get_aval(a) for a in args])
    except (TypeError, ValueError) as err:
        return f"rejected: {type(err).__name__}: {err}"
    except Exception as err:  # noqa: BLE001 - the point is to name the unhelpful error
        fail(AbstractEvalMismatch, target.name, f"dtype {name} raised a bare "
             f"{type(err).__name__} while tracing", args, params,
             f"{err}\n(reject unsupported dtypes with a ShapeError or TypeError that names "
             f"the primitive and the operand types)")
    with np.errstate(all="ignore"):
        check_abstract_eval(prim, *args, **params)
    return "ok"


def _compare(target: Target, xs: list, params: dict, matrix: dict, accepted: set) -> None:
    got = {name for name, outcome in matrix.items() if outcome == "ok"}
    if got == accepted & set(matrix):
        return
    extra, missing = sorted(got - accepted), sorted((accepted & set(matrix)) - got)
    lines = ([f"accepts {', '.join(extra)} (not in accepted=)"] if extra else []) + \
        [f"rejects {m}: {matrix[m]}" for m in missing]
    fail(AbstractEvalMismatch, target.name, "accepts a different set of dtypes than declared",
         xs, params, "\n".join(lines))
