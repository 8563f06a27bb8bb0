"""NumPy-style argument handling: JAX dtype promotion and NumPy broadcasting.

The kernel's, not a family's: every family's `plugax.numpy` functions that combine
arrays (elementwise, dot, reductions, third parties) must agree on what
`jnp.f(a, b)` means, so the rules live once here and plugins reach them through
`plugax.extend`::

    from plugax.extend import promote_args
    x, y = promote_args("dot", x, y)             # common dtype, common shape
    x, = promote_args("sum", x, category="numeric")   # bool -> default int

promote_args(fn_name, *args, category=None, keep_scalars=True) -> list
    1. dtype: the JAX lattice join of the arguments (`plugax.dtypes.promote_types`;
       Python scalars are weak and yield to arrays, x64 off keeps 32 bits).
       `category="numeric"` turns a bool result into the default int,
       `category="inexact"` turns a bool/int result into the default float
       (what `true_divide`, `sqrt`, `sin`... need); weak stays weak.
    2. conversion: a Python scalar becomes `Array(np.asarray(x, dtype), <result weak>)`,
       traced as an inline literal; a NumPy value is converted on the spot (a
       constant); an Array or tracer of another (dtype, weak_type) goes through
       `convert_element_type[new_dtype=.. weak_type=<result weak>]` (the kernel's).
    3. shape: NumPy broadcasting. Operands of the result shape are left alone,
       and so are rank-0 ones when `keep_scalars` (lax ops broadcast those
       themselves, which keeps jaxprs short); every other operand goes through
       the kernel's `broadcast_in_dim`.

promote_dtypes(fn_name, *args, category=None) -> list     steps 1 and 2 only
broadcast_arrays(fn_name, *args, keep_scalars=True) -> list   step 3 only
promoted_type(fn_name, avals, category=None) -> (dtype, weak_type)   step 1 only
    (`avals`: the operands' ShapedArrays, or the operands themselves)

Errors name `fn_name`: a non-array argument raises TypeError, shapes that do
not broadcast raise `BroadcastError` (a ShapeError and a ValueError).
"""
from __future__ import annotations

import functools
from typing import Any, Sequence

import numpy as np

from . import dtypes
from .config import config
from .core.array import Array
from .core.device_types import device_array_types
from .core.avals import ShapedArray
from .core.trace import Tracer
from .errors import ShapeError
from .structural import broadcast_in_dim, convert_element_type as convert

__all__ = ["promote_args", "promote_dtypes", "broadcast_arrays", "broadcast_shapes",
           "broadcast_pair", "promoted_type", "BroadcastError"]

_SCALARS = (bool, int, float, complex)
_CATEGORIES = (None, "inexact", "numeric")


class BroadcastError(ShapeError, ValueError):
    """Operand shapes are incompatible under NumPy broadcasting."""


def _operand_type(fn_name: str, i: int, x: Any) -> tuple[np.dtype, bool, tuple]:
    """(dtype, weak_type, shape) of an argument, without building an aval (hot path)."""
    t = type(x)
    if t is Array:
        return x.dtype, x.weak_type, x.shape
    if t in _SCALARS:
        return dtypes.python_scalar_dtype(x), True, ()
    if isinstance(x, Tracer) or t in device_array_types:
        aval = x.aval
        return aval.dtype, aval.weak_type, aval.shape
    if isinstance(x, (np.ndarray, np.generic)):
        return dtypes.canonicalize_dtype(x.dtype), False, x.shape
    raise TypeError(f"{fn_name} requires array or scalar arguments, got "
                    f"{t.__name__} at position {i}: {x!r:.60}; wrap it with "
                    f"np.asarray first")


@functools.lru_cache(maxsize=4096)
def _result_type(types: tuple, category: str | None, x64: bool) -> tuple[np.dtype, bool]:
    dtype, weak = dtypes.promote_types(*types)
    if category == "inexact" and not dtypes.issubdtype_inexact(dtype):
        dtype = dtypes.to_inexact_dtype(dtype)
    elif category == "numeric" and dtype == dtypes.bool_:
        dtype = dtypes.default_int_dtype()
    return dtype, weak


