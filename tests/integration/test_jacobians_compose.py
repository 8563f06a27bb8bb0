"""Issue 12, classes 1-3: Jacobians are traced code, take pytrees, and has_aux composes.

References are independent of the code under test: central finite differences of
plain evaluation in float64 (`numeric_jacobian`), closed forms, and jacfwd vs jacrev.
"""
import numpy as np
import pytest

import plugax as px
import plugax.numpy as pnp
from plugax import lax
from plugax.core.trace import current_trace, eval_trace
from plugax.testing import numeric_jacobian

pytestmark = pytest.mark.usefixtures("plugax_x64")


def f(x):
    return pnp.sin(x) * pnp.sum(x ** 2)


X = np.array([0.3, -0.5, 0.7])


def close(a, b, tol=1e-6):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


# --- class 1: Jacobians under tracing ------------------------------------------------
JACOBIAN_UNDER_TRACING = {
    "jit(hessian)": (lambda x: px.jit(px.hessian(f))(x),
                     lambda x: numeric_jacobian(lambda y: px.jacrev(f)(y), x)),
    "jit(jacfwd)": (lambda x: px.jit(px.jacfwd(f))(x), lambda x: numeric_jacobian(f, x)),
    "jit(jacrev)": (lambda x: px.jit(px.jacrev(f))(x), lambda x: numeric_jacobian(f, x)),
    "grad(sum(jacrev))": (lambda x: px.grad(lambda y: pnp.sum(px.jacrev(f)(y)))(x),
                          lambda x: numeric_jacobian(lambda y: np.sum(px.jacrev(f)(y)), x)),
    "grad(sum(jacfwd))": (lambda x: px.grad(lambda y: pnp.sum(px.jacfwd(f)(y)))(x),
                          lambda x: numeric_jacobian(lambda y: np.sum(px.jacfwd(f)(y)), x)),
    "jacrev(jacfwd)": (lambda x: px.jacrev(px.jacfwd(f))(x),
                       lambda x: numeric_jacobian(px.jacfwd(f), x)),
    "jacfwd(jacfwd)": (lambda x: px.jacfwd(px.jacfwd(f))(x),
                       lambda x: numeric_jacobian(px.jacfwd(f), x)),
    "linearize(jacfwd)": (lambda x: px.linearize(px.jacfwd(f), x)[1](np.ones(3)),
                          lambda x: numeric_jacobian(px.jacfwd(f), x) @ np.ones(3)),
    "vjp(jacfwd)": (lambda x: px.vjp(px.jacfwd(f), x)[1](np.ones((3, 3)))[0],
                    lambda x: np.einsum("ij,ijk->k", np.ones((3, 3)),
                                        numeric_jacobian(px.jacfwd(f), x))),
    "make_jaxpr(jacrev)": (lambda x: px.eval_jaxpr(*_jaxpr_and_consts(px.jacrev(f), x), x)[0],
                           lambda x: numeric_jacobian(f, x)),
}


def _jaxpr_and_consts(fun, x):
    closed = px.make_jaxpr(fun)(x)
    px.typecheck_jaxpr(closed.jaxpr)
    return closed.jaxpr, closed.consts


@pytest.mark.parametrize("name", sorted(JACOBIAN_UNDER_TRACING))
def test_jacobians_under_tracing(name):
    run, reference = JACOBIAN_UNDER_TRACING[name]
    close(run(X), reference(X), 1e-5)


def test_jacobians_under_tracing_vmap_of_jacfwd_and_jacrev():
    xs = np.stack([X, 2 * X, -X])
    for jac in (px.jacfwd, px.jacrev):
        batched = px.vmap(jac(f))(xs)
        close(batched, np.stack([numeric_jacobian(f, x) for x in xs]), 1e-5)


