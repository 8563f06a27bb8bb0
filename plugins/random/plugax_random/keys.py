"""PRNG keys: `key`, `PRNGKey`, `key_data`, `wrap_key_data`, `split`, `fold_in`, `bits`.

A key is two uint32 words. JAX has two spellings, and so does plugax:

* raw keys (`PRNGKey(seed)`): a uint32 array whose last axis has size 2;
* typed keys (`key(seed)`): a `PRNGKeyArray` whose dtype prints `key<fry>` and whose
  shape leaves out the trailing 2. In JAX that is an extended dtype known to every
  transformation; here it is a small pytree around the raw data, so `jit`, `vmap`,
  `grad`, `scan` and `tree_util` see the uint32 array inside and carry it through
  (vmap over a batch of typed keys maps the data's leading axis, which is the keys').

Every function accepts both spellings and answers in the spelling it was given, as JAX
does. The bits are JAX's with `jax_threefry_partitionable=True` (its default): a
counter per output element (the flat index, as a 64-bit number split into two words)
hashed with `threefry2x32` under the key.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

import plugax.lax as lax
import plugax.numpy as jnp
from plugax.extend import Tracer, config
from plugax.tree_util import register_pytree_node

from ._jit import jitted
from .threefry import threefry2x32

__all__ = ["PRNGKeyArray", "KeyDType", "key", "PRNGKey", "key_data", "wrap_key_data",
           "key_impl", "split", "fold_in", "bits", "check_key", "random_bits", "as_result"]

_U32 = np.dtype(np.uint32)
_UINT = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: _U32, 64: np.dtype(np.uint64)}


class KeyDType:
    """The dtype of a typed key array; prints as JAX's `key<fry>`."""

    name = "key<fry>"
    itemsize = 8

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, KeyDType) or other == self.name

    def __hash__(self) -> int:
        return hash(self.name)


KEY_DTYPE = KeyDType()


class PRNGKeyArray:
    """An array of threefry keys (JAX's `dtype=key<fry>`): the raw uint32 data of shape
    `shape + (2,)`, seen as an array of `shape`. Indexing, `reshape`, `len` and
    iteration act on the key axes; `key_data` gives the words back."""

    __slots__ = ("_base",)

    def __init__(self, data: Any):
        self._base = data

    @property
    def shape(self) -> tuple:
        return tuple(np.shape(self._base))[:-1]

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def dtype(self) -> KeyDType:
        return KEY_DTYPE

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object (a single key)")
        return self.shape[0]

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __getitem__(self, idx: Any) -> "PRNGKeyArray":
        idx = idx if isinstance(idx, tuple) else (idx,)
        if any(i is Ellipsis for i in idx):   # the words' axis stays last
            idx = idx + (slice(None),)
        return PRNGKeyArray(self._base[idx])

    def reshape(self, *shape: Any) -> "PRNGKeyArray":
        shape = shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape
        return PRNGKeyArray(jnp.reshape(self._base, tuple(shape) + (2,)))

    def flatten(self) -> "PRNGKeyArray":
        return self.reshape((self.size,))

    ravel = flatten

    @property
    def T(self) -> "PRNGKeyArray":
        axes = tuple(range(self.ndim))[::-1] + (self.ndim,)
        return PRNGKeyArray(jnp.transpose(self._base, axes))

    def block_until_ready(self) -> "PRNGKeyArray":
        if hasattr(self._base, "block_until_ready"):
            self._base.block_until_ready()
        return self

    def __repr__(self) -> str:
        if isinstance(self._base, Tracer):
            return f"PRNGKeyArray(shape={self.shape}, dtype=key<fry>) tracing {self._base!r}"
        return (f"Array({self.shape}, dtype=key<fry>) overlaying:\n"
                f"{np.asarray(self._base)}")

    __str__ = __repr__


register_pytree_node(PRNGKeyArray, lambda k: ((k._base,), None),
                     lambda _, children: PRNGKeyArray(children[0]))


