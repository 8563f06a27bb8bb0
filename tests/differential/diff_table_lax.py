"""The differential test's table for `plugax.lax`: name -> Spec, and the names skipped.

lax is strict like JAX's: operands of different dtypes (or shapes other than rank-0
next to a full one) are errors, which the recorded JAX results say case by case
(`{"error": ...}` in jax_expected.json), and the test then expects plugax to raise too.
"""
from __future__ import annotations

import numpy as np

from diff_cases import (EDGES, Case, Spec, binary, f16, f32, i32, i8, integer_binary, u8,
                        unary)
from diff_table import NAN_CHOOSER, _astype, _b, _c, _entry, _i, _u

# --- references --------------------------------------------------------------------------


def _int_divmod(x, y):
    """XLA's integer division: truncated, x / 0 == -1 and x % 0 == x."""
    x, y = np.asarray(x), np.asarray(y)
    safe = np.where(y == 0, 1, y)
    return np.where(y == 0, -1, np.trunc(x / safe)), np.where(y == 0, x, np.fmod(x, safe))


def _div(x, y):
    kind = np.result_type(np.asarray(x), np.asarray(y)).kind
    return _int_divmod(x, y)[0] if kind in "iu" else np.divide(x, y)


def _rem(x, y):
    kind = np.result_type(np.asarray(x), np.asarray(y)).kind
    return _int_divmod(x, y)[1] if kind in "iu" else np.fmod(x, y)


def _round(x, rounding_method=0):
    """lax.round: ties away from zero unless TO_NEAREST_EVEN (1)."""
    x = np.asarray(x)
    if int(rounding_method) == 1:
        return np.rint(x)
    return np.where(np.abs(x - np.trunc(x)) >= 0.5, np.trunc(x) + np.sign(x), np.trunc(x))


def _select_n(which, *cases):
    which = np.asarray(which)
    if which.dtype == bool:
        return np.where(which, cases[1], cases[0]) if len(cases) > 1 else cases[0]
    return np.choose(which, np.broadcast_arrays(*cases))


def _cumulative(ufunc):
    def ref(x, axis=0, reverse=False):
        x = np.asarray(x)
        if reverse:
            return np.flip(ufunc.accumulate(np.flip(x, axis), axis=axis), axis)
        return ufunc.accumulate(x, axis=axis)
    return ref


def _fold(ufunc, identity):
    """ufunc folded over `axes` from its identity (so empty axes work); bitwise on ints."""
    def ref(x, axes):
        x = np.asarray(x)
        return ufunc.reduce(x, axis=tuple(axes), initial=identity(x))
    return ref


def _lowest(x):
    return -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min if x.dtype != bool else 0


def _highest(x):
    return np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).max if x.dtype != bool else 1


def _pad(x, value, config):
    """lax.pad: low/high padding (negative crops) and interior padding."""
    x = np.asarray(x)
    for axis, (lo, hi, interior) in enumerate(config):
        if interior:
            n = x.shape[axis]
            shape = list(x.shape)
            shape[axis] = n + (n - 1) * interior if n else 0
            spread = np.full(shape, value, dtype=np.result_type(x, np.float64))
            index = [slice(None)] * x.ndim
            index[axis] = slice(None, None, interior + 1)
            spread[tuple(index)] = x
            x = spread
        widths = [(0, 0)] * x.ndim
        widths[axis] = (max(lo, 0), max(hi, 0))
        x = np.pad(x, widths, constant_values=value)
        index = [slice(None)] * x.ndim
        index[axis] = slice(max(-lo, 0), x.shape[axis] - max(-hi, 0))
        x = x[tuple(index)]
    return x


def _window_starts(starts, shape, sizes):
    """JAX's start indices: negative ones count from the end, then every start is clamped
    so that the window fits (XLA's rule)."""
    return [int(np.clip(s + n if s < 0 else s, 0, n - z))
            for s, n, z in zip(starts, shape, sizes)]


def _dynamic_slice(x, starts, slice_sizes):
    starts = _window_starts(starts, x.shape, slice_sizes)
    return x[tuple(slice(s, s + z) for s, z in zip(starts, slice_sizes))]


