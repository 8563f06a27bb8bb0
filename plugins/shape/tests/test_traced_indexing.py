"""x[i] and x.at[i] with traced / array indices (one gather or scatter), under jit, vmap,
grad, scan and fori_loop; out-of-range semantics as JAX's; two ported JAX programs."""
from functools import partial

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import plugax as jax
import plugax.numpy as jnp
from plugax import lax
from plugax.testing import check_primitive, rand

fast = settings(max_examples=10, deadline=None, derandomize=True)
X = rand((3, 5, 4)).astype(np.float32)
I = np.array([2, -1, 0], np.int32)
J = np.array([[1], [3]], np.int32)
TRACED_INDICES = [   # built from the traced arguments (i, j)
    lambda i, j: (i,), lambda i, j: (0, i), lambda i, j: (slice(None), i),
    lambda i, j: (1, slice(None), j), lambda i, j: (i[:, None], slice(None), i[:2]),
    lambda i, j: (None, i, None, 1), lambda i, j: (Ellipsis, j),
    lambda i, j: (slice(1, None), None, i[:2], slice(None, None, -2)),
    lambda i, j: (i[0],), lambda i, j: (i[1], slice(2, 4), i[2]),
]


@pytest.mark.parametrize("k", range(len(TRACED_INDICES)))
def test_traced_getitem_matches_numpy_under_jit(k):
    index = TRACED_INDICES[k]
    want = X[index(I, J)]
    got = jax.jit(lambda x, i, j: x[index(i, j)])(X, I, J)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(jnp.asarray(X)[index(I, J)], want)       # eager


@pytest.mark.parametrize("k", range(len(TRACED_INDICES)))
def test_traced_updates_match_numpy(k):
    index = TRACED_INDICES[k]
    v = rand(X[index(I, J)].shape, seed=4)
    want = X.astype(np.float64).copy()
    np.add.at(want, index(I, J), v)
    got = jax.jit(lambda x, i, j, v: x.at[index(i, j)].add(v))(X, I, J, v)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    if k not in (1, 4, 5, 6, 7):      # no repeated positions: set is well defined
        want = X.copy()
        want[index(I, J)] = v
        got = jax.jit(lambda x, i, j, v: x.at[index(i, j)].set(v))(X, I, J, v)
        np.testing.assert_array_equal(got, want)


def test_out_of_bounds_semantics_like_jax():
    x = jnp.arange(4.0)
    f = jax.jit(lambda x, i: x[i])
    assert [float(f(x, i)) for i in (10, -1, -10)] == [3.0, 3.0, 0.0]   # clamped
    s = jax.jit(lambda x, i: x.at[i].set(9.0))
    np.testing.assert_array_equal(s(x, 7), [0, 1, 2, 3])                # dropped
    np.testing.assert_array_equal(s(x, -1), [0, 1, 2, 9])                # from the end
    idx = jnp.array([1, 9])
    np.testing.assert_array_equal(x.at[idx].get(mode="fill", fill_value=-1.0), [1, -1])
    assert np.isnan(np.asarray(x.at[idx].get(mode="fill"))[1])
    np.testing.assert_array_equal(x.at[idx].get(mode="clip"), [1, 3])
    np.testing.assert_array_equal(x.at[idx].set(5.0, mode="clip"), [0, 5, 2, 5])
    np.testing.assert_array_equal(x.at[idx].set(5.0, mode="drop"), [0, 5, 2, 3])


def test_every_update_method_eager_and_jit():
    x = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    idx = np.array([1, 1, 2])
    want = {"set": [1, 5, 5, 4], "add": [1, 12, 8, 4], "subtract": [1, -8, -2, 4],
            "multiply": [1, 50, 15, 4], "divide": [1, 0.08, 0.6, 4], "min": [1, 2, 3, 4],
            "max": [1, 5, 5, 4], "power": [1, 2.0 ** 25, 3.0 ** 5, 4]}
    for name, expected in want.items():
        eager = getattr(jnp.asarray(x).at[idx], name)(5.0)
        jitted = jax.jit(lambda x, i: getattr(x.at[i], name)(5.0))(x, idx)
        np.testing.assert_allclose(eager, expected, rtol=1e-6, err_msg=name)
        np.testing.assert_allclose(jitted, expected, rtol=1e-6, err_msg=name)
    np.testing.assert_allclose(jax.jit(lambda x, i: x.at[i].apply(jnp.sin))(x, idx),
                               [1, np.sin(2), np.sin(3), 4], rtol=1e-6)


