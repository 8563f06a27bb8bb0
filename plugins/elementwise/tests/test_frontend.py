"""plugax.numpy / plugax.lax / operators: values against NumPy, dtypes and weak types
against JAX's promotion (expected values recorded from jax 0.10.2), printed jaxprs."""
import operator

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import plugax
import plugax.numpy as pnp
from plugax.testing import x64
from plugax.extend import BroadcastError, promote_args, promoted_type


@pytest.fixture(autouse=True)
def x64_off():
    """The expected dtypes below are JAX's defaults: 32-bit (whatever PLUGAX_ENABLE_X64 says)."""
    with x64(False):
        yield

f32 = st.floats(-50, 50, width=32)
farrays = hnp.arrays(np.float32, hnp.array_shapes(max_dims=2, max_side=4), elements=f32)

NUMPY_UNARY = ["negative", "sign", "abs", "square", "exp", "sin", "cos", "tan", "arctan",
               "sinh", "tanh", "arcsinh", "floor", "ceil", "isfinite", "cbrt", "expm1"]
NUMPY_BINARY = ["add", "subtract", "multiply", "maximum", "minimum", "arctan2", "equal",
                "not_equal", "less", "less_equal", "greater", "greater_equal"]


@settings(max_examples=30, deadline=None)
@given(name=st.sampled_from(NUMPY_UNARY), x=farrays)
def test_unary_matches_numpy(name, x):
    got = getattr(pnp, name)(plugax.Array(x))
    want = getattr(np, name)(x)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6, atol=1e-30)


@settings(max_examples=30, deadline=None)
@given(name=st.sampled_from(NUMPY_BINARY), data=st.data())
def test_binary_broadcasts_like_numpy(name, data):
    shape_x, shape_y = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3,
                                                                   max_side=3)).input_shapes
    x = data.draw(hnp.arrays(np.float32, shape_x, elements=f32))
    y = data.draw(hnp.arrays(np.float32, shape_y, elements=f32))
    got = getattr(pnp, name)(plugax.Array(x), y)
    want = getattr(np, name)(x, y)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6)


@settings(max_examples=50, deadline=None)
@given(x=hnp.arrays(np.int32, 8, elements=st.integers(-1000, 1000)),
       y=hnp.arrays(np.int32, 8, elements=st.integers(-50, 50).filter(bool)))