def _dynamic_update_slice(x, update, starts):
    starts = _window_starts(starts, x.shape, update.shape)
    out = np.array(x, np.float64)
    out[tuple(slice(s, s + z) for s, z in zip(starts, update.shape))] = update
    return out


def _gather(x, idx, axis, batch_dims=0):
    """plugax's simplified gather: `take` along `axis` with clamped indices; a leading
    batch axis shared by operand and indices when batch_dims == 1."""
    if batch_dims:
        return np.stack([_gather(xb, ib, axis - 1) for xb, ib in zip(x, idx)])
    return np.take(x, np.clip(idx, 0, x.shape[axis] - 1), axis)


def _scatter_add(x, idx, updates, axis):
    out = np.moveaxis(np.array(x, np.float64), axis, 0)
    np.add.at(out, np.clip(idx, 0, out.shape[0] - 1), np.moveaxis(updates, axis, 0))
    return np.moveaxis(out, 0, axis)


def _dot_general(x, y, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    letters = iter("abcdefghijklmnop")
    lhs, rhs = [next(letters) for _ in range(np.ndim(x))], [None] * np.ndim(y)
    for a, b in zip(lc, rc):
        rhs[b] = lhs[a]
    for a, b in zip(lb, rb):
        rhs[b] = lhs[a]
    rhs = [r or next(letters) for r in rhs]
    out = ([lhs[a] for a in lb] + [c for i, c in enumerate(lhs) if i not in lc + lb]
           + [c for i, c in enumerate(rhs) if i not in rc + rb])
    return np.einsum(f"{''.join(lhs)},{''.join(rhs)}->{''.join(out)}", x, y)


def _scipy(name):
    def ref(*args):
        import scipy.special as sc
        return getattr(sc, name)(*args)
    return ref


# --- Python versions of the control-flow combinators: the references ------------------
def _py_cond(pred, true_fun, false_fun, *operands):
    return true_fun(*operands) if pred else false_fun(*operands)


def _py_switch(index, branches, *operands):
    return branches[int(np.clip(index, 0, len(branches) - 1))](*operands)


def _py_while(cond_fun, body_fun, value):
    while cond_fun(value):
        value = body_fun(value)
    return value


def _py_fori(lower, upper, body_fun, value):
    for i in range(int(lower), int(upper)):
        value = body_fun(i, value)
    return value


def _py_scan(f, init, xs, length=None, reverse=False):
    carry, ys = init, []
    for x in (xs[::-1] if reverse else xs):
        carry, y = f(carry, x)
        ys.append(y)
    ys = np.stack(ys[::-1] if reverse else ys)
    return carry, ys


def _py_map(f, xs):
    return np.stack([f(x) for x in xs])


# --- calling conventions, shared by plugax, JAX and the references ----------------------
def _starts(fn, x, *starts, **kwargs):
    """dynamic_slice: start indices as separate (traced) scalars."""
    return fn(x, list(starts), **kwargs)


def _update_starts(fn, x, update, *starts):
    return fn(x, update, list(starts))


def _cond(fn, pred, x, y):
    return fn(pred, lambda a, b: a * b + 1.0, lambda a, b: a - b, x, y)


def _switch(fn, index, x):
    return fn(index, [lambda a: a * 2.0, lambda a: a * a, lambda a: -a], x)


def _while(fn, x, limit):
    """Doubles x until its sum passes `limit`; the carry counts the steps too."""
    return fn(lambda c: c[0].sum() < limit, lambda c: (c[0] * 2.0, c[1] + 1), (x, 0))


def _fori(fn, lower, upper, x):
    if type(x) is int:   # an integer carry meets the (weak, with static bounds) index
        return fn(lower, upper, lambda i, c: c + i, x)
    return fn(lower, upper, lambda i, c: c * 0.5 + i, x)


def _scan(fn, init, xs, **kwargs):
    return fn(lambda c, x: (c * x + 1.0, c * 2.0), init, xs, **kwargs)


def _map(fn, xs):
    return fn(lambda x: x * x + 1.0, xs)


# --- the table -----------------------------------------------------------------------------
_FLOAT_UNARY = {"acos": ("unit", np.arccos), "acosh": ("gt1", np.arccosh),
                "asin": ("unit", np.arcsin), "asinh": ("real", np.arcsinh),
                "atan": ("real", np.arctan), "atanh": ("unit", np.arctanh),
                "cbrt": ("away0", np.cbrt), "cos": ("real", np.cos), "cosh": ("real", np.cosh),
                "exp": ("real", np.exp), "exp2": ("real", np.exp2),
                "expm1": ("real", np.expm1), "log": ("pos", np.log),
                "log1p": ("pos", np.log1p), "sin": ("real", np.sin),
                "sinh": ("real", np.sinh), "sqrt": ("pos", np.sqrt), "tan": ("unit", np.tan),
                "tanh": ("real", np.tanh), "rsqrt": ("pos", lambda x: 1 / np.sqrt(x)),
                "logistic": ("real", lambda x: 1 / (1 + np.exp(-np.asarray(x))))}
LAX: dict[str, Spec] = {name: Spec(ref, unary(name, domain), grad=True, rtol=4e-6)
                        for name, (domain, ref) in _FLOAT_UNARY.items()}
LAX.update({
    "abs": Spec(np.abs, unary("abs", "away0"), grad=True),
    "neg": Spec(np.negative, unary("neg"), grad=True),
    "sign": Spec(np.sign, unary("sign", "away0"), grad=True),
    "square": Spec(np.square, unary("square"), grad=True),
    "floor": Spec(np.floor, unary("floor"), grad=True),
    "ceil": Spec(np.ceil, unary("ceil"), grad=True),
    "is_finite": Spec(np.isfinite, unary("is_finite")),
    "bitwise_not": _entry("bitwise_not", np.invert, [
        _c("i32", _i((2, 3), -8, 8)), _c("u8", _i((4,), 0, 250, u8)), _c("bool", _b((4,))),
        _c("f32", _u((3,)))]),
    "round": _entry("round", _round, [
        _c("f32", _u((2, 3)), smooth=True), _c("halves", np.array([0.5, 1.5, 2.5, -0.5], f32)),
        _c("to_even", np.array([0.5, 1.5, 2.5, -0.5], f32), 1), _c("edges", EDGES),
        _c("i32", _i((3,)))], grad=True),
    "integer_pow": _entry("integer_pow", lambda x, y: np.power(x, float(y)), [
        _c("cube", _u((2, 3)), 3, smooth=True), _c("negative", _u((3,), "away0"), -2,
                                                   smooth=True),
        _c("zero", _u((3,)), 0, smooth=True), _c("i32", _i((4,)), 2),
        _c("i32_negative", _i((3,)), -1), _c("edges", EDGES, 2), _c("py_float", 1.5, 3)],
        grad=True),
})

_LAX_BINARY = {"add": ("real", None, np.add), "sub": ("real", None, np.subtract),
               "mul": ("real", None, np.multiply), "div": ("real", "away0", _div),
               "rem": ("real", "away0", _rem), "max": ("real", None, np.maximum),
               "min": ("real", None, np.minimum), "pow": ("pos", "real", np.power),
               "atan2": ("away0", None, np.arctan2)}
SIZE1_BROADCAST = ("plugax.lax binary operations broadcast only rank-0 operands; jax.lax "
                   "also stretches size-1 axes of operands of equal rank: use plugax.numpy")


def _with_size1_broadcast(cases):
    return lambda: cases() + [Case("size1_broadcast", (np.ones((3, 1), f32),
                                                       np.full((1, 3), 2.0, f32)))]


for _name, (_dx, _dy, _ref) in _LAX_BINARY.items():
    LAX[_name] = Spec(_ref, _with_size1_broadcast(binary(_name, _dx, _dy)), grad=True,
                      rtol=4e-6, differs={"size1_broadcast": SIZE1_BROADCAST})
for _name, _ref in {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
                    "gt": np.greater, "ge": np.greater_equal}.items():
    LAX[_name] = Spec(_ref, _with_size1_broadcast(binary(_name)),
                      differs={"size1_broadcast": SIZE1_BROADCAST})
for _name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    LAX[_name] = Spec(getattr(np, _name), integer_binary(_name))
LAX["pow"].cases = (lambda base: lambda: base() + [
    Case("int_exponent", (np.array([0.5, 2.0, -1.5], f32), np.array([3, -2, 2], i32)))])(
    LAX["pow"].cases)

LAX.update({
    "select_n": _entry("select_n", _select_n, [
        _c("bool", _b((2, 3)), _u((2, 3)), _u((2, 3)), smooth=True),
        _c("int_three", _i((4,), 0, 3), _u((4,)), _u((4,)), _u((4,)), smooth=True),
        _c("scalar_which", np.bool_(True), _u((3,)), _u((3,)), smooth=True),
        _c("one_case", _b((3,)), _u((3,)), smooth=True),
        _c("mixed_dtypes", _b((3,)), _u((3,)), _i((3,)))], grad=True),
    "select": _entry("select", np.where, [
        _c("f32", _b((2, 3)), _u((2, 3)), _u((2, 3)), smooth=True),
        _c("scalar_pred", np.bool_(False), _u((3,)), _u((3,)), smooth=True),
        _c("i32", _b((3,)), _i((3,)), _i((3,)))], grad=True),
    "clamp": _entry("clamp", lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi), [
        _c("scalars", np.float32(-0.5), _u((2, 3)), np.float32(0.5), smooth=True),
        _c("arrays", _u((4,), "unit"), _u((4,)), _u((4,), "gt1"), smooth=True),
        _c("ties", np.float32(-1.0), np.array([-1.0, 0.0, 1.0], f32), np.float32(1.0)),
        _c("py_bounds", -0.5, _u((3,)), 0.5, smooth=True), _c("i32", -1, _i((4,)), 1),
        _c("edges", np.float32(-1.0), EDGES, np.float32(1.0))], grad=True),
    "convert_element_type": _entry("convert_element_type", _astype, [
        _c("f32_i32", _u((2, 3)), i32), _c("edges_i32", EDGES, i32),
        _c("to_u8", np.array([-1.0, 300.0, 2.5], f32), u8), _c("i32_f16", _i((3,)), f16),
        _c("py_float", 2.5, f32), _c("py_int", 3, f32), _c("f32_f16", _u((3,)), f16),
        _c("f32_f32", _u((3,)), f32), _c("bool_i32", _b((3,)), i32)],
        grad=True),
    "broadcast_in_dim": _entry(
        "broadcast_in_dim", lambda x, shape, dims: np.broadcast_to(
            np.expand_dims(x, [i for i in range(len(shape)) if i not in dims]), shape), [
            _c("row", _u((3,)), (2, 3), (1,), smooth=True),
            _c("column", _u((2,)), (2, 3), (0,), smooth=True),
            _c("stretch_ones", _u((1, 3)), (2, 2, 3), (1, 2), smooth=True),
            _c("scalar", np.float32(1.5), (2,), ()), _c("py_float", 2.5, (2,), ())],
        grad=True),
    "broadcasted_iota": _entry(
        "broadcasted_iota", lambda dtype, shape, dim: np.broadcast_to(np.expand_dims(
            np.arange(shape[dim]), [i for i in range(len(shape)) if i != dim]), shape), [
            _c("rows", i32, (2, 3), 0), _c("float", f32, (2, 3), 1)], vmap=False),
    "iota": _entry("iota", lambda dtype, n: np.arange(n), [
        _c("i32", i32, 4), _c("f32", f32, 3), _c("empty", i32, 0)], vmap=False),
    "concatenate": _entry("concatenate", np.concatenate, [
        _c("dim0", _u((2, 3)), _u((1, 3)), dimension=0, smooth=True),
        _c("dim1", _u((2, 1)), _u((2, 2)), dimension=1, smooth=True),
        _c("mixed", _u((2,)), _i((2,)), dimension=0)], grad=True,
        call=lambda fn, *xs, dimension: fn(list(xs), dimension)),
    "split": _entry("split", lambda x, sizes, axis: np.split(x, np.cumsum(sizes)[:-1], axis), [
        _c("axis0", _u((5, 3)), sizes=(2, 3), axis=0, smooth=True),
        _c("axis1", _u((2, 4)), sizes=(1, 0, 3), axis=1, smooth=True),
        _c("int", _i((4,)), sizes=(4,), axis=0)], grad=True),
})


