"""The random family's primitive, threefry2x32.

threefry2x32 is checked against the Threefry-2x32-20 known-answer vectors of Random123
(the published reference implementation), against an independent NumPy transcription of
the cipher (written here from the specification, not from the plugin), and with the
conformance kit (abstract_eval, vmap at every axis incl. broadcast operands, jit vs eager).
"""
from __future__ import annotations

import numpy as np
import pytest

import plugax
import plugax.numpy as jnp
from plugax.extend import ShapeError, float0
from plugax.lax import threefry2x32_p
from plugax.testing import check_primitive

U32 = np.uint32
RNG = np.random.default_rng(0)


def words(*shape):
    return RNG.integers(0, 2**32, size=shape, dtype=U32)


# Random123's kat_vectors for threefry2x32_20: (key, counter) -> result
KAT = [((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6b200159, 0x99ba4efe)),
       ((0xffffffff, 0xffffffff), (0xffffffff, 0xffffffff), (0x1cb996fc, 0xbb002be7)),
       ((0x13198a2e, 0x03707344), (0x243f6a88, 0x85a308d3), (0xc4923a9c, 0x483df7a0))]


def reference(k1, k2, x1, x2):
    """Threefry-2x32, 20 rounds, one element at a time with Python integers."""
    mask = 0xFFFFFFFF
    rot = [13, 15, 26, 6, 17, 29, 16, 24]
    ks = [k1, k2, k1 ^ k2 ^ 0x1BD11BDA]
    x = [(x1 + ks[0]) & mask, (x2 + ks[1]) & mask]
    for r in range(20):
        x[0] = (x[0] + x[1]) & mask
        x[1] = ((x[1] << rot[r % 8]) | (x[1] >> (32 - rot[r % 8]))) & mask
        x[1] ^= x[0]
        if r % 4 == 3:
            s = r // 4 + 1
            x[0] = (x[0] + ks[s % 3]) & mask
            x[1] = (x[1] + ks[(s + 1) % 3] + s) & mask
    return x


@pytest.mark.parametrize("key,ctr,expected", KAT)
def test_known_answers_eager_and_jit(key, ctr, expected):
    args = [np.asarray(v, U32) for v in (*key, *ctr)]
    for fn in (threefry2x32_p.bind, plugax.jit(lambda *a: threefry2x32_p.bind(*a))):
        y1, y2 = fn(*args)
        assert (int(y1), int(y2)) == expected


def test_matches_the_scalar_reference_with_broadcasting():
    k1, k2, x1, x2 = words(), words(3, 1), words(3, 4), words(4)
    y1, y2 = (np.asarray(y) for y in threefry2x32_p.bind(k1, k2, x1, x2))
    assert y1.shape == y2.shape == (3, 4) and y1.dtype == U32
    for i in range(3):
        for j in range(4):
            assert [y1[i, j], y2[i, j]] == reference(int(k1), int(k2[i, 0]), int(x1[i, j]),
                                                     int(x2[j]))


@pytest.mark.parametrize("shapes", [((), (), (5,), (5,)), ((2, 1), (1,), (2, 3), (3,)),
                                    ((), (), (0,), (0,))])
def test_conformance_kit(shapes):
    ran = check_primitive(threefry2x32_p, *(words(*s) for s in shapes), lowering=True)
    assert {"abstract_eval", "vmap", "lowering"} <= set(ran)


def test_no_tangent_for_integer_outputs():
    args = [words(3) for _ in range(4)]
    outs, tangents = plugax.jvp(lambda *a: threefry2x32_p.bind(*a), args,
                                [np.zeros(3, float0)] * 4)
    assert all(np.asarray(t).dtype == float0 for t in tangents)
    np.testing.assert_array_equal(np.asarray(outs[0]), threefry2x32_p.bind(*args)[0])


def test_errors_name_the_primitive():
    with pytest.raises(TypeError, match="threefry2x32.*uint32"):
        threefry2x32_p.bind(np.int32(1), U32(2), words(3), words(3))
    with pytest.raises(ShapeError, match="threefry2x32.*broadcast"):
        threefry2x32_p.bind(U32(1), U32(2), words(3), words(4))


def test_jaxpr_is_one_equation():
    text = str(plugax.make_jaxpr(lambda *a: threefry2x32_p.bind(*a))(U32(0), U32(1), words(4),
                                                                        words(4)))
    assert text.count("threefry2x32") == 1


def test_permutation_is_differentiable_in_the_values():
    import plugax.random as random
    x = jnp.arange(6.0)
    perm = np.asarray(random.permutation(random.key(1), 6))
    g = plugax.grad(lambda v: jnp.sum(random.permutation(random.key(1), v) * jnp.arange(6.0)))(x)
    np.testing.assert_allclose(np.asarray(g)[perm], np.arange(6.0))


@pytest.mark.parametrize("batched,log_space", [(True, False), (False, True)])
def test_random_gamma_kit_checks(batched, log_space):
    """abstract_eval, vmap against a loop at every axis, jit against eager. (Its jvp is the
    implicit-reparameterisation derivative, checked against JAX and SciPy in
    test_keys_and_grads: finite differences of a rejection sampler would cross its jumps.)"""
    import plugax.random as random
    from plugax.lax import random_gamma_p
    keys = np.asarray(random.key_data(random.split(random.key(0), 3)))
    a = np.array([[0.5, 2.0], [1.0, 3.0], [7.0, 0.2]], np.float32)
    args = (keys, a) if batched else (keys[0], a[0])
    ran = check_primitive(random_gamma_p, *args, log_space=log_space,
                          rules=["abstract_eval", "vmap"], lowering=True)
    assert {"abstract_eval", "vmap", "lowering"} <= set(ran)


def test_gamma_family_vmap_is_per_key_bit_for_bit():
    """The batch folds into the keys (as JAX's random_gamma does), so the rejection loop
    stays scalar and vmapped samples are the per-key samples exactly."""
    import plugax.random as random
    keys = random.split(random.key(5), 3)
    for fn in (lambda k: random.beta(k, 2.0, 3.0, (4,)),
               lambda k: random.chisquare(k, 3.0, (4,)),
               lambda k: random.t(k, 4.0, (4,))):
        batched = np.asarray(plugax.vmap(fn)(keys))
        np.testing.assert_array_equal(batched, np.stack([np.asarray(fn(k)) for k in keys]))
