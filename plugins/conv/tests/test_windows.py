"""Window reductions: values vs a float64 loop, the kit's checks, the max-pool gradient
pair (select_and_gather_add / select_and_scatter_add), the generic reduce_window."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import plugax
import plugax.lax as lax
from plugax.extend import MissingRuleError, ShapeError
from plugax.testing import check_lowering, check_primitive, check_transpose, check_vmap
from plugax_conv.windows import (reduce_window_max_p, reduce_window_min_p, reduce_window_sum_p,
                                 select_and_gather_add_p, select_and_scatter_add_p)

FOLD = {"sum": (np.add, 0.0), "max": (np.maximum, -np.inf), "min": (np.minimum, np.inf),
        "prod": (np.multiply, 1.0)}
PRIMS = {"sum": reduce_window_sum_p, "max": reduce_window_max_p, "min": reduce_window_min_p}


def window_reference(x, kind, window_dimensions, window_strides, padding, base_dilation,
                     window_dilation, init=None):
    """XLA ReduceWindow by its definition: each window folds init with the taps that land
    on operand elements (padding and dilation holes are skipped)."""
    fold, ident = FOLD[kind]
    init = ident if init is None else init
    x = np.asarray(x, np.float64)
    out_shape = []
    for n, w, s, (lo, hi), bd, wd in zip(x.shape, window_dimensions, window_strides, padding,
                                         base_dilation, window_dilation):
        padded = (n - 1) * bd + 1 + lo + hi if n else lo + hi
        span = (w - 1) * wd + 1 if w else 0
        out_shape.append((padded - span) // s + 1 if padded >= span else 0)
    out = np.full(out_shape, init)
    for o in itertools.product(*map(range, out_shape)):
        acc = init
        for tap in itertools.product(*map(range, window_dimensions)):
            idx = []
            for d, (od, td) in enumerate(zip(o, tap)):
                q = od * window_strides[d] + td * window_dilation[d] - padding[d][0]
                if q % base_dilation[d] or not 0 <= q // base_dilation[d] < x.shape[d]:
                    break
                idx.append(q // base_dilation[d])
            else:
                acc = fold(acc, x[tuple(idx)])
        out[o] = acc
    return out


@st.composite
def window_case(draw):
    nd = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 5)) for _ in range(nd))
    dims = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    strides = tuple(draw(st.integers(1, 2)) for _ in range(nd))
    pads = tuple((draw(st.integers(0, 1)), draw(st.integers(-1, 1))) for _ in range(nd))
    bd = tuple(draw(st.integers(1, 2)) for _ in range(nd))
    wd = tuple(draw(st.integers(1, 2)) for _ in range(nd))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    # distinct values: max/min have a unique choice, so finite differences are valid
    x = rng.permutation(np.prod(shape)).reshape(shape).astype(np.float32) / 4 - 1
    return x, dict(window_dimensions=dims, window_strides=strides, padding=pads,
                   base_dilation=bd, window_dilation=wd)


@settings(max_examples=16, deadline=None, derandomize=True)
@given(window_case(), st.sampled_from(["sum", "max", "min"]))
def test_reduce_window_rules(case, kind):
    x, params = case
    prim = PRIMS[kind]
    try:
        got = prim.bind(x, **params)
    except ShapeError:
        return
    ref = window_reference(x, kind, **params)
    np.testing.assert_allclose(got, ref, rtol=1e-6)
    if 0 in got.shape or not np.isfinite(ref).all():
        return
    rules = None if kind == "sum" or all(d == 1 for d in params["base_dilation"] +
                                         params["window_dilation"]) else \
        ["abstract_eval", "jvp", "vmap", "jit"]   # dilated max-pool has no VJP, as in JAX
    check_primitive(prim, x, rules=rules, jvp_options={"rtol": 1e-2, "atol": 1e-2}, **params)
    if kind == "sum":
        check_transpose(prim, x, linear_argnums=0, **params)
    check_lowering(prim, x, **params)


def test_max_pool_gradient_pair():
    rng = np.random.default_rng(0)
    x = rng.permutation(2 * 6 * 5).reshape(2, 6, 5).astype(np.float32)
    t = rng.standard_normal(x.shape).astype(np.float32)
    p = dict(window_dimensions=(1, 3, 2), window_strides=(1, 2, 2), padding=((0, 0), (1, 1),
                                                                            (0, 1)))
    full = dict(p, base_dilation=(1, 1, 1), window_dilation=(1, 1, 1))
    for select in ("max", "min"):
        gathered = select_and_gather_add_p.bind(t, x, select_prim=select, **full)
        # the tangent at each window's chosen element, found here by a direct search
        ref = np.zeros(gathered.shape)
        for o in itertools.product(*map(range, gathered.shape)):
            best = None
            for tap in itertools.product(*map(range, p["window_dimensions"])):
                i = tuple(od * s + td - lo for od, s, td, (lo, _) in
                          zip(o, p["window_strides"], tap, p["padding"]))
                if all(0 <= a < n for a, n in zip(i, x.shape)):
                    better = best is None or (x[i] > x[best] if select == "max"
                                              else x[i] < x[best])
                    best = i if better else best
            ref[o] = t[best]
        np.testing.assert_array_equal(gathered, ref)
        src = rng.standard_normal(gathered.shape).astype(np.float32)
        scattered = select_and_scatter_add_p.bind(src, x, select_prim=select, **p)
        assert scattered.shape == x.shape
        # <scatter(src), t> == <src, gather(t)>: the two are each other's transposes
        assert np.sum(np.asarray(scattered) * t) == pytest.approx(np.sum(src * ref), rel=1e-5)
        for prim, args, params in ((select_and_gather_add_p, (t, x), full),
                                   (select_and_scatter_add_p, (src, x), p)):
            check_transpose(prim, *args, linear_argnums=0, select_prim=select, **params)
            check_vmap(prim, *args, select_prim=select, **params)
            check_lowering(prim, *args, select_prim=select, **params)


def test_generic_reduce_window_product():
    rng = np.random.default_rng(2)
    x = rng.uniform(0.5, 1.5, (3, 5, 4)).astype(np.float32)
    args = ((1, 2, 3), (1, 2, 1), "SAME")
    got = lax.reduce_window(x, 1.0, lax.mul, *args)
    pads = lax.padtype_to_pads(x.shape, args[0], args[1], "SAME")
    ref = window_reference(x, "prod", args[0], args[1], pads, (1, 1, 1), (1, 1, 1))
    np.testing.assert_allclose(got, ref, rtol=1e-5)
    assert "reduce_window[" in str(plugax.make_jaxpr(lambda a: lax.reduce_window(
        a, 1.0, lax.mul, *args))(x))
    f = lambda a: lax.reduce_window(a, 1.0, lax.mul, (2, 2), (1, 1), "VALID")  # noqa: E731
    batched = plugax.vmap(f, in_axes=1)(x)
    np.testing.assert_allclose(batched, np.stack([f(x[:, i]) for i in range(5)]), rtol=1e-6)
    check_lowering(lambda a: lax.reduce_window(a, 1.0, lax.mul, *args), x, rtol=1e-5)
    # a monoid with a non-identity init is generic too; padding is skipped (JAX: 4, 5, 5, 4)
    np.testing.assert_array_equal(lax.reduce_window(np.ones((1, 4), np.float32), 2.0, lax.add,
                                                    (1, 3), (1, 1), [(0, 0), (1, 1)]),
                                  [[4.0, 5.0, 5.0, 4.0]])
    got = lax.reduce_window(x, 2.0, lax.add, (1, 3, 1), (1, 1, 1), [(0, 0), (1, 1), (0, 0)])
    ref = window_reference(x, "sum", (1, 3, 1), (1, 1, 1), [(0, 0), (1, 1), (0, 0)],
                           (1, 1, 1), (1, 1, 1), init=2.0)
    np.testing.assert_allclose(got, ref, rtol=1e-5)


def test_monoids_bind_fast_primitives_and_errors():
    x = np.ones((4, 4), np.float32)
    for fn, init, name in ((lax.add, 0.0, "reduce_window_sum"), (lax.max, -np.inf,
                                                                 "reduce_window_max"),
                           (lax.min, np.inf, "reduce_window_min")):
        jaxpr = str(plugax.make_jaxpr(lambda a: lax.reduce_window(a, init, fn, (2, 2), (1, 1),
                                                                  "VALID"))(x))
        assert f"{name}[" in jaxpr
    with pytest.raises(ShapeError, match=r"one entry of window_strides.*f32\[4,4\]"):
        lax.reduce_window(x, 0.0, lax.add, (2, 2), (1,), "VALID")
    with pytest.raises(ShapeError, match="positive window_strides"):
        lax.reduce_window(x, 0.0, lax.add, (2, 2), (0, 1), "VALID")
    with pytest.raises(NotImplementedError, match="dilation"):
        plugax.grad(lambda a: lax.reduce_window(a, -np.inf, lax.max, (2, 2), (1, 1), "VALID",
                                                window_dilation=(2, 1)).sum())(x)


def test_cumulative_reductions_exist():
    """lax.cumsum & co. come from the reductions family; reduce_window does not duplicate them."""
    x = np.arange(1.0, 6.0, dtype=np.float32)
    np.testing.assert_allclose(lax.cumsum(x), np.cumsum(x))
    np.testing.assert_allclose(lax.cummax(x[::-1]), np.maximum.accumulate(x[::-1]))


def test_generic_reduce_window_derivatives_and_transformations():
    rng = np.random.default_rng(4)
    x = rng.uniform(0.5, 1.5, (3, 5, 4)).astype(np.float32)

    def prod_pool(a):   # a product window: no fast primitive, JAX's jvp rule
        return lax.reduce_window(a, 1.0, lax.mul, (1, 2, 2), (1, 1, 2), [(0, 0), (1, 0), (0, 0)])
    ran = check_primitive(prod_pool, x, rules=("abstract_eval", "jvp", "vmap", "vmap_jvp", "jit"),
                          jvp_options={"rtol": 2e-2, "atol": 2e-2},
                          vmap_options={"rtol": 1e-5, "atol": 1e-6})
    assert list(ran) == ["abstract_eval", "jvp", "vmap", "vmap_jvp", "jit"]
    # as in JAX, a generic body has forward mode only: grad names the missing rule
    with pytest.raises(MissingRuleError, match="'reduce_window' has no transpose rule"):
        plugax.grad(lambda a: prod_pool(a).sum())(x)
    # the tangent of a window product, by the product rule in float64
    t = rng.standard_normal(x.shape).astype(np.float32)
    _, tangent = plugax.jvp(prod_pool, (x,), (t,))
    xd, td = x.astype(np.float64), t.astype(np.float64)
    ref = np.zeros(tangent.shape)
    for b, i, j in itertools.product(*map(range, tangent.shape)):
        taps = [(b, i - 1 + di, 2 * j + dj) for di in (0, 1) for dj in (0, 1)
                if 0 <= i - 1 + di < 5]
        ref[b, i, j] = sum(td[p] * np.prod([xd[q] for q in taps if q != p]) for p in taps)
    np.testing.assert_allclose(tangent, ref, rtol=1e-5, atol=1e-6)


def test_generic_reduce_window_over_a_pytree_argmax_pool():
    """(value, index) pairs: the max of each window and where it is, one reduce_window."""
    x = np.array([[3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0]], np.float32)
    idx = np.broadcast_to(np.arange(8, dtype=np.int32), x.shape)

    def pick(a, b):
        take_a = a[0] >= b[0]
        return lax.select(take_a, a[0], b[0]), lax.select(take_a, a[1], b[1])

    def argmax_pool(x, idx):
        return lax.reduce_window((x, idx), (-np.inf, np.int32(-1)), pick, (1, 3), (1, 2),
                                 "VALID")
    for f in (argmax_pool, plugax.jit(argmax_pool)):
        values, where = f(x, idx)
        np.testing.assert_array_equal(values, [[4.0, 5.0, 9.0]])
        np.testing.assert_array_equal(where, [[2, 4, 5]])
    batched = plugax.vmap(argmax_pool, in_axes=(0, None))(np.stack([x, -x]), idx)
    np.testing.assert_array_equal(batched[1], [[[2, 4, 5]], [[1, 3, 6]]])
    with pytest.raises(TypeError, match="same structure"):
        lax.reduce_window((x, idx), 0.0, pick, (1, 3), (1, 2), "VALID")


def test_dtype_matrix():
    """As in JAX: windows of every dtype, except that a sum of booleans is refused."""
    from plugax.testing import DTYPES, check_dtype_matrix
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    p = dict(window_dimensions=(2, 2), window_strides=(1, 1), padding=((0, 0), (1, 0)),
             base_dilation=(1, 1), window_dilation=(1, 1))
    check_dtype_matrix(reduce_window_sum_p, x, accepted=set(DTYPES) - {"bool"}, **p)
    for prim in (reduce_window_max_p, reduce_window_min_p):
        check_dtype_matrix(prim, x, accepted=set(DTYPES), **p)
        assert np.asarray(prim.bind(x.astype(np.int8), **p)).dtype == np.int8
