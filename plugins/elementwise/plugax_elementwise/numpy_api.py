"""plugax.numpy elementwise math: NumPy broadcasting and JAX type promotion.

Speed: `sin(x) + y` on small arrays is mostly Python overhead, so each function
first tries a fast path: when the operands are Arrays (or tracers) of one
(dtype, weak_type, shape) that the primitive accepts as is, it binds the
primitive straight away; and when, moreover, no transformation is running
(`is_eager()`), the dtype is a float that is canonical with or without x64,
and the primitive's impl rule in the table is still this family's own, it runs
that rule inlined (the NumPy function it applies to such floats, `FLOAT_IMPLS`)
and wraps the result itself, skipping the bind. Everything else (scalars, mixed
dtypes, broadcasting, bool special cases) takes the general path through
`promote.promote_args`. The operators in methods.py are built by the same
factories.

One eager path: the fast path never decides *what* runs, the impl table does.
When a plugin has replaced the impl rule (a RuleSet with overrides=True) the
table holds another rule and the function binds, which runs it; inside a
`plugax.extend.override` block `is_eager()` is False and the function binds,
which runs the thread's rule.
"""
from __future__ import annotations

from typing import Any, Callable

import ml_dtypes
import numpy as np

import plugax.lax as lax
from plugax.extend import (Array, Primitive, Tracer, array_value, bool_, broadcast_arrays,
                           broadcast_pair, eager_op, eager_value, eval_trace, float16, float32, float64,
                           float_dtypes, get_aval, non_eager_blocks, promote_args,
                           promote_dtypes, rule_kinds, scalar_like, supported_dtypes,
                           trace_state, typed_array)

from . import arithmetic as A, logic as L, selection as S, transcendental as T
from .common import zeros_like
from .logic import RoundingMethod

__all__ = ["NUMPY", "binary", "unary", "is_operand", "power"]

ALL = frozenset(supported_dtypes)
NUMERIC = ALL - {bool_}
INT_OR_BOOL = frozenset(d for d in ALL if d.kind in "iub")
SIGNED_OR_FLOAT = frozenset(d for d in ALL if d.kind == "i") | float_dtypes
BOOL = frozenset({bool_})
_SCALARS = (bool, int, float, complex)
_PY_NUMBERS = (int, float)
# floats whose NumPy results need no canonicalisation, whatever enable_x64 says
EAGER_FLOATS = float_dtypes - {float64}
# primitive -> (this family's impl rule, the NumPy function that rule applies to
# floats of one dtype): the fast path inlines the rule while the table holds it
_OWN_IMPLS = {rs.primitive: rs.impl for rs in (*A.RULES, *T.RULES)}
_INLINED = {p: (_OWN_IMPLS[p], fn) for p, fn in {**A.FLOAT_IMPLS, **T.FLOAT_IMPLS}.items()}
# the impl table's lookup; the registry refills the table in place
_current_impl = rule_kinds["impl"].table.get
# primitive -> [the NumPy function the eager fast path inlines, or None; the signature
# ids (`aval._sig`) of operand types for which an eager bind gave a result of the same
# aval]: one cell per primitive, read on every eager call (cheaper than looking the
# table up each time) and refreshed by `refresh_eager_paths` whenever the registry
# publishes new tables. The signature set is the eager/traced agreement check, made
# once per operand type: the fast path runs only where the primitive's own bind (its
# abstract_eval, the type tracing gives) already returned that very aval.
_EAGER_CELLS: dict[Primitive, list] = {}
_ndarray = np.ndarray


def _eager_cell(prim: Primitive) -> list:
    return _EAGER_CELLS.setdefault(prim, [None, set()])


def refresh_eager_paths() -> None:
    """Inline a primitive's NumPy function only while the impl table still holds this
    family's rule for it: a plugin's override (RuleSet(overrides=True)) then reaches
    plugax.numpy and the operators too. Called from the family's
    plugax_rules_published hook, once every rebuild's tables are live. (A scoped
    `override` block runs on its own eager interpreter, where no fast path applies.)"""
    for prim, cell in _EAGER_CELLS.items():
        own, impl = _INLINED.get(prim, (None, None))
        cell[0] = impl if impl is not None and _current_impl(prim) is own else None
        cell[1].clear()   # an abstract_eval rule may have changed too: check again