def check_key(name: str, key: Any) -> tuple[Any, bool]:
    """The raw uint32[..., 2] data of `key` and whether it came typed; errors name the
    function and say what a key is."""
    if isinstance(key, PRNGKeyArray):
        return key._base, True
    if isinstance(key, (int, float)) or not hasattr(key, "shape") and not isinstance(key, list):
        raise TypeError(f"{name}: expected a PRNG key (from plugax.random.key or PRNGKey), got "
                        f"{key!r}")
    data = jnp.asarray(key)
    if data.ndim < 1 or data.shape[-1] != 2 or np.dtype(data.dtype) != _U32:
        raise TypeError(f"{name}: a raw PRNG key is a uint32 array whose last axis has size 2 "
                        f"(from plugax.random.PRNGKey); got {data.dtype}{list(data.shape)}")
    return data, False


def as_result(data: Any, typed: bool) -> Any:
    return PRNGKeyArray(data) if typed else data


def _single(name: str, data: Any) -> None:
    if data.ndim != 1:
        raise ValueError(f"{name} accepts a single key, but was given a key array of shape "
                         f"{tuple(data.shape[:-1])} != (). Use plugax.vmap for batching.")


def _seed_words(seed: Any) -> Any:
    """The key data of an integer seed: [seed >> 32, seed & 0xFFFFFFFF] (JAX's threefry
    seed); a 32-bit seed has 0 in the high word. The high word is floor(seed / 2**32)
    mod 2**32, which equals the logical shift for two's-complement seeds."""
    if isinstance(seed, (bool, np.bool_)) or isinstance(seed, float):
        raise TypeError(f"PRNG key seed must be an integer; got {seed!r}")
    if isinstance(seed, (int, np.integer)):
        seed = int(seed)
        if not -(1 << 63) <= seed < (1 << 63):
            raise OverflowError(f"PRNG key seed {seed} does not fit a 64-bit integer")
        # JAX: a Python int seed is an int64 with x64, else truncated to 32 bits
        hi = (seed >> 32) & 0xFFFFFFFF if config.enable_x64 else 0
        lo = seed & 0xFFFFFFFF
        return jnp.asarray(np.array([hi, lo], _U32))
    seed = jnp.asarray(seed)
    if seed.shape:
        raise TypeError(f"PRNG key seed must be a scalar; got shape {tuple(seed.shape)}")
    if not np.issubdtype(np.dtype(seed.dtype), np.integer):
        raise TypeError(f"PRNG key seed must be an integer; got {seed.dtype}")
    lo = lax.convert_element_type(seed, _U32)
    if np.dtype(seed.dtype).itemsize == 8:
        hi = lax.convert_element_type(jnp.floor_divide(seed, seed.dtype.type(1 << 32)), _U32)
    else:
        hi = jnp.zeros((), _U32)
    return jnp.stack([hi, lo])


def key(seed: Any, *, impl: Any = None) -> PRNGKeyArray:
    """A typed key (dtype key<fry>, shape ()) from an integer seed."""
    _check_impl(impl)
    return PRNGKeyArray(_seed_words(seed))


def PRNGKey(seed: Any, *, impl: Any = None) -> Any:
    """A raw key: uint32[2] = [seed >> 32, seed & 0xFFFFFFFF]."""
    _check_impl(impl)
    return _seed_words(seed)


def _check_impl(impl: Any) -> None:
    if impl not in (None, "threefry2x32", "threefry"):
        raise NotImplementedError(f"plugax.random implements the 'threefry2x32' PRNG only; "
                                  f"got impl={impl!r} (JAX's rbg/unsafe_rbg are not supported)")


def key_data(keys: Any) -> Any:
    """The uint32 words of a key array (shape + (2,))."""
    data, _ = check_key("key_data", keys)
    return data