def test_jacobians_under_tracing_jacfwd_jacfwd_through_while_loop():
    def g(x):
        def body(carry):
            i, y = carry
            return i + 1, pnp.sin(y) * x
        return lax.while_loop(lambda c: c[0] < 3, body, (0, x))[1]

    close(px.jacfwd(px.jacfwd(g))(X), numeric_jacobian(px.jacfwd(g), X), 1e-5)


def test_jacobians_under_tracing_inside_scan_body():
    def g(xs):
        def body(c, x):
            return c + pnp.sum(px.jacfwd(pnp.sin)(x * c)), None
        return lax.scan(body, 1.0, xs)[0]

    xs = np.array([[0.1, 0.2], [0.3, 0.4]])
    close(px.jit(g)(xs), g(xs))
    close(px.grad(g)(xs), numeric_jacobian(g, xs), 1e-5)


# --- class 2: pytrees and argnums ----------------------------------------------------
def dict_fun(d):
    return {"s": pnp.sin(d["a"]) * d["b"], "t": (d["a"] ** 2,)}


D = {"a": np.array([0.2, 0.4]), "b": np.array(1.5)}


@pytest.mark.parametrize("jac", [px.jacfwd, px.jacrev], ids=["jacfwd", "jacrev"])
def test_pytrees_in_jacobians_output_tree_outside_input_tree_inside(jac):
    J = jac(dict_fun)(D)
    assert set(J) == {"s", "t"} and set(J["s"]) == {"a", "b"}
    assert J["s"]["a"].shape == (2, 2) and J["s"]["b"].shape == (2,)
    assert J["t"][0]["a"].shape == (2, 2) and J["t"][0]["b"].shape == (2,)
    close(J["s"]["a"], np.diag(np.cos(D["a"]) * 1.5))
    close(J["s"]["b"], np.sin(D["a"]))
    close(J["t"][0]["a"], np.diag(2 * D["a"]))
    close(J["t"][0]["b"], np.zeros(2))


@pytest.mark.parametrize("jac", [px.jacfwd, px.jacrev], ids=["jacfwd", "jacrev"])
def test_pytrees_in_jacobians_argnums_tuple(jac):
    g = lambda x, y, z: x * pnp.sum(y) + z
    x, y, z = np.array([1.0, 2.0]), np.array([3.0, 4.0, 5.0]), 0.5
    jx, jy = jac(g, argnums=(0, 1))(x, y, z)
    close(jx, np.diag([12.0, 12.0]))
    close(jy, np.outer(x, np.ones(3)))
    (jz,) = jac(g, argnums=(2,))(x, y, z)
    close(jz, np.ones(2))


def test_pytrees_in_jacobians_hessian_argnums_tuple_and_dict():
    g = lambda x, y: pnp.sum(x ** 2 * y)
    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    (hxx, hxy), (hyx, hyy) = px.hessian(g, argnums=(0, 1))(x, y)
    close(hxx, np.diag(2 * y))
    close(hxy, np.diag(2 * x))
    close(hyx, np.diag(2 * x))
    close(hyy, np.zeros((2, 2)))
    h = px.hessian(lambda d: pnp.sum(d["a"] ** 3) * d["b"])(D)
    close(h["a"]["a"], np.diag(6 * D["a"] * D["b"]))
    close(h["a"]["b"], 3 * D["a"] ** 2)
    close(h["b"]["b"], 0.0)


def test_pytrees_in_jacobians_tuple_output_under_jit():
    g = lambda x: (pnp.sin(x), pnp.sum(x))
    for jac in (px.jacfwd, px.jacrev):
        a, b = px.jit(jac(g))(X)
        close(a, np.diag(np.cos(X)))
        close(b, np.ones(3))


# --- class 3: has_aux everywhere -----------------------------------------------------
def loss_aux(x):
    return pnp.sum(x ** 2), {"double": 2 * x, "n": pnp.sum(x)}


def _check_aux(aux, x):
    close(aux["double"], 2 * np.asarray(x))
    close(aux["n"], np.sum(x))


