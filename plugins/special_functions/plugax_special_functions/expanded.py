"""The special functions XLA has no op for: igamma, igammac, igamma_grad_a,
regularized_incomplete_beta (lax.betainc), bessel_i0e; and lax.random_gamma_grad.

JAX writes these in lax code (XLA's client math library, ported); here each
algorithm is written once, over an array namespace `xp`, and used twice: as the
RuleSet's `expand=` decomposition (plugax.numpy, with `while_loop`s for the
series and continued fractions, which stop when every element has converged),
from which the kernel derives the lowering `jit` compiles; and as the eager impl
(the same steps in NumPy float64, rounded) — so eager and jit compute the same
algorithm, and eager calls cost NumPy's time rather than a trace of the
decomposition per call. Given explicitly: the abstract_eval (errors that name
the primitive), vmap (elementwise: no need to batch the loops) and the jvps JAX
defines (igamma's derivative in `a` is the igamma_grad_a primitive, not the
derivative of the loop). Half-precision operands are computed in float32 under
jit (the thresholds need it), as XLA does.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import plugax.lax as lax
import plugax.numpy as pnp
from plugax.extend import (Primitive, RuleSet, all_weak, broadcasting_shape, broadcasting_vmap,
                           defjvp, promote_args, standard_abstract_eval, vectorized_vmap)

from . import numpy_math as nm
from .primitives import bessel_i0e_p, bessel_i1e_p, digamma_p, floats, lgamma_p

__all__ = ["igamma_p", "igammac_p", "igamma_grad_a_p", "regularized_incomplete_beta_p",
           "bessel_i0e_p", "random_gamma_grad", "RULES"]

igamma_p, igammac_p = Primitive("igamma"), Primitive("igammac")
igamma_grad_a_p = Primitive("igamma_grad_a")
regularized_incomplete_beta_p = Primitive("regularized_incomplete_beta")

VALUE, DERIVATIVE, SAMPLE_DERIVATIVE = "value", "derivative", "sample_derivative"


class _Ops:
    """The array namespace an algorithm below runs on: NumPy (the eager impl, in
    float64) or plugax.numpy (the decomposition, compiled under jit), plus the few
    operations the two spell differently."""

    def __init__(self, module: Any, **extra: Callable) -> None:
        self.__dict__.update(extra)    # found before __getattr__ is consulted
        self._module = module

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)


def _python_while(cond: Callable, body: Callable, state: Any) -> Any:
    while cond(state):
        state = body(state)
    return state


def _numpy_ops(dtype: np.dtype) -> _Ops:
    """NumPy, computing in float64 but stopping (and switching branches) at the
    tolerances of `dtype`, the result's: iterating to float64's eps for a float32
    result would cost up to the iteration cap (2000 steps) for nothing."""
    wide = np.dtype(np.float32) if dtype.itemsize < 4 else dtype
    return _Ops(np, while_loop=_python_while, digamma=nm.digamma, lgamma=nm.lgamma,
                finfo_of=lambda x: np.finfo(wide))


PLUGAX = _Ops(pnp, while_loop=lambda *args: lax.while_loop(*args),
              digamma=lambda x: digamma_p.bind(x), lgamma=lambda x: lgamma_p.bind(x),
              finfo_of=lambda x: np.finfo(np.dtype(x.dtype)))


def _computed_in_float32(fn: Callable) -> Callable:
    """The decomposition: `fn` in plugax.numpy on operands broadcast to one shape, half
    precision widened to float32 (XLA's coefficients and thresholds need it)."""
    def expand(ctx, *args):
        dtype = np.dtype(args[0].dtype)
        wide = np.dtype(np.float32) if dtype.itemsize < 4 else dtype
        args = pnp.broadcast_arrays(*(lax.convert_element_type(a, wide) for a in args))
        return lax.convert_element_type(fn(PLUGAX, *args), dtype)
    expand.__name__ = f"expand_{fn.__name__}"
    return expand


def _in_numpy(fn: Callable) -> Callable:
    """The impl: the same algorithm on NumPy in float64, rounded to the operands' dtype
    (as fast as NumPy is; tracing the decomposition each eager call would not be)."""
    def impl(ctx, *args):
        ops = _numpy_ops(np.dtype(args[0].dtype))
        return nm.rounded(lambda *xs: fn(ops, *np.broadcast_arrays(*xs)))(*args)
    impl.__name__ = f"impl_{fn.__name__}"
    return impl


def _eps(xp: Any, x: Any) -> float:
    return float(xp.finfo_of(x).eps)


def _log_max(xp: Any, x: Any) -> float:
    return float(np.log(xp.finfo_of(x).max))


def _lgamma(x: Any) -> Any:
    return lgamma_p.bind(x)


def _igamma_series(xp: Any, ax: Any, x: Any, a: Any, enabled: Any, mode: str) -> Any:
    """P(a, x) = x^a e^-x / Gamma(a + 1) * sum_n prod_k x / (a + k), and its derivative
    in a term by term (DLMF 8.7.1); stops once every enabled term is below eps."""
    eps = _eps(xp, x)

    def body(state):
        on, r, c, ans, dc_da, dans_da = state
        r1 = r + 1.0
        dc_da1 = dc_da * (x / r1) - (c * x) / (r1 * r1)
        dans_da1 = dans_da + dc_da1
        c1 = c * (x / r1)
        ans1 = ans + c1
        test = c1 / ans1 if mode == VALUE else xp.abs(dc_da1 / dans_da1)
        keep = lambda new, old: xp.where(on, new, old)
        return (on & (test > eps), keep(r1, r), keep(c1, c), keep(ans1, ans),
                keep(dc_da1, dc_da), keep(dans_da1, dans_da))

    one, zero = xp.ones_like(a), xp.zeros_like(a)
    _, _, _, ans, _, dans_da = xp.while_loop(lambda s: xp.any(s[0]), body,
                                              (enabled, a, one, one, zero, zero))
    if mode == VALUE:
        return ans * ax / a
    dlogax_da = xp.log(x) - xp.digamma(a + 1.0)
    if mode == DERIVATIVE:
        return ax * (ans * dlogax_da + dans_da) / a
    return -(dans_da + ans * dlogax_da) * x / a


def _igammac_fraction(xp: Any, ax: Any, x: Any, a: Any, enabled: Any, mode: str) -> Any:
    """Q(a, x) = x^a e^-x / Gamma(a) * (Legendre's continued fraction, DLMF 8.9.2),
    evaluated by its convergents p_k / q_k with their derivatives in a; the
    convergents are rescaled by eps when they grow past 1/eps. At most 2000 steps."""
    eps = _eps(xp, x)

    def body(state):
        (on, ans, y, z, c, pkm1, qkm1, pkm2, qkm2, dpkm2, dqkm2, dpkm1, dqkm1, dans) = state
        c1, y1, z1 = c + 1.0, y + 1.0, z + 2.0
        yc = y1 * c1
        pk = pkm1 * z1 - pkm2 * yc
        qk = qkm1 * z1 - qkm2 * yc
        nonzero = qk != 0.0
        r = pk / xp.where(nonzero, qk, 1.0)
        t = xp.where(nonzero, xp.abs((ans - r) / r), 1.0)
        ans1 = xp.where(nonzero, r, ans)
        dpk = dpkm1 * z1 - pkm1 - dpkm2 * yc + pkm2 * c1
        dqk = dqkm1 * z1 - qkm1 - dqkm2 * yc + qkm2 * c1
        dans1 = xp.where(nonzero, (dpk - ans1 * dqk) / xp.where(nonzero, qk, 1.0), dans)
        grad_change = xp.where(nonzero, xp.abs(dans1 - dans), 1.0)
        big = xp.abs(pk) > 1.0 / eps
        scale = lambda v: xp.where(big, v * eps, v)
        new = (ans1, y1, z1, scale(pk), scale(qk), scale(pkm1), scale(qkm1), scale(dpkm1),
               scale(dqkm1), scale(dpk), scale(dqk), dans1)
        old = (ans, y, z, pkm1, qkm1, pkm2, qkm2, dpkm2, dqkm2, dpkm1, dqkm1, dans)
        ans_n, y_n, z_n, *rest = (xp.where(on, n, o) for n, o in zip(new, old))
        going = on & ((t if mode == VALUE else grad_change) > eps)
        return (going, ans_n, y_n, z_n, c1, *rest)

    y = 1.0 - a
    z = x + y + 1.0
    pkm2, qkm2 = xp.ones_like(x), x
    pkm1, qkm1 = x + 1.0, z * x
    ans = pkm1 / qkm1
    zero = xp.zeros_like(x)
    dans = ans * x / qkm1
    state = (enabled, ans, y, z, xp.zeros((), x.dtype), pkm1, qkm1, pkm2, qkm2,
             zero, zero, zero, -x, dans)
    out = xp.while_loop(lambda s: (s[4] < 2000.0) & xp.any(s[0]), body, state)
    ans, dans = out[1], out[13]
    if mode == VALUE:
        return ans * ax
    dlogax_da = xp.log(x) - xp.digamma(a)
    if mode == DERIVATIVE:
        return ax * (ans * dlogax_da + dans)
    return -(dans + ans * dlogax_da) * x


def _prefactor(xp: Any, a: Any, x: Any) -> tuple[Any, Any]:
    """(x^a e^-x / Gamma(a), whether it underflows)."""
    log_ax = a * xp.log(x) - x - xp.lgamma(a)
    return xp.exp(log_ax), log_ax < -_log_max(xp, x)


def igamma_value(xp: Any, a: Any, x: Any) -> Any:
    """P(a, x): the series for x < max(1, a), 1 - Q by the continued fraction beyond."""
    nan = xp.isnan(a) | xp.isnan(x)
    x_inf, x_zero = x == np.inf, x == 0.0
    domain = (x < 0.0) | (a < 0.0) | ((a == 0.0) & x_zero) | nan
    use_q = (x >= 1.0) & (x > a)
    ax, underflow = _prefactor(xp, a, x)
    on = ~(x_zero | domain | underflow | x_inf)
    out = xp.where(use_q, 1.0 - _igammac_fraction(xp, ax, x, a, on & use_q, VALUE),
                    _igamma_series(xp, ax, x, a, on & ~use_q, VALUE))
    out = xp.where(x_zero, 0.0, out)
    out = xp.where(x_inf, 1.0, out)
    return xp.where(domain, np.nan, out)


def igammac_value(xp: Any, a: Any, x: Any) -> Any:
    """Q(a, x) = 1 - P(a, x), computed directly where it is small (x > max(1, a))."""
    nan = xp.isnan(a) | xp.isnan(x)
    a_zero, x_inf = a == 0.0, x == np.inf
    domain = (x < 0.0) | (a < 0.0) | (a_zero & (x == 0.0)) | nan
    use_p = (x < 1.0) | (x < a)
    ax, underflow = _prefactor(xp, a, x)
    on = ~(domain | underflow | x_inf | a_zero)
    out = xp.where(use_p, 1.0 - _igamma_series(xp, ax, x, a, on & use_p, VALUE),
                    _igammac_fraction(xp, ax, x, a, on & ~use_p, VALUE))
    out = xp.where(x_inf | a_zero, 0.0, out)
    return xp.where(domain, np.nan, out)


def _grad_a(mode: str) -> Callable:
    def grad(xp: Any, a: Any, x: Any) -> Any:
        nan = xp.isnan(a) | xp.isnan(x)
        x_zero = x == 0.0
        domain = (x < 0.0) | (a <= 0.0)
        use_q = (x > 1.0) & (x > a)
        ax, underflow = _prefactor(xp, a, x)
        on = ~(x_zero | domain | underflow | nan)
        out = xp.where(use_q, -_igammac_fraction(xp, ax, x, a, on & use_q, mode),
                        _igamma_series(xp, ax, x, a, on & ~use_q, mode))
        out = xp.where(x_zero, 0.0, out)
        return xp.where(domain | nan, np.nan, out)
    grad.__name__ = f"igamma_{mode}_a"
    return grad


igamma_grad_a_value = _grad_a(DERIVATIVE)
_random_gamma_grad_value = _grad_a(SAMPLE_DERIVATIVE)


def random_gamma_grad(a: Any, x: Any, *, dtype: Any = None) -> Any:
    """d sample / d a of a Gamma(a) sample x at fixed uniform draw (implicit
    reparameterisation: -(dP/da) / (dP/dx)). JAX's is a function, not a primitive;
    so is this one: it stages the decomposition's operations, and eagerly runs them
    one by one (slower than a primitive's NumPy impl; jit it in a loop)."""
    a, x = pnp.broadcast_arrays(*promote_args("random_gamma_grad", a, x, category="inexact"))
    return _computed_in_float32(_random_gamma_grad_value)(None, a, x)


# --- the regularized incomplete beta function -------------------------------------------
def _lentz(xp: Any, numerator: Callable, denominator: Callable, iterations: int, small: float,
           like: Any) -> Any:
    """The continued fraction b0 + a1/(b1 + a2/(b2 + ...)) by the modified Lentz
    (Thompson-Barnett) algorithm, until every element's step is within `small` of 1."""
    def body(state):
        i, _, c, d, h = state
        an, bn = numerator(i), denominator(i)
        c = bn + an / c
        c = xp.where(xp.abs(c) < small, small, c)
        d = bn + an * d
        d = 1.0 / xp.where(xp.abs(d) < small, small, d)
        delta = c * d
        return i + 1.0, xp.any(xp.abs(delta - 1.0) >= small), c, d, h * delta

    b0 = denominator(xp.zeros((), like.dtype)) * xp.ones_like(like)
    h = xp.where(xp.abs(b0) < small, small, b0)
    state = (xp.ones((), like.dtype), xp.asarray(True), h, xp.zeros_like(h), h)
    return xp.while_loop(lambda s: (s[0] < float(iterations)) & s[1], body, state)[4]


def betainc_value(xp: Any, a: Any, b: Any, x: Any) -> Any:
    """I_x(a, b) by its continued fraction (DLMF 8.17.22), evaluated at (a, b, x) where
    x < (a + 1) / (a + b + 2) and by the symmetry I_x(a, b) = 1 - I_(1-x)(b, a) beyond,
    where it converges fast."""
    finfo = xp.finfo_of(x)
    a_zero = (a == 0.0) | (b == np.inf)
    b_zero = (b == 0.0) | (a == np.inf)
    x_zero, x_one = x == 0.0, x == 1.0
    nan = xp.isnan(a) | xp.isnan(b) | xp.isnan(x)
    is_zero = (b_zero & ~x_one) | (a_zero & x_zero)
    is_one = (a_zero & ~x_zero) | (b_zero & x_one)
    is_nan = (a < 0.0) | (b < 0.0) | (x < 0.0) | (x > 1.0) | (a_zero & b_zero) | nan
    direct = x < (a + 1.0) / (a + b + 2.0)
    a, b, x = xp.where(direct, a, b), xp.where(direct, b, a), xp.where(direct, x, 1.0 - x)

    def numerator(i):
        m = xp.floor((i - 1.0) / 2.0)
        first = -(a + b) * x / (a + 1.0)
        even = xp.where(m == 0.0, first,
                         -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0)))
        odd = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m))
        value = xp.where(xp.fmod(i, 2.0) == 0.0, even, odd)
        return xp.where(i == 1.0, 1.0, value)

    def denominator(i):
        return xp.where(i == 0.0, 0.0, 1.0)

    small = float(finfo.eps / 2)
    fraction = _lentz(xp, numerator, denominator, 200 if finfo.bits <= 32 else 600, small, x)
    lbeta_small_a = xp.lgamma(b) - xp.lgamma(a + b)
    lbeta = xp.lgamma(a) + lbeta_small_a
    tiny_a = a < float(finfo.tiny * 2)
    safe_a = xp.where(tiny_a, 1.0, a)
    factor = xp.where(tiny_a, xp.exp(xp.log1p(-x) * b - lbeta_small_a),
                       xp.exp(xp.log(x) * a + xp.log1p(-x) * b - lbeta) / safe_a)
    out = fraction * factor
    out = xp.where(direct, out, 1.0 - out)
    out = xp.where(is_zero, 0.0, out)
    out = xp.where(is_one, 1.0, out)
    return xp.where(is_nan, np.nan, out)