def is_operand(x: Any) -> bool:
    """Whether `x` is something the math functions accept (operators defer otherwise)."""
    return type(x) in _SCALARS or isinstance(x, (Array, Tracer, np.ndarray, np.generic))


def _dtype(x: Any) -> np.dtype:
    return get_aval(x).dtype


# --- the two factories --------------------------------------------------------------
def _scalar_as(s: Any, x: Any, ok: frozenset) -> Any:
    """A Python int/float `s` as an Array of `x`'s dtype when promotion would give that
    dtype anyway (the scalar is weak), else None. Avoids the general path for `x * 2.0`."""
    d = x.dtype
    if d in ok and d in (float_dtypes if type(s) is float else NUMERIC):
        try:
            return Array(np.asarray(s, d), x.weak_type)
        except OverflowError:   # e.g. 300 into uint8: let the general path explain
            return None
    return None


def binary(name: str, prim: Primitive, ok: frozenset, general: Callable,
           defer: bool = False) -> Callable:
    """NumPy binary function `name`: `prim.bind(x1, x2)` when both are Arrays (or tracers)
    of one type whose dtype is in `ok`, or one is a Python scalar that adopts the other's
    dtype; else `general(x1, x2)`. `defer=True` makes the operator variant:
    NotImplemented for operands it does not know."""
    eager_ok = EAGER_FLOATS & ok if prim in _INLINED else frozenset()
    state, cell, blocks = trace_state, _eager_cell(prim), non_eager_blocks
    sigs = cell[1]

    def fn(x1: Any, x2: Any, /) -> Any:
        t1, t2 = type(x1), type(x2)
        # The hottest eager case first, with nothing in between: two Arrays of one
        # interned aval (so one shape, dtype and weak type) that an eager bind already
        # typed as its own result (`sigs`), this family's impl rule in the table
        # (`cell[0]`) and no transformation running in any thread (`blocks[0]`, else
        # this thread's trace). The result is born with the operands' aval.
        if t1 is Array and t2 is Array:
            a = x1.aval
            if a is x2.aval and a._sig in sigs and (f := cell[0]) is not None \
                    and (not blocks[0] or state.trace is eval_trace):
                try:
                    v1, v2 = eager_value(x1), eager_value(x2)
                except AttributeError:   # a device-backed operand: the bind fetches it
                    return prim.bind(x1, x2)
                out = f(v1, v2)
                if type(out) is _ndarray:   # these ufuncs keep a float dtype got twice
                    return typed_array(out, a)
                return Array(out, a.weak_type)
        if (t1 is Array or isinstance(x1, Tracer)) and (t2 is Array or isinstance(x2, Tracer)):
            # Arrays and tracers carry an aval: dtype, weak_type and shape read from it
            # (one attribute load each; Array's own shape & co. are properties)
            a1, a2 = x1.aval, x2.aval
            d = a1.dtype
            if (d is a2.dtype or d == a2.dtype) and d in ok and a1.weak_type == a2.weak_type:
                s1, s2 = a1.shape, a2.shape
                same_shape = s1 == s2
                # `state.trace is eval_trace` is is_eager(), inlined
                if t1 is Array and t2 is Array and d in eager_ok and state.trace is eval_trace \
                        and (f := cell[0]) is not None and not same_shape \
                        and broadcast_pair(s1, s2) is not None:
                    # NumPy broadcasts exactly as broadcast_in_dim + prim would
                    return Array(f(array_value(x1), array_value(x2)), a1.weak_type)
                if same_shape:
                    return _bind_checked(prim, x1, x2, eager_ok, sigs)
                out = broadcast_pair(s1, s2)   # one dtype: no promotion
                if out is not None:
                    return prim.bind(_broadcast_to(x1, out), _broadcast_to(x2, out))
        elif t2 in _PY_NUMBERS and (t1 is Array or isinstance(x1, Tracer)):
            y = _scalar_as(x2, x1, ok)
            if y is not None:
                return prim.bind(x1, y)
        elif t1 in _PY_NUMBERS and (t2 is Array or isinstance(x2, Tracer)):
            y = _scalar_as(x1, x2, ok)
            if y is not None:
                return prim.bind(y, x2)
        if defer and not is_operand(x2):
            return NotImplemented
        return general(x1, x2)
    fn.__name__ = fn.__qualname__ = name
    return eager_op(fn, cell, 2) if eager_ok else fn