def wrap_key_data(key_bits_array: Any, *, impl: Any = None) -> PRNGKeyArray:
    """A typed key array around raw uint32 words (the inverse of key_data)."""
    _check_impl(impl)
    data = jnp.asarray(key_bits_array)
    if data.ndim < 1 or data.shape[-1] != 2 or np.dtype(data.dtype) != _U32:
        raise TypeError(f"wrap_key_data: key data must be uint32 with a trailing axis of size 2, "
                        f"got {data.dtype}{list(data.shape)}")
    return PRNGKeyArray(data)


def key_impl(keys: Any) -> str:
    check_key("key_impl", keys)
    return "threefry2x32"


def _counters(shape: tuple) -> tuple[Any, Any]:
    """The flat index of every element as a 64-bit counter, in two uint32 words."""
    size = math.prod(shape)
    if size >= 1 << 32:
        raise NotImplementedError(f"random bits of {size} elements (2**32 or more) are not "
                                  f"supported")
    lo = lax.reshape(lax.iota(_U32, size), shape) if shape else lax.iota(_U32, 1)[0]
    return jnp.zeros((), _U32), lo


def _hash(data: Any, shape: tuple) -> list[Any]:
    hi, lo = _counters(shape)
    return threefry2x32(data[0], data[1], hi, lo)


def _shape(shape: Any) -> tuple:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    try:
        return tuple(int(d) for d in shape)
    except TypeError:
        raise TypeError(f"shape must be a sequence of integers, got {shape!r}") from None


@jitted("shape")
def _split(data: Any, shape: tuple) -> Any:
    y1, y2 = _hash(data, shape)
    return jnp.stack([y1, y2], axis=-1)


@jitted()
def _fold_in(words: Any, d: Any) -> Any:
    d = lax.convert_element_type(d, _U32)
    y1, y2 = threefry2x32(words[0], words[1], jnp.zeros((), _U32), d)
    return jnp.stack([y1, y2])


def split(key: Any, num: int | Sequence[int] = 2) -> Any:
    """`num` new keys (an int or a shape) from one key."""
    data, typed = check_key("split", key)
    _single("split", data)
    return as_result(_split(data, shape=_shape(num)), typed)


def fold_in(key: Any, data: Any) -> Any:
    """A new key from a key and an integer: threefry of the counter pair (0, data)."""
    words, typed = check_key("fold_in", key)
    _single("fold_in", words)
    if isinstance(data, (int, np.integer)) and not 0 <= int(data) < 1 << 32:
        raise OverflowError(f"fold_in: data {data} does not fit a uint32")
    d = np.uint32(data) if isinstance(data, (int, np.integer)) else jnp.asarray(data)
    return as_result(_fold_in(words, d), typed)


def random_bits(data: Any, bit_width: int, shape: tuple) -> Any:
    """Uniform bits of `bit_width` (8, 16, 32 or 64) for one raw key, as JAX makes them."""
    y1, y2 = _hash(data, shape)
    if bit_width == 64:
        u64 = _UINT[64]
        hi, lo = lax.convert_element_type(y1, u64), lax.convert_element_type(y2, u64)
        return lax.bitwise_or(lax.mul(hi, u64.type(1 << 32)), lo)   # hi << 32 | lo
    out = lax.bitwise_xor(y1, y2)
    return out if bit_width == 32 else lax.convert_element_type(out, _UINT[bit_width])


_bits = jitted("bit_width", "shape")(lambda data, bit_width, shape:
                                       random_bits(data, bit_width, shape))


def bits(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Uniform random unsigned integers of `dtype` (default: uint32, uint64 with x64)."""
    data, _ = check_key("bits", key)
    _single("bits", data)
    dtype = np.dtype(dtype if dtype is not None else (_UINT[64] if config.enable_x64 else _U32))
    if dtype.kind != "u":
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dtype}")
    return _bits(data, bit_width=dtype.itemsize * 8, shape=_shape(shape))


def is_typed(key: Any) -> bool:
    return isinstance(key, PRNGKeyArray)

