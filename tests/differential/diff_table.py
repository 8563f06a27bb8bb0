"""The differential test's table for `plugax.numpy`: name -> Spec, and the names skipped.

Every public name of `plugax.numpy` is either an entry of NUMPY or a key of
NUMPY_SKIPPED (with the reason); `test_coverage.py` enforces it, so a new function
cannot be forgotten. References are NumPy, written with JAX's semantics where JAX and
NumPy disagree (integer division by zero, out-of-range indices, ...), or left to
`jax_expected.json`, which `record_jax.py` fills with JAX's value wherever it differs
from the reference. See diff_cases.py for what a Spec says.
"""
from __future__ import annotations

import numpy as np

from diff_cases import (EDGES, Case, Spec, binary, bools, f16, f32, i8, i32, integer_binary,
                        ints, listed, u8, unary, uniform)

# --- references with JAX's semantics -------------------------------------------------------


def _floor_divide(x, y):
    """Floats as NumPy; integers as JAX: XLA's x / 0 == -1, stepped down like any other
    truncated quotient whose remainder's sign differs from the divisor's."""
    x, y = np.asarray(x), np.asarray(y)
    if np.result_type(x, y).kind == "f":
        return np.floor_divide(x, y)
    x, y = x.astype(np.int64), y.astype(np.int64)    # bools divide as integers
    safe = np.where(y == 0, 1, y)
    q = np.where(y == 0, -1, np.trunc(x / safe))
    r = np.where(y == 0, x, np.fmod(x, safe))
    return np.where((r != 0) & (np.sign(x) != np.sign(y)), q - 1, q)


def _remainder(x, y):
    """NumPy's, except that JAX divides integers by 1 where the divisor is 0 (giving 0)."""
    x, y = np.asarray(x), np.asarray(y)
    if np.result_type(x, y).kind in "biu":
        return np.remainder(x, np.where(y == 0, 1, y).astype(y.dtype))
    return np.remainder(x, y)


def _power(x, y):
    """Integer powers as JAX computes them (a negative exponent only for bases 1 and -1,
    where NumPy refuses any negative exponent); floats as NumPy."""
    x, y = np.asarray(x), np.asarray(y)
    if np.result_type(x, y).kind in "iu":
        return np.round(np.power(x.astype(np.float64), y))
    return np.power(x, y)


def _take(x, idx, axis=None, mode=None, fill_value=None):
    """numpy.take with JAX's out-of-range modes (default: fill with NaN)."""
    x, idx = np.asarray(x), np.asarray(idx)
    if axis is None:
        x, axis = x.ravel(), 0
    n = x.shape[axis]
    if mode == "wrap":
        return np.take(x, np.mod(idx, n), axis)
    if mode == "clip":
        return np.take(x, np.clip(idx, 0, n - 1), axis)
    idx = np.where(idx < 0, idx + n, idx)
    ok = (idx >= 0) & (idx < n)
    out = np.take(x, np.where(ok, idx, 0), axis).astype(np.float64)
    ok = ok.reshape((1,) * axis + ok.shape + (1,) * (x.ndim - axis - 1))
    return np.where(ok, out, _fill(x.dtype) if fill_value is None else fill_value)


def _fill(dtype):
    """JAX's default fill for out-of-range gathers: NaN, or the integer extremes."""
    if dtype.kind == "i":
        return np.iinfo(dtype).min
    return np.iinfo(dtype).max if dtype.kind == "u" else np.nan


def _take_along_axis(x, idx, axis=-1, mode=None):
    x, idx = np.asarray(x, np.float64), np.asarray(idx)
    n = x.shape[axis]
    idx = np.where(idx < 0, idx + n, idx)
    if mode == "clip":
        return np.take_along_axis(x, np.clip(idx, 0, n - 1), axis)
    ok = (idx >= 0) & (idx < n)
    return np.where(ok, np.take_along_axis(x, np.where(ok, idx, 0), axis), np.nan)


def _linspace(*args, **kwargs):
    dtype = kwargs.pop("dtype", None)
    out = np.linspace(*args, **kwargs)
    if dtype is not None and np.dtype(dtype).kind in "iu":
        return np.floor(out)
    if kwargs.get("retstep") and len(np.atleast_1d(out[0])) <= 1:
        return out[0], np.nan if kwargs.get("endpoint", True) else out[1]
    return out


