"""Example values: x64 mode, random variants of examples, and what is being checked.

Why variants are drawn from the example's own values: a family's example
encodes the primitive's domain (positive for `log`, in range for an index
argument, a valid permutation...). Uniform random numbers would leave that
domain and turn a vmap check into a comparison of NaNs or of IndexErrors.
Integer and boolean variants are resamplings of the example's values; float
variants lie in the interval the example spans (intervals are how domains of
elementwise math look), widened a little when the example is a single point.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from .. import dtypes
from ..config import config
from ..core.array import Array, as_array
from ..core.trace import Primitive

__all__ = ["x64", "random_args_like", "variant_like", "exact_values", "Target", "as_list",
           "to_array", "to_float64", "is_differentiable", "rand", "numeric_jacobian",
           "numeric_grad"]

_SCALARS = (bool, int, float, complex)


@contextmanager
def x64(enabled: bool = True) -> Iterator[None]:
    """Turn `enable_x64` on (or off) for the block and restore the previous value after.

    The jvp check needs it: finite differences in float32 carry errors of about
    1e-7 / eps, far above any useful tolerance.
    """
    previous = config.enable_x64
    config.update("enable_x64", enabled)
    try:
        yield
    finally:
        config.update("enable_x64", previous)


def exact_values(dtype: Any, shape: Sequence[int], seed: int = 0, *,
                 ints: tuple[int, int] = (-4, 5), quarters: tuple[int, int] = (-8, 8)) -> Any:
    """Random NumPy values of `dtype` (a name or dtype; "bfloat16" too) that every dtype
    holds exactly: bools; integers in [ints[0], ints[1]) (from 0 for unsigned);
    floats that are multiples of 1/4 in [quarters[0]/4, quarters[1]/4). Lowering
    tests compare XLA with NumPy on these, so sums and products round alike."""
    name = dtype if isinstance(dtype, str) else np.dtype(dtype).name
    rng = np.random.default_rng(seed)
    if name == "bool":
        return rng.random(shape) < 0.5
    if name.startswith(("int", "uint")):
        low = 0 if name.startswith("u") else ints[0]
        return rng.integers(low, ints[1], size=shape).astype(name)
    values = rng.integers(quarters[0], quarters[1], size=shape) / 4
    return values.astype(dtypes.bfloat16 if name == "bfloat16" else name)


def rand(shape: Sequence[int], seed: int = 0, dtype: Any = np.float32) -> np.ndarray:
    """Standard-normal NumPy values of `shape` and `dtype`, reproducibly (one helper for
    every family's tests, instead of a copy per file)."""
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def numeric_jacobian(fun: Callable, x: Any, eps: float = 1e-6) -> np.ndarray:
    """d fun / d x by central differences in float64; shape fun(x).shape + x.shape.

    The reference tests of whole programs (grad through control flow, jacfwd
    of compositions) compare with; run the function in float64 (`x64()`) so
    the differences are accurate to about eps**2 + 1e-16 / eps.
    """
    x = np.asarray(x, np.float64)
    cols = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = eps
        e = e.reshape(x.shape)
        hi, lo = np.asarray(fun(x + e), np.float64), np.asarray(fun(x - e), np.float64)
        cols.append((hi - lo) / (2 * eps))
    out_shape = np.shape(cols[0]) if cols else np.shape(fun(x))
    return np.stack(cols, axis=-1).reshape(out_shape + x.shape) if cols \
        else np.zeros(out_shape + x.shape)


def numeric_grad(fun: Callable, x: Any, eps: float = 1e-6) -> np.ndarray:
    """The gradient of scalar `fun` at `x` by central differences (float64, x's shape)."""
    return numeric_jacobian(lambda v: float(np.asarray(fun(v))), x, eps)


def is_differentiable(x: Any) -> bool:
    """Floating (and complex) values get tangents; integers and booleans do not."""
    return dtypes.issubdtype_inexact(np.dtype(to_array(x).dtype))


def to_array(x: Any) -> Array:
    """An example argument as a plugax Array: canonical dtype, weak type kept."""
    return as_array(x)


def to_float64(x: Any) -> Array:
    """Floating arguments cast to float64, complex ones to complex128 (weak type kept);
    others unchanged."""
    a = to_array(x)
    if dtypes.is_float(np.dtype(a.dtype)):
        return Array(np.asarray(a).astype(np.float64), a.weak_type)
    if np.dtype(a.dtype).kind == "c":
        return Array(np.asarray(a).astype(np.complex128), a.weak_type)
    return a


def variant_like(x: Any, rng: np.random.Generator) -> Array:
    """A random value with the shape, dtype and weak type of `x`, from its value range."""
    a = to_array(x)
    value = np.asarray(a)
    if value.size == 0:
        return Array(value.copy(), a.weak_type)
    flat = value.reshape(-1)
    if not dtypes.is_float(value.dtype):  # ints, bools: resample the example's own values
        return Array(rng.choice(flat, size=value.shape).astype(value.dtype), a.weak_type)
    wide = flat.astype(np.float64)
    finite = wide[np.isfinite(wide)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (-1.0, 1.0)
    if hi - lo < 1e-3 * max(1.0, abs(lo), abs(hi)):   # a single point: widen it, keep its sign
        lo, hi = (0.5 * lo, 1.5 * hi) if lo > 0 else (1.5 * lo, 0.5 * hi) if hi < 0 \
            else (-1.0, 1.0)
    drawn = rng.uniform(lo, hi, size=value.shape)
    return Array(np.asarray(drawn).astype(value.dtype), a.weak_type)


def random_args_like(*args: Any, seed: int = 0) -> tuple:
    """Random arguments like `args` (same shapes, dtypes, weak types), reproducibly.

    Python scalars come back as Python scalars of the same type, so their weak
    type survives; everything else comes back as a plugax Array.
    """
    rng = np.random.default_rng(seed)
    out = []
    for x in args:
        v = variant_like(x, rng)
        out.append(type(x)(np.asarray(v).item()) if type(x) in _SCALARS else v)
    return tuple(out)


def as_list(out: Any) -> list:
    """Outputs as a list, for single- and multiple-result primitives alike."""
    return list(out) if isinstance(out, (list, tuple)) else [out]


class Target:
    """What a check exercises: a Primitive with params, or a function of arrays.

    `name` is how messages refer to it; `fn(*args)` binds it; `prim` is the
    Primitive (None for a plain function) whose rule tables the checks consult.
    """

    def __init__(self, prim_or_fn: Primitive | Callable, params: dict):
        self.params = dict(params)
        if isinstance(prim_or_fn, Primitive):
            self.prim: Primitive | None = prim_or_fn
            self.name = f"primitive '{prim_or_fn.name}'"
            self.fn = lambda *args: prim_or_fn.bind(*args, **self.params)
        elif callable(prim_or_fn):
            self.prim = None
            self.name = f"function '{getattr(prim_or_fn, '__name__', prim_or_fn)}'"
            self.fn = lambda *args: prim_or_fn(*args, **self.params)
        else:
            raise TypeError(f"expected a plugax Primitive or a function, got {prim_or_fn!r}")

    def has_rule(self, table: dict) -> bool:
        """Whether the primitive has an entry in a rule table (functions: always)."""
        return self.prim is None or self.prim in table

    def eval(self, args: Sequence[Any]) -> list:
        """Eager evaluation, outputs as a list."""
        return as_list(self.fn(*args))
