"""The second batch of NumPy breadth (issue 16): one table, name -> (arguments, keyword
arguments, differentiable in args[0], reference), each checked
  - against NumPy in float64 (or the reference given, where JAX's semantics differ),
  - under jit against eager,
  - under vmap over args[0]'s leading axis against a Python loop (where vmappable),
  - grad against central differences where differentiable.
The functions are compositions of existing primitives (modules listed in MODULES), so
these checks are the whole story; test_every_added_function_is_in_the_table keeps the
table complete.
"""
from __future__ import annotations

import numpy as np
import pytest

import plugax
import plugax.numpy as pnp
from plugax.testing import numeric_grad, x64

R = np.random.RandomState(0)
X = R.randn(3, 4)
W = R.randn(3, 4)
V = R.randn(5)
U = R.uniform(-0.9, 0.9, (3, 4))
P = R.uniform(1.1, 3.0, (3, 4))
I = R.randint(-20, 20, (3, 4)).astype(np.int32)
J = R.randint(1, 30, (3, 4)).astype(np.int32)
S = np.array([[0, 1, 2, 5], [3, 7, 1, 0], [2, 2, 4, 6]], np.int32)
F = np.array([0., -0., 1., -3.5, 0.75, 1e30, np.inf, np.nan, 3e-3, -2e5, 7., 1.], np.float32)
NOGRAD, NOVMAP = "nograd", "novmap"


def _modf_ref(x):
    return np.modf(x)


# name -> (args, kwargs, flags, reference or None for numpy's function of that name)
TABLE: dict = {
    "acos": ((U,), {}, (), None), "asin": ((U,), {}, (), None), "atan": ((X,), {}, (), None),
    "acosh": ((P,), {}, (), None), "asinh": ((X,), {}, (), None), "atanh": ((U,), {}, (), None),
    "atan2": ((X, W), {}, (), None), "around": ((X * 10,), {"decimals": 1}, (NOGRAD,), None),
    "pow": ((P, X), {}, (), None), "positive": ((X,), {}, (), None),
    "fabs": ((X,), {}, (), None), "float_power": ((P, W), {}, (), None),
    "divmod": ((X * 3, W), {}, (NOGRAD,), None), "bitwise_invert": ((I,), {}, (NOGRAD,), None),
    "left_shift": ((I, S), {}, (NOGRAD,), None), "right_shift": ((I, S), {}, (NOGRAD,), None),
    "bitwise_left_shift": ((I, S), {}, (NOGRAD,), None),
    "bitwise_right_shift": ((I, S), {}, (NOGRAD,), None),
    "bitwise_count": ((I,), {}, (NOGRAD,), None), "gcd": ((I, J), {}, (NOGRAD,), None),
    "lcm": ((I, J), {}, (NOGRAD,), None), "frexp": ((F,), {}, (NOGRAD,), None),
    "ldexp": ((X, S), {}, (), None), "modf": ((F,), {}, (NOGRAD,), _modf_ref),
    "nextafter": ((F, F[::-1].copy()), {}, (NOGRAD,), None),
    "spacing": ((F[F != 0].copy(),), {}, (NOGRAD,), None),
    "heaviside": ((np.array([-1., 0., 2., np.nan, 0.]), np.array([.5, .25, 3., 1., 0.])), {},
                  (NOGRAD,), None),
    "sinc": ((np.append(V, 0.),), {}, (), None), "i0": ((np.append(V * 3, 0.),), {}, (), None),
    "select": (([X > 0, W > 0], [X, W]), {"default": -1.0}, (NOGRAD, NOVMAP), None),
    "piecewise": ((X, [X < -0.5, X > 0.5]), {}, (NOVMAP,), None),
}
# functions given as table entries need a funclist: pass it through kwargs-free wrappers
PIECEWISE_FUNCS = [lambda x: x * x, lambda x: -x, lambda x: x + 1.0]

MODULES = ("plugax_elementwise.numpy_more",)


def _cast(a, dtype):
    if isinstance(a, np.ndarray) and a.dtype.kind == "f":
        return a.astype(dtype)
    if isinstance(a, list):
        return [_cast(b, dtype) for b in a]
    return a


def _fn(name, lib):
    if name == "piecewise":
        return lambda x, c, **kw: lib.piecewise(x, c, PIECEWISE_FUNCS, **kw)
    return getattr(lib, name)


def _reference(name):
    return TABLE[name][3] or _fn(name, np)


