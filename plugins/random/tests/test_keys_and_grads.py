"""Keys (typed and raw), seeds under transformations, errors, and gradients through
reparameterised samples."""
from __future__ import annotations

import numpy as np
import pytest

import plugax
import plugax.numpy as jnp
import plugax.random as random


def test_typed_keys_look_like_jax():
    k = random.key(42)
    assert k.shape == () and k.ndim == 0 and str(k.dtype) == "key<fry>"
    assert repr(k) == "Array((), dtype=key<fry>) overlaying:\n[ 0 42]"
    ks = random.split(k, 4)
    assert ks.shape == (4,) and len(ks) == 4 and ks[1:3].shape == (2,)
    assert ks.reshape(2, 2).shape == (2, 2) and ks.reshape(2, 2)[1, 0].shape == ()
    grid = ks.reshape(2, 2)
    np.testing.assert_array_equal(random.key_data(grid.T[0, 1]), random.key_data(grid[1, 0]))
    np.testing.assert_array_equal(random.key_data(grid.flatten()), random.key_data(ks))
    np.testing.assert_array_equal(random.key_data(grid[..., 1]),
                                  np.asarray(random.key_data(ks))[[1, 3]])
    np.testing.assert_array_equal(random.key_data(ks[2]), np.asarray(random.key_data(ks))[2])
    k1, k2 = random.split(k)        # unpacking, as JAX programs do; same counters 0, 1
    np.testing.assert_array_equal(random.key_data(k2), np.asarray(random.key_data(ks))[1])
    again = random.wrap_key_data(random.key_data(ks))
    np.testing.assert_array_equal(random.key_data(again), random.key_data(ks))
    assert random.key_impl(k) == "threefry2x32"


def test_raw_and_typed_keys_give_the_same_bits_and_keep_their_kind():
    raw, typed = random.PRNGKey(7), random.key(7)
    np.testing.assert_array_equal(random.key_data(typed), raw)
    np.testing.assert_array_equal(random.normal(raw, (4,)), random.normal(typed, (4,)))
    assert isinstance(random.split(raw), plugax.Array) and random.split(raw).shape == (2, 2)
    assert str(random.split(typed).dtype) == "key<fry>"
    assert str(random.fold_in(typed, 3).dtype) == "key<fry>"


def test_seeds_traced_under_jit_and_vmap():
    np.testing.assert_array_equal(plugax.jit(random.PRNGKey)(42), [0, 42])
    np.testing.assert_array_equal(random.key_data(plugax.jit(random.key)(-1)), [0, 2**32 - 1])
    np.testing.assert_array_equal(plugax.vmap(random.PRNGKey)(jnp.arange(3)),
                                  [[0, 0], [0, 1], [0, 2]])


def test_fold_in_is_split_on_the_same_counters_and_vmaps():
    # threefry on counter (0, d) in both: fold_in(k, d) == split(k, n)[d]
    folded = plugax.vmap(lambda d: random.fold_in(random.key(0), d))(jnp.arange(3))
    np.testing.assert_array_equal(random.key_data(folded),
                                  random.key_data(random.split(random.key(0), 3)))


def test_distinct_keys_give_independent_looking_streams():
    a = np.asarray(random.uniform(random.key(0), (20000,)))
    b = np.asarray(random.uniform(random.key(1), (20000,)))
    assert 0 <= a.min() and a.max() < 1 and abs(a.mean() - 0.5) < 0.01
    assert abs(np.corrcoef(a, b)[0, 1]) < 0.03
    z = np.asarray(random.normal(random.key(2), (20000,)))
    assert abs(z.mean()) < 0.03 and abs(z.std() - 1) < 0.03


