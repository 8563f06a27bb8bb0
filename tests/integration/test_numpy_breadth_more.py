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
NOGRAD, NOVMAP, NOJIT = "nograd", "novmap", "nojit"


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
X3 = R.randn(2, 3, 4)
COND = np.array([True, False, True])
MASK = X > 0


def _mutated(fn):
    """NumPy's in-place functions (place, put, fill_diagonal) as pure references."""
    def ref(a, *args, inplace=None):
        b = np.array(a, copy=True)
        fn(b, *args)
        return b
    return ref


TABLE.update({
    "concat": (([X, W],), {"axis": 1}, (NOGRAD,), None),
    "permute_dims": ((X3, (2, 0, 1)), {}, (NOVMAP,), None),
    "matrix_transpose": ((X3,), {}, (), None),
    "unstack": ((X,), {"axis": 1}, (NOVMAP,), None),
    "rollaxis": ((X3, 2), {}, (NOVMAP,), None),
    "copy": ((X,), {}, (), None), "empty": (((3, 4),), {}, (NOGRAD,), lambda s: np.zeros(s)),
    "empty_like": ((X,), {}, (NOGRAD,), np.zeros_like),
    "block": (([[X, W], [W[:, :2], X[:, :2], V[:3, None] * np.ones((3, 4))]],), {}, (NOGRAD,),
              None),
    "compress": ((COND, X), {"axis": 0, "size": 2}, (NOGRAD, NOVMAP),
                 lambda c, a, axis, size: np.compress(c, a, axis)),
    "extract": ((MASK, X), {"size": int(MASK.sum())}, (NOGRAD, NOVMAP),
                lambda c, a, size: np.extract(c, a)),
    "place": ((X, MASK, np.array([7., 8., 9.])), {"inplace": False}, (NOVMAP,),
              _mutated(np.place)),
    "put": ((X, np.array([1, 11, -1, 5]), np.array([7., 8.])), {"inplace": False}, (NOVMAP,),
            _mutated(np.put)),
    "insert": ((X, [1, 3], W[:, :2]), {"axis": 1}, (NOVMAP,), None),
    "delete": ((X, [0, 2]), {"axis": 1}, (NOVMAP,), None),
    "resize": ((V, (2, 4)), {}, (), None),
    "trim_zeros": ((np.array([0., 0., 1., 2., 0.]),), {}, (NOGRAD, NOJIT), None),
    "pad": ((X, ((1, 2), (3, 1))), {"mode": "symmetric", "reflect_type": "odd"}, (NOVMAP,),
            None),
    "ix_": ((np.array([0, 2]), np.array([1, 2, 3])), {}, (NOGRAD, NOVMAP), None),
    "diag_indices": ((3,), {}, (NOGRAD,), None),
    "diag_indices_from": ((np.ones((3, 3)),), {}, (NOGRAD, NOVMAP), None),
    "tril_indices": ((3, 1, 4), {}, (NOGRAD,), None),
    "triu_indices": ((3, -1, 2), {}, (NOGRAD,), None),
    "tril_indices_from": ((X,), {"k": -1}, (NOGRAD, NOVMAP), None),
    "triu_indices_from": ((X,), {"k": 1}, (NOGRAD, NOVMAP), None),
    "mask_indices": ((3, "triu"), {"size": 6}, (NOGRAD,),
                     lambda n, f, size: np.mask_indices(n, getattr(np, f))),
    "ravel_multi_index": (((np.array([0, 2, 1]), np.array([3, 0, 1])), (3, 4)), {},
                          (NOGRAD,), None),
    "unravel_index": ((np.array([0, 5, 11]), (3, 4)), {}, (NOGRAD,), None),
    "fill_diagonal": ((X, 5.0), {"inplace": False}, (NOVMAP,), _mutated(np.fill_diagonal)),
    "choose": ((np.array([0, 1, 2, 1]), [V[:4], W[0], X[1]]), {"mode": "clip"}, (NOGRAD,),
               None),
})
NANS = np.array([[1., np.nan, 3., 4.], [np.nan, 2., .5, -1.], [5., 6., np.nan, 8.]])
XS = np.linspace(0, 1, 8)