def bessel_i0e_value(xp: Any, x: Any) -> Any:
    """exp(-|x|) I_0(x): the series and Hankel's expansion of numpy_math, in lax ops."""
    return nm.bessel_ie(0, x, pnp)


# --- jvps: JAX's --------------------------------------------------------------------------
def _igamma_dx(g: Any, ans: Any, a: Any, x: Any) -> Any:
    """dP/dx = x^(a-1) e^-x / Gamma(a), the Gamma(a) density."""
    return g * pnp.exp(-x + (a - 1.0) * pnp.log(x) - _lgamma(a))


def _igamma_da(g: Any, ans: Any, a: Any, x: Any) -> Any:
    return g * igamma_grad_a_p.bind(a, x)


def _betainc_dx(g: Any, ans: Any, a: Any, b: Any, x: Any) -> Any:
    """dI_x(a, b)/dx = x^(a-1) (1-x)^(b-1) / B(a, b)."""
    lbeta = _lgamma(a) + _lgamma(b) - _lgamma(a + b)
    return g * pnp.exp((b - 1.0) * pnp.log1p(-x) + (a - 1.0) * pnp.log(x) - lbeta)


def _betainc_dab(g: Any, ans: Any, a: Any, b: Any, x: Any) -> Any:
    raise ValueError("regularized_incomplete_beta (lax.betainc, scipy.special.betainc): the "
                     "gradient with respect to a and b is not supported (as in JAX); only "
                     "x is differentiable")