@pytest.mark.parametrize("call,error,match", [
    (lambda: random.normal(3, (2,)), TypeError, "normal: expected a PRNG key"),
    (lambda: random.normal(jnp.zeros(3, jnp.uint32)), TypeError, "last axis has size 2"),
    (lambda: random.split(random.split(random.key(0), 4)), ValueError,
     "split accepts a single key.*shape \\(4,\\)"),
    (lambda: random.uniform(random.key(0), (2,), jnp.int32), ValueError,
     "dtype argument to `uniform` must be a float dtype"),
    (lambda: random.bits(random.key(0), (2,), jnp.int32), ValueError, "unsigned int dtype"),
    (lambda: random.randint(random.key(0), (2,), 0, 5, jnp.float32), TypeError,
     "randint only accepts integer dtypes"),
    (lambda: random.choice(random.key(0), 3, (5,), replace=False), ValueError,
     "Cannot take a larger sample"),
    (lambda: random.key(1.5), TypeError, "seed must be an integer"),
    (lambda: random.key(0, impl="rbg"), NotImplementedError, "threefry2x32"),
    (lambda: random.bernoulli(random.key(0), 0.5, (3,), mode="mid"), ValueError, "mode"),
])
def test_errors_name_the_mistake(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_grad_through_reparameterised_normal_and_uniform():
    key = random.key(0)
    z = np.asarray(random.normal(key, (3,)))
    g_loc, g_scale = plugax.grad(lambda m, s: jnp.sum(m + s * random.normal(key, (3,))),
                                 argnums=(0, 1))(2.0, 1.5)
    np.testing.assert_allclose([g_loc, g_scale], [3.0, z.sum()], rtol=1e-6)
    u = np.asarray(random.uniform(key, (3,)))
    g_lo, g_hi = plugax.grad(lambda lo, hi: jnp.sum(random.uniform(key, (3,), minval=lo,
                                                                     maxval=hi)),
                             argnums=(0, 1))(0.5, 2.0)
    np.testing.assert_allclose([g_lo, g_hi], [(1 - u).sum(), u.sum()], rtol=1e-6)


def test_samples_vmap_over_parameters():
    p = jnp.array([0.1, 0.5, 0.9])
    per = np.stack([np.asarray(random.bernoulli(random.key(3), float(v), (6,))) for v in p])
    both = plugax.vmap(lambda v: random.bernoulli(random.key(3), v, (6,)))(p)
    np.testing.assert_array_equal(both, per)
    lo = jnp.array([-1.0, 0.0, 2.0])
    per = np.stack([np.asarray(random.uniform(random.key(4), (3,), minval=v, maxval=5.0))
                    for v in lo])
    both = plugax.vmap(lambda v: random.uniform(random.key(4), (3,), minval=v, maxval=5.0))(lo)
    np.testing.assert_array_equal(both, per)


def test_gamma_family_gradients_match_jax():
    """Implicit reparameterisation: JAX's gradients (recorded with jax 0.10.2) to float32
    rounding; the samples themselves are bit-exact (test_vs_jax)."""
    a = jnp.array([0.5, 2.5, 10.0])
    g = plugax.grad(lambda a: jnp.sum(random.gamma(random.key(0), a)))(a)
    np.testing.assert_allclose(g, [1.7750096321105957, 1.0184075832366943, 0.9234698414802551],
                               rtol=2e-5)
    g = plugax.grad(lambda a: jnp.sum(random.beta(random.key(1), a, 2.0)))(jnp.array([0.7, 3.0]))
    np.testing.assert_allclose(g, [0.45161911845207214, 0.11438310891389847], rtol=2e-5)
    # t and dirichlet go through the same custom_jvp (recorded: -0.049571082 for
    # grad of t(key(1), df) at df=4; [0.06844147, -0.0033344168, -0.0061676414] for
    # dirichlet); they compile slowly, so only beta stands for the composites here


def test_gamma_sample_grad_against_finite_differences_of_the_cdf():
    """dx/da = -(dP/da)/(dP/dx), checked with SciPy's regularised incomplete gamma in
    float64 on both the series (x < a + 1) and the continued-fraction side."""
    scipy_special = pytest.importorskip("scipy.special")
    from plugax_random.gamma_grad import gamma_sample_grad
    a = np.array([0.3, 0.5, 1.0, 2.5, 2.5, 10.0, 100.0, 100.0, 0.1])
    x = np.array([0.2, 0.01, 3.0, 0.5, 9.0, 10.0, 90.0, 130.0, 1e-3])
    h = 1e-6
    dp_da = (scipy_special.gammainc(a + h, x) - scipy_special.gammainc(a - h, x)) / (2 * h)
    pdf = np.exp((a - 1) * np.log(x) - x - scipy_special.gammaln(a))
    got = gamma_sample_grad(jnp.asarray(a, jnp.float32), jnp.asarray(x, jnp.float32))
    np.testing.assert_allclose(got, -dp_da / pdf, rtol=2e-4)


# jax 0.10.2 with jax_enable_x64=True, key(3) (Python floats print float64 exactly)
JAX_X64 = {
    "uniform": ("float64", [0.8653929000279257, 0.4532044109693594, 0.2385376809645079,
                            0.2042374079588094]),
    "bits": ("uint64", [15963681350020464357, 8360145782228061838, 4400243552688456428]),
    "randint": ("int64", [412274788091, 869878936110, 610672448405, 571034329911,
                          431305404201]),
    "key_big": ("uint32", [256, 3]),
    "key_traced": ("uint32", [4294967295, 4294967295]),    # jit(PRNGKey)(int64(-1))
    "exponential": ("float64", [2.005395114484557, 0.6036802410437376, 0.2725145904247457]),
    "permutation": ("int64", [0, 5, 4, 2, 1, 3]),
    "rademacher": ("int64", [-1, 1, 1, 1, 1, -1, -1, -1]),      # bernoulli on float64 bits
    # n=20.0 is weakly typed: n and p promote to p's float32, the counts come as float64
    "multinomial": ("float64", [2.0, 7.0, 11.0, 4.0, 4.0, 12.0]),
    "normal": ("float64", [1.1048739767803086, -0.11756943795234803, -0.7110143201629989,
                           -0.8265806018037718]),
}


@pytest.mark.parametrize("name", list(JAX_X64))
def test_x64_matches_jax(name):
    from plugax.testing import x64
    with x64():
        k = random.key(3)
        out = {"uniform": lambda: random.uniform(k, (4,)), "bits": lambda: random.bits(k, (3,)),
               "randint": lambda: random.randint(k, (5,), 0, 10**12),
               "key_big": lambda: random.PRNGKey(2**40 + 3),
               "key_traced": lambda: plugax.jit(random.PRNGKey)(np.int64(-1)),
               "exponential": lambda: random.exponential(k, (3,)),
               "permutation": lambda: random.permutation(k, 6),
               "rademacher": lambda: random.rademacher(k, (8,)),
               "multinomial": lambda: random.multinomial(
                   random.key(21), 20.0, np.array([0.2, 0.3, 0.5], np.float32),
                   shape=(2, 3)).ravel(),
               "normal": lambda: random.normal(k, (4,))}[name]()
        dtype, ref = JAX_X64[name]
        assert str(out.dtype) == dtype
        np.testing.assert_array_equal(np.asarray(out), np.array(ref, dtype))