def _polydiv_ref(u, v):
    """JAX's remainder keeps u's length (leading zeros); NumPy's is trimmed."""
    q, r = np.polydiv(u, v)
    return q, np.concatenate([np.zeros(len(u) - len(r)), r])


TABLE.update({
    "cumulative_sum": ((X,), {"axis": 1, "include_initial": True}, (NOVMAP,), None),
    "cumulative_prod": ((X,), {"axis": 0}, (NOVMAP,), None),
    "nancumsum": ((NANS,), {"axis": 1}, (NOGRAD, NOVMAP), None),
    "nancumprod": ((NANS,), {"axis": 0}, (NOGRAD, NOVMAP), None),
    "bincount": ((np.array([0, 1, 1, 3, 5]),), {"length": 6}, (NOGRAD, NOVMAP),
                 lambda x, length: np.bincount(x, minlength=length)),
    "array_equiv": ((X, X[0]), {}, (NOGRAD,), None),
    "gradient": ((X,), {}, (NOVMAP,), None), "trapezoid": ((X,), {"dx": 0.5}, (), None),
    "unwrap": ((np.cumsum(X * 3, axis=1),), {}, (), None),
    "packbits": ((X > 0,), {"axis": 1}, (NOGRAD, NOVMAP), None),
    "unpackbits": ((np.array([[5, 255], [0, 7]], np.uint8),), {"axis": 1, "count": 12},
                   (NOGRAD, NOVMAP), None),
    "geomspace": ((1.0, 1000.0, 7), {}, (NOGRAD,), None),
    "logspace": ((0.0, 2.0, 5), {"base": 2.0}, (NOGRAD,), None),
    "vander": ((V, 4), {}, (NOVMAP,), None),
    "bartlett": ((7,), {}, (NOGRAD,), None), "blackman": ((7,), {}, (NOGRAD,), None),
    "hamming": ((7,), {}, (NOGRAD,), None), "hanning": ((7,), {}, (NOGRAD,), None),
    "kaiser": ((7, 3.0), {}, (NOGRAD,), None),
    "fromfunction": (((2, 3),), {}, (NOGRAD,), None),
    "frombuffer": ((b"\x01\x02\x03\x04",), {"dtype": np.uint8}, (NOGRAD,), None),
    "fromstring": (("1 2 3",), {"sep": " "}, (NOGRAD,), None),
    "from_dlpack": ((X,), {}, (NOGRAD, NOJIT), lambda x: x),
    "vecdot": ((X, W), {}, (), None), "matvec": ((X3, X[0]), {}, (), None),
    "vecmat": ((X[0, :3], X3), {}, (NOVMAP,), None),
    "apply_along_axis": ((X,), {}, (NOVMAP,), None),
    "apply_over_axes": ((X,), {}, (NOVMAP,), None),
    "vectorize": ((X, W), {}, (), None),
    "poly": ((V[:3],), {}, (NOVMAP,), None),
    "polyadd": ((V[:2], V), {}, (NOVMAP,), None), "polysub": ((V[:2], V), {}, (NOVMAP,), None),
    "polymul": ((V[:3], V), {}, (NOVMAP,), None),
    "polydiv": ((V, V[:2] + 3), {}, (NOVMAP,), _polydiv_ref),
    "polyder": ((V, 2), {}, (NOVMAP,), None),
    "polyint": ((V, 2, np.array([1.0, 2.0])), {}, (NOVMAP,), None),
    "polyfit": ((XS, XS ** 2 + 0.1 * np.sin(9 * XS), 2), {}, (NOVMAP,), None),
})
# functions given as table entries need a funclist: pass it through kwargs-free wrappers
PIECEWISE_FUNCS = [lambda x: x * x, lambda x: -x, lambda x: x + 1.0]