def _astype(x, dtype):
    """XLA's float -> int conversion: truncate, saturate, NaN -> 0."""
    x, dtype = np.asarray(x), np.dtype(dtype)
    if x.dtype.kind == "f" and dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.where(np.isnan(x), 0, np.clip(np.trunc(np.nan_to_num(x)), info.min, info.max))
    return x.astype(dtype)


def _reduction(fn):
    def ref(x, *args, **kwargs):
        return fn(np.asarray(x), *args, **kwargs)
    return ref


# --- case makers -------------------------------------------------------------------------
def _reductions(name, *, where=True, initial=False, dtype_kw=True):
    """Axes (None, int, negative with keepdims, tuple), dtypes, edge values, a weak scalar,
    empty axes; `where=` and `initial=` where the function takes them."""
    def cases():
        from diff_cases import rng_for
        r = rng_for(name)
        x3 = uniform(r, (2, 3, 2))
        out = [Case("f32", (uniform(r, (2, 3)),), smooth=True),
               Case("axis0", (x3,), {"axis": 0}, smooth=True),
               Case("axis-1_keepdims", (x3,), {"axis": -1, "keepdims": True}, smooth=True),
               Case("axes_tuple", (x3,), {"axis": (0, 2)}, smooth=True),
               Case("i32", (ints(r, (2, 3)),), {"axis": 1}),
               Case("u8", (ints(r, (4,), 0, 9, u8),)),
               Case("bool", (bools(r, (2, 3)),), {"axis": 0}),
               Case("f16", (uniform(r, (4,), dtype=f16),)),
               Case("edges", (EDGES,)),
               Case("py_float", (2.5,)),
               Case("empty_axis", (np.zeros((0, 3), f32),), {"axis": 0})]
        if where:
            mask = bools(r, (2, 3))
            kw = {"where": mask, "axis": 1}
            if initial:
                kw["initial"] = -1.5 if name in ("max", "amax") else 1.5
            out.append(Case("where", (uniform(r, (2, 3)),), kw, smooth=True))
        if initial:
            out.append(Case("initial", (uniform(r, (2, 3)),), {"initial": 0.5, "axis": 0},
                            smooth=True))
            out.append(Case("initial_empty", (np.zeros((0,), f32),), {"initial": 2.0}))
        if dtype_kw:
            out.append(Case("dtype", (ints(r, (3,)),), {"dtype": f16}))
        return out
    return cases


def _arg_cases(name):
    def cases():
        from diff_cases import rng_for
        r = rng_for(name)
        return [Case("f32", (uniform(r, (2, 3)),)),
                Case("axis1", (uniform(r, (2, 3)),), {"axis": 1}),
                Case("keepdims", (uniform(r, (2, 3)),), {"axis": 0, "keepdims": True}),
                Case("ties", (np.array([1.0, 3.0, 3.0, 1.0], f32),)),
                Case("edges", (EDGES,)),
                Case("i32", (ints(r, (5,)),)),
                Case("bool", (bools(r, (5,)),)),
                Case("empty", (np.zeros((0,), f32),))]
    return cases


def _cumulative(name):
    def cases():
        from diff_cases import rng_for
        r = rng_for(name)
        return [Case("flat", (uniform(r, (2, 3)),), smooth=True),
                Case("axis0", (uniform(r, (2, 3)),), {"axis": 0}, smooth=True),
                Case("axis-1", (uniform(r, (2, 3)),), {"axis": -1}, smooth=True),
                Case("zeros", (np.array([2.0, 0.0, 3.0, 0.0, 1.5], f32),)),
                Case("i8", (ints(r, (4,), dtype=i8),)),
                Case("bool", (bools(r, (4,)),)),
                Case("edges", (EDGES,)),
                Case("py_float", (2.5,)),
                Case("dtype", (ints(r, (3,)),), {"dtype": f32}),
                Case("empty", (np.zeros((0,), f32),))]
    return cases


class _Draw:
    """A random input, drawn from the entry's generator when its cases are built."""

    def __init__(self, draw):
        self.draw = draw


def _c(label, *args, smooth=False, **kwargs):
    """A Case maker: arguments that are `_Draw`s are drawn, the rest used as they are."""
    def drawn(r, a):
        return a.draw(r) if isinstance(a, _Draw) else a
    return lambda r: Case(label, tuple(drawn(r, a) for a in args),
                          {k: drawn(r, v) for k, v in kwargs.items()}, smooth)


