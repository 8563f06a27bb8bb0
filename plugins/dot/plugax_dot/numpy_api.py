"""plugax.numpy products: dot, matmul (`@`), outer, inner, vdot, tensordot.

Each is one `dot_general` (matmul adds a squeeze before and a transpose after,
to broadcast batch dimensions). As in jax.numpy the operands are not converted:
dot_general contracts mixed dtypes, and `preferred_element_type` is the JAX
result type of the operands, so the output dtype (and weak type) is what
elementwise arithmetic on them would give.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from plugax.extend import Array, Tracer, canonicalize_dtype, get_aval, promoted_type

from .dot_general import DotDimensionNumbers, dot_general, dot_general_p


def asarrays(*operands: Any) -> list:
    """The operands as Arrays or tracers (which carry shape, dtype and weak_type)."""
    out = []
    for x in operands:
        if not isinstance(x, (Array, Tracer)):
            import plugax.numpy as pnp
            x = pnp.asarray(x)
        out.append(x)
    return out


def result_dtype(fn_name: str, *operands: Any) -> np.dtype:
    """The JAX promotion of the operands' dtypes (weak values yield), by the kernel's
    promotion rules (the ones `*` and `+` use), so products agree with them."""
    dtype = operands[0].dtype   # Arrays and tracers carry dtype and weak_type
    for x in operands:
        if (x.dtype is not dtype and x.dtype != dtype) or x.weak_type:
            return promoted_type(fn_name, [get_aval(x) for x in operands])[0]
    return dtype


def _contract(fn_name: str, x: Any, y: Any, x_axes: Sequence[int], y_axes: Sequence[int],
              preferred: Any = None, precision: Any = None) -> Any:
    """dot_general without batch dims: x's free dims, then y's."""
    dtype = preferred if preferred is not None else result_dtype(fn_name, x, y)
    return dot_general(x, y, ((tuple(x_axes), tuple(y_axes)), ((), ())), precision=precision,
                       preferred_element_type=dtype)


def dot(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """numpy.dot: a scalar scales; otherwise contract a's last axis with b's second-to-last
    (its only axis if b is a vector). precision and preferred_element_type as in lax."""
    x, y = asarrays(a, b)
    xn, yn = get_aval(x).ndim, get_aval(y).ndim
    if xn == 0 or yn == 0:
        return _contract("dot", x, y, (), (), preferred_element_type, precision)
    return _contract("dot", x, y, (xn - 1,), (max(yn - 2, 0),), preferred_element_type,
                     precision)


def matmul(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """numpy.matmul: stacks of matrices with broadcast batch dimensions.

    Batch positions (aligned from the right) of equal size become dot_general batch
    dims; where one side is absent or of size 1 the other side's dim is a free dim
    (the size-1 one is squeezed away). dot_general emits batch, x-free, y-free dims;
    a final transpose restores the broadcast batch order, then the m and n dims.
    """
    import plugax.lax as lax
    x, y = asarrays(a, b)
    xs, ys = x.shape, y.shape
    if not xs or not ys:
        raise ValueError(f"matmul: operands must not be scalars, got shapes {xs} and {ys}; "
                         f"use multiply or dot")
    if len(xs) <= 2 and len(ys) <= 2:   # no batch dims: a plain matrix/vector product
        dtype = preferred_element_type
        dtype = result_dtype("matmul", x, y) if dtype is None else canonicalize_dtype(dtype)
        if precision is not None:
            return dot_general(x, y, _PLAIN_MATMUL[len(xs)], precision=precision,
                               preferred_element_type=dtype)
        return dot_general_p.bind(x, y, dimension_numbers=_PLAIN_MATMUL[len(xs)],
                                  preferred_element_type=dtype)
    xb, yb = list(xs[:-2]), list(ys[:-2])
    n = max(len(xb), len(yb))
    xb, yb = [None] * (n - len(xb)) + xb, [None] * (n - len(yb)) + yb
    squeeze_x, squeeze_y, kinds = [], [], []
    for i, (dx, dy) in enumerate(zip(xb, yb)):
        if dx is not None and dx == dy:
            kinds.append("batch")
        elif dx is not None and dy in (None, 1):
            kinds.append("x")
        elif dy is not None and dx in (None, 1):
            kinds.append("y")
        else:
            raise ValueError(f"matmul: incompatible batch dimensions in shapes {xs} and {ys}")
        if kinds[-1] == "y" and dx == 1:
            squeeze_x.append(i - (n - len(xs[:-2])))
        if kinds[-1] == "x" and dy == 1:
            squeeze_y.append(i - (n - len(ys[:-2])))
    if squeeze_x:
        x = lax.squeeze(x, tuple(squeeze_x))
    if squeeze_y:
        y = lax.squeeze(y, tuple(squeeze_y))
    x_pos = [i for i, k in enumerate(kinds) if k != "y"]   # x's remaining batch positions
    y_pos = [i for i, k in enumerate(kinds) if k != "x"]
    batch = [i for i, k in enumerate(kinds) if k == "batch"]
    x_vec, y_vec = len(xs) == 1, len(ys) == 1
    dims = (((get_aval(x).ndim - 1,), (get_aval(y).ndim - 1 - (not y_vec),)),
            (tuple(x_pos.index(i) for i in batch), tuple(y_pos.index(i) for i in batch)))
    dtype = preferred_element_type
    if dtype is None:
        dtype = result_dtype("matmul", x, y)
    out = dot_general(x, y, dims, precision=precision, preferred_element_type=dtype)
    labels = batch + [i for i, k in enumerate(kinds) if k == "x"] + ([n] if not x_vec else []) \
        + [i for i, k in enumerate(kinds) if k == "y"] + ([n + 1] if not y_vec else [])
    perm = tuple(sorted(range(len(labels)), key=labels.__getitem__))
    return lax.transpose(out, perm) if perm != tuple(range(len(perm))) else out


# matmul without batch dims, by the rank of x: contract x's last axis with y's first
_PLAIN_MATMUL = {1: DotDimensionNumbers((((0,), (0,)), ((), ()))),
                 2: DotDimensionNumbers((((1,), (0,)), ((), ())))}


def outer(a: Any, b: Any) -> Any:
    """numpy.outer: every product of an element of a with one of b (both flattened)."""
    import plugax.lax as lax
    x, y = asarrays(a, b)
    flat = [lax.reshape(v, (get_aval(v).size,)) for v in (x, y)]
    return _contract("outer", *flat, (), ())


def inner(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """numpy.inner: contract the last axes of a and b (a scalar scales)."""
    x, y = asarrays(a, b)
    xn, yn = get_aval(x).ndim, get_aval(y).ndim
    if xn == 0 or yn == 0:
        return _contract("inner", x, y, (), (), preferred_element_type, precision)
    return _contract("inner", x, y, (xn - 1,), (yn - 1,), preferred_element_type, precision)


def vdot(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """numpy.vdot: the dot product of a and b, both flattened."""
    import plugax.lax as lax
    x, y = asarrays(a, b)
    if get_aval(x).size != get_aval(y).size:
        raise ValueError(f"vdot: operands must have the same size, got shapes "
                         f"{get_aval(x).shape} and {get_aval(y).shape}")
    if get_aval(x).dtype.kind == "c":   # numpy.vdot conjugates its first operand
        x = lax.conj(x)
    flat = [lax.reshape(v, (get_aval(v).size,)) for v in (x, y)]
    return _contract("vdot", *flat, (0,), (0,), preferred_element_type, precision)


def tensordot(a: Any, b: Any, axes: Any = 2, *, precision: Any = None,
              preferred_element_type: Any = None) -> Any:
    """numpy.tensordot: `axes=n` pairs a's last n axes with b's first n; or two sequences."""
    x, y = asarrays(a, b)
    xn, yn = get_aval(x).ndim, get_aval(y).ndim
    if isinstance(axes, (int, np.integer)):
        if not 0 <= axes <= min(xn, yn):
            raise ValueError(f"tensordot: axes={axes} out of range for ranks {xn} and {yn}")
        x_axes, y_axes = tuple(range(xn - axes, xn)), tuple(range(axes))
    else:
        x_axes, y_axes = axes
        x_axes = (x_axes,) if isinstance(x_axes, (int, np.integer)) else tuple(x_axes)
        y_axes = (y_axes,) if isinstance(y_axes, (int, np.integer)) else tuple(y_axes)
        if len(x_axes) != len(y_axes):
            raise ValueError(f"tensordot: axes {x_axes} and {y_axes} differ in length")
        x_axes = tuple(int(d) % xn for d in x_axes)
        y_axes = tuple(int(d) % yn for d in y_axes)
    return _contract("tensordot", x, y, x_axes, y_axes, preferred_element_type, precision)


NUMPY = {"dot": dot, "matmul": matmul, "outer": outer, "inner": inner, "vdot": vdot,
         "tensordot": tensordot}

METHODS = {"dot": dot, "__matmul__": matmul,
           "__rmatmul__": lambda self, other: matmul(other, self)}
