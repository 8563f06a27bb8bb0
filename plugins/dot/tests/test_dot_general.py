"""Rules of dot_general: abstract_eval, impl vs einsum, jvp, vmap, both transposes."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import plugax
import plugax.lax as lax
from plugax.extend import RuleContext, ShapedArray, ShapeError, UndefPrimal
from plugax.testing import TRACED_RULES, check_primitive, check_transpose, x64
from plugax_dot.dot_general import RULES, DotDimensionNumbers, dot_general_p

LETTERS = "abcdefgh"


@st.composite
def dot_case(draw, max_rank=3):
    """Random operands and dimension numbers: batch, contracting and free dims in any order."""
    nb, nc = draw(st.integers(0, 1)), draw(st.integers(0, 2))
    nlf = draw(st.integers(0, max_rank - nb - nc)) if max_rank > nb + nc else 0
    nrf = draw(st.integers(0, max_rank - nb - nc)) if max_rank > nb + nc else 0
    size = lambda: draw(st.integers(1, 3))  # noqa: E731
    kinds = {"b": [size() for _ in range(nb)], "c": [size() for _ in range(nc)]}
    lhs = draw(st.permutations([("b", i) for i in range(nb)] + [("c", i) for i in range(nc)]
                               + [("l", i) for i in range(nlf)]))
    rhs = draw(st.permutations([("b", i) for i in range(nb)] + [("c", i) for i in range(nc)]
                               + [("r", i) for i in range(nrf)]))
    free = {k: size() for k in [("l", i) for i in range(nlf)] + [("r", i) for i in range(nrf)]}
    shape = lambda dims: tuple(kinds[k][i] if k in kinds else free[(k, i)]  # noqa: E731
                               for k, i in dims)
    def where(dims, kind):
        return tuple(dims.index((kind, i)) for i in range(len(kinds[kind])))
    dn = DotDimensionNumbers(((where(lhs, "c"), where(rhs, "c")),
                              (where(lhs, "b"), where(rhs, "b"))))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    x = rng.standard_normal(shape(lhs)).astype(np.float32)
    y = rng.standard_normal(shape(rhs)).astype(np.float32)
    return x, y, dn


def _einsum_reference(x, y, dn):
    (lc, rc), (lb, rb) = dn
    xl = [LETTERS[i] for i in range(x.ndim)]
    yl = ["ABCDEFGH"[i] for i in range(y.ndim)]
    for a, b in list(zip(lc, rc)) + list(zip(lb, rb)):
        yl[b] = xl[a]
    out = [xl[d] for d in lb] + [c for i, c in enumerate(xl) if i not in lc + lb] \
        + [c for i, c in enumerate(yl) if i not in rc + rb]
    return np.einsum(f"{''.join(xl)},{''.join(yl)}->{''.join(out)}", x, y)


@settings(max_examples=40, deadline=None)
@given(dot_case())
def test_dot_general_rules(case):
    x, y, dn = case
    got = lax.dot_general(x, y, dn)
    np.testing.assert_allclose(got, _einsum_reference(x, y, dn), rtol=1e-5, atol=1e-5)
    ran = check_primitive(dot_general_p, x, y, dimension_numbers=dn,
                          vmap_options={"rtol": 1e-4, "atol": 1e-5})
    assert ran[:3] == ["abstract_eval", "jvp", "vmap"]
    assert set(TRACED_RULES) <= set(ran) | set(ran.skipped)   # the jit ones need xla_call
    for i in (0, 1):
        check_transpose(dot_general_p, x, y, linear_argnums=i, dimension_numbers=dn)
        check_transpose(dot_general_p, x, y, linear_argnums=i, dimension_numbers=dn,
                        preferred_element_type=np.dtype(np.float64))


def test_transpose_rule_called_directly():
    """<T(ct), x> == <ct, L(x)> with the rule invoked as the kernel would."""
    rule = RULES[0].transpose
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 4))
    y = rng.standard_normal((4, 2, 5))
    dn = DotDimensionNumbers((((2,), (0,)), ((0,), (1,))))
    with x64():
        out = lax.dot_general(x, y, dn)
        ct = rng.standard_normal(out.shape)
        ct_x, none = rule(RuleContext("transpose"), ct, UndefPrimal(ShapedArray(x.shape, x.dtype)),
                          y, dimension_numbers=dn)
        assert none is None and ct_x.shape == x.shape and ct_x.dtype == x.dtype
        assert np.sum(np.asarray(ct_x) * x) == pytest.approx(np.sum(ct * np.asarray(out)))
        none, ct_y = rule(RuleContext("transpose"), ct, x,
                          UndefPrimal(ShapedArray(y.shape, y.dtype)), dimension_numbers=dn)
        assert none is None and ct_y.shape == y.shape
        assert np.sum(np.asarray(ct_y) * y) == pytest.approx(np.sum(ct * np.asarray(out)))


@pytest.mark.parametrize("shapes, dn", [
    (((4, 5), (5, 3)), (((1,), (0,)), ((), ()))),
    (((6, 4, 5), (6, 5, 3)), (((2,), (1,)), ((0,), (0,)))),
    (((3,), (3,)), (((0,), (0,)), ((), ()))),
    (((2, 3), ()), (((), ()), ((), ()))),
    (((0, 3), (3, 2)), (((1,), (0,)), ((), ()))),
    (((2, 0), (0, 2)), (((1,), (0,)), ((), ()))),
])
def test_common_forms(shapes, dn):
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal(s).astype(np.float32) for s in shapes)
    check_primitive(dot_general_p, x, y, dimension_numbers=DotDimensionNumbers(dn))
    np.testing.assert_allclose(lax.dot_general(x, y, dn),
                               _einsum_reference(x, y, DotDimensionNumbers(dn)), rtol=1e-5,
                               atol=1e-6)


def test_dtypes_and_weak_types():
    i = np.arange(6, dtype=np.int32).reshape(2, 3)
    f = np.ones((3, 2), np.float32)
    dn = (((1,), (0,)), ((), ()))
    assert lax.dot_general(i, f, dn).dtype == np.float32
    assert lax.dot_general(i, i.T, dn).dtype == np.int32
    assert lax.dot_general(i, i.T, dn, preferred_element_type=np.float32).dtype == np.float32
    bf = np.ones((2, 3), plugax.numpy.bfloat16)
    out = lax.dot_general(bf, bf.T, dn, preferred_element_type=np.float32)
    assert out.dtype == np.float32 and float(out[0, 0]) == 3.0
    assert lax.dot_general(bf, bf.T, dn).dtype == plugax.numpy.bfloat16
    weak = plugax.Array(np.ones(3, np.float32), weak_type=True)
    vec = (((0,), (0,)), ((), ()))
    assert lax.dot_general(weak, weak, vec).weak_type
    assert not lax.dot_general(weak, np.ones(3, np.float32), vec).weak_type
    check_primitive(dot_general_p, i, i.T, dimension_numbers=DotDimensionNumbers(dn))


def test_printed_like_jax():
    f = lambda x, y: lax.dot_general(x, y, (((0,), (0,)), ((), ())),  # noqa: E731
                                     preferred_element_type=np.float32)
    text = str(plugax.make_jaxpr(f)(np.zeros(2, np.float32), np.zeros(2, np.float32)))
    assert ("    c:f32[] = dot_general[\n      dimension_numbers=(([0], [0]), ([], []))\n"
            "      preferred_element_type=float32\n    ] a b") in text
    assert str(DotDimensionNumbers((((1, 2), (0, 1)), ((0,), (3,))))) == \
        "(([1, 2], [0, 1]), ([0], [3]))"
    assert hash(DotDimensionNumbers((((1,), (0,)), ((), ())))) == \
        hash((((1,), (0,)), ((), ())))


@pytest.mark.parametrize("dn, message", [
    ((((1,), (1,)), ((), ())), "equal sizes"),
    ((((2,), (0,)), ((), ())), "distinct lhs dimensions"),
    ((((1,), (0,)), ((1,), (0,))), "distinct"),
    ((((1,), ()), ((), ())), "as many lhs as rhs"),
])
def test_shape_errors(dn, message):
    with pytest.raises(ShapeError, match=message) as info:
        lax.dot_general(np.ones((2, 3), np.float32), np.ones((3, 4), np.float32), dn)
    assert "dot_general" in str(info.value) and "f32[2,3]" in str(info.value)


def test_transposing_both_operands_is_an_error():
    rule = RULES[0].transpose
    u = UndefPrimal(ShapedArray((3,), np.float32))
    with pytest.raises(ShapeError, match="both"):
        rule(RuleContext("transpose"), np.ones((), np.float32), u, u,
             dimension_numbers=DotDimensionNumbers((((0,), (0,)), ((), ()))))


@pytest.mark.parametrize("wrt", [0, 1])
def test_matmul_cotangents_need_no_transpose(wrt):
    """Each operand's cotangent of `x @ w` is one dot_general whose output is already in
    the operand's dimension order (`ct @ w.T`, `x.T @ ct`): reverse mode adds no
    transpose equation, and the values match NumPy's."""
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((4, 3)), rng.standard_normal((3, 5))
    loss = lambda x, w: (x @ w).sum()  # noqa: E731
    with x64():
        closed = plugax.make_jaxpr(plugax.grad(loss, argnums=wrt))(x, w)
        g = plugax.grad(loss, argnums=wrt)(x, w)
    names = [eqn.primitive.name for eqn in closed.jaxpr.eqns]
    assert "transpose" not in names and names.count("dot_general") == 2
    expected = np.ones((4, 5)) @ w.T if wrt == 0 else x.T @ np.ones((4, 5))
    np.testing.assert_allclose(g, expected)
