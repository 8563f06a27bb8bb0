"""More of JAX's `jax.numpy`: cumulative and nan-cumulative sums/products, bincount,
array_equiv, calculus (gradient, trapezoid, unwrap), bit packing, creation (geomspace,
logspace, vander, the window functions, fromfunction, frombuffer/fromstring,
from_dlpack) and the functional helpers (apply_along_axis, apply_over_axes,
vectorize). (vecdot, matvec, vecmat and einsum_path are the dot family's.)

Each follows JAX's definition in jax/_src/numpy (static lengths where the output
shape would otherwise depend on values: bincount's `length=`; integer promotion
of cumulative sums of small integers) and is a composition of plugax.numpy and
plugax.lax functions, so every transformation applies with no rules of its own.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

import plugax
import plugax.numpy as pnp
from plugax.extend import ConcretizationTypeError, default_int_dtype, get_aval

__all__ = ["cumulative_sum", "cumulative_prod", "nancumsum", "nancumprod", "bincount",
           "array_equiv", "gradient", "trapezoid", "unwrap", "packbits", "unpackbits",
           "geomspace", "logspace", "vander", "bartlett", "blackman", "hamming", "hanning",
           "kaiser", "fromfunction", "frombuffer", "fromstring", "from_dlpack",
           "apply_along_axis", "apply_over_axes", "vectorize", "NUMPY"]


def _shape(x: Any) -> tuple:
    return get_aval(x).shape


def _dtype(x: Any) -> np.dtype:
    return get_aval(x).dtype


# --- cumulative reductions ---------------------------------------------------------------------
def _cumulative(name: str, fn: Callable, x: Any, axis: int | None, dtype: Any,
                include_initial: bool, initial: int) -> Any:
    x = pnp.asarray(x)
    if len(_shape(x)) == 0:
        raise ValueError(f"{name}: the input must be non-scalar to take a cumulative "
                         f"reduction, however a scalar value or scalar array was given")
    if axis is None:
        if len(_shape(x)) > 1:
            raise ValueError(f"{name}: the input array has rank {len(_shape(x))}, however "
                             f"axis was not set to an explicit value. The axis argument is "
                             f"only optional for one-dimensional arrays.")
        axis = 0
    out = fn(x, axis=axis, dtype=dtype)
    if include_initial:
        shape = list(_shape(out))
        shape[axis % len(shape)] = 1
        out = pnp.concatenate([pnp.full(tuple(shape), initial, _dtype(out)), out], axis=axis)
    return out


def cumulative_sum(x: Any, /, *, axis: int | None = None, dtype: Any = None,
                   include_initial: bool = False) -> Any:
    """The array API's cumsum: axis required beyond 1-d; include_initial prepends 0.
    Integers narrower than the default integer (and bools) are summed in the default
    (unsigned) integer, as JAX's (its cumsum keeps int8 as int8)."""
    if dtype is None:
        d = _dtype(pnp.asarray(x))
        wide = np.dtype(default_int_dtype())
        if d == np.bool_ or (d.kind == "i" and d.itemsize < wide.itemsize):
            dtype = wide
        elif d.kind == "u" and d.itemsize < wide.itemsize:
            dtype = np.dtype(f"uint{8 * wide.itemsize}")
    return _cumulative("cumulative_sum", pnp.cumsum, x, axis, dtype, include_initial, 0)


def cumulative_prod(x: Any, /, *, axis: int | None = None, dtype: Any = None,
                    include_initial: bool = False) -> Any:
    return _cumulative("cumulative_prod", pnp.cumprod, x, axis, dtype, include_initial, 1)


def nancumsum(a: Any, axis: int | None = None, dtype: Any = None, out: None = None) -> Any:
    """cumsum with NaNs counted as 0."""
    a = pnp.asarray(a)
    return pnp.cumsum(pnp.where(pnp.isnan(a), 0, a), axis=axis, dtype=dtype)


