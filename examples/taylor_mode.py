"""Taylor-mode differentiation with plugax-jet: three programs written for JAX's
`jax.experimental.jet`, run with only the imports changed.

1. The reference check of JAX's own jet tests: the Taylor coefficients of
   f(x + eps*v1 + eps^2/2 v2 + ...) taken by repeated `jacobian` in eps, against `jet`.
2. The one-dimensional ODE of the jet ODE tests (z' = z^2 / 10, closed-form
   solution): the solution's time derivatives by a recursive use of `jet`, against
   the derivatives of the closed form.
3. A probdiffeq-style `taylor_mode_fn`: Taylor coefficients of an initial value
   problem's solution under `jit` with a static vector field, for a
   Lotka-Volterra system, against repeated `jvp` (the derivative of the solution
   is the Lie derivative of the field, applied k times).

Each prints "ok" lines and ends with "all checks passed"; a disagreement is an
AssertionError.
"""
from functools import partial
from math import factorial

import numpy as np

# --- the only lines that differ from the JAX programs -----------------------------------
import plugax as jax
import plugax.numpy as jnp
from plugax.experimental.jet import jet
jax.config.update("jax_enable_x64", True)
# -----------------------------------------------------------------------------------------


def repeated(f, n):
    def rfun(p):
        for _ in range(n):
            p = f(p)
        return p
    return rfun


def jvp_taylor(fun, primals, series):
    """Taylor terms of fun along the curve through primals whose scaled derivatives
    are `series`, by differentiating the composed function of eps repeatedly."""
    def expansion(eps):
        moved = [p + sum(eps ** (i + 1) * term / factorial(i + 1)
                         for i, term in enumerate(terms))
                 for p, terms in zip(primals, series)]
        return fun(*moved)

    order = len(series[0])
    derivs = [repeated(jax.jacfwd, k)(expansion)(0.0) for k in range(1, order + 1)]
    return fun(*primals), derivs


def check_against_jvp_taylor():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4))
    terms = [rng.standard_normal((3, 4)) for _ in range(4)]
    for name, fun in [("sin*exp", lambda x: jnp.sin(x) * jnp.exp(x)),
                      ("log1p(x^2)/cosh", lambda x: jnp.log1p(x ** 2) / jnp.cosh(x)),
                      ("tanh(x @ x.T)", lambda x: jnp.tanh(x @ x.T)),
                      ("logsumexp-ish", lambda x: jnp.log(jnp.sum(jnp.exp(x), axis=1))),
                      ("sqrt(1+x^2)", lambda x: jnp.sqrt(1.0 + x * x))]:
        y0, ys = jet(fun, (x,), (terms,))
        want0, wants = jvp_taylor(fun, (x,), (terms,))
        np.testing.assert_allclose(np.asarray(y0), np.asarray(want0), rtol=1e-12)
        for k, (got, want) in enumerate(zip(ys, wants)):
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-8,
                                       atol=1e-10, err_msg=f"{name}, term {k + 1}")
        print(f"ok  jet == repeated jacobian of the expansion, {name}, order 4")


def check_ode_1d():
    # z' = g(z) = z^2 / 10, z(t0) = z0: z(t) = -10 z0 / (-10 + t z0 - t0 z0)
    t0, z0 = 2.0, 1.0

    def g(z):
        return z * z * 0.1

    def true_sol(t):
        return -(10.0 * z0) / (-10.0 + t * z0 - t0 * z0)

    # recursive Taylor mode: feeding the series of z back through g gives the next term
    def sol_recursive(z):
        (y0, [y1h]) = jet(g, (z,), ((jnp.ones_like(z),),))
        (y0, [y1, y2h]) = jet(g, (z,), ((y0, y1h),))
        (y0, [y1, y2, y3h]) = jet(g, (z,), ((y0, y1, y2h),))
        return y0, y1, y2, y3h

    z = jnp.asarray(z0)
    # z' = g(z); z'' = g'(z) z' ; the k-th jet term of g along (z', z'', ...) is z^(k+1)
    z1 = g(z)
    _, [z2] = jet(g, (z,), ((z1,),))
    _, [_, z3] = jet(g, (z,), ((z1, z2),))
    _, [_, _, z4] = jet(g, (z,), ((z1, z2, z3),))
    truth = [true_sol, jax.grad(true_sol), jax.grad(jax.grad(true_sol)),
             jax.grad(jax.grad(jax.grad(true_sol))), jax.grad(jax.grad(jax.grad(jax.grad(true_sol))))]
    for k, got in enumerate([z, z1, z2, z3, z4]):
        np.testing.assert_allclose(float(got), float(truth[k](t0)), rtol=1e-12,
                                   err_msg=f"derivative {k} of the ODE solution")
    assert all(np.isfinite(float(v)) for v in sol_recursive(z))
    print("ok  ODE z' = z^2/10: jet recursion == derivatives of the closed-form solution")


@partial(jax.jit, static_argnames=["vector_field", "num"])
def taylor_mode_fn(*, vector_field, initial_values, num, t, parameters):
    """Taylor coefficients u_0..u_num of the solution of u' = f(u, t, p) at t."""
    vf = partial(vector_field, t=t, p=parameters)
    taylor_coefficients = list(initial_values)
    series = [vf(*initial_values)]
    for _ in range(num - 1):
        primals, *rest = (initial_values[0], *series)
        p_out, s_out = jet(vf, (primals,), (rest,))
        series = [p_out, *s_out]
    taylor_coefficients.extend(series)
    return taylor_coefficients


def lotka_volterra(u, t, p):
    a, b, c, d = p
    return jnp.stack([a * u[0] - b * u[0] * u[1], -c * u[1] + d * u[0] * u[1]])


def check_ivp_taylor_coefficients():
    u0 = jnp.asarray([20.0, 20.0])
    params = jnp.asarray([0.5, 0.05, 0.5, 0.05])
    got = taylor_mode_fn(vector_field=lotka_volterra, initial_values=(u0,), num=4,
                         t=0.0, parameters=params)

    # independent reference: u^(k+1) = (L_f)^k f (u0), the Lie derivative by jvp
    f = lambda u: lotka_volterra(u, 0.0, params)
    derivative = f
    want = [u0, f(u0)]
    for _ in range(3):
        derivative = (lambda d: lambda u: jax.jvp(d, (u,), (f(u),))[1])(derivative)
        want.append(derivative(u0))
    for k, (a, b) in enumerate(zip(got, want)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10,
                                   err_msg=f"Taylor coefficient {k}")
    again = taylor_mode_fn(vector_field=lotka_volterra, initial_values=(u0,), num=4,
                           t=0.0, parameters=params * 2)
    assert not np.allclose(np.asarray(again[2]), np.asarray(got[2]))   # params are traced
    print("ok  jit(taylor_mode_fn) of Lotka-Volterra == repeated jvp (Lie derivatives)")


if __name__ == "__main__":
    check_against_jvp_taylor()
    check_ode_1d()
    check_ivp_taylor_coefficients()
    print("all checks passed")