def _u(shape, domain="real", dtype=f32):
    return _Draw(lambda r: uniform(r, shape, domain, dtype))


def _i(shape, lo=-3, hi=4, dtype=i32):
    return _Draw(lambda r: ints(r, shape, lo, hi, dtype))


def _b(shape):
    return _Draw(lambda r: bools(r, shape))


def _entry(name, ref, makers, **spec):
    return Spec(ref, listed(*makers, name=name), **spec)


# --- the table -----------------------------------------------------------------------------
_INEXACT = {"arccos": "unit", "arccosh": "gt1", "arcsin": "unit", "arcsinh": "real",
            "arctan": "real", "arctanh": "unit", "cbrt": "away0", "cos": "real",
            "cosh": "real", "exp": "real", "exp2": "real", "expm1": "real", "log": "pos",
            "log10": "pos", "log1p": "pos", "log2": "pos", "sin": "real", "sinh": "real",
            "sqrt": "pos", "tan": "unit", "tanh": "real"}

def inexact(ref):
    """A reference of a function whose integer and bool inputs become the default float:
    NumPy computes int8 and bool in float16, JAX (x64 off) in float32."""
    def fn(*args, **kwargs):
        return ref(*[np.asarray(a, np.float64) if isinstance(a, np.ndarray)
                     and a.dtype.kind in "biu" else a for a in args], **kwargs)
    return fn


NUMPY: dict[str, Spec] = {
    name: Spec(inexact(getattr(np, name)), unary(name, domain), grad=True, rtol=4e-6)
    for name, domain in _INEXACT.items()}

NUMPY.update({
    "abs": Spec(np.abs, unary("abs", "away0"), grad=True),
    "absolute": Spec(np.abs, unary("absolute", "away0"), grad=True),
    "negative": Spec(np.negative, unary("negative"), grad=True),
    "sign": Spec(np.sign, unary("sign", "away0"), grad=True),
    "square": Spec(np.square, unary("square"), grad=True),
    "floor": Spec(np.floor, unary("floor"), grad=True),
    "ceil": Spec(np.ceil, unary("ceil"), grad=True),
    "isfinite": Spec(np.isfinite, unary("isfinite")),
    "isnan": Spec(np.isnan, unary("isnan")),
    "isinf": Spec(np.isinf, unary("isinf")),
    "logical_not": Spec(np.logical_not, unary("logical_not")),
    "bitwise_not": _entry("bitwise_not", np.invert, [
        _c("i32", _i((2, 3), -8, 8)), _c("u8", _i((4,), 0, 250, u8)), _c("bool", _b((4,))),
        _c("py_int", 5), _c("f32", _u((3,)))]),
    "invert": _entry("invert", np.invert, [
        _c("i8", _i((4,), -8, 8, i8)), _c("bool", _b((4,))), _c("f32", _u((3,)))]),
    "round": _entry("round", np.round, [
        _c("f32", _u((2, 3)), smooth=True), _c("halves", np.array([0.5, 1.5, 2.5, -0.5], f32)),
        _c("decimals", np.array([1.25, 2.35, 15.0, -0.04], f32), decimals=1),
        _c("neg_decimals", np.array([15.0, 25.0, -149.0], f32), decimals=-1),
        _c("i32", _i((4,))), _c("edges", EDGES), _c("py_float", 2.5),
        _c("i32_neg_decimals", _i((3,)), decimals=-1),
        _c("f16_decimals", np.array([60000.0, 1000.0, -0.5, 1.25], f16), decimals=1),
        _c("decimals_beyond_precision", _u((3,)), decimals=50)], grad=True),
})

_BINARY = {"add": ("real", None), "subtract": ("real", None), "multiply": ("real", None),
           "divide": ("real", "away0"), "true_divide": ("real", "away0"),
           "maximum": ("real", None), "minimum": ("real", None), "arctan2": ("away0", None),
           "remainder": ("real", "away0"), "mod": ("real", "away0"),
           "floor_divide": ("real", "away0"), "power": ("pos", "real")}
_BINARY_REF = {"power": _power, "remainder": _remainder, "mod": _remainder,
               "floor_divide": _floor_divide,
               "arctan2": inexact(np.arctan2), "divide": inexact(np.divide),
               "true_divide": inexact(np.divide)}
