"""The rest of JAX's elementwise `jax.numpy` functions: the array-API aliases, bit
shifts and counts, gcd/lcm, the float-format functions (frexp, ldexp, modf,
nextafter, spacing), heaviside, sinc, i0, select and piecewise.

Each is a formula in plugax.numpy / plugax.lax functions (the shifts, counts and
nextafter are this family's lax primitives), following JAX's definition in
jax/_src/numpy/ufuncs.py: the same promotion (`float_power` and `fabs` go to the
inexact type, shifts to the common integer type, `bitwise_count` gives uint8) and
the same edge values, so every transformation comes with the formulas.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

import plugax
import plugax.lax as lax
import plugax.numpy as pnp
from plugax.extend import get_aval, promote_args

__all__ = ["acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "around", "pow",
           "positive", "fabs", "float_power", "divmod", "bitwise_invert", "bitwise_left_shift",
           "bitwise_right_shift", "left_shift", "right_shift", "bitwise_count", "gcd", "lcm",
           "frexp", "ldexp", "modf", "nextafter", "spacing", "heaviside", "sinc", "i0",
           "select", "piecewise", "NUMPY_MORE"]


# --- array-API and NumPy aliases (JAX has them as separate names) ---------------------------
def acos(x: Any, /) -> Any:
    return pnp.arccos(x)


def acosh(x: Any, /) -> Any:
    return pnp.arccosh(x)


def asin(x: Any, /) -> Any:
    return pnp.arcsin(x)


def asinh(x: Any, /) -> Any:
    return pnp.arcsinh(x)


def atan(x: Any, /) -> Any:
    return pnp.arctan(x)


def atan2(x1: Any, x2: Any, /) -> Any:
    return pnp.arctan2(x1, x2)


def atanh(x: Any, /) -> Any:
    return pnp.arctanh(x)


def around(a: Any, decimals: int = 0, out: None = None) -> Any:
    return pnp.round(a, decimals)


def pow(x1: Any, x2: Any, /) -> Any:   # noqa: A001  (JAX's name)
    return pnp.power(x1, x2)


def bitwise_invert(x: Any, /) -> Any:
    return pnp.invert(x)


def positive(x: Any, /) -> Any:
    """+x: x with its promoted dtype (JAX accepts bools here, where NumPy refuses them)."""
    (x,) = promote_args("positive", x)
    return x


def _full(x: Any, value: float) -> Any:
    """An array of x's shape and dtype filled with value. (Written with `where`, this
    family's own function: the elementwise family may not call the shape family.)"""
    return pnp.where(True, value, x)


def _isinf(x: Any) -> Any:
    return pnp.abs(x) == np.inf


def _inexact(name: str, *xs: Any) -> list:
    return promote_args(name, *xs, category="inexact")


def fabs(x: Any, /) -> Any:
    """|x| as a float (integers are converted first, as JAX's)."""
    (x,) = _inexact("fabs", x)
    if x.dtype.kind == "c":   # NumPy's ufunc and JAX refuse complex (abs is the magnitude)
        raise TypeError("ufunc 'fabs' does not support complex dtypes")
    return pnp.abs(x)


def float_power(x: Any, y: Any, /) -> Any:
    """x**y computed in the inexact type (float32 unless x64, as in JAX)."""
    return pnp.power(*_inexact("float_power", x, y))


def divmod(x1: Any, x2: Any, /) -> tuple:   # noqa: A001  (JAX's name)
    """(floor_divide, remainder) -- Python's convention, the remainder takes x2's sign."""
    return pnp.floor_divide(x1, x2), pnp.remainder(x1, x2)


# --- shifts and counts -------------------------------------------------------------------------
def _integers(name: str, *xs: Any) -> list:
    out = promote_args(name, *xs)
    dtype = get_aval(out[0]).dtype
    if dtype.kind not in "iu":
        raise TypeError(f"{name}: operands must be integers; got {dtype} (NumPy's and JAX's "
                        f"{name} are defined on integer types only)")
    return out


def left_shift(x1: Any, x2: Any, /) -> Any:
    """x1 << x2; shifting by the bit width or more gives 0 (XLA's rule, as JAX)."""
    return lax.shift_left(*_integers("left_shift", x1, x2))


def right_shift(x1: Any, x2: Any, /) -> Any:
    """x1 >> x2: arithmetic for signed integers (the sign is kept), logical for unsigned."""
    x1, x2 = _integers("right_shift", x1, x2)
    if get_aval(x1).dtype.kind == "u":
        return lax.shift_right_logical(x1, x2)
    return lax.shift_right_arithmetic(x1, x2)


bitwise_left_shift, bitwise_right_shift = left_shift, right_shift


def bitwise_count(x: Any, /) -> Any:
    """The number of 1 bits of |x|, as uint8 (NumPy's and JAX's definition)."""
    (x,) = promote_args("bitwise_count", x)
    if get_aval(x).dtype == np.bool_:
        x = pnp.astype(x, np.uint8)
    if get_aval(x).dtype.kind not in "iu":
        raise TypeError(f"bitwise_count: the operand must be an integer; got "
                        f"{get_aval(x).dtype}")
    return pnp.astype(lax.population_count(pnp.abs(x)), np.uint8)