MODULES = ("plugax_elementwise.numpy_more", "plugax_shape.numpy_edit",
           "plugax_shape.numpy_index_tricks", "plugax_sort.numpy_pad",
           "plugax_reductions.numpy_more", "plugax_reductions.numpy_select",
           "plugax_reductions.numpy_ufunc", "plugax_dot.numpy_contractions",
           "plugax_linalg.numpy_poly")


def _cast(a, dtype):
    if isinstance(a, np.ndarray) and a.dtype.kind == "f":
        return a.astype(dtype)
    if isinstance(a, list):
        return [_cast(b, dtype) for b in a]
    return a


def _fn(name, lib):
    if name == "piecewise":
        return lambda x, c, **kw: lib.piecewise(x, c, PIECEWISE_FUNCS, **kw)
    if name == "fromfunction":
        return lambda shape: lib.fromfunction(lambda i, j: i + 10 * j, shape)
    if name == "apply_along_axis":
        return lambda x: lib.apply_along_axis(lambda v: lib.cumsum(v) * v[0], 1, x)
    if name == "apply_over_axes":
        return lambda x: lib.apply_over_axes(lib.sum, x, [0, 1])
    if name == "vectorize":
        return lambda x, w: lib.vectorize(lambda a, b: a * b + lib.sin(a))(x, w)
    if name == "mask_indices":   # the mask function of the library under test
        return lambda n, f, **kw: lib.mask_indices(n, getattr(lib, f), **kw)
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
    if NOJIT in flags:   # the output shape depends on the values: concrete input only
        return
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
NOT_IN_TABLE: dict = {name: "index objects: test_index_objects" for name in
                     ("s_", "index_exp", "r_", "c_", "mgrid", "ogrid")}
NOT_IN_TABLE["einsum_path"] = "returns a contraction path, not an array: test_einsum_path"
NOT_IN_TABLE.update({"ufunc": "a class: test_ufunc", "frompyfunc": "builds a ufunc: test_ufunc"})


def test_edge_values_follow_jax():
    # shifting by the bit width or more gives 0 (-1 for a negative arithmetic shift)
    assert int(pnp.left_shift(pnp.int32(1), 40)) == 0
    assert int(pnp.right_shift(pnp.int32(-8), 40)) == -1
    assert int(pnp.bitwise_count(pnp.int8(-128))) == 1 and \
        pnp.bitwise_count(pnp.int8(3)).dtype == np.uint8
    assert int(pnp.lcm(pnp.int8(100), pnp.int8(3))) == 44          # wraps in int8, as JAX
    assert int(pnp.gcd(0, 0)) == 0
    assert float(plugax.grad(pnp.sinc)(0.0)) == 0.0
    np.testing.assert_allclose(float(plugax.grad(plugax.grad(pnp.sinc))(0.0)), -np.pi ** 2 / 3,
                               rtol=1e-6)   # JAX's: every order is right at 0
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


def test_index_objects():
    assert pnp.s_[1:3] == np.s_[1:3] and pnp.index_exp[1:2] == (slice(1, 2),)
    np.testing.assert_array_equal(pnp.r_[1:4, 0, pnp.array([7, 8])], np.r_[1:4, 0, [7, 8]])
    np.testing.assert_array_equal(pnp.r_["0,2", [1, 2], [3, 4]], np.r_["0,2", [1, 2], [3, 4]])
    np.testing.assert_array_equal(pnp.r_["1,2,0", [1, 2], [3, 4]], np.r_["1,2,0", [1, 2], [3, 4]])
    np.testing.assert_array_equal(pnp.r_["r", [1, 2]], np.r_["r", [1, 2]])
    np.testing.assert_array_equal(pnp.c_[np.array([1, 2]), np.array([3, 4])],
                                  np.c_[np.array([1, 2]), np.array([3, 4])])
    np.testing.assert_allclose(pnp.r_[0:1:5j], np.r_[0:1:5j], rtol=1e-6)
    got, want = pnp.mgrid[0:2, 0:1:3j], np.mgrid[0:2, 0:1:3j]
    assert got.dtype == np.float32 and pnp.mgrid[0:3].dtype == np.int32
    np.testing.assert_allclose(got, want, rtol=1e-6)
    for g, w in zip(pnp.ogrid[0:2, 0:3], np.ogrid[0:2, 0:3]):
        np.testing.assert_array_equal(g, w)
    # under jit: the grid is a constant of the trace
    np.testing.assert_array_equal(plugax.jit(lambda x: x + pnp.mgrid[0:2, 0:3][0])(0),
                                  np.mgrid[0:2, 0:3][0])


