"""`plugax.test_util.check_grads`: derivatives against finite differences, as JAX checks them.

Why users need it: a custom rule (custom_jvp, custom_vjp, a plugin's jvp) can
be wrong in a way no shape check sees. `check_grads` compares forward mode with
central differences along one random direction, reverse mode with forward mode
through the dot-product identity <ct, J t> == <J^T ct, t>, and repeats both on
the derivative functions up to `order`. Tolerances default per dtype, scaled by
the number of elements, with JAX's values, so a program's own test keeps its
meaning when ported.
"""
from __future__ import annotations

from functools import partial
from typing import Any, Callable, Sequence

import numpy as np

from . import dtypes
from .api import jvp
from .autodiff import linearize, vjp
from .tree_util import tree_map, tree_reduce

__all__ = ["check_grads", "check_jvp", "check_vjp", "check_close", "EPS",
           "default_gradient_tolerance"]

EPS = 1e-4

default_gradient_tolerance = {
    np.dtype(dtypes.bfloat16): 1e-1, np.dtype(np.float16): 1e-2,
    np.dtype(np.float32): 2e-3, np.dtype(np.float64): 1e-5,
    np.dtype(np.complex64): 1e-3, np.dtype(np.complex128): 1e-5,
}
_exact = {np.dtype(d): 0 for d in (np.bool_, np.int8, np.int16, np.int32, np.int64,
                                   np.uint8, np.uint16, np.uint32, np.uint64)}


def _dtype(x: Any) -> np.dtype:
    if hasattr(x, "dtype"):
        return np.dtype(x.dtype)
    if isinstance(x, bool):
        return np.dtype(np.bool_)
    if isinstance(x, int):
        return np.dtype(np.int32)
    if isinstance(x, float):
        return np.dtype(np.float32 if not dtypes.config.enable_x64 else np.float64)
    return np.asarray(x).dtype


def _tolerance(dtype: np.dtype, tol: Any) -> float:
    if tol is not None and not isinstance(tol, dict):
        return tol
    table = {**_exact, **default_gradient_tolerance,
             **{np.dtype(k): v for k, v in (tol or {}).items()}}
    if dtype == dtypes.float0:
        return 0
    return table.get(dtype, 1e-6)


def _assert_close(a: Any, b: Any, atol: Any, rtol: Any, err_msg: str) -> None:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        raise AssertionError(f"{err_msg}: shapes differ, {a.shape} vs {b.shape}")
    if a.dtype == b.dtype == dtypes.float0:
        return
    at = max(_tolerance(a.dtype, atol), _tolerance(b.dtype, atol))
    rt = max(_tolerance(a.dtype, rtol), _tolerance(b.dtype, rtol))
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(a.astype(np.float64) if a.dtype.kind == "V" else a,
                                   b, atol=at * a.size, rtol=rt * b.size, err_msg=err_msg)


def check_close(xs: Any, ys: Any, atol: Any = None, rtol: Any = None, err_msg: str = "") -> None:
    """Every leaf of `xs` close to the same leaf of `ys` (tolerances per dtype)."""
    tree_map(partial(_assert_close, atol=atol, rtol=rtol, err_msg=err_msg), xs, ys)


def _rand_like(rng: np.random.RandomState, x: Any) -> Any:
    dtype, shape = _dtype(x), np.shape(x)
    out = np.asarray(rng.randn(*shape), dtype=dtype)
    if np.issubdtype(dtype, np.complexfloating):
        out = out + dtype.type(1j) * np.asarray(rng.randn(*shape), dtype=dtype)
    return out


def _scaled(xs: Any, a: float) -> Any:
    return tree_map(lambda x: np.multiply(np.asarray(x), np.asarray(a, _dtype(x)),
                                          dtype=_dtype(x)), xs)


def _combine(op: Callable, xs: Any, ys: Any) -> Any:
    return tree_map(lambda x, y: np.asarray(op(np.asarray(x), np.asarray(y)), _dtype(x)), xs, ys)


def _safe_sub(x: Any, y: Any) -> Any:
    """x - y with inf - inf == 0 (a function that is infinite on both sides)."""
    x, y = np.asarray(x), np.asarray(y)
    with np.errstate(invalid="ignore"):
        return np.where(np.equal(x, y), np.zeros((), x.dtype), np.subtract(x, y, dtype=x.dtype))


