"""Cases of the differential test: what a table entry is, and the input generators.

Plain NumPy, no plugax and no JAX: `record_jax.py` imports this module under JAX to
record what JAX returns for every case, and the tests import it under plugax. Every
input is drawn from a generator seeded by the function's name, so a case is the same
array in both runs and in every run.

A case's arguments are its traced operands when they are NumPy arrays (jit traces them,
vmap batches them, grad differentiates the floating ones); anything else (Python
scalars, shapes, axes, dtypes, functions) is passed as it is, a static argument.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any, Callable

import ml_dtypes
import numpy as np

f16, f32, i8, i32, u8 = np.float16, np.float32, np.int8, np.int32, np.uint8
bf16 = ml_dtypes.bfloat16

# Edge values every float function sees: signed zeros, the unit points where domains
# end, NaN and infinities. Magnitudes stay small so float32 and float64 agree on overflow.
EDGES = np.array([0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.5, -3.0, np.nan, np.inf, -np.inf], f32)

# Open intervals where a function is smooth: finite differences are taken only there.
DOMAINS = {"real": (-2.5, 2.5), "pos": (0.2, 3.0), "unit": (-0.9, 0.9), "gt1": (1.2, 3.0),
           "away0": (0.4, 2.5)}


@dataclass
class Case:
    """One call: `fn(*args, **kwargs)`. `smooth`: finite differences apply (every float
    input lies inside the function's smooth domain). `weak_args`: the Python int/float
    arguments are data, so jit also receives them as (weakly typed) traced arguments."""

    label: str
    args: tuple
    kwargs: dict = field(default_factory=dict)
    smooth: bool = False
    weak_args: bool = False


@dataclass
class Spec:
    """A table entry: how to make inputs, what NumPy computes, which checks apply.

    ref:    NumPy reference, run on float64 copies of the float inputs, with JAX's
            semantics (where JAX and NumPy disagree and the reference does not say so,
            `jax_expected.json` holds JAX's value for that case); None: types only.
    cases:  () -> list[Case].
    grad:   differentiable in its float array arguments (checked against central finite
            differences in float64 and against JAX's gradient at every case).
    vmap / jit: whether those checks apply.
    differs: {case label: why} -- cases where plugax knowingly differs from JAX (the
            test checks that they still do, and compares values with NumPy only); each
            is a line of docs/faq.md's "Where plugax differs from JAX".
    jit_differs: {case label: why} -- cases where jit(grad) differs from eager grad in
            JAX too (XLA simplifies the compiled derivative); not compared.
    call:   how to call the function when it takes functions or extra structure:
            call(fn, *args, **kwargs); the JAX recorder uses the same call.
    jax:    (jnp, lax) -> the JAX function, when it is not the same name in the same
            namespace (plugax's simplified gather, say).
    """

    ref: Callable | None
    cases: Callable[[], list]
    grad: bool = False
    vmap: bool = True
    jit: bool = True
    rtol: float = 2e-6
    atol: float = 1e-6
    call: Callable | None = None
    jax: Callable | None = None
    differs: dict = field(default_factory=dict)
    jit_differs: dict = field(default_factory=dict)


def rng_for(name: str, salt: str = "") -> np.random.Generator:
    """A generator seeded by the entry's name: stable across runs and table edits."""
    return np.random.default_rng(zlib.crc32(f"{name}/{salt}".encode()))


def uniform(rng: np.random.Generator, shape: tuple, domain: str = "real", dtype=f32) -> Any:
    lo, hi = DOMAINS[domain]
    values = rng.uniform(lo, hi, size=shape)
    if domain == "away0":   # both signs, kept away from zero
        values *= rng.choice([-1.0, 1.0], size=shape)
    return values.astype(dtype)


def ints(rng: np.random.Generator, shape: tuple, lo: int = -3, hi: int = 4, dtype=i32) -> Any:
    return rng.integers(lo, hi, size=shape).astype(dtype)


def bools(rng: np.random.Generator, shape: tuple) -> Any:
    return rng.random(shape) < 0.5


# --- generators for the common shapes of function ---------------------------------------
def unary(name: str, domain: str = "real", *, ints_too: bool = True,
          bools_too: bool = True) -> Callable[[], list]:
    """One float array (smooth), the edge values, integers, bools, Python scalars (weak),
    float16, a rank-0 array and an empty array."""
    def cases() -> list:
        r = rng_for(name)
        lo, hi = DOMAINS[domain]
        mid = lo + 0.37 * (hi - lo)     # inside the domain, off 0 and the integers
        out = [Case("f32", (uniform(r, (2, 3), domain),), smooth=True),
               Case("edges", (EDGES,)),
               Case("py_float", (mid,), weak_args=True),
               Case("f16", (uniform(r, (3,), domain, f16),)),
               Case("rank0", (np.asarray(mid, f32),), smooth=True),
               Case("empty", (np.zeros((0, 2), f32),))]
        if ints_too:
            out += [Case("i32", (ints(r, (2, 3)),)), Case("py_int", (2,), weak_args=True)]
        if bools_too:
            out.append(Case("bool", (bools(r, (4,)),)))
        return out
    return cases


def binary(name: str, domain: str = "real", domain_y: str | None = None, *,
           ints_too: bool = True, bools_too: bool = True) -> Callable[[], list]:
    """Two operands: same shape, broadcasting, the grid of every edge value against every
    other, promotion between dtypes and with weak Python scalars, and empty arrays."""
    domain_y = domain_y or domain

    def cases() -> list:
        r = rng_for(name)
        x, y = (lambda s, d=domain: uniform(r, s, d)), (lambda s: uniform(r, s, domain_y))
        out = [Case("f32", (x((2, 3)), y((2, 3))), smooth=True),
               Case("broadcast", (x((2, 3)), y((3,))), smooth=True),
               Case("edges", (np.repeat(EDGES, EDGES.size), np.tile(EDGES, EDGES.size))),
               Case("py_float", (x((3,)), float(np.mean(DOMAINS[domain_y]))), weak_args=True),
               Case("f16_py", (x((2,)).astype(f16), 1.5), weak_args=True),
               Case("bf16_f16", (x((2,)).astype(bf16), y((2,)).astype(f16))),
               Case("empty", (np.zeros((0,), f32), np.zeros((0,), f32)))]
        if ints_too:
            out += [Case("i32", (ints(r, (3, 4)), ints(r, (3, 4)))),
                    Case("i32_f32", (ints(r, (2, 3)), y((3,)))),
                    Case("py_int_i32", (2, ints(r, (3,))), weak_args=True),
                    Case("i8_u8", (ints(r, (4,), dtype=i8), ints(r, (4,), 0, 4, u8)))]
        if bools_too:
            out.append(Case("bool", (bools(r, (4,)), bools(r, (4,)))))
        return out
    return cases


def integer_binary(name: str) -> Callable[[], list]:
    """Bitwise operations: integers of several widths, bools, weak Python ints, and Python
    bools (which are not weakly typed)."""
    def cases() -> list:
        r = rng_for(name)
        return [Case("i32", (ints(r, (3, 4), -8, 8), ints(r, (3, 4), -8, 8))),
                Case("py_bools", (True, False)),
                Case("u8_i8", (ints(r, (4,), 0, 200, u8), ints(r, (4,), -8, 8, i8))),
                Case("bool", (bools(r, (5,)), bools(r, (5,)))),
                Case("py_int", (ints(r, (3,), -8, 8, i8), 3), weak_args=True),
                Case("broadcast", (ints(r, (2, 3), -8, 8), ints(r, (3,), -8, 8)))]
    return cases


def listed(*make: Callable[[np.random.Generator], Case], name: str = "") -> Callable[[], list]:
    """Cases written out by hand: each `make(rng)` returns one Case."""
    def cases() -> list:
        r = rng_for(name)
        return [m(r) for m in make]
    return cases


def weights(shape: tuple, dtype=np.float64) -> np.ndarray:
    """Fixed cotangent weights: grad checks differentiate sum(f(x) * weights)."""
    n = int(np.prod(shape))
    return (1.0 + 0.5 * np.cos(np.arange(n))).reshape(shape).astype(dtype)


def is_traced(arg: Any) -> bool:
    return isinstance(arg, (np.ndarray, np.generic))


def float_positions(case: Case) -> list[int]:
    """Positions of the floating-point array arguments (what grad differentiates)."""
    return [i for i, a in enumerate(case.args)
            if is_traced(a) and np.asarray(a).dtype.kind == "f"]