def test_integer_division_semantics(x, y):
    X, Y = plugax.Array(x), plugax.Array(y)
    assert np.array_equal(pnp.floor_divide(X, Y), x // y)        # Python: toward -inf
    assert np.array_equal(pnp.remainder(X, Y), x % y)            # sign of the divisor
    assert np.array_equal(plugax.lax.div(X, Y), np.trunc(x / y).astype(np.int32))
    assert np.array_equal(plugax.lax.rem(X, Y), np.fmod(x, y))   # C: sign of the dividend


def test_integer_division_by_zero_is_xla_like():
    x = plugax.Array(np.array([-7, 7, 0], np.int32))
    zero = plugax.Array(np.zeros(3, np.int32))
    assert plugax.lax.div(x, zero).tolist() == [-1, -1, -1]
    assert plugax.lax.rem(x, zero).tolist() == [-7, 7, 0]
    u = plugax.Array(np.array([7], np.uint8))
    assert plugax.lax.div(u, plugax.Array(np.zeros(1, np.uint8))).tolist() == [255]


@settings(max_examples=30, deadline=None)
@given(x=hnp.arrays(np.float32, 8, elements=st.floats(-100, 100, width=32)),
       y=hnp.arrays(np.float32, 8, elements=st.floats(0.125, 10, width=32)),
       negate=st.booleans())
def test_float_floor_divide_and_mod_match_numpy(x, y, negate):
    y = -y if negate else y
    np.testing.assert_allclose(pnp.floor_divide(plugax.Array(x), y), np.floor_divide(x, y))
    np.testing.assert_allclose(pnp.remainder(plugax.Array(x), y), np.remainder(x, y),
                               rtol=1e-5, atol=1e-5)


@settings(max_examples=30, deadline=None)
@given(x=hnp.arrays(np.int32, 6, elements=st.integers(-9, 9)),
       y=hnp.arrays(np.int32, 6, elements=st.integers(0, 300)))
def test_integer_power_wraps_like_c(x, y):
    got = pnp.power(plugax.Array(x), plugax.Array(y))
    want = [((int(a) ** int(b)) + 2**31) % 2**32 - 2**31 for a, b in zip(x, y)]
    assert got.dtype == np.int32 and got.tolist() == want


def test_negative_integer_powers_truncate():
    x = plugax.Array(np.array([-1, 1, 2, -3], np.int32))
    assert pnp.power(x, plugax.Array(np.full(4, -3, np.int32))).tolist() == [-1, 1, 0, 0]


def test_convert_saturates_and_zeroes_nan():
    x = plugax.Array(np.array([np.nan, 1e10, -1e10, 3.7, -3.7, np.inf], np.float32))
    assert pnp.astype(x, np.int32).tolist() == [0, 2**31 - 1, -2**31, 3, -3, 2**31 - 1]
    assert pnp.astype(x, np.uint8).tolist() == [0, 255, 0, 3, 0, 255]


def test_round_and_clamp_and_select_n_semantics():
    x = plugax.Array(np.array([0.5, 1.5, -0.5, -2.5, 0.49999997, 2.4], np.float32))
    assert plugax.lax.round(x).tolist() == [1, 2, -1, -3, 0, 2]
    assert plugax.lax.round(x, plugax.lax.RoundingMethod.TO_NEAREST_EVEN).tolist() == \
        [0, 2, -0.0, -2, 0, 2]
    assert pnp.round(plugax.Array(np.float32(1.2345)), 2).item() == pytest.approx(1.23)
    assert float(plugax.lax.clamp(2.0, 1.5, 1.0)) == 1.0      # min(max(x, lo), hi)
    which = plugax.Array(np.array([0, 1, 2, 5, -1], np.int32))
    cases = [plugax.Array(np.full(5, v, np.float32)) for v in (0., 1., 2.)]
    assert plugax.lax.select_n(which, *cases).tolist() == [0, 1, 2, 2, 0]


# (function, arguments) -> (dtype, weak_type), as jax.numpy gives them (x64 off)
A = {"f32": np.ones(3, np.float32), "i32": np.ones(3, np.int32), "u8": np.ones(3, np.uint8),
     "i8": np.ones(3, np.int8), "bool": np.ones(3, bool), "f16": np.ones(3, np.float16)}
PROMOTION = [
    ("add", ("i32", 1.5), "float32", True), ("add", ("f32", 2), "float32", False),
    ("true_divide", ("i32", "i32"), "float32", False), ("true_divide", (2, 3), "float32", True),
    ("true_divide", ("i8", "i8"), "float32", False), ("sqrt", (2,), "float32", True),
    ("sqrt", ("i32",), "float32", False), ("sin", (True,), "float32", False),
    ("add", ("bool", "bool"), "bool", False), ("multiply", ("bool", "bool"), "bool", False),
    ("add", ("bool", 1), "int32", True), ("add", ("i8", "u8"), "int16", False),
    ("add", ("u8", 3), "uint8", False), ("add", ("f16", "f32"), "float32", False),
    ("maximum", ("i32", 2.5), "float32", True), ("less", ("f32", "i32"), "bool", False),
    ("square", ("bool",), "int32", False), ("power", ("bool", 2), "int32", False),
    ("isfinite", ("i32",), "bool", False), ("isfinite", (2.5,), "bool", True),
    ("abs", ("u8",), "uint8", False), ("abs", ("bool",), "bool", False),
    ("floor", ("i32",), "int32", False), ("round", (1,), "int32", True),
    ("where", ("bool", 1.0, 2.0), "float32", True), ("clip", ("i32", 0, 1), "int32", False),
    ("log2", (2.5,), "float32", False), ("bitwise_and", ("bool", 1), "int32", True),
    ("floor_divide", ("bool", "bool"), "int32", False), ("logical_not", (1.0,), "bool", True),
]


@pytest.mark.parametrize("name,args,dtype,weak", PROMOTION,
                         ids=[f"{p[0]}{p[1]}" for p in PROMOTION])
def test_promotion_matches_jax(name, args, dtype, weak):
    args = [plugax.Array(A[a]) if isinstance(a, str) else a for a in args]
    out = getattr(pnp, name)(*args)
    assert (out.dtype, out.weak_type) == (np.dtype(dtype), weak)
    traced, = plugax.make_jaxpr(lambda *xs: getattr(pnp, name)(*xs))(*args).out_avals
    assert (traced.dtype, traced.weak_type) == (np.dtype(dtype), weak)


def _jaxpr(fn, *args):
    return str(plugax.make_jaxpr(fn)(*args))


def test_acceptance_jaxprs():
    z, o = np.zeros(8, np.float32), np.ones(8, np.float32)
    text = _jaxpr(lambda a, b: a + pnp.sin(b) * 3., z, o)
    assert "c:f32[8] = sin b" in text and "d:f32[8] = mul c 3.0" in text \
        and "e:f32[8] = add a d" in text
    text = _jaxpr(lambda a: a + 1.5, np.zeros(8, np.int32))
    assert "b:f32[8] = convert_element_type[new_dtype=float32 weak_type=True] a" in text \
        and "c:f32[8] = add b 1.5" in text


@pytest.mark.parametrize("fn,lines", [
    (lambda a: a ** 2, ["integer_pow[y=2] a"]),
    (lambda a: 2 ** a, ["pow 2.0 a"]),
    (lambda a: pnp.where(a > 0, a, 0.), ["gt a 0.0", "select_n b c a"]),
    (lambda a: pnp.clip(a, 0., 1.), ["max 0.0 a", "min 1.0 b"]),
    (lambda a: pnp.logical_not(a), ["ne a 0.0", "not b"]),
    (lambda a: a.astype(np.int32), ["convert_element_type[new_dtype=int32 weak_type=False] a"]),
    (lambda a: plugax.jvp(pnp.sin, (a,), (a,)), ["sin a", "cos a", "mul a c"]),
])
def test_jaxprs_like_jax(fn, lines):
    text = _jaxpr(fn, np.zeros(3, np.float32))
    for line in lines:
        assert line in text, text


def test_broadcasting_uses_broadcast_in_dim():
    text = _jaxpr(pnp.add, np.zeros(3, np.float32), np.zeros((2, 3), np.float32))
    assert "broadcast_in_dim[broadcast_dimensions=(1,) shape=(2, 3)] a" in text
    text = _jaxpr(pnp.add, np.zeros((), np.float32), np.zeros((2, 3), np.float32))
    assert "broadcast_in_dim" not in text          # rank-0 operands broadcast inside lax


def test_operators():
    x = plugax.Array(np.array([1., 2., 3.], np.float32))
    xs = np.asarray(x)
    for op in (operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
               operator.mod, operator.pow, operator.lt, operator.le, operator.gt, operator.ge,
               operator.eq, operator.ne):
        for a, b, ra, rb in ((x, 2.0, xs, 2.0), (3, x, 3, xs), (x, x, xs, xs)):
            np.testing.assert_allclose(op(a, b), op(ra, rb), rtol=1e-6, err_msg=str(op))
    assert (-x).tolist() == [-1, -2, -3] and (+x) is x and abs(-x).tolist() == [1, 2, 3]
    b = x > 1.5
    assert (~b).tolist() == [True, False, False] and (b & True).tolist() == [False, True, True]
    assert (b | (x < 1.5)).tolist() == [True, True, True] and (b ^ b).tolist() == [False] * 3
    assert (np.ones(3, np.float32) + x).tolist() == [2, 3, 4]     # NumPy defers to Array
    assert (x == None) is False and (x != "a") is True           # noqa: E711
    assert x.astype(np.int32).dtype == np.int32


def test_fast_path_keeps_weak_types_and_matches_general_path():
    w = plugax.Array(np.array([1., 2.], np.float32), weak_type=True)
    s = plugax.Array(np.array([1., 2.], np.float32))
    assert (w + w).weak_type and not (w + s).weak_type and not (s + w).weak_type
    assert (w * 2.0).weak_type and not (s * 2.0).weak_type


def test_promote_args_helper():
    x, y = promote_args("f", plugax.Array(np.ones((2, 1), np.int8)), 2.5)
    assert (x.dtype, x.shape, y.dtype, y.weak_type) == (np.float32, (2, 1), np.float32, True)
    x, y = promote_args("f", np.ones(3, np.float64), np.ones((2, 3), np.int32))
    assert x.shape == y.shape == (2, 3) and x.dtype == np.float32
    assert promoted_type("f", [1, np.int8(1)], category="inexact") == (np.float32, False)
    assert promoted_type("f", [plugax.ShapedArray((), np.int8), plugax.ShapedArray((), np.uint8)]) \
        == (np.int16, False)
    with pytest.raises(BroadcastError, match=r"myfn: .*shapes \(2,\) \(3,\)"):
        promote_args("myfn", np.ones(2), np.ones(3))
    with pytest.raises(ValueError):                # BroadcastError is also a ValueError
        pnp.add(np.ones(2), plugax.Array(np.ones(3)))
    with pytest.raises(TypeError, match=r"add requires array or scalar arguments, got list"):
        pnp.add([1, 2], 1)
    with pytest.raises(OverflowError, match=r"add: Python scalar 300 does not fit in uint8"):
        pnp.add(plugax.Array(np.ones(2, np.uint8)), 300)


def test_numpy_functions_under_vmap_and_jvp():
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    out = plugax.vmap(lambda r: pnp.where(r > 0, r, 0.5 * r) + pnp.clip(r, -0.5, 0.5))(x)
    np.testing.assert_allclose(out, np.where(x > 0, x, 0.5 * x) + np.clip(x, -0.5, 0.5))
    _, t = plugax.jvp(lambda r: pnp.where(r > 0, r ** 2, pnp.exp(r)), (x,), (np.ones_like(x),))
    np.testing.assert_allclose(t, np.where(x > 0, 2 * x, np.exp(x)), rtol=1e-6)


def test_lax_is_strict():
    with pytest.raises(plugax.ShapeError, match="'add' requires operands of one dtype"):
        plugax.make_jaxpr(plugax.lax.add)(np.zeros(2, np.float32), np.zeros(2, np.int32))
    assert plugax.lax.convert_element_type(1.5, np.int32).dtype == np.int32
    x = plugax.Array(np.ones(2, np.float32))
    assert plugax.lax.convert_element_type(x, np.float32) is x      # nothing to do
    assert plugax.lax.select(x > 0, x, -x).tolist() == [1, 1]
    assert plugax.lax.integer_pow(x * 3, 3).tolist() == [27, 27]


def test_grad_abs_at_zero_is_one():
    """JAX's abs jvp is select(x >= 0, g, -g); it used to be g * sign(x), 0 at x = 0."""
    assert float(plugax.grad(pnp.abs)(0.0)) == 1.0
    assert float(plugax.grad(pnp.abs)(-0.0)) == 1.0
    np.testing.assert_array_equal(plugax.vmap(plugax.grad(pnp.abs))(np.array([-1.0, 0, 1])),
                                  [-1, 1, 1])
