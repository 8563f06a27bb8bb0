"""The bad-input catalogue's case tables (issue 14, part 1): operands, axes and shapes.

The transformations', control flow's, pytrees' and static arguments' tables, and
the results JAX defines, are in `bad_input_transforms.py`.

`make_cases(px, pnp, lax)` builds every case over the given namespaces: plugax,
`plugax.numpy` and `plugax.lax` in the test. The table names nothing of plugax
itself, so that the same table can be replayed against JAX (jax, jax.numpy,
jax.lax) by hand when checking wording and error classes; the test never imports
JAX. Each case is one callable over NumPy operands, the exception class it must
raise and a fragment of the message that names the user's mistake, and the modes
it is run in: eager, under `jit`, under `vmap` (the operands stacked twice) and
under `grad` (w.r.t. the first operand, of the sum of the result), so that every
transformation agrees on whether the call is an error.
"""
from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

F32, F16, I32, U8 = np.float32, np.float16, np.int32, np.uint8
ALL_MODES = ("eager", "jit", "vmap", "grad")


@dataclass(frozen=True)
class Case:
    """`fn(*args)` must raise `error` with `fragment` (a string, or a tuple of strings
    that must all appear) in its message in each mode. `xfail` maps a mode to the
    reason it still fails (a defect in code this catalogue's author may not edit)."""
    name: str
    fn: Callable
    args: tuple
    error: type
    fragment: str | tuple
    modes: tuple = ALL_MODES
    xfail: tuple = ()          # ((mode, reason), ...)

    def fragments(self) -> tuple:
        return self.fragment if isinstance(self.fragment, tuple) else (self.fragment,)

    def applicable_modes(self) -> tuple:
        """vmap needs operands to batch; grad needs a floating first operand."""
        out = []
        for mode in self.modes:
            if mode == "vmap" and not self.args:
                continue
            if mode == "grad" and not (self.args and np.issubdtype(
                    np.asarray(self.args[0]).dtype, np.floating)):
                continue
            out.append(mode)
        return tuple(out)


def run_mode(case: Case, mode: str, px: Any, pnp: Any) -> Any:
    """Run the case's callable eagerly, under jit, vmap or grad (same operands)."""
    fn, args = case.fn, case.args
    if mode == "eager":   # plugax (or JAX) arrays, so methods and indexing are theirs
        return fn(*[pnp.asarray(a) for a in args])
    if mode == "jit":
        return px.jit(fn)(*args)
    if mode == "vmap":
        return px.vmap(fn)(*[np.stack([a, a]) for a in args])
    if mode == "grad":
        def scalar(*a: Any) -> Any:
            leaves = px.tree_util.tree_leaves(fn(*a))
            return sum(pnp.sum(leaf) for leaf in leaves)
        return px.grad(scalar)(*args)
    raise ValueError(mode)


def _x(shape: tuple = (3,), dtype: Any = F32) -> np.ndarray:
    return (np.arange(int(np.prod(shape))) % 5 + 1).reshape(shape).astype(dtype)


