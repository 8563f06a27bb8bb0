"""plugax.numpy products and einsum against NumPy; their jaxprs against JAX's."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import plugax
import plugax.numpy as pnp
from plugax.testing import check_jvp, check_vmap

RNG = np.random.default_rng(0)


def _r(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


MATMUL_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                 ((5, 2, 3), (3, 4)), ((3,), (5, 3, 4)), ((5, 2, 3), (5, 3, 4)),
                 ((2, 1, 2, 3), (4, 3, 5)), ((2, 1, 2, 3), (2, 4, 3, 5)),
                 ((1, 2, 3), (4, 1, 3, 2)), ((0, 2, 3), (3, 4)), ((2, 0), (0, 3))]


@pytest.mark.parametrize("xs, ys", MATMUL_SHAPES)
def test_matmul_matches_numpy(xs, ys):
    x, y = _r(*xs), _r(*ys)
    for got in (pnp.matmul(x, y), plugax.Array(x) @ y, x @ plugax.Array(y)):
        want = np.matmul(x, y)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("xs, ys", MATMUL_SHAPES[:9])
def test_matmul_derivatives_and_batching(xs, ys):
    x, y = _r(*xs), _r(*ys)
    check_jvp(pnp.matmul, x, y)
    check_vmap(pnp.matmul, x, y, max_placements=20, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("xs, ys", [((), (2, 3)), ((2, 3), ()), ((3,), (3,)), ((2, 3), (3,)),
                                    ((2, 3), (4, 3, 5)), ((4,), (2, 4, 3))])
def test_dot_matches_numpy(xs, ys):
    x, y = _r(*xs), _r(*ys)
    np.testing.assert_allclose(pnp.dot(x, y), np.dot(x, y), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(plugax.Array(x).dot(y), np.dot(x, y), rtol=1e-5, atol=1e-5)
    check_jvp(pnp.dot, x, y)


def test_outer_inner_vdot():
    a, b, m, k = _r(3), _r(2, 2), _r(2, 3, 4), _r(5, 4)
    np.testing.assert_allclose(pnp.outer(a, b), np.outer(a, b), rtol=1e-6)
    np.testing.assert_allclose(pnp.inner(m, k), np.inner(m, k), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(pnp.inner(2.0, a), 2.0 * a, rtol=1e-6)
    np.testing.assert_allclose(pnp.vdot(b, b.T), np.vdot(b, b.T), rtol=1e-6)
    check_jvp(pnp.outer, a, b)
    check_jvp(pnp.vdot, b, b.T)


@pytest.mark.parametrize("ys, axes", [((3, 4, 5), 2), ((4, 5), 1), ((2,), 0),
                                      ((3, 4, 5), ([1, 2], [0, 1])), ((4, 6), (2, 0)),
                                      ((6, 4), ([-1], [-1]))])
def test_tensordot(ys, axes):
    m, n = _r(2, 3, 4), _r(*ys)
    np.testing.assert_allclose(pnp.tensordot(m, n, axes), np.tensordot(m, n, axes),
                               rtol=1e-5, atol=1e-5)


EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("ij,ij->i", [(2, 3), (2, 3)]),
    ("ij,kl->ijkl", [(2, 3), (2, 2)]), ("ij,ij->", [(2, 3), (2, 3)]),
    ("ij->ji", [(2, 3)]), ("ij->", [(2, 3)]), ("ii->i", [(3, 3)]), ("ii", [(3, 3)]),
    ("iij->j", [(3, 3, 2)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("...ij,...jk->...ik", [(5, 2, 3), (5, 3, 4)]), ("i...->...", [(2, 3, 4)]),
    ("ijk,kj->i", [(2, 3, 4), (4, 3)]), ("ab,bc->ca", [(2, 3), (3, 4)]),
    ("i,i", [(4,), (4,)]), ("i,j", [(2,), (3,)]), ("ij,j->", [(2, 3), (3,)]),
    ("ii,i->i", [(3, 3), (3,)]), (" ij , jk -> ki ", [(2, 3), (3, 4)]),
]


@pytest.mark.parametrize("spec, shapes", EINSUM_CASES)
def test_einsum_matches_numpy(spec, shapes):
    ops = [_r(*s) for s in shapes]
    got = pnp.einsum(spec, *ops)
    want = np.einsum(spec, *ops)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("spec, shapes", EINSUM_CASES[:6] + EINSUM_CASES[8:10])
def test_einsum_derivatives_and_batching(spec, shapes):
    ops = [_r(*s) for s in shapes]
    fn = lambda *xs: pnp.einsum(spec, *xs)  # noqa: E731
    check_jvp(fn, *ops)
    check_vmap(fn, *ops, max_placements=12, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("spec, shapes", [("ij,jk->il", [(2, 3), (3, 4)]),
                                          ("ij->iij", [(2, 3)]), ("ij,jk", [(2, 3)]),
                                          ("i2->i", [(2, 3)])])
def test_einsum_bad_subscripts(spec, shapes):
    with pytest.raises(ValueError, match="einsum"):
        pnp.einsum(spec, *[_r(*s) for s in shapes])


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=0, max_size=2),
       st.lists(st.integers(1, 3), min_size=0, max_size=2),
       st.integers(1, 3), st.integers(1, 3), st.integers(1, 3),
       st.booleans(), st.booleans())
def test_matmul_broadcasting_property(bx, by, m, k, n, x_vec, y_vec):
    """Batch dims broadcast (size 1 against anything), vectors are promoted and dropped."""
    bx = [d if i % 2 else 1 for i, d in enumerate(bx)] if len(bx) == len(by) else bx
    xs = (k,) if x_vec else (*bx, m, k)
    ys = (k,) if y_vec else (*by, k, n)
    x, y = _r(*xs), _r(*ys)
    try:
        want = np.matmul(x, y)
    except ValueError:
        with pytest.raises(ValueError):
            pnp.matmul(x, y)
        return
    np.testing.assert_allclose(pnp.matmul(x, y), want, rtol=1e-5, atol=1e-5)


def test_dtypes_follow_jax():
    i32, f32 = np.ones((2, 3), np.int32), np.ones((3,), np.float32)
    assert pnp.dot(i32, f32).dtype == np.float32
    assert pnp.dot(np.ones((2, 3), np.int8), np.ones(3, np.int8)).dtype == np.int8
    assert pnp.matmul(np.ones((2, 3), bool), np.ones((3, 2), bool)).dtype == np.bool_
    assert pnp.dot(f32, 2.0).dtype == np.float32 and not pnp.dot(f32, 2.0).weak_type
    assert pnp.dot(2, 3).dtype == np.int32 and pnp.dot(2, 3).weak_type
    assert pnp.einsum("i,i", i32[0], f32).dtype == np.float32


def test_jaxprs_match_jax():
    f32 = lambda *s: np.zeros(s, np.float32)  # noqa: E731
    text = str(plugax.make_jaxpr(lambda x, y: pnp.dot(x, y))(f32(2), f32(2)))
    assert ("dot_general[\n      dimension_numbers=(([0], [0]), ([], []))\n"
            "      preferred_element_type=float32\n    ] a b") in text
    text = str(plugax.make_jaxpr(pnp.matmul)(f32(2, 1, 2, 3), f32(4, 3, 5)))
    for piece in ["squeeze[dimensions=(1,)] a", "dimension_numbers=(([2], [1]), ([], []))",
                  "transpose[permutation=(0, 2, 1, 3)]"]:
        assert piece in text, text
    text = str(plugax.make_jaxpr(lambda a, b: pnp.einsum("ij,jk->ki", a, b))(f32(2, 3), f32(3, 4)))
    assert "dimension_numbers=(([1], [0]), ([], []))" in text and "transpose" in text
    text = str(plugax.make_jaxpr(lambda a, b: a @ b)(f32(5, 2, 3), f32(5, 3, 4)))
    assert "dimension_numbers=(([2], [1]), ([0], [0]))" in text and "transpose" not in text