for _name, (_dx, _dy) in _BINARY.items():
    NUMPY[_name] = Spec(_BINARY_REF.get(_name, getattr(np, _name, None)),
                        binary(_name, _dx, _dy), grad=True, rtol=4e-6)
for _name in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
              "logical_and", "logical_or", "logical_xor"):
    NUMPY[_name] = Spec(getattr(np, _name), binary(_name))
for _name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    NUMPY[_name] = Spec(getattr(np, _name), integer_binary(_name))


def _closeness(name):
    """isclose/allclose/array_equal: the edge grid (NaN, infinities, signed zeros), near
    and far values, tolerances, equal_nan, promotion and (array_equal) unequal shapes."""
    near = _Draw(lambda r: np.array([1.0, 1.0 + 1e-6, 1.0 + 1e-3, 100.0], f32))
    makers = [_c("edges", EDGES[:, None], EDGES[None, :]),
              _c("near", near, np.ones(4, f32)),
              _c("int_float", _i((4,)), _u((4,))), _c("py_scalar", _u((3,)), 0.5),
              _c("bool", _b((3,)), _b((3,)))]
    if name != "array_equal":
        makers += [_c("tolerances", near, np.ones(4, f32), rtol=1e-2, atol=0.0),
                   _c("equal_nan", EDGES, EDGES, equal_nan=True)]
    else:
        makers += [_c("equal_nan", EDGES, EDGES, equal_nan=True),
                   _c("shapes_differ", _u((3,)), _u((2,)))]
    return _entry(name, getattr(np, name), makers)


for _name in ("isclose", "allclose", "array_equal"):
    NUMPY[_name] = _closeness(_name)

NUMPY["power"].cases = (lambda base: lambda: [
    c if c.label != "i32" else Case("i32", (c.args[0], np.abs(c.args[1])))
    for c in base()] + [
    Case("int_exponent", (uniform(np.random.default_rng(1), (3,), "pos"), 3), smooth=True),
    Case("neg_int_exponent", (uniform(np.random.default_rng(2), (3,), "pos"), -2),
         smooth=True),
    Case("int_base_static", (np.array([2, -2, 0, 3], i32), 3)),
    # a negative exponent is defined (by JAX) only for bases 1 and -1
    Case("int_arrays", (np.array([2, -2, 0, 3, 1, -1], i32), np.array([3, 3, 0, 2, -1, -3],
                                                                        i32))),
    Case("py_int_neg", (2, -1))])(NUMPY["power"].cases)

NUMPY.update({
    "where": _entry("where", np.where, [
        _c("f32", _b((2, 3)), _u((2, 3)), _u((2, 3)), smooth=True),
        _c("broadcast", _b((3,)), _u((2, 3)), _u((2, 1)), smooth=True),
        _c("py_scalars", _b((4,)), 1.0, 2),
        _c("int_cond", _i((4,)), _u((4,)), 0.5, smooth=True),
        _c("mixed", _b((3,)), _i((3,)), _u((3,), dtype=f16)),
        _c("edges", EDGES > 0, EDGES, -EDGES)], grad=True),
    "clip": _entry("clip", np.clip, [
        _c("f32", _u((2, 3)), -1.0, 1.0, smooth=True),
        _c("only_max", _u((4,)), None, 0.5, smooth=True),
        _c("array_bounds", _u((4,)), _u((4,), "pos"), _u((4,), "gt1"), smooth=True),
        _c("int_float_bounds", _i((4,)), 0.5, 2),
        _c("i32", _i((5,)), -1, 1), _c("edges", EDGES, -1.0, 1.0),
        _c("bound_ties", np.array([-1.0, 0.0, 1.0], f32), -1.0, 1.0)], grad=True),
    "astype": _entry("astype", _astype, [
        _c("f32_i32", _u((2, 3)), i32), _c("edges_i32", EDGES, i32),
        _c("to_u8", np.array([-1.0, 300.0, 2.5, 255.9], f32), u8),
        _c("i32_f16", _i((3,)), f16), _c("bool_f32", _b((3,)), f32),
        _c("f32_bool", EDGES, np.bool_), _c("py_float", 2.5, f32),
        _c("f32_f32", _u((3,)), f32)], grad=True),
})