def _as_list(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _ours(name, args, kwargs, dtype=np.float32):
    return _fn(name, pnp)(*[_cast(a, dtype) for a in args], **kwargs)


def _array_positions(args):
    return [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]


@pytest.mark.parametrize("name", sorted(TABLE))
def test_value_against_numpy_jit_and_vmap(name):
    args, kwargs, flags, _ = TABLE[name]
    with np.errstate(all="ignore"):
        want = _as_list(_reference(name)(*args, **kwargs))
    got = _as_list(_ours(name, args, kwargs))
    assert len(got) == len(want), name
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w), (name, np.shape(g), np.shape(w))
        w = np.asarray(w)
        assert np.asarray(g).dtype.kind == w.dtype.kind or w.dtype == np.float64, (name, g.dtype)
        np.testing.assert_allclose(np.asarray(g, np.float64), w.astype(np.float64),
                                   rtol=3e-5, atol=3e-6)
    arrays = _array_positions(args)

    def with_arrays(*traced):
        full = [_cast(a, np.float32) for a in args]
        for i, t in zip(arrays, traced):
            full[i] = t
        return _fn(name, pnp)(*full, **kwargs)

    inputs = [_cast(args[i], np.float32) for i in arrays]
    for j, g in zip(_as_list(plugax.jit(with_arrays)(*inputs)), got):
        np.testing.assert_allclose(np.asarray(j), np.asarray(g), rtol=2e-6, atol=2e-6)
    if NOVMAP in flags or not arrays:
        return
    batched = _as_list(plugax.vmap(with_arrays, in_axes=(0,) + (None,) * (len(inputs) - 1))(
        *inputs))
    for row in range(inputs[0].shape[0]):
        looped = _as_list(with_arrays(inputs[0][row], *inputs[1:]))
        for b, lo in zip(batched, looped):
            np.testing.assert_allclose(np.asarray(b)[row], np.asarray(lo), rtol=2e-6,
                                       atol=2e-6)


@pytest.mark.parametrize("name", sorted(n for n, row in TABLE.items() if NOGRAD not in row[2]))
def test_grad_against_finite_differences(name):
    args, kwargs, _, _ = TABLE[name]
    rest = args[1:]
    shape = np.shape(_as_list(_reference(name)(*args, **kwargs))[0])
    weights = np.random.RandomState(1).randn(*shape)

    def ours(x):
        return pnp.sum(_as_list(_fn(name, pnp)(x, *rest, **kwargs))[0] * weights)

    def reference(x):
        return np.sum(_as_list(_reference(name)(x, *rest, **kwargs))[0] * weights)

    with x64():
        got = np.asarray(plugax.grad(ours)(args[0]))
    np.testing.assert_allclose(got, numeric_grad(reference, args[0]), rtol=1e-5, atol=1e-6)


def test_every_added_function_is_in_the_table():
    import importlib
    for module in MODULES:
        mod = importlib.import_module(module)
        names = {n for n in mod.__all__ if not n.isupper() and not n.startswith("NUMPY")}
        assert names <= set(TABLE) | set(NOT_IN_TABLE), (module, names - set(TABLE))


# checked by their own tests below (not functions of arrays that NumPy evaluates the same way)
NOT_IN_TABLE: dict = {}


def test_edge_values_follow_jax():
    # shifting by the bit width or more gives 0 (-1 for a negative arithmetic shift)
    assert int(pnp.left_shift(pnp.int32(1), 40)) == 0
    assert int(pnp.right_shift(pnp.int32(-8), 40)) == -1
    assert int(pnp.bitwise_count(pnp.int8(-128))) == 1 and \
        pnp.bitwise_count(pnp.int8(3)).dtype == np.uint8
    assert int(pnp.lcm(pnp.int8(100), pnp.int8(3))) == 44          # wraps in int8, as JAX
    assert int(pnp.gcd(0, 0)) == 0
    assert float(plugax.grad(pnp.sinc)(0.0)) == 0.0
    assert pnp.positive(np.array([True])).dtype == np.bool_
    np.testing.assert_allclose(float(plugax.grad(pnp.i0)(2.0)), 1.5906368546373291, rtol=1e-6)
    with x64():   # the asymptotic branch (|x| >= 15): values and I1 = i0' against NumPy
        big = np.array([-15.0, 16.5, 20.0, 40.0])
        np.testing.assert_allclose(np.asarray(pnp.i0(big)), np.i0(big), rtol=1e-12)
        np.testing.assert_allclose(np.asarray(plugax.vmap(plugax.grad(pnp.i0))(big)),
                                   [numeric_grad(np.i0, b) for b in big], rtol=1e-7)
    with pytest.raises(TypeError, match="left_shift: operands must be integers; got float32"):
        pnp.left_shift(np.float32(1), 2)
    with pytest.raises(ValueError, match="ldexp: the exponent must be an integer"):
        pnp.ldexp(1.0, 2.0)
    with pytest.raises(ValueError, match="select: condlist has 2 entries and choicelist 1"):
        pnp.select([X > 0, X > 1], [X])