@pytest.mark.parametrize("mode, kwargs", [
    ("constant", {"constant_values": ((1, 2), (3, 4))}), ("edge", {}), ("empty", {}),
    ("linear_ramp", {"end_values": (5, -1)}), ("maximum", {}), ("mean", {"stat_length": 2}),
    ("median", {}), ("minimum", {"stat_length": ((1, 2), (3, 1))}), ("reflect", {}),
    ("reflect", {"reflect_type": "odd"}), ("symmetric", {}), ("wrap", {})])
@pytest.mark.parametrize("widths", [((1, 2), (7, 0)), 2, ((0, 0), (5, 9))])
def test_pad_every_mode(mode, kwargs, widths):
    want = np.pad(X, widths, mode, **kwargs)
    got = pnp.pad(X.astype(np.float32), widths, mode, **kwargs)
    if mode == "empty":
        want = np.pad(X, widths)   # JAX fills with zeros
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6, atol=2e-6)
    jitted = plugax.jit(lambda x: pnp.pad(x, widths, mode, **kwargs))(X.astype(np.float32))
    np.testing.assert_allclose(np.asarray(jitted), np.asarray(got), rtol=1e-6, atol=1e-6)
    if mode not in ("maximum", "minimum", "median"):   # ties make these piecewise
        weights = np.random.RandomState(2).randn(*want.shape)
        with x64():
            g = plugax.grad(lambda x: pnp.sum(pnp.pad(x, widths, mode, **kwargs) * weights))(X)
        np.testing.assert_allclose(np.asarray(g), numeric_grad(
            lambda x: np.sum((np.pad(x, widths, mode, **kwargs) if mode != "empty"
                              else np.pad(x, widths)) * weights), X), rtol=1e-5, atol=1e-6)


def test_pad_callable_and_integers_and_errors():
    def func(vector, pad_width, iaxis, kwargs):   # JAX's protocol: return the new vector
        return vector.at[:pad_width[0]].set(kwargs.get("val", 9.0))
    np.testing.assert_array_equal(pnp.pad(np.ones((2, 2)), 1, func, val=5.0),
                                  [[5, 5, 5, 5], [5, 1, 1, 0], [5, 1, 1, 0], [5, 0, 0, 0]])
    xi = np.arange(12).reshape(3, 4)
    for mode in ("edge", "reflect", "symmetric", "wrap", "maximum", "mean", "median"):
        got = pnp.pad(xi, ((1, 2), (3, 1)), mode)
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, np.pad(xi, ((1, 2), (3, 1)), mode))
    # a traced fill value (under jit) and its gradient: 12 padded cells of a 2x2 -> 4x4
    got = plugax.jit(lambda x, c: pnp.pad(x, ((1, 0), (0, 2)), constant_values=c))(
        np.ones((2, 2), np.float32), np.float32(7.0))
    np.testing.assert_array_equal(got, np.pad(np.ones((2, 2)), ((1, 0), (0, 2)),
                                              constant_values=7.0))
    assert float(plugax.grad(lambda c: pnp.sum(pnp.pad(pnp.ones((2, 2)), 1,
                                                       constant_values=c)))(2.0)) == 12.0
    with pytest.raises(ValueError, match="Unimplemented padding mode 'bogus'"):
        pnp.pad(X, 1, "bogus")
    with pytest.raises(ValueError, match="negative"):
        pnp.pad(X, -1)
    with pytest.raises(ValueError, match="unsupported keyword arguments for mode 'edge'"):
        pnp.pad(X, 1, "edge", constant_values=3)