# JAX's own jit(grad(max)) gives 0 where eager grad gives NaN (a NaN maximum matches no
# element, so eagerly 0 * (g / 0 matches)); XLA folds g * convert(mask) into a select
NAN_CHOOSER = {"edges": "jit(grad) is 0 where eager grad is NaN, in JAX too"}

NUMPY.update({
    "sum": Spec(_reduction(np.sum), _reductions("sum", initial=True), grad=True),
    "prod": Spec(_reduction(np.prod), _reductions("prod", initial=True), grad=True),
    "max": Spec(_reduction(np.max), _reductions("max", initial=True, dtype_kw=False),
                grad=True, jit_differs=NAN_CHOOSER),
    "min": Spec(_reduction(np.min), _reductions("min", initial=True, dtype_kw=False),
                grad=True, jit_differs=NAN_CHOOSER),
    "amax": Spec(_reduction(np.max), _reductions("amax", initial=True, dtype_kw=False),
                 grad=True, jit_differs=NAN_CHOOSER),
    "amin": Spec(_reduction(np.min), _reductions("amin", initial=True, dtype_kw=False),
                 grad=True, jit_differs=NAN_CHOOSER),
    "all": Spec(_reduction(np.all), _reductions("all", dtype_kw=False)),
    "any": Spec(_reduction(np.any), _reductions("any", dtype_kw=False)),
    "mean": Spec(_reduction(np.mean), _reductions("mean"), grad=True),
    "var": Spec(_reduction(np.var), _reductions("var"), grad=True, rtol=1e-5),
    # std's "where" case has a row of one element: sqrt'(0) makes JAX's gradient NaN
    # there, which finite differences cannot see
    "std": Spec(_reduction(np.std), (lambda base: lambda: [
        Case(c.label, c.args, c.kwargs, c.smooth and c.label != "where") for c in base()])(
        _reductions("std")), grad=True, rtol=1e-5),
    "argmax": Spec(np.argmax, _arg_cases("argmax")),
    "argmin": Spec(np.argmin, _arg_cases("argmin")),
    "cumsum": Spec(_reduction(np.cumsum), _cumulative("cumsum"), grad=True),
    "cumprod": Spec(_reduction(np.cumprod), _cumulative("cumprod"), grad=True),
})
NUMPY["var"].cases = (lambda base: lambda: base() + [
    Case("ddof", (uniform(np.random.default_rng(3), (2, 3)),), {"ddof": 1, "axis": 1},
         smooth=True),
    Case("ddof_too_big", (uniform(np.random.default_rng(4), (2,)),), {"ddof": 2})])(
    NUMPY["var"].cases)

