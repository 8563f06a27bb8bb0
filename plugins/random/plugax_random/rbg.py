"""lax.rng_bit_generator and lax.rng_uniform: XLA's own random-number ops, and the
RandomAlgorithm enum.

Why these are not NumPy impls: their bits are defined by XLA's implementation of the
algorithms (RNG_DEFAULT is Philox on the CPU, with XLA's key/counter layout), not by a
published function of the key as threefry2x32 is. So the primitive lowers to
`stablehlo.rng_bit_generator`, and its eager impl runs that lowering through the
compiler (a jit of the primitive): eager, jit and vmap all give XLA's bits, which are
JAX's. (Under `plugax.disable_jit()` there is no compiler to ask, and it says so.)

`rng_uniform` is XLA's stateful `stablehlo.rng`; like JAX's it is not reproducible and
has no key; eagerly it draws from NumPy's generator.
"""
from __future__ import annotations

import enum
from typing import Any, Sequence

import numpy as np

from plugax.extend import (Primitive, RuleSet, ShapedArray, ShapeError, Zero,
                           canonicalize_dtype, format_operands, jit_disabled)

__all__ = ["rng_bit_generator_p", "rng_uniform_p", "RULES", "LAX"]


class RandomAlgorithm(enum.IntEnum):
    """Which XLA bit generator rng_bit_generator uses (JAX's enum)."""

    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2

    def __str__(self) -> str:
        return self.name


rng_bit_generator_p = Primitive("rng_bit_generator", multiple_results=True)
rng_uniform_p = Primitive("rng_uniform")

_BIT_DTYPES = ("uint8", "uint16", "uint32", "uint64")


def _rbg_abstract_eval(ctx, key: ShapedArray, *, shape, dtype, algorithm):
    if key.dtype != np.uint32 or key.shape != (4,):
        raise ShapeError(f"primitive 'rng_bit_generator' needs a uint32 key of shape (4,), "
                         f"got ({format_operands([key])})")
    if np.dtype(dtype).name not in _BIT_DTYPES:
        raise ShapeError(f"rng_bit_generator: unsupported dtype {np.dtype(dtype).name} "
                         f"(it generates uint8, uint16, uint32 or uint64 bits)")
    return [ShapedArray(key.shape, key.dtype), ShapedArray(tuple(shape), np.dtype(dtype))]


def _rbg_impl(ctx, key, *, shape, dtype, algorithm):
    if jit_disabled():
        raise NotImplementedError("lax.rng_bit_generator draws XLA's bits, which need the "
                                  "compiler: it cannot run under plugax.disable_jit()")
    import plugax
    out = plugax.jit(lambda k: rng_bit_generator_p.bind(k, shape=shape, dtype=dtype,
                                                        algorithm=algorithm))(key)
    return [np.asarray(o) for o in out]


def _rbg_lowering(ctx, key, *, shape, dtype, algorithm):
    """XLA's op takes its state as u64[2]: the u32[4] key is reinterpreted (two words per
    u64, little end first) on the way in and out, so it works without x64."""
    names = {RandomAlgorithm.RNG_DEFAULT: "DEFAULT", RandomAlgorithm.RNG_THREE_FRY: "THREE_FRY",
             RandomAlgorithm.RNG_PHILOX: "PHILOX"}
    attr = ctx.hlo.RngAlgorithmAttr.get(names[RandomAlgorithm(algorithm)])
    ir = ctx.ir
    u32, u64 = ir.IntegerType.get_unsigned(32), ir.IntegerType.get_unsigned(64)
    pairs = ctx.hlo.reshape(ir.RankedTensorType.get([2, 2], u32), key)
    state = ctx.hlo.bitcast_convert(ir.RankedTensorType.get([2], u64), pairs)
    op = ctx.hlo.RngBitGeneratorOp(state.type, ctx.ir_type(ctx.avals_out[1]), attr, state)
    new_state, bits = op.results
    words = ctx.hlo.bitcast_convert(ir.RankedTensorType.get([2, 2], u32), new_state)
    return [ctx.hlo.reshape(ctx.ir_type(ctx.avals_out[0]), words), bits]


