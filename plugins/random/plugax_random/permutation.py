"""permutation (and the sorts behind choice without replacement / categorical without
replacement).

JAX shuffles by sorting: each round draws 32 random bits per element and sorts the
array by them (`lax.sort_key_val`, stable), `ceil(3 ln n / ln(2**32 - 1))` rounds (one for
n up to ~1600). plugax.lax has no sort yet, so this family carries a private one,
`random_argsort`: the stable ordering of a key array along one axis (ascending, or
descending for top-k), lowered to `stablehlo.sort` of (keys, iota). The values are then
moved with `take_along_axis`, a gather, so permutations are differentiable in the values
(a gather has a transpose) while the primitive itself has integer outputs and no tangent.
Once plugax.lax gains `sort_key_val` / `top_k`, this primitive can go.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

import plugax.numpy as jnp
from plugax.extend import (Primitive, RuleSet, ShapedArray, Zero, bdim_at_front,
                           default_int_dtype, format_operands)

from .keys import random_bits
from .samplers import jitted, key_of, split2

__all__ = ["random_argsort_p", "argsort", "permutation", "top_k_indices", "RULES"]

random_argsort_p = Primitive("random_argsort")
_I32 = np.dtype(np.int32)


def _abstract_eval(ctx, keys: ShapedArray, *, dimension: int, descending: bool) -> ShapedArray:
    dt = np.dtype(keys.dtype)
    if dt.kind not in "uif" or keys.ndim == 0 or not 0 <= dimension < keys.ndim:
        raise TypeError(f"primitive 'random_argsort' takes a real array of rank >= 1 and an axis "
                        f"in range, got {format_operands([keys])} and dimension={dimension}")
    return ShapedArray(keys.shape, _I32)


def _impl(ctx, keys: np.ndarray, *, dimension: int, descending: bool) -> np.ndarray:
    if descending:   # order-reversing and exact: negated floats, widened integers
        keys = -keys if keys.dtype.kind == "f" else -keys.astype(np.int64)
    return np.argsort(keys, axis=dimension, kind="stable").astype(_I32)


def _jvp(ctx, primals, tangents, *, dimension: int, descending: bool):
    out = random_argsort_p.bind(*primals, dimension=dimension, descending=descending)
    return out, Zero.from_value(out)


def _batching(ctx, args, dims, *, dimension: int, descending: bool):
    (keys,), (d,) = args, dims
    keys = bdim_at_front(keys, d, ctx.axis_size)
    return random_argsort_p.bind(keys, dimension=dimension + 1, descending=descending), 0


def _lowering(ctx, keys, *, dimension: int, descending: bool):
    """stablehlo.sort of (keys, iota) with a stable comparator on the keys alone."""
    hlo, ir = ctx.hlo, ctx.ir
    aval = ctx.avals_in[0]
    out = ctx.aval_out
    iota = hlo.iota(ctx.ir_type(out), ir.IntegerAttr.get(ir.IntegerType.get_signless(64),
                                                         dimension))
    sort = hlo.SortOp([ctx.ir_type(aval), ctx.ir_type(out)], [keys, iota],
                      dimension=ir.IntegerAttr.get(ir.IntegerType.get_signless(64), dimension),
                      is_stable=ir.BoolAttr.get(True))
    scalar = [ir.RankedTensorType.get([], ctx.element_type(aval.dtype)),
              ir.RankedTensorType.get([], ctx.element_type(out.dtype))]
    block = sort.comparator.blocks.append(scalar[0], scalar[0], scalar[1], scalar[1])
    kind = {"u": "UNSIGNED", "i": "SIGNED", "f": "FLOAT"}[np.dtype(aval.dtype).kind]
    with ir.InsertionPoint(block):
        lhs, rhs = block.arguments[0], block.arguments[1]
        direction = "GT" if descending else "LT"
        cmp = hlo.CompareOp(lhs, rhs, hlo.ComparisonDirectionAttr.get(direction),
                            compare_type=hlo.ComparisonTypeAttr.get(kind))
        hlo.ReturnOp([cmp.result])
    return [sort.results[1]]


RULES = [RuleSet(random_argsort_p, impl=_impl, abstract_eval=_abstract_eval, jvp=_jvp,
                 batching=_batching, lowering={"default": _lowering})]


def argsort(keys: Any, axis: int = -1, descending: bool = False) -> Any:
    keys = jnp.asarray(keys)
    return random_argsort_p.bind(keys, dimension=axis % keys.ndim, descending=descending)


def top_k_indices(x: Any, k: int) -> Any:
    """The indices of the k largest entries along the last axis, ties to the lower index
    (lax.top_k's order)."""
    idx = argsort(x, -1, descending=True)
    return idx[..., :k]


def _shuffle(data: Any, x: Any, axis: int) -> Any:
    """JAX's shuffle: sort x along `axis` by fresh random bits, for as many rounds as make
    collisions of the 32-bit sort keys negligible."""
    n = math.prod(x.shape)
    rounds = int(np.ceil(3 * np.log(max(1, n)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        data, sub = split2(data)
        sort_keys = random_bits(sub, 32, tuple(x.shape))
        x = jnp.take_along_axis(x, argsort(sort_keys, axis), axis=axis)
    return x


_shuffle_jit = jitted("axis")(_shuffle)


def permutation(key: Any, x: Any, axis: int = 0, independent: bool = False) -> Any:
    """A random permutation of arange(x) (x an int) or of x along `axis`; with
    independent=True each slice along the other axes is shuffled on its own."""
    data = key_of("permutation", key)
    if isinstance(x, (int, np.integer)):
        return _shuffle_jit(data, jnp.arange(int(x), dtype=default_int_dtype()), axis=0)
    arr = jnp.asarray(x)
    if arr.ndim == 0:
        if not np.issubdtype(np.dtype(arr.dtype), np.integer):
            raise TypeError("x must be an integer or at least 1-dimensional")
        return _shuffle_jit(data, jnp.arange(int(arr), dtype=default_int_dtype()), axis=0)
    axis = axis % arr.ndim
    if independent or arr.ndim == 1:
        return _shuffle_jit(data, arr, axis=axis)
    ind = _shuffle_jit(data, jnp.arange(arr.shape[axis], dtype=default_int_dtype()), axis=0)
    return jnp.take(arr, ind, axis=axis)