def _cumulative_cases(name):
    return [_c("axis0", _u((2, 3)), smooth=True), _c("axis1", _u((2, 3)), 1, smooth=True),
            _c("reverse", _u((4,)), 0, True, smooth=True),
            _c("negative_axis", _u((2, 3)), -1, smooth=True),
            _c("zeros_and_ties", np.array([2.0, 0.0, 2.0, -1.0, 2.0], f32)),
            _c("i8", _i((4,), dtype=i8)), _c("edges", EDGES), _c("bool", _b((3,)))]


NEGATIVE_AXES = ("plugax.lax accepts negative axes, counted from the end (as plugax.numpy "
                 "does); jax.lax raises ValueError")
for _name, _ufunc in {"cumsum": np.add, "cumprod": np.multiply, "cummax": np.maximum,
                      "cummin": np.minimum}.items():
    LAX[_name] = _entry(_name, _cumulative(_ufunc), _cumulative_cases(_name), grad=True,
                        differs={"negative_axis": NEGATIVE_AXES})

_REDUCE_CASES = [_c("all", _u((2, 3)), (0, 1), smooth=True), _c("axis1", _u((2, 3)), (1,),
                                                                  smooth=True),
                 _c("negative", _u((2, 3)), (-1,), smooth=True), _c("none", _u((3,)), ()),
                 _c("i32", _i((2, 3)), (0,)), _c("edges", EDGES, (0,)),
                 _c("empty", np.zeros((0, 2), f32), (0,)), _c("bool", _b((2, 3)), (1,))]