def _broadcast_to(x: Any, shape: tuple) -> Any:
    """`x` broadcast NumPy-style to `shape`; rank-0 operands stay (lax ops take them)."""
    own = x.shape
    if own == shape or not own:
        return x
    n = len(shape)
    return lax.broadcast_in_dim(x, shape, tuple(range(n - len(own), n)))


def _bind_checked(prim: Primitive, x1: Any, x2: Any, eager_ok: frozenset, sigs: set) -> Any:
    """`prim.bind(x1, x2)` for operands of one type; when that was an eager bind of
    Arrays of a fast-path dtype and its result has their very aval, the signature
    joins `sigs`, so the next such call takes the fast path (the agreement check,
    once per signature)."""
    out = prim.bind(x1, x2)
    if type(out) is Array and out.aval is x1.aval and x1.aval is x2.aval \
            and x1.dtype in eager_ok and (not non_eager_blocks[0]
                                          or trace_state.trace is eval_trace):
        sigs.add(out.aval._sig)
    return out


def unary(name: str, prim: Primitive, ok: frozenset, general: Callable) -> Callable:
    """NumPy unary function `name`: `prim.bind(x)` when x is an Array or tracer with a
    dtype in `ok`, else `general(x)`. The eager fast path is the binary one's."""
    eager_ok = EAGER_FLOATS & ok if prim in _INLINED else frozenset()
    state, cell, blocks = trace_state, _eager_cell(prim), non_eager_blocks
    sigs = cell[1]

    def fn(x: Any, /) -> Any:
        if type(x) is Array:
            a = x.aval
            if a._sig in sigs and (f := cell[0]) is not None \
                    and (not blocks[0] or state.trace is eval_trace):
                try:
                    v = eager_value(x)
                except AttributeError:   # device-backed: the bind fetches it
                    return prim.bind(x)
                out = f(v)
                if type(out) is _ndarray:
                    return typed_array(out, a)
                return Array(out, a.weak_type)
            if a.dtype in ok:
                out = prim.bind(x)
                if type(out) is Array and out.aval is a and a.dtype in eager_ok \
                        and (not blocks[0] or state.trace is eval_trace):
                    sigs.add(a._sig)   # the agreement check, once per signature
                return out
        elif isinstance(x, Tracer) and x.dtype in ok:
            return prim.bind(x)
        return general(x)
    fn.__name__ = fn.__qualname__ = name
    return eager_op(fn, cell, 1) if eager_ok else fn


def _promoted(name: str, prim: Primitive, category: str | None = None,
              on_bool: Primitive | None = None) -> Callable:
    """General path: promote and broadcast, then bind (`on_bool` instead for bools)."""
    def general(*args: Any) -> Any:
        args = promote_args(name, *args, category=category)
        if on_bool is not None and _dtype(args[0]) == bool_:
            return on_bool.bind(*args)
        return prim.bind(*args)
    return general


def _unchanged_unless(name: str, prim: Primitive, applies: frozenset) -> Callable:
    """General path of functions that are the identity outside `applies` (floor of an
    int, abs of an unsigned)."""
    def general(x: Any) -> Any:
        x, = promote_dtypes(name, x)
        # complex is not "unchanged": its abs is a real magnitude, and floor/ceil are
        # undefined; the primitive refuses it, naming itself and the dtype, where
        # returning x would be a silently wrong answer
        return prim.bind(x) if _dtype(x) in applies or _dtype(x).kind == "c" else x
    return general


# --- binary functions -------------------------------------------------------------
# name: (primitive, dtypes it takes as is, promotion category, primitive for bools)
_BINARY_SPECS: dict[str, tuple] = {
    "add": (A.add_p, NUMERIC, None, L.or_p),
    "subtract": (A.sub_p, NUMERIC, None, None),
    "multiply": (A.mul_p, NUMERIC, None, L.and_p),
    "true_divide": (A.div_p, float_dtypes, "inexact", None),
    "maximum": (A.max_p, ALL, None, None),
    "minimum": (A.min_p, ALL, None, None),
    "arctan2": (T.atan2_p, float_dtypes, "inexact", None),
    "equal": (L.eq_p, ALL, None, None), "not_equal": (L.ne_p, ALL, None, None),
    "less": (L.lt_p, ALL, None, None), "less_equal": (L.le_p, ALL, None, None),
    "greater": (L.gt_p, ALL, None, None), "greater_equal": (L.ge_p, ALL, None, None),
    "bitwise_and": (L.and_p, INT_OR_BOOL, None, None),
    "bitwise_or": (L.or_p, INT_OR_BOOL, None, None),
    "bitwise_xor": (L.xor_p, INT_OR_BOOL, None, None),
}