def nancumprod(a: Any, axis: int | None = None, dtype: Any = None, out: None = None) -> Any:
    """cumprod with NaNs counted as 1."""
    a = pnp.asarray(a)
    return pnp.cumprod(pnp.where(pnp.isnan(a), 1, a), axis=axis, dtype=dtype)


def bincount(x: Any, weights: Any = None, minlength: int = 0, *,
             length: int | None = None) -> Any:
    """Counts (or summed weights) of each non-negative integer in x. Under jit pass a
    static `length=` (values at or above it are dropped, negative ones are clipped to 0
    as in JAX); eagerly it defaults to max(x) + 1."""
    x = pnp.asarray(x)
    if _dtype(x) == np.bool_:
        x = x.astype(np.int32)
    if _dtype(x).kind not in "iu":
        raise TypeError(f"x argument to bincount must have an integer type; got {_dtype(x)}")
    if len(_shape(x)) != 1:
        raise ValueError(f"bincount: only 1-dimensional input supported; got shape "
                         f"{_shape(x)}")
    if length is None:
        try:
            concrete = np.asarray(x)
        except Exception as e:
            raise ConcretizationTypeError(
                "bincount: the output length is max(x) + 1, which a traced x does not have: "
                "pass a static `length` argument") from e
        length = max(int(minlength), int(concrete.max(initial=-1)) + 1 if concrete.size else 0)
    if weights is None:
        weights = pnp.ones(_shape(x), default_int_dtype())
    else:
        weights = pnp.asarray(weights)
        if _shape(weights) != _shape(x):
            raise ValueError(f"bincount: weights must have the shape of x; got "
                             f"{_shape(weights)} and {_shape(x)}")
    idx = pnp.clip(x, 0, None)
    return pnp.zeros((int(length),), _dtype(weights)).at[idx].add(weights, mode="drop")


def array_equiv(a1: Any, a2: Any) -> Any:
    """Whether a1 and a2 are equal after broadcasting (False when they cannot be)."""
    a1, a2 = pnp.asarray(a1), pnp.asarray(a2)
    try:
        np.broadcast_shapes(_shape(a1), _shape(a2))
    except ValueError:
        return pnp.asarray(False)
    return pnp.all(pnp.equal(a1, a2))


# --- calculus ------------------------------------------------------------------------------------
def _slice(a: Any, axis: int, start: Any, stop: Any) -> Any:
    index = [slice(None)] * len(_shape(a))
    index[axis] = slice(start, stop)
    return a[tuple(index)]


def gradient(f: Any, *varargs: Any, axis: int | Sequence[int] | None = None,
             edge_order: int | None = None) -> Any:
    """Second-order central differences inside, first-order at the edges (NumPy's
    edge_order=1); spacing a scalar or the coordinates along each axis."""
    if edge_order is not None:
        raise NotImplementedError("The 'edge_order' argument to plugax.numpy.gradient is not "
                                  "supported (as in JAX)")
    a = pnp.asarray(f)
    a = a if _dtype(a).kind in "fc" else a.astype(pnp.result_type(float))
    nd = len(_shape(a))
    axes = tuple(range(nd)) if axis is None else tuple(
        ax % nd for ax in (axis if isinstance(axis, (list, tuple)) else (axis,)))
    if not varargs:
        spacing: list = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        spacing = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacing = list(varargs)
    else:
        raise TypeError(f"gradient: invalid number of spacing arguments: {len(varargs)} for "
                        f"{len(axes)} axes")
    out = []
    for ax, h in zip(axes, spacing):
        if _shape(a)[ax] < 2:
            raise ValueError(f"gradient: shape of the array along axis {ax} must be at least "
                             f"2; got {_shape(a)}")
        upper = _slice(a, ax, 1, 2) - _slice(a, ax, 0, 1)
        lower = _slice(a, ax, -1, None) - _slice(a, ax, -2, -1)
        if np.ndim(h) == 0:
            inner = (_slice(a, ax, 2, None) - _slice(a, ax, None, -2)) * 0.5 / h
            upper, lower = upper / h, lower / h
        else:
            h = pnp.asarray(h).astype(_dtype(a))
            if _shape(h) != (_shape(a)[ax],):
                raise ValueError("gradient: spacing arrays must have the same length as the "
                                 "dimension along which the gradient is calculated")
            shape = [1] * nd
            shape[ax] = -1
            h = pnp.reshape(h, shape)
            upper = upper / (_slice(h, ax, 1, 2) - _slice(h, ax, 0, 1))
            lower = lower / (_slice(h, ax, -1, None) - _slice(h, ax, -2, -1))
            dx1 = _slice(h, ax, 1, -1) - _slice(h, ax, 0, -2)
            dx2 = _slice(h, ax, 2, None) - _slice(h, ax, 1, -1)
            inner = (-dx2 / (dx1 * (dx1 + dx2)) * _slice(a, ax, 0, -2)
                     + (dx2 - dx1) / (dx1 * dx2) * _slice(a, ax, 1, -1)
                     + dx1 / (dx2 * (dx1 + dx2)) * _slice(a, ax, 2, None))
        out.append(pnp.concatenate([upper, inner, lower], axis=ax))
    return out[0] if len(out) == 1 else out


