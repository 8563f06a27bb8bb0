"""Issue 12, class 4: custom derivative rules nested in each other and composed with
jit, vmap, scan and higher-order reverse mode.

The functions with custom rules here compute their value inside a one-trip
`while_loop`, which reverse mode refuses to differentiate (as JAX does). So
every derivative below can only come from the custom rules: a transformation
that lost a rule (ran the function's body where it should have used the rule)
raises instead of returning a number. The rules are the true derivatives, so
the references are independent: central finite differences of the function
values in float64, or closed forms. A few rules are deliberately not the
derivative (`twice_sin`), with closed forms derived from the rule by hand, to
show that the rule, not the body, is what is differentiated at second order.
"""
from __future__ import annotations

import functools
from functools import partial

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import plugax as px
import plugax.numpy as pnp
from plugax import lax
from plugax.testing import x64


def _loop_apply(fn, x):
    """`fn(x)`, computed inside a one-trip while_loop (not reverse-differentiable)."""
    return lax.while_loop(lambda c: c[0] < 1, lambda c: (c[0] + 1, fn(c[1])), (0, x))[1]


# --- a custom_vjp (vsin) and a custom_jvp (vcos) whose rules call each other -------
@px.custom_vjp
def vsin(x):
    return _loop_apply(pnp.sin, x)


def _vsin_fwd(x):
    return vsin(x), x


def _vsin_bwd(x, ct):
    return (ct * vcos(x),)           # a custom_jvp call inside a custom_vjp's bwd


vsin.defvjp(_vsin_fwd, _vsin_bwd)


@px.custom_jvp
def vcos(x):
    return _loop_apply(pnp.cos, x)


@vcos.defjvp
def _vcos_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return vcos(x), -vsin(x) * t     # a custom_vjp call inside a custom_jvp's rule


# --- a two-argument custom_vjp: scaled_sin(a, u) = a sin u ----------------------------
@px.custom_vjp
def scaled_sin(a, u):
    return a * _loop_apply(pnp.sin, u)


scaled_sin.defvjp(lambda a, u: (scaled_sin(a, u), (a, u)),
                  lambda r, ct: (ct * vsin(r[1]), ct * r[0] * vcos(r[1])))


# --- a custom_vjp whose fwd and bwd call vsin and scaled_sin: f(x) = x^2 sin x -------
@px.custom_vjp
def f(x):
    return vsin(x) * x ** 2


def _f_fwd(x):
    y = vsin(x)                      # residual made by a custom_vjp call
    return y * x ** 2, (x, y)


def _f_bwd(res, ct):
    x, y = res
    # (x^2 cos x + 2 x sin x) ct, the cotangent passed to custom_vjp calls next to
    # values that do not depend on it: differentiating this bwd again under jacrev
    # (whose vmap batches ct, not x) needs the cotangent of the unbatched x summed
    return (scaled_sin(ct * x ** 2, x + np.pi / 2) + 2.0 * x * scaled_sin(ct, x),)


f.defvjp(_f_fwd, _f_bwd)


def f_d2(x):
    return -np.sin(x) * x ** 2 + 4 * x * np.cos(x) + 2 * np.sin(x)


def f_d3(x):
    return -np.cos(x) * x ** 2 - 6 * x * np.sin(x) + 6 * np.cos(x)


# --- a custom_jvp whose body calls both: e(x) = sin x cos x = sin(2x) / 2 -----------
@px.custom_jvp
def e(x):
    return vsin(x) * vcos(x)


@e.defjvp
def _e_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return e(x), (vcos(x) ** 2 - vsin(x) ** 2) * t


def e_d2(x):
    return -2 * np.sin(2 * x)


# --- a rule that is deliberately not the derivative: twice_sin' = 2 cos -------------
@px.custom_jvp
def twice_sin(x):
    return _loop_apply(pnp.sin, x)


@twice_sin.defjvp
def _twice_sin_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return twice_sin(x), 2.0 * vcos(x) * t