def test_repeated_indices_accumulate_and_grad_flows():
    counts = jax.jit(lambda i: jnp.zeros(5).at[i].add(1.0))(jnp.array([1, 1, 3, 1]))
    np.testing.assert_array_equal(counts, [0, 3, 0, 1, 0])
    g = jax.grad(lambda x, i: (x[i] ** 2).sum())(jnp.arange(4.0), jnp.array([1, 1, 3]))
    np.testing.assert_allclose(g, [0, 4, 0, 6])
    # set with repeats: the winning update gets the cotangent, the losing one none
    gv = jax.grad(lambda v: x_set(v).sum())(jnp.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(gv, [0.0, 1.0, 1.0])


def x_set(v):
    return jnp.zeros(4).at[jnp.array([1, 1, 2])].set(v) * 1.0


def test_boolean_masks_eager_and_error_under_jit():
    x = jnp.asarray(X)
    np.testing.assert_array_equal(x[X > 0.5], X[X > 0.5])
    np.testing.assert_array_equal(x[:, X[0, :, 0] > 0], X[:, X[0, :, 0] > 0])
    with pytest.raises(jax.errors.NonConcreteBooleanIndexError,
                       match="Array boolean indices must be concrete; got bool"):
        jax.jit(lambda x: x[x > 0])(X)
    from plugax_shape.advanced import NonConcreteBooleanIndexError
    with pytest.raises(NonConcreteBooleanIndexError):
        jax.jit(lambda x: x.at[x > 0].set(0.0))(X)


def test_kit_on_traced_indexing_functions():
    """jvp vs finite differences, vmap vs a loop (every placement), jit vs eager."""
    i = np.array([[2, 0], [4, 4]], np.int32)
    check_primitive(lambda x, i: x[:, i], rand((3, 5)), i, rules=("jvp", "vmap", "jit"),
                    jvp_options={"argnums": (0,)}, vmap_options={"max_placements": 12})
    v = rand((2, 2, 3), seed=1)
    check_primitive(lambda x, i, v: x.at[i, :].add(v), rand((5, 3)), i, v,
                    rules=("jvp", "vmap", "jit"), jvp_options={"argnums": (0, 2)},
                    vmap_options={"max_placements": 12})


def test_vmap_over_indices_operand_or_both_vs_loop():
    x, idx = rand((4, 6)), np.array([[0, 5], [3, 3], [5, 1], [2, 0]], np.int32)
    loop = np.stack([x[k][idx[k]] for k in range(4)])
    np.testing.assert_array_equal(jax.vmap(lambda r, i: r[i])(x, idx), loop)
    rows = np.array([3, 0], np.int32)
    np.testing.assert_array_equal(jax.vmap(lambda r, i: r[i], in_axes=(1, None))(x, rows),
                                  np.stack([x[:, c][rows] for c in range(6)]))
    r4 = idx % 4
    np.testing.assert_array_equal(jax.vmap(lambda i: jnp.asarray(x)[i], in_axes=1)(r4),
                                  np.stack([x[r4[:, c]] for c in range(2)]))
    upd = jax.vmap(lambda r, i: r.at[i].set(-1.0), in_axes=(0, 0))(x, idx)
    want = x.copy()
    for k in range(4):
        want[k, idx[k]] = -1.0
    np.testing.assert_array_equal(upd, want)


@fast
@given(st.data())
def test_random_mixed_indices_match_numpy(data):
    """Hypothesis: slices, ints, None and integer arrays (traced under jit) mixed."""
    arrays, index = [], []
    for n in X.shape[:data.draw(st.integers(1, 3))]:
        kind = data.draw(st.sampled_from(["array", "int", "slice"]))
        if kind == "array":
            size = data.draw(st.integers(1, 3))
            arrays.append(np.asarray(data.draw(st.lists(st.integers(-n, n - 1), min_size=size,
                                                        max_size=size)), np.int32))
            index.append(("A", len(arrays) - 1))
        elif kind == "int":
            index.append(data.draw(st.integers(-n, n - 1)))
        else:
            index.append(slice(data.draw(st.none() | st.integers(-4, 4)), None,
                               data.draw(st.sampled_from([None, 2, -1]))))
    if data.draw(st.booleans()):
        index.insert(data.draw(st.integers(0, len(index))), None)
    sizes = {a.size for a in arrays}
    if len(sizes) > 1:      # make them broadcast: all of the first one's size
        arrays = [np.resize(a, arrays[0].size) for a in arrays]

    def materialise(arrs):
        return tuple(arrs[e[1]] if isinstance(e, tuple) else e for e in index)
    want = X[materialise(arrays)]
    got = jax.jit(lambda x, *a: x[materialise(a)])(X, *arrays)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    v = rand(want.shape, seed=3)
    added = X.astype(np.float64).copy()
    np.add.at(added, materialise(arrays), v)
    got = jax.jit(lambda x, v, *a: x.at[materialise(a)].add(v))(X, v, *arrays)
    np.testing.assert_allclose(got, added, rtol=1e-5, atol=1e-6)


needs_control_flow = pytest.mark.skipif(
    "control_flow" not in jax.registry.loaded_names(),
    reason="needs lax.scan/fori_loop (the control_flow plugin is not loaded)")


@needs_control_flow
def test_grad_through_traced_index_inside_scan_and_fori_loop():
    w = rand((6,)).astype(np.float32)

    def loss_scan(w):
        def body(c, t):
            return c + w[t] ** 2, w[(t + 1) % 6]
        c, ys = lax.scan(body, 0.0, jnp.arange(6))
        return c + ys.sum()

    def loss_fori(w):
        return lax.fori_loop(0, 6, lambda t, c: c + w[t] * w[5 - t], 0.0)
    np.testing.assert_allclose(jax.grad(loss_scan)(w), 2 * w + 1, rtol=1e-6)
    np.testing.assert_allclose(jax.grad(loss_fori)(w), 2 * w[::-1], rtol=1e-6)
    np.testing.assert_allclose(jax.jit(jax.grad(loss_fori))(w), 2 * w[::-1], rtol=1e-6)


# --- ported JAX programs (unchanged but for the imports) -------------------------------------
@needs_control_flow
def test_ported_scan_writes_carry_at_t():
    """A recurrent filter that stores its state history with `hist.at[t].set(...)`."""
    def run(a, xs):
        def step(carry, t):
            h, hist = carry
            h = a * h + xs[t]
            hist = hist.at[t].set(h)
            return (h, hist), h
        (_, hist), hs = lax.scan(step, (0.0, jnp.zeros(xs.shape[0])), jnp.arange(xs.shape[0]))
        return hist, hs
    xs = jnp.array([1.0, 2.0, 0.5, -1.0])
    hist, hs = jax.jit(run)(0.5, xs)
    want, h = [], 0.0
    for x in np.asarray(xs):
        h = 0.5 * h + x
        want.append(h)
    np.testing.assert_allclose(hist, want, rtol=1e-6)
    np.testing.assert_allclose(hs, want, rtol=1e-6)
    g = jax.grad(lambda a: run(a, xs)[0].sum())(0.5)
    eps = 1e-3
    fd = (np.sum(run(0.5 + eps, xs)[0]) - np.sum(run(0.5 - eps, xs)[0])) / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=1e-3)


