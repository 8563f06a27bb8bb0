"""plugax.scipy.special and the family's lax functions, generated from one table:
name -> (plugax function, SciPy float64 reference, domain, differentiable operands).

Each row is checked against SciPy in float64 (under x64) and in float32, jitted
against eager (all rows in one compiled module: one compile), under vmap against
a Python loop, and, where differentiable, grad against central differences of
the float64 function.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np
import pytest
import scipy.special as sc

import plugax
import plugax.lax as lax
import plugax.scipy.special as special
from plugax.testing import x64


class Row(NamedTuple):
    ours: Callable
    ref: Callable
    args: tuple           # float64 domain arrays, one per operand (same length)
    grad: tuple = ()      # operands to differentiate
    rtol: float = 1e-9    # against SciPy in float64
    rtol32: float = 2e-5  # against SciPy in float32


X = np.array([-2.5, -0.7, 0.1, 0.9, 2.2])
POS = np.array([0.3, 0.8, 1.7, 3.2, 6.5])
UNIT = np.array([-0.95, -0.4, 0.05, 0.5, 0.9])
PROB = np.array([1e-3, 0.02, 0.3, 0.6, 0.97])
A = np.array([0.6, 1.2, 2.5, 4.0, 9.0])
XG = np.array([0.3, 2.0, 1.5, 6.0, 7.5])      # both series and continued-fraction branches
FRAC = np.array([0.1, 0.35, 0.5, 0.8, 0.95])
S = np.array([1.5, 2.0, 3.0, 4.5, 7.0])
ORD = np.array([0.0, 1.0, 2.0, 3.0, 1.0])
N = np.array([0.0, 1.0, 2.0, 3.0, 5.0])
K = np.array([0.0, 1.0, 2.0, 2.0, 3.0])
BIG = np.array([-30.0, -4.5, -0.5, 1.3, 8.0])
SI = np.array([-9.0, -1.2, 0.3, 3.5, 12.0])
NEG = np.array([-3.5, -1.3, -0.4, 0.6, 2.7])   # gamma's sign changes, no poles


def _dP_da(a, x, h=1e-5):
    return (sc.gammainc(a + h, x) - sc.gammainc(a - h, x)) / (2 * h)


def _gamma_sample_grad(a, x):
    density = np.exp((a - 1) * np.log(x) - x - sc.gammaln(a))
    return -_dP_da(a, x) / density


ROWS: dict[str, Row] = {
    "erf": Row(special.erf, sc.erf, (X,), (0,)),
    "erfc": Row(special.erfc, sc.erfc, (X,), (0,)),
    "erfinv": Row(special.erfinv, sc.erfinv, (UNIT,), (0,), rtol32=1e-4),
    "gammaln": Row(special.gammaln, sc.gammaln, (NEG,), (0,), rtol32=1e-4),
    "digamma": Row(special.digamma, sc.digamma, (NEG,), (0,), rtol32=1e-4),
    "polygamma": Row(special.polygamma, sc.polygamma, (ORD, POS), (1,), rtol32=1e-4),
    "zeta": Row(special.zeta, sc.zeta, (S, POS), (0, 1)),
    "gammainc": Row(special.gammainc, sc.gammainc, (A, XG), (0, 1), rtol=1e-8),
    "gammaincc": Row(special.gammaincc, sc.gammaincc, (A, XG), (0, 1), rtol=1e-8,
                     rtol32=1e-4),
    "betainc": Row(special.betainc, sc.betainc, (A, POS, FRAC), (2,), rtol=1e-8),
    "betaln": Row(special.betaln, sc.betaln, (A, POS), (0, 1), rtol32=1e-4),
    "beta": Row(special.beta, sc.beta, (NEG, A), (0, 1), rtol=1e-8, rtol32=1e-4),
    "gamma": Row(special.gamma, sc.gamma, (NEG,), (0,), rtol=1e-8, rtol32=1e-4),
    "gammasgn": Row(special.gammasgn, sc.gammasgn, (NEG,)),
    "loggamma": Row(special.loggamma, lambda x: sc.loggamma(x).real, (POS,), (0,),
                    rtol32=1e-4),
    "factorial": Row(special.factorial, lambda n: sc.factorial(n), (N + 1,), (0,), rtol=1e-8),
    "comb": Row(special.comb, lambda n, k: sc.comb(n, k), (N + 3, K), (0,), rtol=1e-8),
    "poch": Row(special.poch, sc.poch, (POS, K), (0,), rtol=1e-8),
    "multigammaln": Row(lambda a: special.multigammaln(a, 3),
                        lambda a: sc.multigammaln(a, 3), (A + 1.5,), (0,)),
    "i0": Row(special.i0, sc.i0, (X,), (0,)),
    "i0e": Row(special.i0e, sc.i0e, (X,), (0,)),
    "i1": Row(special.i1, sc.i1, (X,), (0,)),
    "i1e": Row(special.i1e, sc.i1e, (X,), (0,)),
    "ndtr": Row(special.ndtr, sc.ndtr, (X * 3,), (0,)),
    "ndtri": Row(special.ndtri, sc.ndtri, (PROB,), (0,), rtol32=1e-4),
    "log_ndtr": Row(special.log_ndtr, sc.log_ndtr, (BIG,), (0,), rtol32=1e-4),
    "logsumexp": Row(lambda a: special.logsumexp(a), lambda a: sc.logsumexp(a), (X,), (0,)),
    "softmax": Row(lambda a: special.softmax(a), lambda a: sc.softmax(a), (X,), (0,)),
    "log_softmax": Row(lambda a: special.log_softmax(a), lambda a: sc.log_softmax(a), (X,),
                       (0,)),
    "erfcx": Row(special.erfcx, sc.erfcx, (BIG / 4,), (0,)),
    "expn": Row(special.expn, sc.expn, (N, POS), (1,), rtol=1e-8),
    "exp1": Row(special.exp1, sc.exp1, (POS,), (0,), rtol=1e-8),
    "expi": Row(special.expi, sc.expi, (BIG,), (0,), rtol=1e-8),
    "spence": Row(special.spence, sc.spence, (POS,), (0,)),
    "dawsn": Row(special.dawsn, sc.dawsn, (BIG / 2,), (0,), rtol=1e-8),
    "boxcox": Row(special.boxcox, sc.boxcox, (POS, X / 2), (0, 1)),
    "boxcox1p": Row(special.boxcox1p, sc.boxcox1p, (POS, X / 2), (0, 1)),
    "sici.si": Row(lambda x: special.sici(x)[0], lambda x: sc.sici(x)[0], (SI,), (0,)),
    "sici.ci": Row(lambda x: special.sici(x)[1], lambda x: sc.sici(x)[1], (SI,), (0,),
                   rtol32=1e-4),
    "fresnel.s": Row(lambda x: special.fresnel(x)[0], lambda x: sc.fresnel(x)[0], (SI / 2,),
                     (0,), rtol=1e-8, rtol32=1e-4),
    "fresnel.c": Row(lambda x: special.fresnel(x)[1], lambda x: sc.fresnel(x)[1], (SI / 2,),
                     (0,), rtol=1e-8, rtol32=1e-4),
    "hyp1f1": Row(special.hyp1f1, sc.hyp1f1, (A / 2, POS + 1, X * 3), (2,), rtol=1e-8,
                  rtol32=1e-4),
    "hyp2f1": Row(special.hyp2f1, sc.hyp2f1, (A / 2, POS, A + 1.1, UNIT), (3,), rtol=1e-8,
                  rtol32=1e-4),
    "hyp2f1.near_one": Row(special.hyp2f1, sc.hyp2f1, (A / 2, POS, A + 1.1,
                                                       np.array([0.92, 0.95, 0.97, 0.99, 0.995])),
                           (3,), rtol=1e-8, rtol32=2e-3),
    "hyp2f1.whole_c-a-b": Row(lambda a, b, x: special.hyp2f1(a, b, a + b + 2.0, x),
                              lambda a, b, x: sc.hyp2f1(a, b, a + b + 2.0, x),
                              (A / 2, POS, np.array([-7.0, 0.3, 0.8, 0.9, 0.99])), (2,),
                              rtol=1e-8, rtol32=1e-4),
    "owens_t": Row(special.owens_t, sc.owens_t, (X, X * 1.3), (0, 1)),
    "bessel_jn": Row(lambda z: special.bessel_jn(z, v=3),
                     lambda z: np.stack([sc.jv(k, z) for k in range(4)]), (POS * 2,), (0,),
                     rtol32=1e-4),
    # lax's functions that no scipy.special name reaches
    "lax.igamma_grad_a": Row(lax.igamma_grad_a, _dP_da, (A, XG), rtol=1e-6, rtol32=1e-4),
    "lax.random_gamma_grad": Row(lax.random_gamma_grad, _gamma_sample_grad, (A, XG),
                                 rtol=1e-6, rtol32=1e-4),
    "lax.bessel_i0e": Row(lax.bessel_i0e, sc.i0e, (X,)),
    "lax.zeta": Row(lax.zeta, sc.zeta, (S, POS)),
}


def _close(ours: Any, want: Any, rtol: float) -> None:
    ours, want = np.asarray(ours, np.float64), np.asarray(want, np.float64)
    assert ours.shape == want.shape
    np.testing.assert_allclose(ours, want, rtol=rtol, atol=rtol * 1e-2)


@pytest.mark.parametrize("name", list(ROWS))
def test_float64_matches_scipy(name):
    row = ROWS[name]
    with x64():
        out = row.ours(*row.args)
        assert np.asarray(out).dtype == np.float64
        _close(out, row.ref(*row.args), row.rtol)


@pytest.mark.parametrize("name", list(ROWS))
def test_float32_matches_scipy_and_vmap_matches_a_loop(name):
    row = ROWS[name]
    args = [a.astype(np.float32) for a in row.args]
    out = row.ours(*args)
    assert np.asarray(out).dtype == np.float32
    want = row.ref(*[a.astype(np.float64) for a in args])
    _close(out, want, row.rtol32)
    batched = plugax.vmap(row.ours)(*args)
    looped = np.stack([np.asarray(row.ours(*(a[i] for a in args))) for i in range(len(args[0]))])
    np.testing.assert_allclose(np.moveaxis(np.asarray(batched), 0, -1) if name == "bessel_jn"
                               else np.asarray(batched),
                               np.moveaxis(looped, 0, -1) if name == "bessel_jn" else looped,
                               rtol=1e-6, atol=1e-7)


@pytest.mark.skipif(not hasattr(plugax, "jit"), reason="jit needs the xla_call plugin")
def test_jit_matches_eager_for_every_row():
    """Every row compiled in one module (one compile), against the eager values."""
    names = list(ROWS)
    inputs = {n: [a.astype(np.float32) for a in ROWS[n].args] for n in names}
    jitted = plugax.jit(lambda ins: {n: ROWS[n].ours(*ins[n]) for n in names})(inputs)
    for n in names:
        eager = np.asarray(ROWS[n].ours(*inputs[n]))
        np.testing.assert_allclose(np.asarray(jitted[n]), eager, atol=1e-6, err_msg=n,
                                   rtol=max(2e-5, ROWS[n].rtol32))


GRAD_ROWS = [(n, i) for n, r in ROWS.items() for i in r.grad]
NOT_ELEMENTWISE = {"logsumexp", "softmax", "log_softmax"}


@pytest.mark.parametrize("name,argnum", GRAD_ROWS, ids=[f"{n}-{i}" for n, i in GRAD_ROWS])
def test_grad_matches_central_differences(name, argnum):
    """Elementwise rows: every element's derivative at once (moving all elements by h
    moves each output by its own derivative); the others: along a fixed direction."""
    row = ROWS[name]
    h = 1e-6
    direction = np.linspace(-1.0, 1.0, len(row.args[0])) if name in NOT_ELEMENTWISE else 1.0

    def moved(sign: float) -> np.ndarray:
        args = [a + sign * h * direction if i == argnum else a for i, a in enumerate(row.args)]
        out = np.asarray(row.ours(*args))
        return out.sum(0) if out.ndim > 1 else out      # bessel_jn: summed over orders

    with x64():
        got = np.asarray(plugax.grad(lambda *a: plugax.numpy.sum(row.ours(*a)),
                                     argnums=argnum)(*row.args))
        want = (moved(1.0) - moved(-1.0)) / (2 * h)
    if name in NOT_ELEMENTWISE:
        got, want = np.dot(got, direction), np.sum(want)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