def _rbg_jvp(ctx, primals, tangents, **params):
    outs = rng_bit_generator_p.bind(*primals, **params)
    return outs, [Zero.from_value(o) for o in outs]


def _rbg_vmap(ctx, args, dims, *, shape, dtype, algorithm):
    """One generator per key, as JAX batches it: a loop over the batch (XLA's op takes
    one key)."""
    import plugax.lax as lax
    from plugax.extend import moveaxis
    keys = moveaxis(args[0], dims[0], 0)
    n = ctx.axis_size
    pairs = [rng_bit_generator_p.bind(lax.index_in_dim(keys, i, 0, keepdims=False),
                                      shape=shape, dtype=dtype, algorithm=algorithm)
             for i in range(n)]
    return [lax.stack([p[0] for p in pairs]), lax.stack([p[1] for p in pairs])], [0, 0]


def _uniform_abstract_eval(ctx, a: ShapedArray, b: ShapedArray, *, shape):
    if a.shape or b.shape or a.dtype != b.dtype or a.dtype.kind not in "fiu":
        raise ShapeError(f"primitive 'rng_uniform' needs two scalar bounds of one numeric "
                         f"dtype, got ({format_operands([a, b])})")
    return ShapedArray(tuple(shape), a.dtype)


def _uniform_impl(ctx, a, b, *, shape):
    rng = np.random.default_rng()
    if a.dtype.kind == "f":
        return (a + (b - a) * rng.random(shape)).astype(a.dtype)
    return rng.integers(a, b, shape, dtype=a.dtype, endpoint=False)


def _uniform_lowering(ctx, a, b, *, shape):
    dims = ctx.constant(np.asarray(shape, np.int64), np.int64)
    return ctx.hlo.rng(a, b, dims, ctx.hlo.RngDistributionAttr.get("UNIFORM"))


def _uniform_jvp(ctx, primals, tangents, **params):
    out = rng_uniform_p.bind(*primals, **params)
    return out, Zero.from_value(out)


RULES = [
    RuleSet(rng_bit_generator_p, impl=_rbg_impl, abstract_eval=_rbg_abstract_eval,
            jvp=_rbg_jvp, batching=_rbg_vmap, lowering={"default": _rbg_lowering}),
    RuleSet(rng_uniform_p, impl=_uniform_impl, abstract_eval=_uniform_abstract_eval,
            jvp=_uniform_jvp, lowering={"default": _uniform_lowering}),
]


def rng_bit_generator(key: Any, shape: Sequence[int], dtype: Any = np.uint32,
                      algorithm: RandomAlgorithm = RandomAlgorithm.RNG_DEFAULT) -> tuple:
    """(new_key, bits): `shape` random bits of `dtype` from XLA's generator `algorithm`,
    and the key to use next."""
    shape = tuple(int(d) for d in shape)
    dtype = np.dtype(dtype)
    if dtype.name not in _BIT_DTYPES:
        raise TypeError(f"rng_bit_generator: unsupported dtype {dtype}")
    dtype = canonicalize_dtype(dtype)
    new_key, bits = rng_bit_generator_p.bind(key, shape=shape, dtype=dtype,
                                             algorithm=RandomAlgorithm(algorithm))
    return new_key, bits


def rng_uniform(a: Any, b: Any, shape: Sequence[int]) -> Any:
    """Values uniform in [a, b) from XLA's stateful generator (not reproducible; use
    plugax.random for keyed, reproducible draws)."""
    return rng_uniform_p.bind(a, b, shape=tuple(int(d) for d in shape))


LAX = {"rng_bit_generator": rng_bit_generator, "rng_uniform": rng_uniform,
       "RandomAlgorithm": RandomAlgorithm}