NUMPY.update({
    "arange": _entry("arange", np.arange, [
        _c("stop", 5), _c("start_stop_step", 1, 7, 2), _c("float", 0.5, 3.0),
        _c("dtype", 3, dtype=f32), _c("negative_step", 5, 1, -1), _c("empty", -2),
        _c("quarters", 0, 1, 0.25), _c("tenths", 0, 1, 0.1), _c("np_int8", np.int8(5)),
        _c("f16_step", 2, 9, 3, dtype=f16), _c("np_f32_start", np.float32(0.5), 3)],
        vmap=False, jit=False),      # its arguments must be concrete: jit has nothing to trace
    "linspace": _entry("linspace", _linspace, [
        _c("scalars", 0.0, 1.0, 5), _c("int_dtype", 0, 10, 4, dtype=i32),
        _c("traced", np.float32(0.5), np.float32(2.0), 4, smooth=True),
        _c("no_endpoint", _u(()), _u((), "gt1"), 3, endpoint=False, smooth=True),
        _c("one", 0.0, 10.0, 1), _c("zero", 0.0, 10.0, 0),
        _c("retstep", _u(()), _u((), "gt1"), 5, retstep=True, smooth=True),
        _c("retstep_one", 0.0, 1.0, 1, retstep=True),
        _c("array_bounds_axis1", _u((2,)), _u((2,), "gt1"), 3, axis=1, smooth=True),
        _c("ints", 1, 7, 4)], grad=True),
    "eye": _entry("eye", np.eye, [_c("square", 3), _c("rect_k", 2, 3, 1),
                                  _c("int_k", 3, None, -1, i32)], vmap=False),
    "zeros": _entry("zeros", np.zeros, [_c("shape", (2, 3)), _c("int", (2,), i32),
                                        _c("scalar_shape", 3)], vmap=False),
    "ones": _entry("ones", np.ones, [_c("shape", (2, 3)), _c("bool", (2,), np.bool_)],
                   vmap=False),
    "full": _entry("full", np.full, [
        _c("py_int", (2,), 3), _c("py_float", (2, 2), 2.5), _c("np_f32", (2,), np.float32(3)),
        _c("traced", (3,), np.asarray(1.5, f32), smooth=True),
        _c("broadcast_row", (2, 3), _u((3,)), smooth=True),
        _c("dtype", (2,), 2.5, i32)], grad=True),
    "zeros_like": _entry("zeros_like", np.zeros_like, [
        _c("f32", _u((2, 3))), _c("i32", _i((3,))), _c("py_float", 2.5),
        _c("dtype", _u((2,)), i32), _c("shape", _u((2,)), shape=(3, 1))]),
    "ones_like": _entry("ones_like", np.ones_like, [
        _c("f32", _u((2, 3))), _c("bool", _b((3,))), _c("py_int", 2)]),
    "full_like": _entry("full_like", np.full_like, [
        _c("f32", _u((2, 3)), 7), _c("py_float", 2.5, 3), _c("i32_float_fill", _i((3,)), 2.7),
        _c("dtype", _u((2,)), 1, f16), _c("traced_fill", _u((3,)), np.asarray(2.0, f32),
                                         smooth=True)], grad=True),
    "asarray": _entry("asarray", np.asarray, [
        _c("list", [1, 2, 3]), _c("py_float", 2.5), _c("f64", np.arange(3.0)),
        _c("i64_scalar", np.int64(2)), _c("mixed_list", [1, 2.5]), _c("empty_list", []),
        _c("bool_list", [True, False]), _c("py_bool", True), _c("dtype", [1.7, 2.2], dtype=i32),
        _c("nested", [[1, 2], [3, 4]]), _c("f32", _u((2,)), smooth=True)], grad=True),
    "array": _entry("array", np.array, [
        _c("list", [1, 2, 3]), _c("py_float", 2.5), _c("ndmin", 3.0, ndmin=2),
        _c("dtype", [1, 2], f16), _c("f32", _u((2,)), smooth=True)], grad=True),
})

NUMPY.update({
    "reshape": _entry("reshape", np.reshape, [
        _c("f32", _u((2, 3)), (3, 2), smooth=True), _c("infer", _u((2, 3)), (-1,)),
        _c("py_float", 2.5, (1, 1)), _c("i32", _i((4,)), (2, 2)),
        _c("empty", np.zeros((0, 3), f32), (3, 0))], grad=True),
    "ravel": _entry("ravel", np.ravel, [_c("f32", _u((2, 3)), smooth=True),
                                        _c("py_float", 2.5)], grad=True),
    "transpose": _entry("transpose", np.transpose, [
        _c("reverse", _u((2, 3, 2)), smooth=True), _c("axes", _u((2, 3, 2)), (1, 0, 2)),
        _c("negative_axes", _u((2, 3)), (-1, 0)), _c("py_float", 2.5)], grad=True),
    "swapaxes": _entry("swapaxes", np.swapaxes, [
        _c("f32", _u((2, 3, 2)), 0, 2, smooth=True), _c("negative", _u((2, 3)), -1, 0)],
        grad=True),
    "moveaxis": _entry("moveaxis", np.moveaxis, [
        _c("one", _u((2, 3, 2)), 0, -1, smooth=True),
        _c("several", _u((2, 3, 2)), (0, 1), (2, 0))], grad=True),
    "expand_dims": _entry("expand_dims", np.expand_dims, [
        _c("front", _u((3,)), 0, smooth=True), _c("tuple", _u((3,)), (0, -1)),
        _c("py_float", 2.5, 0)], grad=True),
    "squeeze": _entry("squeeze", np.squeeze, [
        _c("all", _u((1, 3, 1)), smooth=True), _c("axis", _u((1, 3, 1)), (0, 2)),
        _c("negative", _u((3, 1)), -1)], grad=True),
})


def _seq(fn, *xs, **kwargs):
    """Functions of a sequence of arrays get them as separate (traced) arguments."""
    return fn(list(xs), **kwargs)