def promoted_type(fn_name: str, avals: Sequence[Any],
                category: str | None = None) -> tuple[np.dtype, bool]:
    """(dtype, weak_type) that operands promote to, adjusted for `category`.

    `avals` are the operands' ShapedArrays, or the operands themselves.
    """
    if category not in _CATEGORIES:
        raise ValueError(f"{fn_name}: unknown promotion category {category!r}; "
                         f"choose one of {_CATEGORIES}")
    types = tuple((a.dtype, a.weak_type) if type(a) is ShapedArray
                  else _operand_type(fn_name, i, a)[:2] for i, a in enumerate(avals))
    for t, _ in types:
        if t == dtypes.float0:
            raise TypeError(_float0_message(fn_name))
    return _result_type(types, category, config.enable_x64)


def _float0_message(fn_name: str) -> str:
    """float0 is the tangent type of integers: it has no values to compute with, and
    NumPy would fail on its void storage with an error naming nothing (or, under jit,
    a KeyError of the dtype)."""
    return (f"Called {fn_name} with a float0 array. float0s do not support any "
            f"operations by design: they are the (zero) gradients of integer or boolean "
            f"inputs, e.g. from grad(f, allow_int=True). Use np.zeros(x.shape, "
            f"np.float32) for a regular zeros array.")


def _convert(fn_name: str, x: Any, dtype: np.dtype, weak: bool) -> Any:
    if type(x) in _SCALARS:
        try:
            return Array(np.asarray(x, dtype), weak)
        except OverflowError as err:
            raise OverflowError(f"{fn_name}: Python scalar {x!r} does not fit in "
                                f"{dtype.name}") from err
    return convert(x, dtype, weak)   # a no-op for arrays and tracers of that type


def _one_type(args: tuple) -> np.dtype | None:
    """The dtype of arguments that are all Arrays or tracers of one (dtype, weak type),
    else None: the common case, which needs no promotion at all."""
    first = args[0]
    if not (type(first) is Array or isinstance(first, (Tracer, Array))):
        return None
    dtype, weak = first.dtype, first.weak_type
    for x in args[1:]:
        if not (type(x) is Array or isinstance(x, (Tracer, Array))) or x.dtype != dtype \
                or x.weak_type != weak:
            return None
    return dtype


def promote_dtypes(fn_name: str, *args: Any, category: str | None = None) -> list:
    """The arguments converted to their common dtype (see the module docstring)."""
    if args:
        same = _one_type(args)
        if same is not None and (category is None or (
                category == "inexact" and dtypes.issubdtype_inexact(same)) or (
                category == "numeric" and same != dtypes.bool_)):
            return list(args)
    dtype, weak = promoted_type(fn_name, args, category)
    return [_convert(fn_name, x, dtype, weak) for x in args]


def broadcast_arrays(fn_name: str, *args: Any, keep_scalars: bool = True) -> list:
    """The arguments broadcast to their common NumPy shape (see the module docstring)."""
    shapes = [_operand_type(fn_name, i, x)[2] for i, x in enumerate(args)]
    if len({s for s in shapes if s or not keep_scalars}) <= 1:
        return list(args)    # nothing to do: one shape, apart from rank-0 operands
    out_shape = broadcast_shapes(shapes)
    if out_shape is None:
        raise BroadcastError(f"{fn_name}: operands could not be broadcast together with "
                             f"shapes {' '.join(map(str, shapes))}")
    out_nd = len(out_shape)
    return [x if shape == out_shape or (keep_scalars and shape == ())
            else broadcast_in_dim(x, out_shape, tuple(range(out_nd - len(shape), out_nd)))
            for x, shape in zip(args, shapes)]


def broadcast_shapes(shapes: list) -> tuple | None:
    """NumPy's broadcast of `shapes` (None if they do not broadcast); a plain loop,
    several times cheaper than np.broadcast_shapes for the few small shapes seen here."""
    out_nd = max(len(s) for s in shapes)
    out = [1] * out_nd
    for shape in shapes:
        offset = out_nd - len(shape)
        for i, d in enumerate(shape):
            o = out[offset + i]
            if o == 1:
                out[offset + i] = d
            elif d != 1 and d != o:
                return None
    return tuple(out)


@functools.lru_cache(maxsize=1024)
def broadcast_pair(x: tuple, y: tuple) -> tuple | None:
    """`broadcast_shapes` of two shapes, memoised: binary operators ask for the same
    few pairs (a bias added to a batch of activations) over and over."""
    return broadcast_shapes([x, y])


def promote_args(fn_name: str, *args: Any, category: str | None = None,
                 keep_scalars: bool = True) -> list:
    """Common dtype, then common shape: what NumPy-style functions do to their inputs."""
    return broadcast_arrays(fn_name, *promote_dtypes(fn_name, *args, category=category),
                            keep_scalars=keep_scalars)