_FOLDS = {"reduce_sum": (np.add, lambda x: 0), "reduce_prod": (np.multiply, lambda x: 1),
          "reduce_max": (np.maximum, _lowest), "reduce_min": (np.minimum, _highest),
          "reduce_and": (np.bitwise_and, lambda x: np.invert(np.zeros((), x.dtype))),
          "reduce_or": (np.bitwise_or, lambda x: np.zeros((), x.dtype))}
for _name, (_ufunc, _identity) in _FOLDS.items():
    LAX[_name] = _entry(_name, _fold(_ufunc, _identity),
                        _REDUCE_CASES, grad=_name in ("reduce_sum", "reduce_prod",
                                                      "reduce_max", "reduce_min"),
                        differs={} if _name in ("reduce_and", "reduce_or") else {
                            "negative": NEGATIVE_AXES},
                        jit_differs=NAN_CHOOSER if _name in ("reduce_max", "reduce_min")
                        else {})
for _name, _fn in {"argmax": np.argmax, "argmin": np.argmin}.items():
    LAX[_name] = _entry(_name, lambda x, axis, dtype, _fn=_fn: _fn(x, axis), [
        _c("axis0", _u((2, 3)), 0, i32), _c("axis1_ties", np.array([[1, 3, 3], [2, 2, 0]], f32),
                                            1, i32),
        _c("edges", EDGES, 0, i32), _c("int", _i((5,)), 0, i8), _c("bool", _b((4,)), 0, i32)])