def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Any:
    """The integral of y along axis by the trapezoidal rule (spacing dx, or sample
    points x)."""
    y = pnp.asarray(y)
    y = y if _dtype(y).kind in "fc" else y.astype(pnp.result_type(float))
    y = pnp.moveaxis(y, axis, -1)
    if x is None:
        d = pnp.asarray(dx)
    else:
        x = pnp.asarray(x)
        d = pnp.diff(x) if len(_shape(x)) == 1 else pnp.moveaxis(pnp.diff(x, axis=axis), axis, -1)
    return 0.5 * pnp.sum(d * (y[..., 1:] + y[..., :-1]), axis=-1)


def unwrap(p: Any, discont: Any = None, axis: int = -1, period: Any = 2 * np.pi) -> Any:
    """p with jumps larger than discont replaced by their period complement."""
    p = pnp.asarray(p)
    if _shape(p)[axis] == 0:
        return p
    dtype = pnp.result_type(p, period)
    p = p.astype(dtype)
    discont = period / 2 if discont is None else discont
    interval = period // 2 if np.dtype(dtype).kind in "iu" else period / 2
    dd = pnp.diff(p, axis=axis)
    ddmod = pnp.mod(dd + interval, period) - interval
    ddmod = pnp.where((ddmod == -interval) & (dd > 0), interval, ddmod)
    correct = pnp.where(pnp.abs(dd) < discont, 0, ddmod - dd)
    return pnp.concatenate([_slice(p, axis % len(_shape(p)), 0, 1),
                            _slice(p, axis % len(_shape(p)), 1, None)
                            + pnp.cumsum(correct, axis=axis)], axis=axis)


# --- bits ----------------------------------------------------------------------------------------
def _bit_weights(bitorder: str) -> np.ndarray:
    if bitorder not in ("little", "big"):
        raise ValueError(f"'order' must be either 'little' or 'big'; got {bitorder!r}")
    w = (1 << np.arange(8)).astype(np.uint8)
    return w[::-1] if bitorder == "big" else w