def numerical_jvp(f: Callable, primals: Sequence, tangents: Sequence, eps: float = EPS) -> Any:
    """Central differences of `f` at `primals` along `tangents`."""
    delta = _scaled(tangents, eps)
    f_pos = f(*_combine(np.add, primals, delta))
    f_neg = f(*_combine(np.subtract, primals, delta))
    return _scaled(tree_map(_safe_sub, f_pos, f_neg), 0.5 / eps)


def _inner(xs: Any, ys: Any) -> Any:
    def contract(x: Any, y: Any) -> Any:
        return np.real(np.dot(np.conj(np.asarray(x)).reshape(-1), np.asarray(y).reshape(-1)))
    return tree_reduce(np.add, tree_map(contract, xs, ys))


def check_jvp(f: Callable, f_jvp: Callable, args: Sequence, atol: Any = None,
              rtol: Any = None, eps: float = EPS, err_msg: str = "") -> None:
    """`f_jvp(args, tangents)` against finite differences, along one random direction."""
    rng = np.random.RandomState(0)
    tangent = tree_map(partial(_rand_like, rng), tuple(args))
    v_out, t_out = f_jvp(tuple(args), tangent)
    check_close(v_out, f(*args), atol, rtol, f"{err_msg} primal" if err_msg else "primal")
    check_close(t_out, numerical_jvp(f, args, tangent, eps), atol, rtol,
                f"{err_msg} tangent" if err_msg else "tangent")


def check_vjp(f: Callable, f_vjp: Callable, args: Sequence, atol: Any = None,
              rtol: Any = None, eps: float = EPS, err_msg: str = "") -> None:
    """`f_vjp(*args)` by the dot-product test against finite-difference tangents."""
    rng = np.random.RandomState(0)
    v_out, vjp_fun = f_vjp(*args)
    check_close(v_out, f(*args), atol, rtol, f"{err_msg} primal" if err_msg else "primal")
    tangent = tree_map(partial(_rand_like, rng), tuple(args))
    tangent_out = numerical_jvp(f, args, tangent, eps)
    cotangent = tree_map(partial(_rand_like, rng), v_out)
    conj = partial(tree_map, lambda x: np.conj(np.asarray(x)))
    cotangent_out = conj(vjp_fun(conj(cotangent)))
    check_close(_inner(tangent, cotangent_out), _inner(tangent_out, cotangent), atol, rtol,
                f"{err_msg} cotangent projection" if err_msg else "cotangent projection")


def _jvp_from_linearize(f: Callable, primals: Sequence, tangents: Sequence) -> tuple:
    out, f_lin = linearize(f, *primals)
    return out, f_lin(*tangents)


def check_grads(f: Callable, args: Sequence, order: int,
                modes: Sequence[str] = ("fwd", "rev"), atol: Any = None, rtol: Any = None,
                eps: float | None = None) -> None:
    """Check `f`'s derivatives at `args` up to `order` in the given `modes`
    ("fwd", "rev", "lin"); raises AssertionError naming the failing check."""
    args, eps = tuple(args), eps or EPS

    def recurse(f: Callable, args: tuple, order: int, msg: str) -> None:
        if "fwd" in modes:
            m = f"JVP of {msg}" if msg else "JVP"
            check_jvp(f, partial(jvp, f), args, atol, rtol, eps, m)
            if order > 1:
                recurse(partial(jvp, f), (args, args), order - 1, m)
        if "rev" in modes:
            m = f"VJP of {msg}" if msg else "VJP"
            check_vjp(f, partial(vjp, f), args, atol, rtol, eps, m)
            if order > 1:
                def f_vjp(*primals: Any) -> Any:
                    out, pullback = vjp(f, *primals)
                    return pullback(out)
                recurse(f_vjp, args, order - 1, m)
        if "lin" in modes:
            m = f"LIN of {msg}" if msg else "LIN"
            check_jvp(f, partial(_jvp_from_linearize, f), args, atol, rtol, eps, m)
            if order > 1:
                recurse(partial(_jvp_from_linearize, f), (args, args), order - 1, m)

    recurse(f, args, order, "")
