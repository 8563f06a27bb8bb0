"""The `threefry2x32` primitive: the Threefry-2x32 block cipher (20 rounds), JAX's hash.

`threefry2x32(k1, k2, x1, x2) -> (y1, y2)` encrypts the counter pair `(x1, x2)` under the
key `(k1, k2)`, elementwise over uint32 arrays that broadcast together (NumPy's rule; a
rank-0 key word broadcasts against any counter shape). Everything in `plugax.random` is
built on it, so it is the one place where the bits are made: the NumPy impl (eager), the
StableHLO lowering (jit) and JAX's lowering must agree bit for bit, which the tests check
against JAX's recorded outputs.

Why a primitive and not a composition of `plugax.lax` ops: the cipher rotates words
(shift left | logical shift right), and plugax.lax has no shifts yet; a primitive also
keeps jaxprs small (one equation instead of ~100), as in JAX. The lowering is unrolled
straight-line StableHLO (JAX uses a rolled 5-step loop on CPU to save compile time; the
result is the same).
"""
from __future__ import annotations

from typing import Any

import numpy as np

import plugax.lax as lax
from plugax.extend import (Primitive, RuleSet, ShapedArray, ShapeError, Zero, bdim_at_front,
                           broadcast_shapes, format_operands)

__all__ = ["threefry2x32_p", "threefry2x32", "threefry2x32_numpy", "RULES"]

threefry2x32_p = Primitive("threefry2x32", multiple_results=True)

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA   # Threefry's key-schedule constant
_U32 = np.dtype(np.uint32)


# --- the cipher, shared by impl and lowering ------------------------------------------
def _cipher(k1: Any, k2: Any, x1: Any, x2: Any, *, add, xor, rotl, const) -> tuple[Any, Any]:
    """Threefry-2x32 written once over abstract word operations, so that the NumPy impl
    and the StableHLO lowering are the same sequence of steps by construction."""
    ks = (k1, k2, xor(xor(k1, k2), const(_PARITY)))
    a, b = add(x1, ks[0]), add(x2, ks[1])
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            a = add(a, b)
            b = xor(a, rotl(b, r))
        a = add(a, ks[(i + 1) % 3])
        b = add(add(b, ks[(i + 2) % 3]), const(i + 1))
    return a, b


def threefry2x32_numpy(k1: Any, k2: Any, x1: Any, x2: Any) -> tuple[np.ndarray, np.ndarray]:
    """The cipher in NumPy (uint32 arithmetic wraps modulo 2**32), vectorised."""
    k1, k2, x1, x2 = (np.asarray(v, _U32) for v in (k1, k2, x1, x2))
    shape = np.broadcast_shapes(k1.shape, k2.shape, x1.shape, x2.shape)
    # rank >= 1: NumPy warns about wrap-around on scalars, never on arrays
    k1, k2, x1, x2 = (np.broadcast_to(v, shape).reshape(-1) for v in (k1, k2, x1, x2))

    def rotl(v: np.ndarray, r: int) -> np.ndarray:
        return (v << _U32.type(r)) | (v >> _U32.type(32 - r))

    y1, y2 = _cipher(k1, k2, x1, x2, add=np.add, xor=np.bitwise_xor, rotl=rotl,
                     const=_U32.type)
    return y1.reshape(shape), y2.reshape(shape)


# --- rules ------------------------------------------------------------------------------
def _abstract_eval(ctx, *avals: ShapedArray) -> list[ShapedArray]:
    if any(np.dtype(a.dtype) != _U32 for a in avals):
        raise TypeError(f"primitive 'threefry2x32' takes uint32 operands (k1, k2, x1, x2), "
                        f"got {format_operands(avals)}")
    shape = broadcast_shapes([a.shape for a in avals])
    if shape is None:
        raise ShapeError(f"primitive 'threefry2x32': operands {format_operands(avals)} do not "
                         f"broadcast together (NumPy's rule)")
    return [ShapedArray(tuple(shape), _U32)] * 2


def _impl(ctx, k1: np.ndarray, k2: np.ndarray, x1: np.ndarray,
          x2: np.ndarray) -> list[np.ndarray]:
    return list(threefry2x32_numpy(k1, k2, x1, x2))


def _jvp(ctx, primals, tangents):
    """Integer outputs: no tangent (float0 zeros), whatever the inputs' tangents."""
    outs = threefry2x32_p.bind(*primals)
    return outs, [Zero.from_value(o) for o in outs]


def _batching(ctx, args, dims):
    """Elementwise with broadcasting: put each mapped axis in front and pad the
    per-example shape with 1s to the common rank, so NumPy's rule still lines the
    axes up; unmapped operands broadcast as they are."""
    rank = max(np.ndim(x) - (d is not None) for x, d in zip(args, dims))
    moved = []
    for x, d in zip(args, dims):
        if d is not None:
            x = bdim_at_front(x, d, ctx.axis_size)
            shape = tuple(x.shape)
            x = lax.reshape(x, (shape[0],) + (1,) * (rank - len(shape) + 1) + shape[1:])
        moved.append(x)
    return threefry2x32_p.bind(*moved), [0, 0]


def _lowering(ctx, k1, k2, x1, x2):
    """Straight-line StableHLO: the operands broadcast to the output shape, then the
    20 rounds of add / rotate / xor on tensor<...xui32>."""
    out = ctx.avals_out[0]
    hlo = ctx.hlo

    def full(value, aval):   # broadcast_in_dim also stretches size-1 axes
        if tuple(aval.shape) == tuple(out.shape):
            return value
        dims = list(range(len(out.shape) - len(aval.shape), len(out.shape)))
        return ctx.broadcast_in_dim(value, _U32, out.shape, dims)

    k1, k2, x1, x2 = (full(v, a) for v, a in zip((k1, k2, x1, x2), ctx.avals_in))

    def const(v: int):
        return ctx.constant(v, _U32, out.shape)

    def rotl(v, r: int):
        return hlo.or_(hlo.shift_left(v, const(r)), hlo.shift_right_logical(v, const(32 - r)))

    y1, y2 = _cipher(k1, k2, x1, x2, add=hlo.add, xor=hlo.xor, rotl=rotl, const=const)
    return [y1, y2]


RULES = [RuleSet(threefry2x32_p, impl=_impl, abstract_eval=_abstract_eval, jvp=_jvp,
                 batching=_batching, lowering={"default": _lowering})]


def threefry2x32(k1: Any, k2: Any, x1: Any, x2: Any) -> list[Any]:
    """Bind the primitive: `[y1, y2]`, uint32 arrays of the operands' broadcast shape."""
    return threefry2x32_p.bind(k1, k2, x1, x2)