def gcd(x1: Any, x2: Any, /) -> Any:
    """Greatest common divisor of |x1| and |x2| by Euclid's algorithm.

    A fixed number of steps instead of a while loop (no control-flow family needed,
    and vmap needs no batching of a loop): Euclid needs at most log_phi(2**bits) + 2
    steps, which is reached by consecutive Fibonacci numbers."""
    x1, x2 = _integers("gcd", x1, x2)          # promoted and broadcast
    x1, x2 = pnp.abs(x1), pnp.abs(x2)
    a, b = pnp.maximum(x1, x2), pnp.minimum(x1, x2)
    bits = 8 * get_aval(a).dtype.itemsize
    for _ in range(int(bits * 1.45) + 2):
        zero = b == 0
        r = pnp.remainder(a, pnp.where(zero, 1, b))
        a, b = pnp.where(zero, a, b), pnp.where(zero, b, r)
    return a


def lcm(x1: Any, x2: Any, /) -> Any:
    """Least common multiple of |x1| and |x2| (0 where either is 0)."""
    x1, x2 = _integers("lcm", x1, x2)
    d = gcd(x1, x2)
    zero = d == 0
    return pnp.where(zero, 0, pnp.abs(x1) * pnp.floor_divide(pnp.abs(x2), pnp.where(zero, 1, d)))


# --- the float format --------------------------------------------------------------------------
def frexp(x: Any, /) -> tuple:
    """(mantissa, exponent) with x = mantissa * 2**exponent, 0.5 <= |mantissa| < 1;
    (x, 0) for 0, inf and nan. The exponent is int32 as in JAX (int64 under x64)."""
    (x,) = _inexact("frexp", x)
    finite = pnp.isfinite(x) & (x != 0)
    safe = pnp.where(finite, pnp.abs(x), 1)
    e = pnp.floor(pnp.log2(safe)) + 1
    m = _scale(pnp.where(finite, x, 1), -e)
    # log2 may round across a power of two: one step of correction either way
    big, small = pnp.abs(m) >= 1, pnp.abs(m) < 0.5
    m = pnp.where(big, m / 2, pnp.where(small, m * 2, m))
    e = pnp.where(big, e + 1, pnp.where(small, e - 1, e))
    int_type = np.int64 if get_aval(e).dtype == np.float64 else np.int32
    return pnp.where(finite, m, x), pnp.where(finite, e, 0).astype(int_type)


def _scale(x: Any, e: Any) -> Any:
    """x * 2**e for a float-valued integer e, in two halves so that 2**(e/2) stays in
    range where 2**e alone would overflow or underflow (subnormal results)."""
    half = pnp.floor(e / 2)
    return x * pnp.exp2(half) * pnp.exp2(e - half)


def ldexp(x1: Any, x2: Any, /) -> Any:
    """x1 * 2**x2, exact (x2 must be an integer array)."""
    (x2,) = promote_args("ldexp", x2)
    if get_aval(x2).dtype.kind not in "iub":
        raise ValueError(f"ldexp: the exponent must be an integer; got {get_aval(x2).dtype}")
    (x1,) = _inexact("ldexp", x1)
    e = pnp.clip(x2, -10000, 10000).astype(get_aval(x1).dtype)
    return _scale(x1, e)


def modf(x: Any, /, out: None = None) -> tuple:
    """(fractional part, integral part), both with x's sign (modf(inf) = (0, inf))."""
    (x,) = _inexact("modf", x)
    whole = pnp.where(x >= 0, pnp.floor(x), pnp.ceil(x))
    return pnp.where(_isinf(x), pnp.copysign(0.0, x), x - whole), whole


def nextafter(x1: Any, x2: Any, /) -> Any:
    """The next representable float after x1 towards x2."""
    return lax.nextafter(*_inexact("nextafter", x1, x2))


def spacing(x: Any, /) -> Any:
    """The distance from x to the next float away from zero (signed like x)."""
    (x,) = _inexact("spacing", x)
    inf = _full(x, np.inf)
    if get_aval(x).dtype == np.float16:
        return lax.nextafter(x, inf) - x
    out = lax.nextafter(x, pnp.copysign(inf, x)) - x
    # a NumPy constant: the result is strongly typed even for a weak x, as JAX's
    tiny = np.array(np.finfo(get_aval(x).dtype).smallest_subnormal, get_aval(x).dtype)
    return pnp.where(out == 0, pnp.copysign(tiny, x), out)


def heaviside(x1: Any, x2: Any, /) -> Any:
    """0 for x1 < 0, 1 for x1 > 0, x2 where x1 == 0 (nan stays nan)."""
    x1, x2 = _inexact("heaviside", x1, x2)
    # JAX's weak typing, observed: the result is weak only where the promoted x1 is a
    # weak scalar (heaviside(1.0, 0.5)); an array x1 gives a strong result even when its
    # promotion with a Python x2 is weak (heaviside(int32_array, 0.5) is strong float32)
    aval = get_aval(x1)
    if aval.weak_type and aval.ndim == 0:
        zero, one = 0, 1
    else:
        zero, one = np.zeros((), aval.dtype), np.ones((), aval.dtype)
    return pnp.where(x1 < 0, zero, pnp.where(x1 > 0, one, pnp.where(x1 != x1, x1, x2)))


