"""Continuous and discrete samplers, each JAX's algorithm on the same bits.

Why each sampler body runs under `plugax.jit` (as JAX's do under `jax.jit`): the
floating-point steps after the bits (log1p, the erf_inv polynomial, tan...) are
transcendental, and XLA's fused CPU kernels for them round differently from NumPy's
(and from XLA's own op-by-op kernels) in the last bit of a few percent of values. Compiling
the same program JAX compiles is the only way to get JAX's floats bit for bit eagerly too;
under an outer jit/vmap/grad/scan the inner jit is simply inlined or transformed.

Only `plugax.numpy` / `plugax.lax` ops and the `threefry2x32` primitive are used, so every
sampler works under every transformation those ops support.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import ml_dtypes
import numpy as np

import plugax
import plugax.extend
import plugax.lax as lax
import plugax.numpy as jnp
from plugax.extend import default_float_dtype, default_int_dtype, is_float

from ._jit import jitted
from .keys import check_key, random_bits, split as _split_key
from .keys import _shape, _single

__all__ = ["uniform", "normal", "truncated_normal", "bernoulli", "exponential", "gumbel",
           "laplace", "logistic", "cauchy", "rademacher", "randint", "categorical", "erf_inv32"]

_UINT = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32),
         64: np.dtype(np.uint64)}


def finfo(dtype: Any):
    return ml_dtypes.finfo(np.dtype(dtype))


def float_dtype(name: str, dtype: Any) -> np.dtype:
    dtype = np.dtype(default_float_dtype() if dtype is None else dtype)
    if not is_float(dtype):
        raise ValueError(f"dtype argument to `{name}` must be a float dtype, got {dtype}")
    return dtype


def key_of(name: str, key: Any) -> Any:
    """The raw words of one key (a typed or raw key; a batch is refused as JAX does)."""
    data, _ = check_key(name, key)
    _single(name, data)
    return data


def split2(data: Any, num: int = 2) -> list[Any]:
    keys = _split_key(data, num)
    return [keys[i] for i in range(num)]


# --- erf_inv: XLA's single-precision polynomial (M. Giles) ---------------------------------
_ERF_INV_W_LT_5 = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                   0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERF_INV_W_GE_5 = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                   0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def erf_inv32(x: Any) -> Any:
    """erf^-1 in float32 as XLA computes chlo.erf_inv: a degree-8 polynomial in
    w = -log1p(-x^2) - 2.5 (w < 5) or sqrt(w) - 3. Written with lax ops so that, compiled,
    it is the very program JAX runs, eagerly too (the special_functions family's eager
    erf_inv is float64 rounded, which can differ from XLA's float32 in the last bit)."""
    f32 = np.float32
    w = lax.neg(lax.log1p(lax.neg(lax.mul(x, x))))
    small = lax.lt(w, f32(5.0))
    w = lax.select(small, lax.sub(w, f32(2.5)), lax.sub(lax.sqrt(w), f32(3.0)))

    def coef(i: int) -> Any:
        return lax.select(small, jnp.full(x.shape, f32(_ERF_INV_W_LT_5[i])),
                          jnp.full(x.shape, f32(_ERF_INV_W_GE_5[i])))
    p = coef(0)
    for i in range(1, 9):
        p = lax.add(coef(i), lax.mul(p, w))
    edge = lax.eq(lax.abs(x), f32(1.0))
    return lax.select(edge, lax.mul(x, f32(np.finfo(np.float32).max)), lax.mul(p, x))


def erf_inv(x: Any) -> Any:
    dtype = np.dtype(x.dtype)
    if dtype == np.float32:
        return erf_inv32(x)
    if dtype.itemsize < 4:       # XLA evaluates half precision in float32
        return lax.convert_element_type(erf_inv32(lax.convert_element_type(x, np.float32)),
                                         dtype)
    return lax.erf_inv(x)


# --- uniform ---------------------------------------------------------------------------------
def uniform_bits(data: Any, shape: tuple, dtype: np.dtype) -> Any:
    """Floats in [0, 1): the top `nmant` random bits as the mantissa of a number in [1, 2),
    minus 1. That float is exactly m * 2**-nmant, which is how it is computed here (a
    conversion and a power-of-two scaling, both exact), without a bitcast."""
    fi = finfo(dtype)
    nbits, nmant = fi.bits, fi.nmant
    rng_bits = 8 if nmant < 8 else nbits
    bits = random_bits(data, rng_bits, shape)
    if rng_bits != nbits:
        bits = lax.convert_element_type(bits, _UINT[nbits])
    mant = lax.div(bits, _UINT[nbits].type(1 << (rng_bits - nmant)))   # >> (rng_bits - nmant)
    return lax.mul(lax.convert_element_type(mant, dtype), np.array(2.0 ** -nmant, dtype))


def _uniform(data, minval, maxval, shape, dtype):
    minval = jnp.broadcast_to(lax.convert_element_type(jnp.asarray(minval), dtype), shape)
    maxval = jnp.broadcast_to(lax.convert_element_type(jnp.asarray(maxval), dtype), shape)
    floats = uniform_bits(data, shape, dtype)
    return lax.max(minval, floats * (maxval - minval) + minval)


_uniform_jit = jitted("shape", "dtype")(_uniform)


def uniform(key: Any, shape: Sequence[int] = (), dtype: Any = None, minval: Any = 0.0,
            maxval: Any = 1.0) -> Any:
    """Uniform floats in [minval, maxval)."""
    dtype = float_dtype("uniform", dtype)
    return _uniform_jit(key_of("uniform", key), minval, maxval, shape=_shape(shape),
                        dtype=dtype)


# --- normal and friends ----------------------------------------------------------------------
def _normal(data, shape, dtype):
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype))
    u = _uniform(data, lo, np.array(1.0, dtype), shape, dtype)
    return lax.mul(np.array(np.sqrt(2), dtype), erf_inv(u))