# --- finite differences in float64 ----------------------------------------------------
# Central differences with step h and h/2, combined by Richardson extrapolation
# ((4 D(h/2) - D(h)) / 3): the truncation error is O(h^4), about 1e-12 here, well
# below the rounding error (about 1e-9), so the tolerances below are honest.
def _richardson(difference, h=1e-3):
    return (4 * difference(h / 2) - difference(h)) / 3


def _fd_second(fun, x):
    """d^2 fun / dx^2 of a scalar function."""
    return _richardson(lambda h: (fun(x + h) - 2 * fun(x) + fun(x - h)) / h ** 2)


def _fd_hessian(fun, x):
    """H[..., j, k] = d^2 fun(x)[...] / dx_j dx_k for fun: R^n -> R^m."""
    x = np.asarray(x, np.float64)
    n = x.size
    value = lambda v: np.asarray(fun(pnp.array(v)), np.float64)

    def difference(h):
        eye = np.eye(n) * h
        hess = np.zeros(value(x).shape + (n, n))
        for j in range(n):
            for k in range(n):
                hess[..., j, k] = (value(x + eye[j] + eye[k]) - value(x + eye[j] - eye[k])
                                   - value(x - eye[j] + eye[k])
                                   + value(x - eye[j] - eye[k])) / (4 * h * h)
        return hess
    return _richardson(difference)


def _value(fun):
    return lambda x: float(fun(x))


# --- the implicit-function fixed point of JAX's custom-derivatives tutorial ------------
@partial(px.custom_vjp, nondiff_argnums=(0,))
def fixed_point(fun, a, x_guess):
    def cond_fun(carry):
        x_prev, x = carry
        return pnp.abs(x_prev - x) > 1e-6

    def body_fun(carry):
        _, x = carry
        return x, fun(a, x)

    _, x_star = lax.while_loop(cond_fun, body_fun, (x_guess, fun(a, x_guess)))
    return x_star


def _fixed_point_fwd(fun, a, x_init):
    x_star = fixed_point(fun, a, x_init)
    return x_star, (a, x_star)


def _fixed_point_rev(fun, res, x_star_bar):
    a, x_star = res
    _, vjp_a = px.vjp(lambda a: fun(a, x_star), a)
    a_bar, = vjp_a(fixed_point(partial(_rev_iter, fun), (a, x_star, x_star_bar), x_star_bar))
    return a_bar, pnp.zeros_like(x_star)


def _rev_iter(fun, packed, u):
    a, x_star, x_star_bar = packed
    _, vjp_x = px.vjp(partial(fun, a), x_star)
    return x_star_bar + vjp_x(u)[0]


fixed_point.defvjp(_fixed_point_fwd, _fixed_point_rev)


def newton_sqrt(a):
    update = lambda a, x: 0.5 * (x + a / x)
    return fixed_point(update, a, a)


def test_custom_rules_nested_fixed_point_grad_grad(plugax_x64):
    """grad of grad runs bwd, which solves a second fixed point with `fixed_point`
    again: the outer derivative must use that inner call's rule (its while_loop
    cannot be reverse-differentiated), as in JAX's tutorial."""
    a = 2.0
    sqrt_d1, sqrt_d2, sqrt_d3 = (0.5 * a ** -0.5, -0.25 * a ** -1.5, 0.375 * a ** -2.5)
    assert float(newton_sqrt(a)) == pytest.approx(np.sqrt(a), rel=1e-12)
    assert float(px.grad(newton_sqrt)(a)) == pytest.approx(sqrt_d1, rel=1e-9)
    for name, d2 in [("grad grad", px.grad(px.grad(newton_sqrt))),
                     ("jacrev jacrev", px.jacrev(px.jacrev(newton_sqrt))),
                     ("jit grad grad", px.jit(px.grad(px.grad(newton_sqrt)))),
                     ("grad jit grad", px.grad(px.jit(px.grad(newton_sqrt)))),
                     ("grad grad jit", px.grad(px.grad(px.jit(newton_sqrt)))),
                     ("jacrev jit jacrev", px.jacrev(px.jit(px.jacrev(newton_sqrt))))]:
        assert float(d2(a)) == pytest.approx(sqrt_d2, rel=1e-9), name
    assert float(px.grad(px.grad(px.grad(newton_sqrt)))(a)) == pytest.approx(sqrt_d3, rel=1e-8)
    avals = pnp.array([2.0, 3.0, 0.5])
    np.testing.assert_allclose(np.asarray(px.vmap(px.grad(px.grad(newton_sqrt)))(avals)),
                               -0.25 * np.asarray(avals) ** -1.5, rtol=1e-9)
    # and against finite differences of the function itself
    assert float(px.grad(px.grad(newton_sqrt))(a)) == pytest.approx(
        _fd_second(_value(newton_sqrt), a), rel=1e-5)