NUMPY.update({
    "concatenate": _entry("concatenate", np.concatenate, [
        _c("axis0", _u((2, 3)), _u((1, 3)), smooth=True),
        _c("axis1", _u((2, 1)), _u((2, 3)), axis=1, smooth=True),
        _c("axis_none", _u((2, 2)), _u((3,)), axis=None, smooth=True),
        _c("mixed", _i((2,)), _u((1,)), _b((2,))),
        _c("f16_i8", _u((2,), dtype=f16), _i((1,), dtype=i8)),
        _c("empty_part", _u((2,)), np.zeros((0,), f32))], grad=True, call=_seq),
    "stack": _entry("stack", np.stack, [
        _c("axis0", _u((2, 3)), _u((2, 3)), smooth=True),
        _c("axis-1", _u((3,)), _u((3,)), _u((3,)), axis=-1, smooth=True),
        _c("mixed", _i((2,)), _u((2,))), _c("scalars", _u(()), _u(()))],
        grad=True, call=_seq),
    "broadcast_to": _entry("broadcast_to", np.broadcast_to, [
        _c("row", _u((3,)), (2, 3), smooth=True), _c("py_float", 2.5, (2,)),
        _c("ones", _u((2, 1)), (2, 3), smooth=True), _c("same", _u((2,)), (2,))], grad=True),
    "broadcast_arrays": _entry("broadcast_arrays", np.broadcast_arrays, [
        _c("two", _u((3,)), _u((2, 1)), smooth=True), _c("scalar", _u((2,)), _u(()))],
        grad=True),
    "broadcast_shapes": _entry("broadcast_shapes", np.broadcast_shapes, [
        _c("two", (2, 1), (3,)), _c("three", (1,), (4, 1), ()), _c("bad", (2,), (3,))],
        jit=False, vmap=False),
    "shape": _entry("shape", np.shape, [_c("f32", _u((2, 3))), _c("py_float", 2.5)],
                    jit=False, vmap=False),
    "ndim": _entry("ndim", np.ndim, [_c("f32", _u((2, 3))), _c("list", [1, 2])],
                   jit=False, vmap=False),
    "size": _entry("size", np.size, [_c("f32", _u((2, 3))), _c("axis", _u((2, 3)), 1)],
                   jit=False, vmap=False),
    "take": _entry("take", _take, [
        _c("in_range", _u((5,)), np.array([0, 4, 2], i32), smooth=True),
        _c("out_of_range", _u((5,)), np.array([-7, -1, 0, 4, 6], i32)),
        _c("axis1", _u((2, 4)), np.array([[1, 5], [-1, 0]], i32), axis=1),
        _c("clip", _u((5,)), np.array([-7, -1, 6], i32), mode="clip"),
        _c("wrap", _u((5,)), np.array([-7, -1, 6], i32), mode="wrap"),
        _c("fill_value", _u((5,)), np.array([9, 1], i32), fill_value=-3.0),
        _c("scalar_index", _u((5,)), 7), _c("int_operand", _i((4,)), np.array([1, 9], i32)),
        _c("empty_indices", _u((5,)), np.zeros((0,), i32)),
        _c("flattened", _u((2, 3)), np.array([4, 6], i32))], grad=True),
    "take_along_axis": _entry("take_along_axis", _take_along_axis, [
        _c("axis1", _u((2, 3)), np.array([[0, 2], [1, 1]], i32), 1, smooth=True),
        _c("out_of_range", _u((2, 3)), np.array([[0, 5], [-1, -4]], i32), 1),
        _c("axis0", _u((3, 2)), np.array([[2, 0]], i32), 0),
        _c("clip", _u((4,)), np.array([-6, -1, 9], i32), 0, mode="clip")], grad=True),
})