LAX.update({
    "dot": _entry("dot", lambda x, y, preferred_element_type=None: np.dot(x, y), [
        _c("matrices", _u((2, 3)), _u((3, 4)), smooth=True),
        _c("vectors", _u((3,)), _u((3,)), smooth=True),
        _c("matrix_vector", _u((2, 3)), _u((3,)), smooth=True),
        _c("i8", _i((3,), dtype=i8), _i((3,), dtype=i8)),
        _c("preferred", _i((2, 3), dtype=i8), _i((3,), dtype=i8), preferred_element_type=i32),
        _c("mixed", _u((3,)), _i((3,)))], grad=True, rtol=1e-5),
    "dot_general": _entry("dot_general", _dot_general, [
        _c("matmul", _u((2, 3)), _u((3, 4)), (((1,), (0,)), ((), ())), smooth=True),
        _c("batched", _u((2, 2, 3)), _u((2, 3, 2)), (((2,), (1,)), ((0,), (0,))),
           smooth=True),
        _c("outer", _u((2,)), _u((3,)), (((), ()), ((), ())), smooth=True),
        _c("contract_lhs0", _u((3, 2)), _u((3, 4)), (((0,), (0,)), ((), ())), smooth=True)],
        grad=True, rtol=1e-5),
    "dynamic_slice": _entry("dynamic_slice", _dynamic_slice, [
        _c("in_range", _u((4, 3)), np.int32(1), np.int32(0), slice_sizes=(2, 3), smooth=True),
        _c("clamped", _u((4, 3)), np.int32(3), np.int32(-2), slice_sizes=(2, 2)),
        _c("py_ints", _u((5,)), 4, slice_sizes=(3,))], grad=True, call=_starts),
    "dynamic_update_slice": _entry("dynamic_update_slice", _dynamic_update_slice, [
        _c("in_range", _u((4, 3)), _u((2, 3)), np.int32(1), np.int32(0), smooth=True),
        _c("clamped", _u((4,)), _u((2,)), np.int32(7)),
        _c("negative", _u((4,)), _u((2,)), np.int32(-3))],
        grad=True, call=_update_starts),
    "expand_dims": _entry("expand_dims", np.expand_dims, [
        _c("front", _u((3,)), (0,), smooth=True), _c("several", _u((3,)), (0, 2)),
        _c("negative", _u((2, 3)), (-1,))], grad=True),
    "gather": _entry("gather", _gather, [
        _c("axis0", _u((4, 2)), np.array([0, 3, 1], i32), 0, smooth=True),
        _c("axis1", _u((2, 4)), np.array([[1, 9], [-2, 0]], i32), 1),
        _c("batch_dims", _u((2, 4)), np.array([[0, 3], [2, 2]], i32), 1, 1, smooth=True)],
        grad=True, jax=lambda jnp, lax: _jax_gather(jnp)),
    "scatter_add": _entry("scatter_add", _scatter_add, [
        _c("axis0", _u((4, 2)), np.array([0, 3, 0], i32), _u((3, 2)), 0, smooth=True),
        _c("out_of_range", _u((4,)), np.array([5, -1], i32), _u((2,)), 0),
        _c("axis1", _u((2, 3)), np.array([2, 2], i32), _u((2, 2)), 1, smooth=True)],
        grad=True, jax=lambda jnp, lax: _jax_scatter_add(jnp)),
    "pad": _entry("pad", _pad, [
        _c("low_high", _u((2, 3)), np.float32(0.5), ((1, 2, 0), (0, 1, 0)), smooth=True),
        _c("interior", _u((3,)), np.float32(-1.0), ((0, 0, 2),), smooth=True),
        _c("negative", _u((2, 4)), np.float32(0.0), ((0, 0, 0), (-1, -2, 0)), smooth=True),
        _c("py_value", _u((3,)), 0.0, ((1, 1, 1),)), _c("i32", _i((3,)), np.int32(7),
                                                         ((1, 0, 0),)),
        _c("weak_operand", 2.0, np.float32(0.0), ()), _c("weak_both", 2.0, 0.0, ())],
        grad=True),
    "reshape": _entry("reshape", lambda x, sizes, dimensions=None: np.reshape(
        x if dimensions is None else np.transpose(x, dimensions), sizes), [
        _c("f32", _u((2, 3)), (3, 2), smooth=True), _c("dimensions", _u((2, 3)), (6,), (1, 0)),
        _c("scalar", _u((1, 1)), ())], grad=True),
    "rev": _entry("rev", lambda x, dims: np.flip(x, dims), [
        _c("one", _u((2, 3)), (1,), smooth=True), _c("both", _u((2, 3)), (0, 1)),
        _c("none", _u((3,)), ())], grad=True),
    "slice": _entry("slice", lambda x, start, limit, strides=None: x[tuple(
        slice(a, b, s) for a, b, s in zip(start, limit, strides or [1] * len(start)))], [
        _c("window", _u((4, 3)), (1, 0), (3, 2), smooth=True),
        _c("strided", _u((5, 4)), (0, 1), (5, 4), (2, 2), smooth=True),
        _c("empty", _u((3,)), (1,), (1,))], grad=True),
    "squeeze": _entry("squeeze", lambda x, dims: np.squeeze(x, tuple(dims)), [
        _c("one", _u((1, 3)), (0,), smooth=True), _c("negative", _u((3, 1, 1)), (-1, 1))],
        grad=True),
    "transpose": _entry("transpose", np.transpose, [
        _c("swap", _u((2, 3)), (1, 0), smooth=True), _c("three", _u((2, 3, 2)), (2, 0, 1))],
        grad=True),
})


