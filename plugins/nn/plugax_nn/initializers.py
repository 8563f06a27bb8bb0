"""`plugax.nn.initializers`: JAX's weight initializers, with JAX's values for a key.

Each initializer is `init(key, shape, dtype=float)`, built from plugax.random's
samplers with JAX's scalings (looked up when an initializer runs: plugax.random
is filled in by its plugin after this module is imported), so a model initialised with the same key starts
from the same weights as under JAX (the random family is bit-exact with JAX's
threefry). The truncated-normal ones (glorot_normal, he_normal, lecun_normal,
truncated_normal) sample with `random.truncated_normal` (its `lax.erf` comes from the
special_functions family).
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

import plugax
import plugax.numpy as pnp
from plugax.extend import default_float_dtype

__all__ = ["zeros", "ones", "constant", "uniform", "normal", "truncated_normal",
           "variance_scaling", "glorot_uniform", "glorot_normal", "xavier_uniform",
           "xavier_normal", "lecun_uniform", "lecun_normal", "he_uniform", "he_normal",
           "kaiming_uniform", "kaiming_normal", "orthogonal", "delta_orthogonal",
           "Initializer"]

Initializer = Callable[..., Any]


def _dtype(dtype: Any) -> Any:
    return default_float_dtype() if dtype is None else dtype


def zeros(key: Any, shape: Sequence[int], dtype: Any = None) -> Any:
    return pnp.zeros(shape, _dtype(dtype))


def ones(key: Any, shape: Sequence[int], dtype: Any = None) -> Any:
    return pnp.ones(shape, _dtype(dtype))


def constant(value: Any, dtype: Any = None) -> Initializer:
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        return pnp.full(shape, value, _dtype(dtype))
    return init


def uniform(scale: Any = 1e-2, dtype: Any = None) -> Initializer:
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        dtype = _dtype(dtype)
        return plugax.random.uniform(key, shape, dtype) * pnp.array(scale, dtype)
    return init


def normal(stddev: Any = 1e-2, dtype: Any = None) -> Initializer:
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        dtype = _dtype(dtype)
        return plugax.random.normal(key, shape, dtype) * pnp.array(stddev, dtype)
    return init


def truncated_normal(stddev: Any = 1e-2, dtype: Any = None, lower: Any = -2.0,
                     upper: Any = 2.0) -> Initializer:
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        dtype = _dtype(dtype)
        sample = plugax.random.truncated_normal(key, lower, upper, shape, dtype)
        return sample * pnp.array(stddev, dtype)
    return init


def _size(shape: Sequence[int], axes: int | Sequence[int]) -> int:
    return shape[axes] if isinstance(axes, int) else math.prod(shape[i] for i in axes)


def compute_fans(shape: Sequence[int], in_axis: Any = -2, out_axis: Any = -1,
                 batch_axis: Any = ()) -> tuple[float, float]:
    """(fan_in, fan_out) of a weights shape; the axes not named are a convolution's
    receptive field, which multiplies both."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional "
                         f"weights tensor with default in_axis. Must be at least 2D or specify "
                         f"in_axis explicitly.")
    in_size, out_size = _size(shape, in_axis), _size(shape, out_axis)
    receptive = math.prod(shape) / in_size / out_size / _size(shape, batch_axis)
    return in_size * receptive, out_size * receptive


def variance_scaling(scale: Any, mode: str, distribution: str, in_axis: Any = -2,
                     out_axis: Any = -1, batch_axis: Any = (), dtype: Any = None) -> Initializer:
    """Samples with variance scale / n, n the fan given by `mode` ("fan_in", "fan_out",
    "fan_avg", "fan_geo_avg"), from `distribution` ("truncated_normal", "normal",
    "uniform")."""
    if mode not in ("fan_in", "fan_out", "fan_avg", "fan_geo_avg"):
        raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise ValueError(f"invalid distribution for variance scaling initializer: "
                         f"{distribution}")

    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        shape, dtype = tuple(int(d) for d in shape), _dtype(dtype)
        fan_in, fan_out = compute_fans(shape, in_axis, out_axis, batch_axis)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2,
             "fan_geo_avg": (fan_in * fan_out) ** 0.5}[mode]
        variance = pnp.array(scale / n, dtype)
        if distribution == "truncated_normal":   # the std of a N(0, 1) cut at +-2
            stddev = pnp.sqrt(variance) / pnp.array(.87962566103423978, dtype)
            return plugax.random.truncated_normal(key, -2, 2, shape, dtype) * stddev
        if distribution == "normal":
            return plugax.random.normal(key, shape, dtype) * pnp.sqrt(variance)
        return plugax.random.uniform(key, shape, dtype, -1) * pnp.sqrt(3 * variance)
    return init


def _preset(scale: float, mode: str, distribution: str) -> Callable[..., Initializer]:
    def make(in_axis: Any = -2, out_axis: Any = -1, batch_axis: Any = (),
             dtype: Any = None) -> Initializer:
        return variance_scaling(scale, mode, distribution, in_axis, out_axis, batch_axis, dtype)
    return make


glorot_uniform = xavier_uniform = _preset(1.0, "fan_avg", "uniform")
glorot_normal = xavier_normal = _preset(1.0, "fan_avg", "truncated_normal")
lecun_uniform = _preset(1.0, "fan_in", "uniform")
lecun_normal = _preset(1.0, "fan_in", "truncated_normal")
he_uniform = kaiming_uniform = _preset(2.0, "fan_in", "uniform")
he_normal = kaiming_normal = _preset(2.0, "fan_in", "truncated_normal")


def orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """An orthogonal matrix (over the last axis by default) times `scale`."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        shape, dtype = tuple(int(d) for d in shape), _dtype(dtype)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if 0 in shape:
            return pnp.zeros(shape, dtype)
        n_rows, n_cols = math.prod(shape) // shape[column_axis], shape[column_axis]
        q = plugax.random.orthogonal(key, n_rows, (), dtype, n_cols)
        q = pnp.reshape(q, tuple(np.delete(shape, column_axis)) + (shape[column_axis],))
        return pnp.array(scale, dtype) * pnp.moveaxis(q, -1, column_axis)
    return init


def delta_orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """A convolution kernel that is zero but for an orthogonal matrix at its spatial
    centre (Xiao et al. 2018): the layer starts as an orthogonal map of the channels,
    which keeps signals from growing or vanishing through very deep conv stacks."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        shape, dtype = tuple(int(d) for d in shape), _dtype(dtype)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        matrix = orthogonal(scale=scale, column_axis=column_axis, dtype=dtype)(key, shape[-2:])
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return pnp.zeros(shape, dtype).at[centre].set(matrix)
    return init