_DOT_CASES = {
    "dot": [_c("vectors", _u((3,)), _u((3,)), smooth=True),
            _c("matrices", _u((2, 3)), _u((3, 4)), smooth=True),
            _c("matrix_vector", _u((2, 3)), _u((3,)), smooth=True),
            _c("scalar", 2.0, _u((3,))), _c("int_float", _i((3,)), _u((3,))),
            _c("i8", _i((3,), dtype=i8), _i((3,), dtype=i8)),
            _c("nd", _u((2, 2, 3)), _u((3, 2)), smooth=True),
            _c("empty", np.zeros((2, 0), f32), np.zeros((0, 3), f32))],
    "matmul": [_c("matrices", _u((2, 3)), _u((3, 4)), smooth=True),
               _c("batched_broadcast", _u((2, 2, 3)), _u((3, 4)), smooth=True),
               _c("vector_batch", _u((3,)), _u((2, 3, 4)), smooth=True),
               _c("batch_vector", _u((2, 4, 3)), _u((3,)), smooth=True),
               _c("batch_dims_broadcast", _u((2, 1, 2, 3)), _u((3, 3, 2)), smooth=True),
               _c("bool", _b((2, 2)), _b((2, 2))), _c("vectors", _u((3,)), _u((3,)))],
    "inner": [_c("vectors", _u((3,)), _u((3,)), smooth=True),
              _c("matrices", _u((2, 3)), _u((4, 3)), smooth=True),
              _c("scalar", _u((3,)), 2.0)],
    "outer": [_c("vectors", _u((2,)), _u((3,)), smooth=True),
              _c("flattens", _u((2, 2)), _u((3,)), smooth=True)],
    "vdot": [_c("vectors", _u((3,)), _u((3,)), smooth=True),
             _c("flattens", _u((2, 3)), _u((3, 2)), smooth=True),
             _c("int", _i((3,)), _i((3,)))],
    "tensordot": [_c("axes1", _u((2, 3)), _u((3, 2)), 1, smooth=True),
                  _c("axes2", _u((2, 3, 2)), _u((3, 2, 2)), 2, smooth=True),
                  _c("pairs", _u((2, 3)), _u((2, 4)), ([0], [0]), smooth=True),
                  _c("axes0", _u((2,)), _u((3,)), 0)],
    "einsum": [_c("matmul", "ij,jk->ik", _u((2, 3)), _u((3, 4)), smooth=True),
               _c("diagonal", "ii->i", _u((3, 3)), smooth=True),
               _c("total", "ij->", _u((2, 3)), smooth=True),
               _c("inner", "i,i->", _u((3,)), _u((3,)), smooth=True),
               _c("batched", "bij,bjk->bik", _u((2, 2, 3)), _u((2, 3, 2)), smooth=True),
               _c("implicit", "ij,jk", _u((2, 3)), _u((3, 2)), smooth=True),
               _c("int8", "i,i->", _i((3,), dtype=i8), _i((3,), dtype=i8)),
               _c("ellipsis", "...ij,...jk->...ik", _u((2, 2, 3)), _u((3, 2)), smooth=True)],
}
for _name, _makers in _DOT_CASES.items():
    NUMPY[_name] = _entry(_name, getattr(np, _name), _makers, grad=True, rtol=1e-5)

# dtypes and constants: re-exported from NumPy, nothing to evaluate
_REEXPORTED = ("bfloat16", "bool_", "dtype", "e", "float16", "float32", "float64", "inf",
               "int8", "int16", "int32", "int64", "nan", "ndarray", "newaxis", "pi",
               "uint8", "uint16", "uint32", "uint64")
NUMPY_SKIPPED = {name: "a dtype, scalar type or constant, not a function: "
                       "test_coverage checks it is NumPy's (or plugax.Array for ndarray)"
                 for name in _REEXPORTED}
NUMPY_SKIPPED.update({
    name: ("checked by plugins/shape/tests/test_index_frontends.py and plugins/reductions: "
           "values against NumPy float64, eagerly and under jit with a static size=")
    for name in ("put_along_axis", "nonzero", "flatnonzero", "argwhere")})

# dtype names and helpers (plugax/numpy_dtypes.py): not array functions; their own test
# compares them with JAX's recorded answers
from plugax.numpy_dtypes import __all__ as _DTYPE_HELPERS  # noqa: E402
NUMPY_SKIPPED.update({name: ("a dtype name, dtype helper or NumPy re-export as JAX has it: "
                             "checked by tests/integration/test_numpy_dtypes.py")
                      for name in _DTYPE_HELPERS})
NUMPY_SKIPPED.update({name: ("a complex dtype name as JAX has it (NumPy's scalar type): checked "
                             "by tests/integration/test_complex.py")
                      for name in ("complex64", "complex128", "complex_", "csingle", "cdouble",
                                   "complexfloating")})
NUMPY_SKIPPED.update({name: ("NumPy's index-expression object, re-exported as JAX does: checked "
                             "by tests/integration/test_numpy_breadth_more.py")
                      for name in ("s_", "index_exp")})