def _jax_gather(jnp):
    """What plugax's simplified lax.gather means in JAX: take with clamped indices."""
    import jax

    def gather(x, idx, axis, batch_dims=0):
        if batch_dims:
            return jax.vmap(lambda a, i: jnp.take(a, i, axis=axis - 1, mode="clip"))(x, idx)
        return jnp.take(x, idx, axis=axis, mode="clip")
    return gather


def _jax_scatter_add(jnp):
    def scatter_add(x, idx, updates, axis):
        index = (slice(None),) * axis + (jnp.clip(idx, 0, x.shape[axis] - 1),)
        return jnp.asarray(x).at[index].add(updates)
    return scatter_add


LAX.update({
    "cond": _entry("cond", _py_cond, [
        _c("true", True, _u((3,)), _u((3,)), smooth=True),
        _c("false_traced", np.bool_(False), _u((3,)), _u((3,)), smooth=True),
        _c("int_pred", np.int32(2), _u((2,)), _u((2,)), smooth=True),
        _c("weak_operands", np.bool_(True), 1.5, 2.0)], grad=True, call=_cond),
    "switch": _entry("switch", _py_switch, [
        _c(f"index{i}", np.int32(i), _u((3,)), smooth=True) for i in (-1, 0, 1, 2, 5)],
        grad=True, call=_switch),
    "while_loop": _entry("while_loop", _py_while, [
        _c("f32", _u((3,), "pos"), 20.0), _c("no_steps", _u((3,), "pos"), -1.0)],
        call=_while),
    "fori_loop": _entry("fori_loop", _py_fori, [
        _c("static", 0, 3, _u((3,)), smooth=True), _c("empty", 2, 1, _u((2,)), smooth=True),
        _c("traced_bounds", np.int32(1), np.int32(4), _u((2,)), smooth=True),
        _c("int_carry", 0, 3, 0)],
        grad=True, call=_fori),
    "scan": _entry("scan", _py_scan, [
        _c("f32", _u((2,)), _u((3, 2)), smooth=True),
        _c("reverse", _u(()), _u((4,)), reverse=True, smooth=True),
        _c("weak_init", 1.0, _u((3,)), smooth=True)], grad=True, call=_scan,
        differs={"weak_init": "a weak carry that the body makes strong is strong throughout "
                              "in plugax, so ys computed from it are strong; JAX keeps the "
                              "carry input weak, so those ys are weakly typed"}),
    "map": _entry("map", _py_map, [_c("f32", _u((3, 2)), smooth=True),
                                   _c("i32", _i((4,)))], grad=True, call=_map),
})