HAS_AUX = {
    "grad": lambda x: px.grad(loss_aux, has_aux=True)(x),
    "value_and_grad": lambda x: (lambda r: (r[1], r[0][1]))(
        px.value_and_grad(loss_aux, has_aux=True)(x)),
    "vjp": lambda x: (lambda r: (r[1](1.0)[0], r[2]))(px.vjp(loss_aux, x, has_aux=True)),
    "jvp": lambda x: (lambda r: (r[1] * 0 + px.grad(lambda y: loss_aux(y)[0])(x), r[2]))(
        px.jvp(loss_aux, (x,), (pnp.ones_like(x),), has_aux=True)),
    "linearize": lambda x: (lambda r: (px.grad(lambda y: loss_aux(y)[0])(x), r[2]))(
        px.linearize(loss_aux, x, has_aux=True)),
    "jacrev": lambda x: px.jacrev(loss_aux, has_aux=True)(x),
    "jacfwd": lambda x: px.jacfwd(loss_aux, has_aux=True)(x),
}


@pytest.mark.parametrize("wrap", ["eager", "jit", "vmap"])
@pytest.mark.parametrize("name", sorted(HAS_AUX))
def test_has_aux_everywhere(name, wrap):
    run = HAS_AUX[name]
    if wrap == "eager":
        g, aux = run(X)
        close(g, 2 * X)
        _check_aux(aux, X)
    elif wrap == "jit":
        g, aux = px.jit(run)(X)
        close(g, 2 * X)
        _check_aux(aux, X)
    else:
        xs = np.stack([X, -2 * X])
        g, aux = px.vmap(run)(xs)
        close(g, 2 * xs)
        close(aux["double"], 2 * xs)
        close(aux["n"], xs.sum(1))


def test_has_aux_everywhere_jit_grad_directly_and_trace_stays_clean():
    g, aux = px.jit(px.grad(loss_aux, has_aux=True))(X)
    close(g, 2 * X)
    _check_aux(aux, X)
    assert current_trace() is eval_trace


def test_has_aux_everywhere_hessian():
    h, aux = px.hessian(loss_aux, has_aux=True)(X)
    close(h, 2 * np.eye(3))
    _check_aux(aux, X)


def test_has_aux_everywhere_wrong_return_names_the_mistake():
    with pytest.raises(TypeError, match="has_aux=True requires the function to return a pair"):
        px.grad(lambda x: pnp.sum(x), has_aux=True)(X)
    assert current_trace() is eval_trace


def test_numpy_conversion_inside_a_derivative_is_an_error_not_a_wrong_number():
    """np.asarray of a JVP tracer used to return its primal: a silently zero derivative."""
    with pytest.raises(px.TracerArrayConversionError):
        px.grad(lambda x: pnp.sum(pnp.sin(np.asarray(x))))(X)
    assert current_trace() is eval_trace


def test_closeness_functions_match_numpy_including_nan_and_inf():
    a = np.array([1.0, np.nan, np.inf, -np.inf, 1.0 + 1e-7, 2.0])
    b = np.array([1.0, np.nan, np.inf, np.inf, 1.0, 2.1])
    for equal_nan in (False, True):
        np.testing.assert_array_equal(pnp.isclose(a, b, equal_nan=equal_nan),
                                      np.isclose(a, b, equal_nan=equal_nan))
    np.testing.assert_array_equal(pnp.isnan(a), np.isnan(a))
    np.testing.assert_array_equal(pnp.isinf(a), np.isinf(a))
    assert bool(pnp.allclose(a[:1], b[:1])) and not bool(pnp.allclose(a, b))
    assert bool(px.jit(pnp.allclose)(a[4:5], b[4:5]))
    assert not bool(pnp.array_equal(np.ones(2), np.ones(3)))
    assert bool(pnp.array_equal(a, a, equal_nan=True)) and not bool(pnp.array_equal(a, a))