def packbits(a: Any, axis: int | None = None, bitorder: str = "big") -> Any:
    """Booleans (non-zero entries) packed 8 to a uint8 along axis, zero-padded."""
    a = pnp.asarray(a)
    if _dtype(a).kind not in "iub":
        raise TypeError(f"packbits: expected an input array of integer or boolean data type; "
                        f"got {_dtype(a)}")
    w = _bit_weights(bitorder)
    bits = (a != 0).astype(np.uint8)
    if axis is None:
        bits, axis = pnp.ravel(bits), 0
    bits = pnp.swapaxes(bits, axis, -1)
    n = _shape(bits)[-1]
    if n % 8:
        bits = pnp.concatenate([bits, pnp.zeros(_shape(bits)[:-1] + (8 - n % 8,), np.uint8)],
                               axis=-1)
    bits = pnp.reshape(bits, _shape(bits)[:-1] + (_shape(bits)[-1] // 8, 8))
    packed = pnp.sum(bits * w, axis=-1, dtype=np.uint8)
    return pnp.swapaxes(packed, axis, -1)


def unpackbits(a: Any, axis: int | None = None, count: int | None = None,
               bitorder: str = "big") -> Any:
    """The bits of a uint8 array, 8 per element along axis (the first `count`)."""
    a = pnp.asarray(a)
    if _dtype(a) != np.uint8:
        raise TypeError(f"unpackbits: expected an input array of unsigned byte data type; got "
                        f"{_dtype(a)}")
    w = _bit_weights(bitorder)
    if axis is None:
        a, axis = pnp.ravel(a), 0
    a = pnp.swapaxes(a, axis, -1)
    bits = (pnp.bitwise_and(a[..., None], w) > 0).astype(np.uint8)
    bits = pnp.reshape(bits, _shape(bits)[:-2] + (-1,))
    if count is not None:
        if count > _shape(bits)[-1]:
            extra = pnp.zeros(_shape(bits)[:-1] + (count - _shape(bits)[-1],), np.uint8)
            bits = pnp.concatenate([bits, extra], axis=-1)
        else:
            bits = bits[..., :count]
    return pnp.swapaxes(bits, axis, -1)


# --- creation ------------------------------------------------------------------------------------
def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: Any = 10.0,
             dtype: Any = None, axis: int = 0) -> Any:
    """base ** linspace(start, stop, num)."""
    dtype = pnp.result_type(start, stop, float) if dtype is None else np.dtype(dtype)
    work = dtype if np.dtype(dtype).kind in "fc" else pnp.result_type(float)
    lin = pnp.linspace(start, stop, num, endpoint=endpoint, dtype=work, axis=axis)
    return pnp.power(pnp.asarray(base, work), lin).astype(dtype)


def geomspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None,
              axis: int = 0) -> Any:
    """Numbers spaced evenly on a log scale from start to stop (same sign)."""
    dtype = pnp.result_type(start, stop, float) if dtype is None else np.dtype(dtype)
    work = dtype if np.dtype(dtype).kind in "fc" else pnp.result_type(float)
    start, stop = pnp.asarray(start, work), pnp.asarray(stop, work)
    sign = pnp.sign(start)
    res = sign * logspace(pnp.log10(start / sign), pnp.log10(stop / sign), num,
                          endpoint=endpoint, base=10.0, dtype=work, axis=0)
    if num > 0:   # the ends exactly, as NumPy and JAX
        res = res.at[0].set(start)
        if endpoint and num > 1:
            res = res.at[-1].set(stop)
    if axis != 0:
        res = pnp.moveaxis(res, 0, axis)
    return res.astype(dtype)


def vander(x: Any, N: int | None = None, increasing: bool = False) -> Any:
    """Columns x**(N-1), ..., x**0 (or increasing)."""
    x = pnp.asarray(x)
    if len(_shape(x)) != 1:
        raise ValueError(f"vander: x must be a one-dimensional array; got shape {_shape(x)}")
    N = _shape(x)[0] if N is None else int(N)
    if N < 0:
        raise ValueError("vander: N must be nonnegative")
    # repeated products rather than power(x, k): x**0 then has a zero derivative at x = 0
    # (power's derivative k * x**(k-1) is 0 * inf there)
    cols = [pnp.ones_like(x)]
    for _ in range(1, N):
        cols.append(cols[-1] * x)
    cols = cols[:N]
    if not increasing:
        cols = cols[::-1]
    return pnp.stack(cols, axis=1) if cols else pnp.zeros((_shape(x)[0], 0), _dtype(x))


