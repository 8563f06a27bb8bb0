"""permutation: JAX's shuffle by sorting on random bits.

Each round draws 32 random bits per element and sorts the array by them with the sort
family's `lax.sort_key_val` (stable, as JAX's), `ceil(3 ln n / ln(2**32 - 1))` rounds (one
round up to n of about 1600): the same bits and the same sort give JAX's permutation.
choice and categorical without replacement use `lax.top_k` (Gumbel-top-k) from the same
family.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

import plugax.lax as lax
import plugax.numpy as jnp
from plugax.extend import default_int_dtype

from ._jit import jitted
from .keys import random_bits
from .samplers import key_of, split2

__all__ = ["permutation", "top_k_indices"]


def top_k_indices(x: Any, k: int) -> Any:
    """The indices of the k largest entries along the last axis, ties to the lower index."""
    return lax.top_k(x, k)[1]


def _shuffle(data: Any, x: Any, axis: int) -> Any:
    """Sort x along `axis` by fresh random bits, for as many rounds as make collisions of
    the 32-bit sort keys negligible."""
    n = math.prod(x.shape)
    rounds = int(np.ceil(3 * np.log(max(1, n)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        data, sub = split2(data)
        sort_keys = random_bits(sub, 32, tuple(x.shape))
        _, x = lax.sort_key_val(sort_keys, x, axis)
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
