"""lax.rng_bit_generator (XLA's generators, through the compiler) and lax.rng_uniform.

Bits against jax 0.10.2's for every algorithm and bit width (recorded below: key
[123, 4000000000, 7, 99], shape (2, 5)), eagerly and under jit; vmap gives each key its
own stream; rng_uniform's range and dtype."""
import numpy as np
import pytest

import plugax
import plugax.lax as lax

KEY = np.array([123, 4000000000, 7, 99], np.uint32)
JAX = {'RNG_DEFAULT/uint8': ([123, 4000000000, 10, 99], [[72, 119, 38, 98, 219], [79, 50, 149, 209, 24]]), 'RNG_DEFAULT/uint16': ([123, 4000000000, 10, 99], [[328, 42103, 3878, 23650, 63963], [62031, 35634, 55957, 32465, 30744]]), 'RNG_DEFAULT/uint32': ([123, 4000000000, 10, 99], [[1761345864, 778151031, 2664435494, 1646222434, 2474441179], [1060368975, 876841778, 2475547285, 2960555729, 1307342872]]), 'RNG_THREE_FRY/uint8': ([123, 4000000000, 12, 99], [[190, 90, 228, 39, 97], [162, 130, 104, 63, 182]]), 'RNG_THREE_FRY/uint16': ([123, 4000000000, 12, 99], [[32958, 34394, 21732, 44583, 31073], [33954, 8066, 51048, 36671, 4790]]), 'RNG_THREE_FRY/uint32': ([123, 4000000000, 12, 99], [[3682894014, 3776022106, 1919898852, 757640743, 4021909857], [68191394, 3205701506, 299550568, 634949439, 3355972278]]), 'RNG_PHILOX/uint8': ([123, 4000000000, 10, 99], [[72, 119, 38, 98, 219], [79, 50, 149, 209, 24]]), 'RNG_PHILOX/uint16': ([123, 4000000000, 10, 99], [[328, 42103, 3878, 23650, 63963], [62031, 35634, 55957, 32465, 30744]]), 'RNG_PHILOX/uint32': ([123, 4000000000, 10, 99], [[1761345864, 778151031, 2664435494, 1646222434, 2474441179], [1060368975, 876841778, 2475547285, 2960555729, 1307342872]])}


@pytest.mark.parametrize("name", sorted(JAX))
def test_bits_match_jax(name):
    alg, dtype = name.split("/")
    algorithm = lax.RandomAlgorithm[alg]
    expected_key, expected_bits = JAX[name]
    for fn in (lax.rng_bit_generator,
               plugax.jit(lax.rng_bit_generator, static_argnums=(1, 2, 3))):
        new_key, bits = fn(KEY, (2, 5), np.dtype(dtype), algorithm)
        assert bits.dtype == np.dtype(dtype) and new_key.dtype == np.uint32
        np.testing.assert_array_equal(new_key, expected_key)
        np.testing.assert_array_equal(bits, expected_bits)


def test_vmap_gives_each_key_its_stream_and_errors():
    keys = np.stack([KEY, KEY + 1])
    batched = plugax.vmap(lambda k: lax.rng_bit_generator(k, (3,))[1])(keys)
    for k, row in zip(keys, batched):
        np.testing.assert_array_equal(row, lax.rng_bit_generator(k, (3,))[1])
    with pytest.raises(TypeError, match="unsupported dtype"):
        lax.rng_bit_generator(KEY, (3,), np.int32)
    with pytest.raises(Exception, match="uint32 key of shape"):
        lax.rng_bit_generator(KEY[:2], (3,))
    with plugax.disable_jit(), pytest.raises(Exception, match="compiler"):
        lax.rng_bit_generator(KEY, (3,))


def test_rng_uniform():
    for fn in (lax.rng_uniform, plugax.jit(lax.rng_uniform, static_argnums=2)):
        u = np.asarray(fn(np.float32(2.0), np.float32(3.0), (1000,)))
        assert u.dtype == np.float32 and u.shape == (1000,)
        assert (u >= 2.0).all() and (u < 3.0).all() and u.std() > 0.2