# the special_functions family's CHLO-backed functions (also in its own table test, which
# covers the rest: plugins/special_functions/tests/test_table.py)
LAX.update({
    "erf": Spec(_scipy("erf"), unary("erf"), grad=True, rtol=1e-5),
    "erfc": Spec(_scipy("erfc"), unary("erfc"), grad=True, rtol=1e-5),
    "erf_inv": Spec(_scipy("erfinv"), unary("erf_inv", "unit"), grad=True, rtol=1e-5),
    "lgamma": Spec(_scipy("gammaln"), unary("lgamma", "pos"), grad=True, rtol=1e-5),
    "digamma": Spec(_scipy("digamma"), unary("digamma", "pos"), grad=True, rtol=1e-5),
    "polygamma": _entry("polygamma", _scipy("polygamma"), [
        _c("order1", np.float32(1.0), _u((3,), "pos"), smooth=True),
        _c("order2", np.array([2.0, 1.0, 0.0], f32), _u((3,), "pos"), smooth=True)],
        grad=True, rtol=1e-5),
})

_SHAPE_TESTS = ("checked by plugins/shape/tests (test_gather_scatter.py, "
                "test_index_frontends.py): values against NumPy float64 loops in every mode, "
                "the kit's jvp/transpose/vmap/lowering checks, and JAX's recorded results")
_DOT_TESTS = ("checked by plugins/dot/tests/test_precision.py: accepted everywhere JAX "
              "accepts it, reaching the lowering without changing values")