def test_custom_rules_nested_fixed_point_forward_mode_raises():
    """Forward-over-reverse (hessian) differentiates fwd in forward mode, and fwd calls
    the custom_vjp `fixed_point`: JAX raises there, and so must plugax (running the
    body's while_loop forwards would silently drop the rule)."""
    with pytest.raises(px.PlugaxError, match="forward-mode.*custom_vjp"):
        px.hessian(newton_sqrt)(2.0)


def test_custom_rules_nested_grad_jacrev(plugax_x64):
    x = 0.7
    assert float(px.grad(f)(x)) == pytest.approx(
        np.cos(x) * x ** 2 + 2 * x * np.sin(x), rel=1e-12)
    for name, d2 in [("grad jacrev", px.grad(px.jacrev(f))),
                     ("grad grad", px.grad(px.grad(f))),
                     ("jacrev jacrev", px.jacrev(px.jacrev(f))),
                     ("grad of vmap(vjp)", px.grad(lambda x: px.vmap(px.vjp(f, x)[1])(
                         pnp.array([1.0, 0.5]))[0].sum() / 1.5))]:
        assert float(d2(x)) == pytest.approx(f_d2(x), rel=1e-12), name
    assert float(px.grad(px.jacrev(f))(x)) == pytest.approx(_fd_second(_value(f), x), rel=1e-5)
    assert float(px.grad(px.grad(px.grad(f)))(x)) == pytest.approx(f_d3(x), rel=1e-12)
    # a vector function, so that the Jacobian's rows are batched through the rules
    fun = lambda v: f(v) * v[::-1]
    v = pnp.array([0.7, -1.2, 0.3])
    hess = np.asarray(px.jacrev(px.jacrev(fun))(v))
    np.testing.assert_allclose(hess, _fd_hessian(fun, v), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(np.asarray(px.jacrev(px.jacrev(px.jit(fun)))(v)), hess,
                               rtol=1e-12)


def _scan_program(x):
    def body(c, xi):
        y = f(xi * c) + e(c)
        return 0.5 * y, y
    c, ys = lax.scan(body, x, pnp.array([0.3, -0.4, 0.9]) * x)
    return c + pnp.sum(ys)


def test_custom_rules_nested_scan_jacrev_jacrev_vmap(plugax_x64):
    xs = pnp.array([0.4, -0.8, 1.1])
    batched = px.vmap(_scan_program)
    reference = _fd_hessian(batched, xs)
    for name, fun in [("jacrev jacrev vmap", px.jacrev(px.jacrev(batched))),
                      ("jacrev jacrev jit vmap", px.jacrev(px.jacrev(px.jit(batched))))]:
        np.testing.assert_allclose(np.asarray(fun(xs)), reference, rtol=1e-5, atol=1e-6,
                                   err_msg=name)
    # the per-example second derivative, by reverse over reverse inside vmap
    np.testing.assert_allclose(np.asarray(px.vmap(px.grad(px.grad(_scan_program)))(xs)),
                               np.diagonal(np.diagonal(reference)), rtol=1e-5)


def test_custom_rules_nested_jvp_in_vjp_jit_vmap_second_order(plugax_x64):
    x = 0.6
    xs = pnp.array([0.6, -1.3, 2.0])
    # vsin'' = -sin (bwd calls the custom_jvp vcos, whose rule calls the custom_vjp vsin)
    for name, d2 in [("grad grad", px.grad(px.grad(vsin))),
                     ("jit grad grad", px.jit(px.grad(px.grad(vsin)))),
                     ("grad jit grad", px.grad(px.jit(px.grad(vsin)))),
                     ("grad grad jit", px.grad(px.grad(px.jit(vsin))))]:
        assert float(d2(x)) == pytest.approx(-np.sin(x), rel=1e-12), name
    assert float(px.grad(px.grad(px.grad(vsin)))(x)) == pytest.approx(-np.cos(x), rel=1e-12)
    assert float(px.grad(px.grad(vcos))(x)) == pytest.approx(-np.cos(x), rel=1e-12)
    # e = sin cos: a custom_jvp whose body calls both and whose rule calls both
    np.testing.assert_allclose(np.asarray(px.vmap(px.grad(px.grad(e)))(xs)),
                               e_d2(np.asarray(xs)), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(px.jit(px.vmap(px.grad(px.grad(e))))(xs)),
                               e_d2(np.asarray(xs)), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(px.grad(px.grad(lambda v: px.vmap(e)(v * xs).sum()))(
        1.0)), np.sum(e_d2(np.asarray(xs)) * np.asarray(xs) ** 2), rtol=1e-12)
    combined = lambda v: e(f(v)) + vcos(v) * f(v)
    assert float(px.grad(px.grad(combined))(x)) == pytest.approx(
        _fd_second(_value(combined), x), rel=1e-5)
    np.testing.assert_allclose(
        np.asarray(px.jacrev(px.jacrev(px.jit(px.vmap(combined))))(xs)),
        _fd_hessian(px.vmap(combined), xs), rtol=1e-5, atol=1e-6)
    # the rule, not the body, is differentiated at every order: twice_sin's rule says
    # 2 cos, so its second derivative is the derivative of 2 vcos, i.e. -2 sin
    assert float(px.grad(twice_sin)(x)) == pytest.approx(2 * np.cos(x), rel=1e-12)
    assert float(px.grad(px.grad(twice_sin))(x)) == pytest.approx(-2 * np.sin(x), rel=1e-12)
    np.testing.assert_allclose(np.asarray(px.vmap(px.grad(px.jit(px.grad(twice_sin))))(xs)),
                               -2 * np.sin(np.asarray(xs)), rtol=1e-12)


# --- batching a custom_vjp: cotangents come back in each input's layout ------------------
def test_custom_rules_nested_vmap_cotangent_of_unbatched_argument(plugax_x64):
    """Under vmap, an argument that is not batched is shared by every example, so its
    cotangent is the sum over the batch; a batched argument's cotangent has its batch
    axis where the argument had it. (Returning every cotangent batched in front was
    the root cause of the wrong-shaped buffers jacrev(jacrev(jit(f))) handed XLA.)"""
    a = pnp.array([1.5, -0.5])
    u = pnp.array([[0.3, 1.2], [-0.7, 0.4], [2.0, 0.1]])   # batched along axis 0
    loss = lambda a, u: px.vmap(scaled_sin, (None, 0))(a, u).sum()
    ga, gu = px.grad(loss, argnums=(0, 1))(a, u)
    np.testing.assert_allclose(np.asarray(ga), np.sin(np.asarray(u)).sum(0), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(gu), np.asarray(a) * np.cos(np.asarray(u)),
                               rtol=1e-12)
    # batch axis 1 on the way in: the cotangent must come back with it at axis 1
    loss_t = lambda a, ut: px.vmap(scaled_sin, (None, 1))(a, ut).sum()
    gu_t = px.grad(loss_t, argnums=1)(a, u.T)
    np.testing.assert_allclose(np.asarray(gu_t), np.asarray(gu).T, rtol=1e-12)
    # both batched, along different axes
    a_b = pnp.array([[1.5, -0.5], [2.0, 1.0], [0.5, 0.25]]).T          # batch axis 1
    loss_b = lambda a, u: px.vmap(scaled_sin, (1, 0))(a, u).sum()
    ga_b = px.grad(loss_b)(a_b, u)
    np.testing.assert_allclose(np.asarray(ga_b), np.sin(np.asarray(u)).T, rtol=1e-12)


# --- the jit bug: jacrev(jacrev(jit(f))) with nested custom_vjp ---------------------------
_W = np.array([1.0, 2.0, 3.0])


@px.custom_vjp
def _q(a, u):
    return a * _loop_apply(pnp.sin, u) * pnp.asarray(_W, dtype=u.dtype)   # closes over an array


_q.defvjp(lambda a, u: (_q(a, u), (a, u)),
          lambda r, ct: (ct * pnp.sin(r[1]) * _W.astype(ct.dtype),
                         ct * r[0] * pnp.cos(r[1]) * _W.astype(ct.dtype)))


@px.custom_vjp
def _p(x):
    return _loop_apply(lambda x: pnp.sin(x) * x, x)


def _p_fwd(x):
    return _p(x), (x, _q(pnp.ones_like(x), x))          # residual from _q: W sin x


def _p_bwd(res, ct):
    x, w_sin = res
    w = _W.astype(ct.dtype)
    # (x cos x + sin x) ct, with the cotangent flowing into _q next to an unbatched x
    return ((_q(ct * x, x + np.pi / 2) + ct * w_sin) / w,)


_p.defvjp(_p_fwd, _p_bwd)


def _jit_program(w):
    return _p(w) * w[::-1] + _q(w, w)


@pytest.mark.parametrize("enable_x64", [False, True], ids=["f32", "x64"])
def test_jit_cache_jacrev_jacrev_jit_nested_custom_vjp(enable_x64):
    w = np.array([0.7, 1.4, -0.3])
    with x64(True):
        reference = _fd_hessian(_jit_program, w)
    rtol, atol = (1e-5, 1e-6) if enable_x64 else (2e-4, 2e-4)
    with x64(enable_x64):
        w_arr = pnp.array(w)
        for name, fun in [("jacrev jacrev jit", px.jacrev(px.jacrev(px.jit(_jit_program)))),
                          ("jacrev jit jacrev", px.jacrev(px.jit(px.jacrev(_jit_program)))),
                          ("jit jacrev jacrev", px.jit(px.jacrev(px.jacrev(_jit_program)))),
                          ("jacrev jacrev", px.jacrev(px.jacrev(_jit_program)))]:
            out = fun(w_arr)
            assert out.shape == (3, 3, 3), name
            np.testing.assert_allclose(np.asarray(out), reference, rtol=rtol, atol=atol,
                                       err_msg=name)


def test_jit_cache_x64_flag_is_part_of_the_key():
    """The cached-call key is the arguments' signatures; a function traced with x64 on
    makes 64-bit values from 32-bit arguments, so the x64 flag must select the entry."""
    fun = px.jit(lambda x: pnp.zeros(2, dtype=float) + x)
    x = pnp.array(np.array([1.0, 2.0], np.float32))
    with x64(True):
        assert fun(x).dtype == np.float64
    assert fun(x).dtype == np.float32
    with x64(True):
        assert fun(x).dtype == np.float64


# --- custom functions applied to tangents (inside another rule) ----------------------------
@px.custom_jvp
def _double(t):
    return 2.0 * t


_double.defjvp(lambda p, t: (_double(p[0]), 2.0 * t[0]))


@px.custom_vjp
def _double_vjp(t):
    return 2.0 * t


_double_vjp.defvjp(lambda t: (_double_vjp(t), None), lambda r, ct: (2.0 * ct,))


@px.custom_jvp
def _sin_a(x):
    return pnp.sin(x)


_sin_a.defjvp(lambda p, t: (_sin_a(p[0]), _double(t[0]) * pnp.cos(p[0])))   # rule: 2 cos


@px.custom_jvp
def _sin_b(x):
    return pnp.sin(x)


_sin_b.defjvp(lambda p, t: (_sin_b(p[0]), _double_vjp(t[0]) * pnp.cos(p[0])))


def test_custom_rules_nested_custom_calls_on_tangents(plugax_x64):
    """A custom_jvp function applied to tangents is part of a linear function: it is
    transposed like any function, also when staged by jit. A custom_vjp function
    applied to tangents cannot be transposed (bwd is a VJP at a primal point, not a
    transpose), so reverse mode raises, as in JAX, instead of differentiating its body."""
    x = 0.5
    for fun in (px.grad(_sin_a), px.grad(px.jit(_sin_a)), px.jit(px.grad(px.jit(_sin_a)))):
        assert float(fun(x)) == pytest.approx(2 * np.cos(x), rel=1e-12)
    assert float(px.grad(px.grad(px.jit(_sin_a)))(x)) == pytest.approx(-2 * np.sin(x),
                                                                         rel=1e-12)
    assert float(px.jvp(_sin_b, (x,), (1.0,))[1]) == pytest.approx(2 * np.cos(x), rel=1e-12)
    assert float(px.linearize(_sin_b, x)[1](1.0)) == pytest.approx(2 * np.cos(x), rel=1e-12)
    for fun in (px.grad(_sin_b), px.grad(px.jit(_sin_b))):
        with pytest.raises(px.PlugaxError, match="can't transpose custom_vjp"):
            fun(x)


def test_custom_rules_nested_bwd_output_shape_is_checked():
    @px.custom_vjp
    def ident(x):
        return x
    ident.defvjp(lambda x: (x, None), lambda r, ct: (pnp.ones((2, 3)),))
    with pytest.raises(ValueError, match="expected shape \\(3,\\), got \\(2, 3\\)"):
        px.grad(lambda x: ident(x).sum())(pnp.ones(3))
    ident.defvjp(lambda x: (x, None), lambda r, ct: ((ct, ct),))
    with pytest.raises(TypeError, match="structured like the argument"):
        px.grad(lambda x: ident(x).sum())(pnp.ones(3))


# --- property: any placement of jit and vmap around two reverse-mode derivatives --------
_WRAPPERS = {
    "id": lambda g: g,
    "jit": px.jit,
    "vmap": lambda g: (lambda x: px.vmap(g)(pnp.stack([x, x])).sum() / 2.0),
}


@functools.lru_cache(maxsize=None)
def _second_derivative(wrappers: tuple):
    """The composed function, made once per placement (so jit's caches are reused)."""
    inner, middle, outer = (_WRAPPERS[w] for w in wrappers)
    return outer(px.grad(middle(px.grad(inner(lambda v: f(v) + e(v))))))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(x=st.floats(-1.5, 1.5), wrappers=st.lists(st.sampled_from(sorted(_WRAPPERS)),
                                                   min_size=3, max_size=3))
def test_custom_rules_nested_second_order_property(x, wrappers):
    """d^2/dx^2 of f + e (nested custom_vjp/custom_jvp, each calling the other kind)
    with jit or vmap before, between and after the two grads equals the closed form."""
    with x64(True):
        got = float(_second_derivative(tuple(wrappers))(x))
    assert got == pytest.approx(f_d2(x) + e_d2(x), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("path", ["jit.jvp", "jit.linearize", "jvp.jit", "linearize.jit"])
def test_forward_mode_on_custom_vjp_under_jit_names_the_mistake(path):
    """Not 'custom_lin has no lowering rule' (which sends the user to the wrong place)."""
    @px.custom_vjp
    def sq(x):
        return x * x
    sq.defvjp(lambda x: (x * x, x), lambda x, g: (2 * x * g,))
    run = {"jit.jvp": lambda: px.jit(lambda x: px.jvp(sq, (x,), (x,))[1])(1.0),
           "jit.linearize": lambda: px.jit(lambda x: px.linearize(sq, x)[1](x))(1.0),
           "jvp.jit": lambda: px.jvp(px.jit(sq), (1.0,), (1.0,)),
           "linearize.jit": lambda: px.linearize(px.jit(sq), 1.0)[1](1.0)}[path]
    with pytest.raises(px.PlugaxError, match="forward-mode autodiff .* custom_vjp"):
        run()
    assert float(px.jit(px.grad(sq))(3.0)) == 6.0     # the next call works
