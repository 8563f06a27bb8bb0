"""The derivative of a Gamma(a) sample with respect to a: implicit reparameterisation.

A sample x = F^-1(u; a) moves with a at fixed u, so dx/da = -(dP/da) / (dP/dx), with P
the regularised lower incomplete gamma function (the CDF) and dP/dx the density. This is
what JAX's `random_gamma_grad` computes; here it is written with `plugax.lax` ops:

* x < a + 1: the power series P = x^a e^-x / Gamma(a+1) * sum_n t_n, t_n = prod_k x/(a+k),
  differentiated term by term; dividing by the density leaves
  dx/da = -(x/a) * (S (log x - digamma(a+1)) + dS/da), no lgamma needed.
* x >= a + 1: Legendre's continued fraction for Q = 1 - P, Q = x^a e^-x / Gamma(a) * C,
  giving dx/da = x * (C (log x - digamma(a)) + dC/da), dC/da by forward-mode `jvp`
  through the fraction's fixed number of steps.

The values agree with JAX's to float32 rounding (not bit for bit: XLA's kernel uses
other expansions). digamma is written here too, so the family needs no special-function
plugin for it.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import plugax
import plugax.lax as lax
import plugax.numpy as jnp

__all__ = ["gamma_sample_grad", "digamma"]

_SERIES_STEPS = 1000     # enough for a up to ~3e4 (the terms decay like exp(-n^2 / 2a))
_FRACTION_STEPS = 200


def digamma(z: Any) -> Any:
    """psi(z) for z > 0: shift to z + 6 by the recurrence, then the asymptotic series."""
    acc = jnp.zeros_like(z)
    for k in range(6):
        acc = acc + 1 / (z + k)
    z6 = z + 6
    w = 1 / z6
    w2 = w * w
    return jnp.log(z6) - 0.5 * w - w2 * (1 / 12 - w2 * (1 / 120 - w2 / 252)) - acc


def _series(a: Any, x: Any) -> Any:
    def step(n, carry):
        t, dt, s, ds = carry
        r = x / (a + n)
        t_new = t * r
        dt_new = dt * r - t_new / (a + n)
        return t_new, dt_new, s + t_new, ds + dt_new
    one, zero = jnp.ones_like(x), jnp.zeros_like(x)
    _, _, s, ds = lax.fori_loop(1, _SERIES_STEPS, step, (one, zero, one, zero))
    return -(x / a) * (s * (jnp.log(x) - digamma(a + 1)) + ds)


def _fraction(a: Any, x: Any) -> Any:
    tiny = np.float32(1e-30) if x.dtype == np.float32 else np.float64(1e-300)

    def cf(a):
        b = x + 1 - a
        c = jnp.full_like(x, 1 / tiny)
        d = 1 / b
        h = d

        def step(i, carry):
            b, c, d, h = carry
            an = -i * (i - a)
            b = b + 2
            d = an * d + b
            d = jnp.where(jnp.abs(d) < tiny, tiny, d)
            c = b + an / c
            c = jnp.where(jnp.abs(c) < tiny, tiny, c)
            d = 1 / d
            return b, c, d, h * (d * c)
        return lax.fori_loop(1, _FRACTION_STEPS, step, (b, c, d, h))[3]
    h, dh = plugax.jvp(cf, (a,), (jnp.ones_like(a),))
    return x * (h * (jnp.log(x) - digamma(a)) + dh)


def gamma_sample_grad(a: Any, x: Any) -> Any:
    """dx/da for Gamma(a) samples x (elementwise; x = 0 gives 0)."""
    positive = x > 0
    safe_x = jnp.where(positive, x, jnp.ones_like(x))
    use_series = safe_x < a + 1
    xs = jnp.where(use_series, safe_x, jnp.minimum(safe_x, a + 1))   # each branch in range
    xf = jnp.where(use_series, a + 2, safe_x)
    grad = jnp.where(use_series, _series(a, xs), _fraction(a, xf))
    return jnp.where(positive, grad, jnp.zeros_like(grad))