def make_binary(name: str, defer: bool = False) -> Callable:
    prim, ok, category, on_bool = _BINARY_SPECS[name]
    return binary(name, prim, ok, _promoted(name, prim, category, on_bool), defer)


def _sign_differs(r: Any, y: Any) -> Any:
    """r != 0 and sign(r) != sign(y): where truncated division must step down."""
    return L.and_p.bind(L.ne_p.bind(r, scalar_like(r, 0)),
                        L.ne_p.bind(L.lt_p.bind(r, scalar_like(r, 0)),
                                    L.lt_p.bind(y, scalar_like(y, 0))))


def floor_divide(x1: Any, x2: Any, /) -> Any:
    """Quotient rounded toward -inf, from lax's truncating div and C remainder."""
    x, y = promote_args("floor_divide", x1, x2, category="numeric", keep_scalars=False)
    kind = _dtype(x).kind
    if kind == "u":
        return A.div_p.bind(x, y)
    one = scalar_like(x, 1)
    if kind == "i":
        # JAX's rule: step down where the signs of x and y differ and the division is
        # inexact; with y == 0 (q == -1, rem == x) that is every x != 0
        q = A.div_p.bind(x, y)
        step = L.and_p.bind(L.ne_p.bind(A.sign_p.bind(x), A.sign_p.bind(y)),
                            L.ne_p.bind(A.rem_p.bind(x, y), scalar_like(x, 0)))
        return S.select_n_p.bind(step, q, A.sub_p.bind(q, one))
    # floats, as NumPy does it: exact remainder first, then a rounded quotient
    mod = A.rem_p.bind(x, y)
    numer = S.select_n_p.bind(L.eq_p.bind(y, scalar_like(y, 0)), A.sub_p.bind(x, mod), x)
    q = A.div_p.bind(numer, y)
    q = S.select_n_p.bind(_sign_differs(mod, y), q, A.sub_p.bind(q, one))
    fq = L.floor_p.bind(q)
    above_half = L.gt_p.bind(A.sub_p.bind(q, fq), scalar_like(q, 0.5))
    return S.select_n_p.bind(above_half, fq, A.add_p.bind(fq, one))


def remainder(x1: Any, x2: Any, /) -> Any:
    """Remainder with the sign of the divisor (Python's %), from lax's C remainder."""
    x, y = promote_args("remainder", x1, x2, category="numeric", keep_scalars=False)
    if _dtype(y).kind in "iu":   # JAX divides by 1 where y == 0, so x % 0 == 0
        # ones of y's type, weak type included (y - y, not zeros_like: that is strong)
        ones = A.add_p.bind(A.sub_p.bind(y, y), scalar_like(y, 1))
        y = S.select_n_p.bind(L.eq_p.bind(y, scalar_like(y, 0)), y, ones)
    r = A.rem_p.bind(x, y)
    if _dtype(r).kind == "u":
        return r
    return S.select_n_p.bind(_sign_differs(r, y), r, A.add_p.bind(r, y))


def _int_power(x: Any, y: Any) -> Any:
    """x ** y for integer arrays by binary exponentiation over all of y's bits.

    A negative y gives 1 // x**|y| truncated toward zero: ±1 for |x| == 1, else 0.
    """
    dtype = _dtype(x)
    e = A.abs_p.bind(y) if dtype.kind == "i" else y
    one, two = scalar_like(x, 1), scalar_like(x, 2)
    acc, base = A.add_p.bind(zeros_like(x), one), x
    for _ in range(np.iinfo(dtype).bits):
        odd = L.ne_p.bind(A.rem_p.bind(e, two), scalar_like(x, 0))
        acc = S.select_n_p.bind(odd, acc, A.mul_p.bind(acc, base))
        base, e = A.mul_p.bind(base, base), A.div_p.bind(e, two)
    if dtype.kind == "u":
        return acc
    return S.select_n_p.bind(L.lt_p.bind(y, scalar_like(y, 0)), acc, A.div_p.bind(one, acc))