def test_shape_edits_follow_jax():
    # put drops out-of-range indices (JAX's default), wrap/clip bring them in
    np.testing.assert_array_equal(pnp.put(np.zeros(5), np.array([1, 7, -1]),
                                          np.array([3., 4.]), inplace=False), [0, 3, 0, 0, 3])
    np.testing.assert_array_equal(pnp.put(np.zeros(5), np.array([7]), np.array([3.]),
                                          mode="wrap", inplace=False), [0, 0, 3, 0, 0])
    with pytest.raises(ValueError, match="immutable"):
        pnp.put(np.zeros(5), np.array([1]), np.array([3.]))
    with pytest.raises(ValueError, match="immutable"):
        pnp.place(np.zeros(5), np.zeros(5, bool), np.array([3.]))
    # unravel_index clips out-of-range indices as JAX does (NumPy raises)
    got = pnp.unravel_index(np.array([-3, 5, 30]), (2, 3))
    np.testing.assert_array_equal(np.stack(got), [[1, 1, 1], [0, 2, 2]])
    # compress pads with fill_value to the static size; works under jit
    got = plugax.jit(lambda c, a: pnp.compress(c, a, axis=0, size=3, fill_value=-1))(COND, X)
    np.testing.assert_allclose(got, np.concatenate([X[COND], -np.ones((1, 4))]), rtol=1e-6)
    # delete of a traced index array with assume_unique_indices
    got = plugax.jit(lambda i: pnp.delete(np.arange(6), i, assume_unique_indices=True))(
        np.array([4, 1]))
    np.testing.assert_array_equal(got, [0, 2, 3, 5])
    # ravel_multi_index's bounds check needs concrete indices; wrap/clip trace
    with pytest.raises(ValueError, match="invalid entry"):
        pnp.ravel_multi_index((np.array([3]), np.array([0])), (3, 4))
    got = plugax.jit(lambda i: pnp.ravel_multi_index((i, i), (3, 4), mode="wrap"))(
        np.array([4, -1]))
    np.testing.assert_array_equal(got, np.ravel_multi_index(([4, -1], [4, -1]), (3, 4),
                                                            mode="wrap"))
    assert pnp.resize(np.zeros(0), (2, 2)).shape == (2, 2)
    with pytest.raises(ValueError, match="block does not allow tuples"):
        pnp.block((X, W))
    with pytest.raises(ValueError, match="must be at least two-dimensional"):
        pnp.matrix_transpose(V)


def test_einsum_path():
    ops = (np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 5)))
    path, report = pnp.einsum_path("ij,jk,kl->il", *ops)
    assert path == np.einsum_path("ij,jk,kl->il", *ops, optimize="greedy")[0][1:]
    assert isinstance(report, str) and "ij,jk,kl->il" in report