def _maclaurin_value(k: int) -> float:
    """The k-th derivative of sin(y)/y at y = 0."""
    return 0.0 if k % 2 else (-1) ** (k // 2) / (k + 1)


@functools.partial(plugax.custom_jvp, nondiff_argnums=(0,))
def _sinc_maclaurin(k: int, y: Any) -> Any:
    """sin(y)/y's k-th derivative at 0, as a function of y whose derivative is the
    (k+1)-th: so sinc has JAX's derivatives of every order at 0, not just the first."""
    return y * 0 + _maclaurin_value(k)


@_sinc_maclaurin.defjvp
def _sinc_maclaurin_jvp(k: int, primals: tuple, tangents: tuple) -> tuple:
    (y,), (t,) = primals, tangents
    return _sinc_maclaurin(k, y), _sinc_maclaurin(k + 1, y) * t


def sinc(x: Any, /) -> Any:
    """sin(pi x) / (pi x), 1 at 0, with JAX's derivatives at 0 (a Maclaurin series
    with a custom jvp there; the division is taken at a safe point)."""
    (x,) = _inexact("sinc", x)
    zero = x == 0
    pi_x = np.pi * x
    safe = pnp.where(zero, 1, pi_x)
    return pnp.where(zero, _sinc_maclaurin(0, pi_x), pnp.sin(safe) / safe)


_I0_SERIES_TERMS = 48
_I0_ASYMPTOTIC_FROM = 15.0


def i0(x: Any, /) -> Any:
    """The modified Bessel function of the first kind, order 0.

    Its power series sum_k (x^2/4)^k / (k!)^2 for |x| < 15 (48 terms: the remainder is
    below float64 rounding there) and the asymptotic series e^|x| / sqrt(2 pi |x|) *
    sum_k prod_j (2j-1)^2 / (k! (8|x|)^k) above; both are differentiated by autodiff."""
    (x,) = _inexact("i0", x)
    ax = pnp.abs(x)
    small = ax < _I0_ASYMPTOTIC_FROM
    xs = pnp.where(small, ax, 0)
    q = xs * xs / 4
    term, total = _full(q, 1), _full(q, 1)
    for k in range(1, _I0_SERIES_TERMS):
        term = term * q / (k * k)
        total = total + term
    xl = pnp.where(small, _I0_ASYMPTOTIC_FROM, ax)
    coef, tail = 1.0, _full(xl, 1)
    for k in range(1, 25):
        coef *= (2 * k - 1) ** 2 / k
        tail = tail + coef / (8 * xl) ** k
    large = pnp.exp(xl) / pnp.sqrt(2 * np.pi * xl) * tail
    return pnp.where(small, total, large)


# --- selection --------------------------------------------------------------------------------
def select(condlist: Sequence[Any], choicelist: Sequence[Any], default: Any = 0) -> Any:
    """choicelist[i] where condlist[i] holds first, default where none does."""
    if len(condlist) != len(choicelist):
        raise ValueError(f"select: condlist has {len(condlist)} entries and choicelist "
                         f"{len(choicelist)}; they must have the same length")
    if not condlist:
        raise ValueError("select: condlist must be non-empty")
    out = default
    for cond, choice in reversed(list(zip(condlist, choicelist))):
        (cond,) = promote_args("select", cond)
        if get_aval(cond).dtype != np.bool_:
            raise TypeError(f"select: condlist entries must be boolean; got "
                            f"{get_aval(cond).dtype}")
        out = pnp.where(cond, choice, out)
    return out


def piecewise(x: Any, condlist: Any, funclist: Sequence[Any], *args: Any, **kw: Any) -> Any:
    """funclist[i](x) where condlist[i] holds (the last true condition wins, as NumPy); an
    extra function in funclist is the value where no condition holds (else 0). Every
    function is evaluated on the whole of x and the results selected, so it traces
    once, with static shapes, as JAX's."""
    (x,) = promote_args("piecewise", x)
    conds = list(condlist) if isinstance(condlist, (list, tuple)) else [condlist]
    n = len(conds)
    if len(funclist) not in (n, n + 1):
        raise ValueError(f"piecewise: with {n} conditions, funclist must have {n} or {n + 1} "
                         f"entries; got {len(funclist)}")

    def value(f: Any) -> Any:
        v = f(x, *args, **kw) if callable(f) else f
        return pnp.where(True, v, x).astype(get_aval(x).dtype)   # broadcast to x, x's dtype
    out = value(funclist[n]) if len(funclist) == n + 1 else _full(x, 0)
    for cond, f in zip(conds, funclist[:n]):
        out = pnp.where(cond, value(f), out)
    return out


NUMPY_MORE: dict[str, Callable] = {name: globals()[name] for name in __all__
                                   if name != "NUMPY_MORE"}