def power(x1: Any, x2: Any, /) -> Any:
    """x1 ** x2. A static int exponent uses integer_pow (as JAX does); integer arrays
    use binary exponentiation; floats use pow."""
    if type(x2) is int or isinstance(x2, np.integer):
        if (type(x1) is Array or isinstance(x1, Tracer)) and x1.dtype in NUMERIC:
            return A.integer_pow_p.bind(x1, y=int(x2))
        x, = promote_dtypes("power", x1, category="numeric")
        return A.integer_pow_p.bind(x, y=int(x2))
    x, y = promote_args("power", x1, x2, category="numeric")
    if _dtype(x) in float_dtypes or _dtype(x).kind == "c":
        return T.pow_p.bind(x, y)
    return _int_power(*broadcast_arrays("power", x, y, keep_scalars=False))


def _to_bool(name: str, x: Any) -> Any:
    """x != 0, weakly typed when x is (JAX: logical_not(2.5) is a weak bool)."""
    x, = promote_dtypes(name, x)
    if _dtype(x) == bool_:
        return x
    return L.ne_p.bind(x, Array(np.zeros((), _dtype(x)), get_aval(x).weak_type))


def _logical(name: str, prim: Primitive) -> Callable:
    def general(*args: Any) -> Any:
        return prim.bind(*broadcast_arrays(name, *(_to_bool(name, a) for a in args)))
    return general


# --- unary functions ----------------------------------------------------------------
_INEXACT_UNARY = {"sqrt": T.sqrt_p, "cbrt": T.cbrt_p, "exp": T.exp_p, "exp2": T.exp2_p,
                  "log": T.log_p, "log1p": T.log1p_p, "expm1": T.expm1_p, "sin": T.sin_p,
                  "cos": T.cos_p, "tan": T.tan_p, "arcsin": T.asin_p, "arccos": T.acos_p,
                  "arctan": T.atan_p, "sinh": T.sinh_p, "cosh": T.cosh_p, "tanh": T.tanh_p,
                  "arcsinh": T.asinh_p, "arccosh": T.acosh_p, "arctanh": T.atanh_p}


def _log_base(name: str, base: float) -> Callable:
    def fn(x: Any, /) -> Any:
        x, = promote_dtypes(name, x, category="inexact")
        # a strong constant, as JAX's log(2.0): log2 of a Python scalar is strongly typed
        log_base = Array(np.asarray(np.log(base), _dtype(x)))
        return A.div_p.bind(T.log_p.bind(x), log_base)
    fn.__name__ = fn.__qualname__ = name
    return fn


def round(a: Any, decimals: int = 0) -> Any:
    """Round half to even at `decimals` digits; integers are returned as they are."""
    if not isinstance(decimals, (int, np.integer)) or isinstance(decimals, bool):
        # 10.0 ** 1.5 would scale by a non-power of ten: a silently wrong rounding
        raise TypeError(f"round: decimals must be an int, got {decimals!r}")
    x, = promote_dtypes("round", a)
    if _dtype(x).kind == "c":   # as JAX: the real and imaginary parts, each rounded
        from .complex_ops import complex_p, imag_p, real_p
        return complex_p.bind(round(real_p.bind(x), decimals), round(imag_p.bind(x), decimals))
    if _dtype(x) not in float_dtypes:
        if decimals < 0:
            raise NotImplementedError("round: negative decimals for integer input")
        return x
    if decimals == 0:
        return L.round_p.bind(x, rounding_method=RoundingMethod.TO_NEAREST_EVEN)
    dtype = _dtype(x)
    if decimals > np.log10(float(ml_dtypes.finfo(dtype).max)):
        return x                   # beyond the dtype's precision: nothing to round
    if dtype == float16:    # as JAX: x * 10**d would overflow float16
        x = S.convert(x, float32, get_aval(x).weak_type)
    factor = scalar_like(x, 10.0 ** decimals)
    scaled = L.round_p.bind(A.mul_p.bind(x, factor),
                            rounding_method=RoundingMethod.TO_NEAREST_EVEN)
    out = A.div_p.bind(scaled, factor)
    return S.convert(out, dtype, get_aval(out).weak_type) if dtype == float16 else out