def _bessel_i0e_dx(g: Any, ans: Any, x: Any) -> Any:
    """d i0e(x) = i1e(x) - sign(x) i0e(x)."""
    return g * (bessel_i1e_p.bind(x) - pnp.sign(x) * ans)


def _same_shape(term: Any, ans: Any) -> Any:
    return pnp.broadcast_to(term, np.shape(ans))


def _nary(prim: Primitive, fn: Callable, partials: tuple) -> RuleSet:
    abstract = standard_abstract_eval(prim, broadcasting_shape(prim), floats(prim), all_weak)
    jvp = {"jvp": defjvp(prim, *partials, fix_term=_same_shape)} if partials else {}
    return RuleSet(prim, abstract_eval=abstract, impl=_in_numpy(fn),
                   expand=_computed_in_float32(fn), batching=broadcasting_vmap(prim), **jvp)


def _neg(partial: Callable) -> Callable:
    return lambda g, ans, *args: -partial(g, ans, *args)


RULES = [
    _nary(igamma_p, igamma_value, (_igamma_da, _igamma_dx)),
    _nary(igammac_p, igammac_value, (_neg(_igamma_da), _neg(_igamma_dx))),
    _nary(igamma_grad_a_p, igamma_grad_a_value, ()),
    _nary(regularized_incomplete_beta_p, betainc_value, (_betainc_dab, _betainc_dab,
                                                        _betainc_dx)),
    RuleSet(bessel_i0e_p,
            abstract_eval=standard_abstract_eval(bessel_i0e_p, lambda a, **_: a.shape,
                                                 floats(bessel_i0e_p), all_weak),
            impl=lambda ctx, x: nm.rounded(nm.bessel_i0e)(x),
            expand=_computed_in_float32(bessel_i0e_value),
            batching=vectorized_vmap(bessel_i0e_p),
            jvp=defjvp(bessel_i0e_p, _bessel_i0e_dx)),
]