def test_ported_histogram_and_embedding_lookup_with_grad():
    """bincount via .at[].add, and an embedding lookup W[ids] trained by grad."""
    @partial(jax.jit, static_argnums=1)
    def bincount(x, length):
        return jnp.zeros(length, jnp.int32).at[x].add(1)
    ids = np.array([0, 2, 2, 5, 2, 1], np.int32)
    np.testing.assert_array_equal(bincount(ids, 6), np.bincount(ids, minlength=6))

    def loss(W, ids, targets):
        emb = W[ids]                      # (batch, dim)
        return jnp.mean((emb.sum(axis=-1) - targets) ** 2)
    W = rand((6, 3)).astype(np.float32)
    targets = np.linspace(-1, 1, 6).astype(np.float32)
    g = jax.jit(jax.grad(loss))(W, ids, targets)
    resid = W[ids].sum(-1) - targets
    want = np.zeros_like(W)
    np.add.at(want, ids, (2 * resid / len(ids))[:, None] * np.ones((1, 3)))
    np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-6)


def test_small_integer_index_dtypes_normalise_without_overflow():
    """-1 as int8 on an axis of 300: i + n is computed after widening to int32."""
    x = jnp.arange(300.0)
    got = jax.jit(lambda x, i: x[i])(x, np.array([-1, 100], np.int8))
    np.testing.assert_array_equal(got, [299, 100])
    got = jax.jit(lambda x, i: x.at[i].set(-1.0))(x, np.array([255], np.uint8))
    assert float(got[255]) == -1.0 and float(got.sum()) == float(np.arange(300).sum() - 256)


def test_scalar_traced_index_is_a_dynamic_slice_like_jax():
    """x[i] with scalar i: dynamic_slice (clamped start; its transpose clamps too), so the
    gradient of an out-of-range read reaches the row it read, under jit as eagerly (JAX)."""
    x = jnp.arange(4.0)
    g = jax.jit(jax.grad(lambda x, i: x[i]))(x, 10)
    np.testing.assert_array_equal(g, [0, 0, 0, 1])
    np.testing.assert_array_equal(jax.grad(lambda x, i: x[i])(x, 10), [0, 0, 0, 1])
    names = [e.primitive.name for e in jax.make_jaxpr(lambda x, i: x[i, 1:])(
        jnp.ones((3, 3)), 5).jaxpr.eqns]
    assert "dynamic_slice" in names and "gather" not in names