def _isfinite(x: Any) -> Any:
    """General path of isfinite: True everywhere for integers and bools."""
    x, = promote_dtypes("isfinite", x)
    if _dtype(x) in float_dtypes:
        return L.is_finite_p.bind(x)
    if _dtype(x).kind == "c":   # both parts finite (lax.is_finite takes floats only)
        from .complex_ops import imag_p, real_p
        return L.and_p.bind(L.is_finite_p.bind(real_p.bind(x)),
                            L.is_finite_p.bind(imag_p.bind(x)))
    shape = get_aval(x).shape
    true = Array(np.ones((), np.bool_))
    return lax.broadcast_in_dim(true, shape, ()) if shape else true


def where(condition: Any, x: Any = None, y: Any = None, /) -> Any:
    """x where condition else y, all three broadcast together."""
    if x is None or y is None:
        raise TypeError("where: pass both x and y (the one-argument form, which is "
                        "nonzero(condition), is not supported)")
    x, y = promote_dtypes("where", x, y)
    cond, x, y = broadcast_arrays("where", _to_bool("where", condition), x, y,
                                  keep_scalars=False)
    return S.select_n_p.bind(cond, y, x)


def clip(arr: Any, min: Any = None, max: Any = None) -> Any:
    """arr limited to [min, max] (either may be None), via maximum and minimum.
    Complex values are refused, as in JAX: they have no order to clip in."""
    for v in (arr, min, max):
        if v is not None and is_operand(v) and _dtype(v).kind == "c":
            raise ValueError("clip received a complex value either through the input or "
                             "the min/max keywords; complex numbers are not ordered")
    if min is not None:
        arr = NUMPY["maximum"](min, arr)
    if max is not None:
        arr = NUMPY["minimum"](max, arr)
    return promote_dtypes("clip", arr)[0]


def astype(x: Any, dtype: Any, /) -> Any:
    """x converted to `dtype` (canonicalised, strongly typed). Complex to an integer or
    real float keeps the real part, with JAX's DeprecationWarning (JAX will refuse it)."""
    if _dtype(x).kind == "c" and np.dtype(dtype).kind in "iuf":
        import warnings
        warnings.warn("Casting from complex to real dtypes will soon raise a ValueError. "
                      "Please first use jnp.real or jnp.imag to take the real/imaginary "
                      "component of your input.", DeprecationWarning, stacklevel=2)
    return S.convert(x, dtype, weak_type=False)


def _unaries() -> dict[str, Callable]:
    general = lambda name, prim, category=None: _promoted(name, prim, category)
    fns = {name: unary(name, p, float_dtypes, general(name, p, "inexact"))
           for name, p in _INEXACT_UNARY.items()}
    fns.update(
        negative=unary("negative", A.neg_p, NUMERIC, general("negative", A.neg_p)),
        sign=unary("sign", A.sign_p, NUMERIC, general("sign", A.sign_p)),
        abs=unary("abs", A.abs_p, SIGNED_OR_FLOAT,
                  _unchanged_unless("abs", A.abs_p, SIGNED_OR_FLOAT)),
        square=unary("square", A.square_p, NUMERIC, general("square", A.square_p, "numeric")),
        floor=unary("floor", L.floor_p, float_dtypes,
                    _unchanged_unless("floor", L.floor_p, float_dtypes)),
        ceil=unary("ceil", L.ceil_p, float_dtypes,
                   _unchanged_unless("ceil", L.ceil_p, float_dtypes)),
        isfinite=unary("isfinite", L.is_finite_p, float_dtypes, _isfinite),
        logical_not=unary("logical_not", L.not_p, BOOL, _logical("logical_not", L.not_p)),
        bitwise_not=unary("bitwise_not", L.not_p, INT_OR_BOOL,
                          general("bitwise_not", L.not_p)),
        log2=_log_base("log2", 2.0), log10=_log_base("log10", 10.0))
    fns["absolute"], fns["invert"] = fns["abs"], fns["bitwise_not"]
    return fns


NUMPY: dict[str, Callable] = {name: make_binary(name) for name in _BINARY_SPECS}
NUMPY.update(_unaries())
NUMPY.update(
    divide=NUMPY["true_divide"], floor_divide=floor_divide, remainder=remainder,
    mod=remainder, power=power, round=round, where=where, clip=clip, astype=astype,
    logical_and=binary("logical_and", L.and_p, BOOL, _logical("logical_and", L.and_p)),
    logical_or=binary("logical_or", L.or_p, BOOL, _logical("logical_or", L.or_p)),
    logical_xor=binary("logical_xor", L.xor_p, BOOL, _logical("logical_xor", L.xor_p)))