def _window(M: int) -> tuple:
    M = int(M)
    dtype = pnp.result_type(float)
    return M, dtype, pnp.arange(M, dtype=dtype)


def bartlett(M: int) -> Any:
    M, dtype, n = _window(M)
    if M <= 1:
        return pnp.ones((M,), dtype)
    return 1 - pnp.abs(2 * n + 1 - M) / (M - 1)


def _cosine_window(M: int, coefs: Sequence[float]) -> Any:
    M, dtype, n = _window(M)
    if M <= 1:
        return pnp.ones((M,), dtype)
    out = pnp.zeros((M,), dtype) + coefs[0]
    for k, c in enumerate(coefs[1:], start=1):
        out = out + c * pnp.cos(2 * np.pi * k * n / (M - 1))
    return out


def blackman(M: int) -> Any:
    return _cosine_window(M, (0.42, -0.5, 0.08))


def hamming(M: int) -> Any:
    return _cosine_window(M, (0.54, -0.46))


def hanning(M: int) -> Any:
    return _cosine_window(M, (0.5, -0.5))


def kaiser(M: int, beta: Any) -> Any:
    M, dtype, n = _window(M)
    if M <= 1:
        return pnp.ones((M,), dtype)
    alpha = 0.5 * (M - 1)
    return pnp.i0(beta * pnp.sqrt(1 - ((n - alpha) / alpha) ** 2)) / pnp.i0(beta)


def fromfunction(function: Callable, shape: Any, *, dtype: Any = float, **kwargs: Any) -> Any:
    """function applied to every index tuple: vmapped over each axis, as JAX's (so
    function sees scalars and may be any plugax function of them)."""
    shape = tuple(int(s) for s in shape)
    fn = function
    for i in range(len(shape)):
        in_axes = [0 if i == j else None for j in range(len(shape))]
        fn = plugax.vmap(fn, in_axes=tuple(in_axes[::-1]))
    return fn(*(pnp.arange(s, dtype=dtype) for s in shape), **kwargs)


def frombuffer(buffer: Any, dtype: Any = float, count: int = -1, offset: int = 0) -> Any:
    return pnp.asarray(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string: str, dtype: Any = float, count: int = -1, *, sep: str) -> Any:
    return pnp.asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Any:
    """An array from any DLPack exporter (through NumPy's importer, on the host)."""
    return pnp.asarray(np.from_dlpack(x))


# --- functional helpers ----------------------------------------------------------------------
def apply_along_axis(func1d: Callable, axis: int, arr: Any, *args: Any, **kwargs: Any) -> Any:
    """func1d applied to every 1-d slice along axis (by vmap over the other axes)."""
    nd = len(_shape(arr))
    axis = axis % nd

    def func(a: Any) -> Any:
        return func1d(a, *args, **kwargs)
    for i in range(1, nd - axis):
        func = plugax.vmap(func, in_axes=i, out_axes=-1)
    for _ in range(axis):
        func = plugax.vmap(func, in_axes=0, out_axes=0)
    return func(pnp.asarray(arr))


def apply_over_axes(func: Callable, a: Any, axes: Sequence[int]) -> Any:
    """func(a, axis) for each axis in turn, keeping the rank (a reduced axis comes back
    with length 1)."""
    a = pnp.asarray(a)
    for axis in axes:
        b = func(a, axis)
        if len(_shape(b)) == len(_shape(a)):
            a = b
        elif len(_shape(b)) == len(_shape(a)) - 1:
            a = pnp.expand_dims(b, axis)
        else:
            raise ValueError("apply_over_axes: function is not returning an array of the "
                             "correct shape")
    return a


from .numpy_vectorize import vectorize  # noqa: E402  (its own module: signature parsing)

NUMPY: dict[str, Any] = {name: globals()[name] for name in __all__ if name != "NUMPY"}