def make_cases(px: Any, pnp: Any, lax: Any) -> list[Case]:
    """Every case of the catalogue, as a flat list with unique names."""
    cases: list[Case] = []
    add = cases.append
    eager_jit = ("eager", "jit")

    # --- lax unary functions that need a floating-point operand ---------------
    float_unary = ["exp", "log", "sin", "cos", "tan", "tanh", "sqrt", "rsqrt", "log1p",
                   "expm1", "logistic", "floor", "ceil", "round", "erf", "exp2"]
    for name in float_unary:
        f = getattr(lax, name)
        for label, operand in [("bool", _x(dtype=bool)), ("int32", _x(dtype=I32)),
                               ("uint8", _x(dtype=U8))]:
            add(Case(f"lax.{name}({label})", f, (operand,), TypeError,
                     f"'{name}' does not accept dtype {np.dtype(operand.dtype).name}"))
    for name in ["exp", "sin", "sqrt", "log"]:
        f = getattr(lax, name)
        add(Case(f"lax.{name}(True)", lambda f=f: f(True), (), TypeError,
                 f"'{name}' does not accept dtype bool", eager_jit))
    # complex where a real operand is required (JAX raises for each of these too)
    z = _x(dtype=np.complex64)
    for name in ["floor", "ceil"]:
        add(Case(f"lax.{name}(complex64)", getattr(lax, name), (z,), TypeError,
                 f"'{name}' does not accept dtype complex64"))
    for name in ["lt", "le", "gt", "ge", "rem"]:
        f = getattr(lax, name)
        add(Case(f"lax.{name}(complex64, complex64)", lambda a, f=f: f(a, a), (z,), TypeError,
                 f"'{name}' does not accept dtype complex64"))
    # (abs of complex is its real magnitude and round rounds both parts, as in JAX:
    # test_complex.py)
    for name, prim in [("floor", "floor"), ("ceil", "ceil"), ("less", "lt"), ("argmax", "argmax"), ("mod", "rem")]:
        f = getattr(pnp, name)
        call = (lambda a, f=f: f(a, a)) if name in ("less", "mod") else f
        add(Case(f"pnp.{name}(complex64)", call, (z,), TypeError,
                 f"'{prim}' does not accept dtype complex64"))
    add(Case("pnp.clip(complex64)", lambda a: pnp.clip(a, 0, 1), (z,), ValueError,
             "complex"))
    # integer / boolean operators given floats
    for name, prim in [("bitwise_and", "and"), ("bitwise_or", "or"), ("bitwise_xor", "xor")]:
        f = getattr(lax, name)
        add(Case(f"lax.{name}(float32)", lambda a, f=f: f(a, a), (_x(),), TypeError,
                 f"'{prim}' does not accept dtype float32"))
    add(Case("lax.bitwise_not(float32)", lax.bitwise_not, (_x(),), TypeError,
             "'not' does not accept dtype float32"))

    # --- lax binary functions: operands that do not fit ----------------------
    for name in ["add", "sub", "mul", "div", "max", "min", "pow", "atan2", "rem", "eq", "lt"]:
        f = getattr(lax, name)
        if name != "pow":   # lax.pow takes an integer exponent, as in JAX
            add(Case(f"lax.{name}(f32, i32)", f, (_x(), _x(dtype=I32)), TypeError,
                     (f"'{name}' requires operands of one dtype", "f32[", "i32[")))
        add(Case(f"lax.{name}(f32, f16)", f, (_x(), _x(dtype=F16)), TypeError,
                 (f"'{name}'", "f32[", "f16[")))
        add(Case(f"lax.{name}(f32[3], f32[4])", f, (_x(), _x((4,))), TypeError,
                 (f"'{name}' requires operands of equal shapes", "f32[3]", "f32[4]")))
    add(Case("lax.add(bool, bool)", lambda a: lax.add(a, a), (_x(dtype=bool),), TypeError,
             "'add' does not accept dtype bool"))
    add(Case("lax.mul(bool, bool)", lambda a: lax.mul(a, a), (_x(dtype=bool),), TypeError,
             "'mul' does not accept dtype bool"))
    add(Case("lax.add(f32, None)", lambda a: lax.add(a, None), (_x(),), TypeError, "None"))

    # --- numpy binary functions: shapes that do not broadcast ------------------
    for name in ["add", "subtract", "multiply", "divide", "maximum", "power", "arctan2",
                 "equal", "less", "where"]:
        f = getattr(pnp, name)
        call = (lambda a, b: pnp.where(a > 0, a, b)) if name == "where" else f
        add(Case(f"pnp.{name} of (3,) and (4,)", call, (_x(), _x((4,))), ValueError,
                 ("could not be broadcast together with shapes", "(4,)")))
    # --- numpy: non-numeric operands ------------------------------------------
    non_numeric = [("None", None, ValueError, "None"),
                   ("a str", "abc", TypeError, "str"),
                   ("a string array", np.array(["a", "b"]), TypeError, "strings"),
                   ("an object array", np.array([1, None], dtype=object), TypeError, "object"),
                   ("a datetime array", np.array(["2020-01-01"], dtype="datetime64[D]"),
                    TypeError, "datetime"),
                   ("a datetime", datetime.date(2020, 1, 1), TypeError, "(Python objects)"),
                   ("a bytes array", np.array([b"a"]), TypeError, "bytes")]
    for name in ["asarray", "sin", "sum", "negative"]:
        f = getattr(pnp, name)
        for label, value, error, fragment in non_numeric:
            if (value is None or label == "a datetime") and name in ("sin", "negative"):
                error, fragment = TypeError, (f"{name} requires array or scalar arguments",
                                              f"got {type(value).__name__} at position 0")
            add(Case(f"pnp.{name}({label})", lambda f=f, v=value: f(v), (), error,
                     fragment, eager_jit))
    for label, value, error, fragment in non_numeric[2:]:
        if label == "a datetime":
            fragment = "got date at position 1"
        add(Case(f"pnp.add(x, {label})", lambda a, v=value: pnp.add(a, v), (_x(1),),
                 TypeError, fragment))

    # --- reductions: axes that do not exist -----------------------------------
    reductions = ["sum", "prod", "max", "min", "mean", "any", "all", "argmax", "argmin",
                  "std", "var", "cumsum", "cumprod"]
    for name in reductions:
        f = getattr(pnp, name)
        for axis in (2, -3):
            add(Case(f"pnp.{name}(axis={axis}) of rank 2", lambda a, f=f, k=axis: f(a, axis=k),
                     (_x((2, 3)),), ValueError,
                     f"axis {axis} is out of bounds for an array of rank 2"))
        if name not in ("argmax", "argmin", "cumsum", "cumprod"):
            add(Case(f"pnp.{name}(axis=(0, 0))", lambda a, f=f: f(a, axis=(0, 0)),
                     (_x((2, 3)),), ValueError, "repeated axis in (0, 0)"))
        add(Case(f"pnp.{name}(axis=1.5)", lambda a, f=f: f(a, axis=1.5), (_x((2, 3)),),
                 TypeError, "axis must be None, an int or a tuple of ints, got 1.5"))
        if name in ("sum", "max", "mean"):   # int(1.5) used to reduce over axis 1
            add(Case(f"pnp.{name}(axis=(1.5,))", lambda a, f=f: f(a, axis=(1.5,)),
                     (_x((2, 3)),), TypeError, "got (1.5,)"))
    for name in ["reduce_sum", "reduce_max", "reduce_min", "reduce_prod"]:
        f = getattr(lax, name)
        for axes in [(2,), (0, 0), (-3,)]:
            add(Case(f"lax.{name}(axes={axes}) of rank 2", lambda a, f=f, k=axes: f(a, k),
                     (_x((2, 3)),), ValueError,
                     (f"lax.{name}: reduction axes {axes}", "f32[2,3]")))
    add(Case("lax.reduce_sum of bool", lambda a: lax.reduce_sum(a, (0,)), (_x(dtype=bool),),
             TypeError, "'reduce_sum' does not accept dtype bool"))
    add(Case("lax.argmax(axis=1) of rank 1", lambda a: lax.argmax(a, 1, I32), (_x(),),
             ValueError, "lax.argmax: reduction axes (1,)"))

    # --- shapes, ranks, indices ------------------------------------------------
    shape_reason = "plugins/shape does not yet raise JAX's error class here"
    shape_cases = [
        ("pnp.reshape to a size of another", lambda a: pnp.reshape(a, (4, 2)), (_x((2, 3)),),
         TypeError, "'reshape' cannot change the size", ()),
        ("pnp.transpose with a repeated axis", lambda a: pnp.transpose(a, (0, 0)),
         (_x((2, 3)),), ValueError, "(0, 0)", ()),
        ("pnp.concatenate of ranks 1 and 2", lambda a, b: pnp.concatenate([a, b]),
         (_x(), _x((2, 3))), TypeError, "different numbers of dimensions", ()),
        ("pnp.stack of (3,) and (4,)", lambda a, b: pnp.stack([a, b]), (_x(), _x((4,))),
         ValueError, ("same shape", "(4,)"), ()),
        ("pnp.squeeze of an axis of size 3", lambda a: pnp.squeeze(a, 0), (_x(),),
         ValueError, "size not equal to one", ()),
        ("pnp.broadcast_to a shape that does not fit", lambda a: pnp.broadcast_to(a, (4,)),
         (_x(),), ValueError, "(4,)", ()),
        ("pnp.expand_dims(axis=3) of rank 1", lambda a: pnp.expand_dims(a, 3), (_x(),),
         ValueError, "dimension 3 is out of bounds", ()),
        ("pnp.moveaxis(source=2) of rank 2", lambda a: pnp.moveaxis(a, 2, 0), (_x((2, 3)),),
         ValueError, "axis 2 is out of bounds", ()),
        ("pnp.swapaxes(0, 5) of rank 2", lambda a: pnp.swapaxes(a, 0, 5), (_x((2, 3)),),
         ValueError, "axis 5 is out of bounds", ()),
        ("pnp.matmul of (2, 3) and (2, 3)", lambda a, b: pnp.matmul(a, b),
         (_x((2, 3)), _x((2, 3))), TypeError,
         "'dot_general' needs contracting dimensions of equal sizes", ()),
        ("pnp.dot of (3,) and (4,)", lambda a, b: pnp.dot(a, b), (_x(), _x((4,))),
         TypeError, "'dot_general' needs contracting dimensions of equal sizes", ()),
        ("lax.dot_general contracting sizes 3 and 4",
         lambda a, b: lax.dot_general(a, b, (((0,), (0,)), ((), ()))), (_x(), _x((4,))),
         TypeError, "contracting dimensions of equal sizes", ()),
        ("lax.dot_general contracting axis 1 of rank 1",
         lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ()))), (_x(), _x()),
         TypeError, "dot_general", ()),
        ("a float index", lambda a: a[1.5], (_x(),), TypeError,
         ("indices must be integers", "got 1.5 of type float"), ()),
        ("a str index", lambda a: a["0"], (_x(),), TypeError,
         ("indices must be integers", "got '0' of type str"), ()),
        ("too many indices", lambda a: a[0, 0], (_x(),), IndexError, "too many indices", ()),
        ("lax.slice beyond the end", lambda a: lax.slice(a, (0,), (5,)), (_x(),), TypeError,
         "'slice' needs 0 <= start <= limit <= size", ()),
        ("lax.dynamic_slice with a slice larger than the operand",
         lambda a: lax.dynamic_slice(a, (0,), (5,)), (_x(),), TypeError,
         "'dynamic_slice' needs 0 <= slice size <= operand size", ()),
    ]
    for name, fn, args, error, fragment, xfail_modes in shape_cases:
        add(Case(name, fn, args, error, fragment,
                 xfail=tuple((m, shape_reason) for m in xfail_modes)))

    from bad_input_transforms import transformation_cases   # imports Case from here
    cases += transformation_cases(px, pnp, lax)

    names = [c.name for c in cases]
    assert len(names) == len(set(names)), "case names must be unique"
    return cases