_normal_jit = jitted("shape", "dtype")(_normal)


def normal(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Standard normal samples: sqrt(2) * erf_inv(u), u uniform in (-1, 1)."""
    dtype = float_dtype("normal", dtype)
    return _normal_jit(key_of("normal", key), shape=_shape(shape), dtype=dtype)


def _broadcast_shape(name: str, shape: Any, *params: Any) -> tuple:
    pshapes = [tuple(np.shape(p)) for p in params]
    if shape is None:
        return tuple(np.broadcast_shapes(*pshapes))
    shape = _shape(shape)
    try:
        if tuple(np.broadcast_shapes(shape, *pshapes)) != shape:
            raise ValueError
    except ValueError:
        raise ValueError(f"{name} parameter shapes must be broadcast-compatible with shape "
                         f"argument, and the result of broadcasting the shapes must equal the "
                         f"shape argument, but got result {pshapes} for shape argument "
                         f"{shape}.") from None
    return shape


@jitted("shape", "dtype")
def _truncated_normal(data, lower, upper, lo, hi, shape, dtype):
    sqrt2 = np.array(np.sqrt(2), dtype)
    lower = lax.convert_element_type(lower, dtype)
    upper = lax.convert_element_type(upper, dtype)
    a = lax.erf(lower / sqrt2)
    b = lax.erf(upper / sqrt2)
    u = _uniform(data, a, b, shape, dtype)
    out = sqrt2 * erf_inv(u)
    return jnp.clip(out, lo, hi)


def _inside(bound: Any, dtype: np.dtype, towards: float) -> Any:
    """nextafter(bound, towards), the clip bound JAX uses (samples stay strictly inside).
    plugax has no nextafter yet: for a traced bound the bound itself is used."""
    if isinstance(bound, plugax.extend.Tracer):
        if hasattr(jnp, "nextafter"):
            return jnp.nextafter(lax.stop_gradient(bound), np.array(towards, dtype))
        return lax.stop_gradient(lax.convert_element_type(bound, dtype))
    b = np.asarray(bound, dtype)
    return np.nextafter(b, np.array(towards, dtype)).astype(dtype)


def truncated_normal(key: Any, lower: Any, upper: Any, shape: Sequence[int] | None = None,
                     dtype: Any = None) -> Any:
    """Normal samples conditioned on lower < x < upper (inverse-CDF method)."""
    dtype = float_dtype("truncated_normal", dtype)
    shape = _broadcast_shape("truncated_normal", shape, lower, upper)
    lo, hi = _inside(lower, dtype, np.inf), _inside(upper, dtype, -np.inf)
    return _truncated_normal(key_of("truncated_normal", key), lower, upper, lo, hi,
                             shape=shape, dtype=dtype)


# --- one-liners on a uniform -----------------------------------------------------------------
@jitted("shape", "mode")
def _bernoulli(data, p, shape, mode):
    dtype = np.dtype(p.dtype)
    if mode == "high":
        u = _uniform(data, 0.0, 1.0, (2,) + shape, dtype)
        u1, u2 = u[0], u[1] * np.array(2.0 ** -finfo(dtype).nmant, dtype)
        return u2 < p - u1
    return _uniform(data, 0.0, 1.0, shape, dtype) < p


def bernoulli(key: Any, p: Any = np.float32(0.5), shape: Sequence[int] | None = None,
              mode: str = "low") -> Any:
    """Booleans, True with probability p (p's float dtype sets the precision)."""
    if mode not in ("high", "low"):
        raise ValueError(f"got mode={mode!r}, expected 'high' or 'low'")
    p = jnp.asarray(p)
    if not is_float(p.dtype):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {p.dtype}.")
    shape = _broadcast_shape("bernoulli", shape, p)
    return _bernoulli(key_of("bernoulli", key), p, shape=shape, mode=mode)


def _unary_sampler(name: str, body: Callable) -> Callable:
    """A sampler `f(key, shape=(), dtype=None)` made of `body(data, shape, dtype)`."""
    compiled = jitted("shape", "dtype")(body)

    def sampler(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
        dtype = float_dtype(name, dtype)
        return compiled(key_of(name, key), shape=_shape(shape), dtype=dtype)
    sampler.__name__ = sampler.__qualname__ = name
    return sampler


def _exponential(data, shape, dtype):
    u = _uniform(data, 0.0, 1.0, shape, dtype)
    return lax.neg(lax.log1p(lax.neg(u)))


def _laplace(data, shape, dtype):
    u = _uniform(data, -1.0 + float(finfo(dtype).epsneg), 1.0, shape, dtype)
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


def _logistic(data, shape, dtype):
    x = _uniform(data, float(finfo(dtype).tiny), 1.0, shape, dtype)
    return lax.sub(lax.log(x), lax.log1p(lax.neg(x)))


def _cauchy(data, shape, dtype):
    u = _uniform(data, float(finfo(dtype).eps), 1.0, shape, dtype)
    return lax.tan(lax.mul(np.array(np.pi, dtype), lax.sub(u, np.array(0.5, dtype))))


exponential = _unary_sampler("exponential", _exponential)
laplace = _unary_sampler("laplace", _laplace)
logistic = _unary_sampler("logistic", _logistic)
cauchy = _unary_sampler("cauchy", _cauchy)
exponential.__doc__ = "Exponential(1) samples: -log1p(-u)."
laplace.__doc__ = "Laplace(0, 1) samples: sign(u) * log1p(-|u|), u uniform in (-1, 1)."
logistic.__doc__ = "Logistic(0, 1) samples: log(u) - log1p(-u)."
cauchy.__doc__ = "Cauchy(0, 1) samples: tan(pi * (u - 1/2))."


def _gumbel(data, shape, dtype, mode):
    fi = finfo(dtype)
    if mode == "low":
        u = _uniform(data, float(fi.tiny), 1.0, shape, dtype)
        return -jnp.log(-jnp.log(u))
    u = _uniform(data, 0.0, 1.0, (2,) + shape, dtype)
    high, low = u[0], u[1]
    x = jnp.where(high >= 0.5, high,
                  high + np.array(2.0 ** -fi.nmant, dtype) * low + np.array(fi.tiny, dtype))
    return -jnp.log(-jnp.log1p(-x))


_gumbel_jit = jitted("shape", "dtype", "mode")(_gumbel)


def gumbel(key: Any, shape: Sequence[int] = (), dtype: Any = None,
           mode: str | None = None) -> Any:
    """Gumbel(0, 1) samples: -log(-log(u)) ('low', the default) or the high-range form."""
    dtype = float_dtype("gumbel", dtype)
    mode = "low" if mode is None else mode
    if mode not in ("high", "low"):
        raise ValueError(f"Must provide valid mode for gumbel got: {mode} (plugax supports "
                         f"'low' and 'high'; JAX's 'highest' is not supported)")
    return _gumbel_jit(key_of("gumbel", key), shape=_shape(shape), dtype=dtype, mode=mode)


def rademacher(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Random signs, -1 or +1 with equal probability (default dtype int)."""
    dtype = np.dtype(default_int_dtype() if dtype is None else dtype)
    # JAX passes p=0.5, a Python float: float64 bits under x64
    b = bernoulli(key, np.dtype(default_float_dtype()).type(0.5), _shape(shape))
    return (2 * b.astype(np.int32) - 1).astype(dtype)


def categorical(key: Any, logits: Any, axis: int = -1, shape: Sequence[int] | None = None,
                replace: bool = True, mode: str | None = None) -> Any:
    """Indices drawn with probabilities softmax(logits) along `axis` (Gumbel-max)."""
    data = key_of("categorical", key)
    logits = jnp.asarray(logits)
    axis = axis % logits.ndim
    batch_shape = tuple(d for i, d in enumerate(logits.shape) if i != axis)
    shape = batch_shape if shape is None else _shape(shape)
    if tuple(shape[len(shape) - len(batch_shape):]) != batch_shape:
        raise ValueError(f"categorical: shape {shape} must end with the logits' batch shape "
                         f"{batch_shape}")
    prefix = tuple(shape[:len(shape) - len(batch_shape)])
    if not replace:   # Gumbel-top-k: the k largest perturbed logits, k = prod(prefix)
        k = int(np.prod(prefix))
        if k > logits.shape[axis]:
            raise ValueError(f"Number of samples without replacement ({k}) cannot exceed "
                             f"number of categories ({logits.shape[axis]}).")
        perturbed = logits + gumbel(data, tuple(logits.shape), logits.dtype, mode=mode)
        # the k largest along the last axis, ties to the lower index
        indices = lax.top_k(jnp.moveaxis(perturbed, axis, -1), k)[1]   # batch + (k,)
        return jnp.reshape(jnp.moveaxis(indices, -1, 0), shape)
    gshape = prefix + tuple(logits.shape)
    g = gumbel(data, gshape, logits.dtype, mode=mode)
    expanded = jnp.reshape(logits, (1,) * len(prefix) + tuple(logits.shape))
    return jnp.argmax(g + expanded, axis=len(prefix) + axis)


# --- integers --------------------------------------------------------------------------------
def _clip_to(val: Any, dtype: np.dtype) -> Any:
    """JAX's _convert_and_clip_integer: clip to the range both dtypes share, convert."""
    src = np.iinfo(val.dtype)
    dst = np.iinfo(dtype)
    lo, hi = max(dst.min, src.min), min(dst.max, src.max)
    return lax.convert_element_type(
        jnp.clip(val, np.array(lo, val.dtype), np.array(hi, val.dtype)), dtype)


@jitted("shape", "dtype")
def _randint(data, minval, maxval, shape, dtype):
    if not np.issubdtype(np.dtype(minval.dtype), np.integer):
        minval = minval.astype(default_int_dtype())
    if not np.issubdtype(np.dtype(maxval.dtype), np.integer):
        maxval = maxval.astype(default_int_dtype())
    top = _clip_to(jnp.asarray(np.array(np.iinfo(dtype).max, dtype)), np.dtype(maxval.dtype))
    maxval_out_of_range = lax.gt(maxval, top)
    minval = jnp.broadcast_to(_clip_to(minval, dtype), shape)
    maxval = jnp.broadcast_to(_clip_to(maxval, dtype), shape)
    maxval_out_of_range = jnp.broadcast_to(maxval_out_of_range, shape)
    nbits = np.iinfo(dtype).bits
    k1, k2 = split2(data)
    higher_bits, lower_bits = random_bits(k1, nbits, shape), random_bits(k2, nbits, shape)
    udt = _UINT[nbits]
    span = lax.convert_element_type(maxval - minval, udt)
    span = jnp.where(maxval <= minval, udt.type(1), span)
    span = jnp.where(maxval_out_of_range & (maxval > minval), span + udt.type(1), span)
    multiplier = lax.rem(jnp.full(shape, udt.type(1 << (nbits // 2))), span)
    multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
    offset = lax.add(lax.mul(lax.rem(higher_bits, span), multiplier), lax.rem(lower_bits, span))
    offset = lax.rem(offset, span)
    return lax.add(minval, lax.convert_element_type(offset, dtype))


def randint(key: Any, shape: Sequence[int], minval: Any, maxval: Any, dtype: Any = None) -> Any:
    """Uniform integers in [minval, maxval) of `dtype` (default int)."""
    dtype = np.dtype(default_int_dtype() if dtype is None else dtype)
    if not np.issubdtype(dtype, np.integer):
        raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
    info = np.iinfo(dtype)
    sample_dtype = dtype
    minval, maxval = jnp.asarray(minval), jnp.asarray(maxval)
    if info.bits < 32:
        sample_dtype = np.dtype(np.int32)
        minval = jnp.clip(minval.astype(np.int32), int(info.min), int(info.max))
        maxval = jnp.clip(maxval.astype(np.int32), int(info.min), int(info.max) + 1)
    shape = _broadcast_shape("randint", shape, minval, maxval)
    out = _randint(key_of("randint", key), minval, maxval, shape=shape, dtype=sample_dtype)
    return out.astype(dtype)