LAX_SKIPPED = {"RoundingMethod": "an enum (the rounding_method of lax.round), not a "
                                 "function; lax.round's cases pass it",
               **{name: _SHAPE_TESTS for name in (
                   "GatherDimensionNumbers", "ScatterDimensionNumbers", "GatherScatterMode",
                   "scatter", "scatter_mul", "scatter_min", "scatter_max",
                   "dynamic_slice_in_dim", "dynamic_index_in_dim",
                   "dynamic_update_slice_in_dim", "dynamic_update_index_in_dim")},
               **{name: _DOT_TESTS for name in ("Precision", "canonicalize_precision")},
               "stop_gradient": "checked by tests/integration/test_stop_gradient.py: identity "
                                "values, zero derivative under grad/jvp/vmap/jit",}

# issue 16, lax breadth: each group is checked by its family's own tests, bit for bit
# against results recorded from JAX (in the test file) and with the authors' kit
LAX_SKIPPED.update({name: "checked by plugins/elementwise/tests/test_complex.py (the kit's jvp, "
                          "transpose, vmap, jit and lowering on complex64/128) and "
                          "tests/integration/test_complex.py (NumPy values, JAX's gradients)"
                    for name in ("real", "imag", "complex", "conj")})
LAX_SKIPPED.update({name: "checked by plugins/elementwise/tests/test_bits.py: JAX's recorded "
                          "bits for every integer dtype, eager and jit, and the kit's rules"
                    for name in ("shift_left", "shift_right_arithmetic", "shift_right_logical",
                                 "population_count", "clz", "nextafter", "reduce_precision",
                                 "bitcast_convert_type", "mulhi", "reciprocal")})
LAX_SKIPPED.update({name: "checked by plugins/shape/tests/test_lax_extra.py: one table against "
                          "NumPy float64 with the kit's jvp/vmap/jit checks on each composition"
                    for name in ("full", "full_like", "empty", "broadcast", "broadcast_like",
                                 "broadcast_shapes", "broadcast_to_rank", "collapse",
                                 "slice_in_dim", "index_in_dim", "index_take", "stack",
                                 "unstack", "tile", "dtype", "scatter_sub")})
LAX_SKIPPED.update({name: "checked by plugins/reductions/tests/test_general.py: NumPy and "
                          "JAX's recorded values, the kit's jvp/vmap/jit/lowering checks"
                    for name in ("reduce_xor", "cumlogsumexp")})
LAX_SKIPPED.update({name: "checked by plugins/control_flow/tests/test_folds.py: NumPy float64 "
                          "and JAX's recorded values, the kit's jvp/vmap/jit checks"
                    for name in ("reduce", "scatter_apply")})
LAX_SKIPPED.update({name: "checked by plugins/dot/tests/test_lax_extra.py: JAX's recorded "
                          "values, and the kit's jvp/vmap/jit checks of the compositions"
                    for name in ("batch_matmul", "ragged_dot", "ragged_dot_general", "scaled_dot",
                                 "DotAlgorithm", "DotAlgorithmPreset", "Tolerance",
                                 "AccuracyMode", "RaggedDotDimensionNumbers")})
LAX_SKIPPED.update({name: "a type alias for annotations (as JAX's), not a function"
                    for name in ("DotDimensionNumbers", "PrecisionLike")})
LAX_SKIPPED["ConvGeneralDilatedDimensionNumbers"] = ("a type alias for annotations (as JAX's), "
                                                     "not a function")
LAX_SKIPPED.update({name: "checked by plugins/control_flow/tests/test_extras.py: JAX's recorded "
                          "values or implicit-function derivatives in float64, under jvp, "
                          "grad, jit and vmap"
                    for name in ("associative_scan", "optimization_barrier",
                                 "platform_dependent", "composite", "create_token", "after_all",
                                 "stage", "dce_sink", "shape_as_value", "custom_root",
                                 "custom_linear_solve", "with_sharding_constraint")})
LAX_SKIPPED.update({name: "checked by plugins/control_flow/tests/test_collectives.py: values "
                          "and gradients under vmap(axis_name=) against JAX's recorded ones, "
                          "eager and jit, nested names, scan/jit inside"
                    for name in ("psum", "pmean", "pmax", "pmin", "all_gather", "all_to_all",
                                 "axis_index", "axis_size", "ppermute", "pshuffle",
                                 "psum_scatter", "pswapaxes", "pbroadcast")})
LAX_SKIPPED["pcast"] = ("only meaningful inside shard_map: checked by plugins/xla_call/tests "
                        "(vma_checks.py, shard_map_pcast) against JAX's recorded values, "
                        "gradients and error texts")