def test_reductions_breadth_follows_jax():
    # bincount: static length drops values at or above it; negative values count as 0
    np.testing.assert_array_equal(pnp.bincount(np.array([-1, 0, 4, 1]), length=3), [2, 1, 0])
    got = plugax.jit(lambda x: pnp.bincount(x, length=4))(np.array([0, 1, 1, 3]))
    np.testing.assert_array_equal(got, [1, 2, 0, 1])
    with pytest.raises(plugax.errors.ConcretizationTypeError, match="static `length`"):
        plugax.jit(pnp.bincount)(np.array([0, 1]))
    # cumulative sums of small integers promote as cumsum does
    assert pnp.cumulative_sum(np.ones(3, np.int8)).dtype == np.int32      # JAX's promotion
    assert pnp.cumulative_sum(np.ones(3, np.uint8)).dtype == np.uint32
    assert pnp.cumulative_sum(np.ones(3, bool)).dtype == np.int32
    assert pnp.cumulative_prod(np.ones(3, np.int8)).dtype == np.int8      # (JAX's too)
    with pytest.raises(ValueError, match="axis was not set"):
        pnp.cumulative_sum(X)
    # vectorize with a gufunc signature, excluded arguments and keyword pass-through
    matvec = pnp.vectorize(lambda m, v: m @ v, signature="(n,m),(m)->(n)")
    np.testing.assert_allclose(matvec(X3, X[0]), np.matvec(X3, X[0]), rtol=1e-5)
    f = pnp.vectorize(lambda a, k, scale=1.0: a * k * scale, excluded={1})
    np.testing.assert_allclose(f(V, 2.0, scale=3.0), V * 6.0, rtol=1e-6)
    with pytest.raises(ValueError, match="inconsistent size for core dimension 'n'"):
        pnp.vectorize(lambda a, b: a @ b, signature="(n),(n)->()")(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="not a valid gufunc signature"):
        pnp.vectorize(lambda a: a, signature="(n)->")
    # polynomial edge cases and errors
    np.testing.assert_allclose(pnp.polyval(pnp.polyint(V), 1.0) - pnp.polyval(pnp.polyint(V), 0.),
                               np.polyval(np.polyint(V), 1.0), rtol=1e-5)
    # poly of a square matrix and roots go through the general eigensolver (complex)
    np.testing.assert_allclose(pnp.poly(np.array([[1., 2.], [3., 4.]])), [1, -5, -2],
                               atol=1e-5)
    np.testing.assert_allclose(np.sort_complex(np.asarray(pnp.roots(np.array([1., -6, 11, -6])))),
                               [1, 2, 3], atol=1e-4)
    np.testing.assert_array_equal(pnp.packbits(np.array([1, 0, 1]), bitorder="little"),
                                  np.packbits(np.array([1, 0, 1]), bitorder="little"))
    assert not bool(pnp.array_equiv(np.ones(2), np.ones(3)))


def test_ufunc_methods_against_numpy_and_jax():
    fn = lambda a, b: a * b + 1   # noqa: E731  (not associative: the order shows)
    ours, ref = pnp.frompyfunc(fn, 2, 1), np.frompyfunc(fn, 2, 1)
    x = np.arange(1.0, 7.0).reshape(2, 3)
    np.testing.assert_allclose(ours(x, 2.0), ref(x, 2.0).astype(float))
    np.testing.assert_allclose(ours.outer(V[:2], V), ref.outer(V[:2], V).astype(float),
                               rtol=1e-6)
    np.testing.assert_allclose(ours.reduce(x, axis=1), ref.reduce(x, axis=1).astype(float))
    np.testing.assert_allclose(ours.accumulate(x, axis=1),
                               ref.accumulate(x, axis=1).astype(float))
    np.testing.assert_allclose(ours.reduceat(np.arange(8.0), [0, 4, 1, 5]),
                               ref.reduceat(np.arange(8.0), [0, 4, 1, 5]).astype(float))
    want = np.zeros(4)
    ref.at(want, [1, 1, 3], [2.0, 3.0, 4.0])   # a repeated index applies twice
    np.testing.assert_allclose(ours.at(np.zeros(4), np.array([1, 1, 3]),
                                       np.array([2.0, 3.0, 4.0]), inplace=False), want)
    # JAX's rules: a given identity starts the fold; axis=None folds the flattened array
    assert float(ours.reduce(x, axis=None)) == 1237.0
    np.testing.assert_allclose(pnp.frompyfunc(fn, 2, 1, identity=0).reduce(x, axis=1), [10, 37])
    # transformations: jit, grad (one vectorized call per fold step)
    np.testing.assert_allclose(plugax.jit(lambda a: ours.reduce(a, axis=0))(x), [5, 11, 19])
    with x64():
        g = plugax.grad(lambda a: pnp.sum(ours.reduce(a, axis=1)))(x)
    np.testing.assert_allclose(g, numeric_grad(
        lambda a: np.sum(ref.reduce(a, axis=1).astype(float)), x), rtol=1e-6)
    with pytest.raises(NotImplementedError, match="immutable"):
        ours.at(np.zeros(2), np.array([0]), np.array([1.0]))
    with pytest.raises(ValueError, match="no identity"):
        ours.reduce(np.zeros((0,)))
    with pytest.raises(ValueError, match="binary ufuncs with a single output"):
        pnp.frompyfunc(lambda a: a, 1, 1).reduce(x)
