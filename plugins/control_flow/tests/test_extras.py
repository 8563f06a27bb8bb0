"""The control-flow extras (extras.py, solvers.py): associative_scan against JAX's
recorded values (a non-commutative combine over a pytree, reversed, along axis 1, and
its gradient), optimization_barrier's rules with the kit, custom_root and
custom_linear_solve against the implicit-function derivatives (NumPy float64), under
jvp, grad, jit and vmap, with solvers (while loops) that cannot be differentiated
themselves; and the small names (platform_dependent, tokens, composite)."""
import numpy as np
import pytest

import plugax
import plugax.lax as lax
import plugax.numpy as jnp
from plugax.testing import check_primitive
from plugax_control_flow.extras import optimization_barrier_p

# recorded with jax 0.10.2: associative_scan of the affine-map composition over (A, B)
A = [[1.1369616985321045, 0.7697867155075073, 0.5409735441207886, 0.5165276527404785, 1.3132702112197876], [1.4127556085586548, 1.1066358089447021, 1.2294965982437134, 1.043624997138977, 1.435072422027588], [1.3158535957336426, 0.5027384757995605, 1.3574042320251465, 0.5335855484008789, 1.2296555042266846]]
B = [[-0.7322673797607422, -0.5442590117454529, -0.3163001537322998, 0.4116305410861969, 1.042513370513916], [-0.12853465974330902, 1.3664634227752686, -0.6651946902275085, 0.35151007771492004, 0.9034701585769653], [0.0940122976899147, -0.7434992790222168, -0.9217253923416138, -0.4577258229255676, 0.22019512951374054]]
SCAN = [[[1.1369616985321045, 0.8752180337905884, 0.4734697937965393, 0.24456024169921875, 0.32117366790771484], [1.4127556085586548, 1.563405990600586, 1.9222023487091064, 2.00605845451355, 2.8788392543792725], [1.3158535957336426, 0.6615302562713623, 0.8979639410972595, 0.47914057970046997, 0.5891778469085693]], [[-0.7322673797607422, -1.1079487800598145, -0.9156711101531982, -0.061338916420936584, 0.9619587659835815], [-0.12853465974330902, 1.2242224216461182, 0.8399825692176819, 1.2281370162963867, 2.665935754776001], [0.0940122976899147, -0.6962356567382812, -1.8667986392974854, -1.4538226127624512, -1.5675058364868164]]]
SCAN_REV = [[[0.32117369771003723, 0.28248417377471924, 0.366964191198349, 0.6783403754234314, 1.3132702112197876], [2.8788390159606934, 2.037747383117676, 1.8413892984390259, 1.4976774454116821, 1.435072422027588], [0.5891778469085693, 0.44775334000587463, 0.8906286954879761, 0.6561263799667358, 1.2296555042266846]], [[-1.1780487298965454, -0.39208120107650757, 0.1976882815361023, 0.9501174688339233, 1.042513370513916], [3.2500624656677246, 2.3914942741394043, 0.9262585043907166, 1.2943941354751587, 0.9034701585769653], [-1.799589991569519, -1.4390676021575928, -1.383558988571167, -0.34023287892341614, 0.22019512951374054]]]
SCAN_GRAD = [[[0.0, 1.8562068939208984, 0.6532886028289795, -2.201223611831665, -0.11801102012395859], [0.0, -2.2472658157348633, 14.970792770385742, 8.490456581115723, 6.548268795013428], [0.0, -1.067846655845642, 5.111788749694824, 12.624466896057129, 4.557750701904297]], [[-3.41584849357605, -2.5348758697509766, -0.5896377563476562, 2.4039456844329834, 1.923917531967163], [19.09105682373047, 17.483734130859375, 12.2288179397583, 10.107895851135254, 5.331871509552002], [-5.522373199462891, -11.358585357666016, -7.342038631439209, -6.762629508972168, -3.135011672973633]]]
BOOL = [False, False, True, True, True]

A, B = np.array(A, np.float32), np.array(B, np.float32)


def _compose(x, y):
    return x[0] * y[0], y[0] * x[1] + y[1]


def test_associative_scan_matches_jax():
    for fn in (lax.associative_scan, plugax.jit(lax.associative_scan, static_argnums=(0, 2, 3))):
        for reverse, expected in ((False, SCAN), (True, SCAN_REV)):
            got = fn(_compose, (A, B), reverse, 1)
            for g, e in zip(got, expected):
                np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    grad = plugax.grad(lambda a, b: (lax.associative_scan(_compose, (a, b), axis=1)[1] ** 2)
                       .sum(), argnums=(0, 1))(A, B)
    for g, e in zip(grad, SCAN_GRAD):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(lax.associative_scan(jnp.logical_or, np.array(
        [False, False, True, False, False])), BOOL)
    check_primitive(lambda a, b: lax.associative_scan(_compose, (a, b), axis=1)[1], A, B)
    with pytest.raises(ValueError, match="same first dimension"):
        lax.associative_scan(_compose, (A, B[:, :2]), axis=1)


def test_optimization_barrier():
    x, y = np.array([1., 2.], np.float32), np.float32(3.0)
    check_primitive(optimization_barrier_p, x, y, lowering=True)
    assert "optimization_barrier" in str(plugax.make_jaxpr(
        lambda v: lax.optimization_barrier((v, v + 1)))(x))
    a, b = plugax.jit(lambda v: lax.optimization_barrier((v, v + 1)))(x)
    np.testing.assert_array_equal(b, x + 1)
    assert plugax.grad(lambda v: lax.optimization_barrier(v) * 2)(1.0) == 2.0


def _newton_sqrt(a):
    f = lambda x: x * x - a  # noqa: E731
    solve = lambda f, x0: lax.while_loop(  # noqa: E731
        lambda x: jnp.abs(f(x)) > 1e-6, lambda x: x - f(x) / (2 * x), x0)
    return lax.custom_root(f, 1.0, solve, lambda g, y: y / g(1.0))


def test_custom_root_differentiates_implicitly():
    a = np.float32(2.0)
    np.testing.assert_allclose(_newton_sqrt(a), np.sqrt(2.0), rtol=1e-6)
    expected = 0.5 / np.sqrt(2.0)
    np.testing.assert_allclose(plugax.grad(_newton_sqrt)(a), expected, rtol=1e-5)
    np.testing.assert_allclose(plugax.jit(plugax.grad(_newton_sqrt))(a), expected, rtol=1e-5)
    np.testing.assert_allclose(plugax.jvp(_newton_sqrt, (a,), (np.float32(1),))[1], expected,
                               rtol=1e-5)
    np.testing.assert_allclose(plugax.vmap(plugax.grad(_newton_sqrt))(np.array([4., 9.],
                                                                               np.float32)),
                               [0.25, 1 / 6], rtol=1e-5)


def test_custom_root_pytree_and_aux():
    def solve(f, x0):
        x = x0
        for _ in range(30):   # fixed-point iteration of x = x - f(x) / 2
            x = {k: v - f(x)[k] / 2 for k, v in x.items()}
        return x, {"steps": 30}

    def root(c):
        return lax.custom_root(lambda x: {"u": x["u"] - c, "v": x["v"] - 2 * c},
                               {"u": 0.0, "v": 0.0}, solve,
                               lambda g, y: {k: y[k] / g({"u": 1.0, "v": 1.0})[k] for k in y},
                               has_aux=True)
    (sol, aux) = root(np.float32(1.5))
    np.testing.assert_allclose([sol["u"], sol["v"]], [1.5, 3.0], rtol=1e-6)
    assert aux["steps"] == 30
    np.testing.assert_allclose(plugax.grad(lambda c: root(c)[0]["v"])(np.float32(1.5)), 2.0)


MAT = np.array([[4., 1., 0.5], [1., 3., 0.], [0.5, 0., 2.]], np.float32)


# products written with elementwise ops and sums: this family's test environment loads
# no dot family
def _matvec(m, x):
    return jnp.sum(m * x[None, :], axis=1)


def _vdot(a, b):
    return jnp.sum(a * b)


def _cg(matvec, b):
    """CG for three steps in a while loop (exact for 3x3): not differentiable itself."""
    def body(state):
        x, r, p, i = state
        ap = matvec(p)
        alpha = _vdot(r, r) / jnp.maximum(_vdot(p, ap), 1e-30)   # (0 once converged)
        rn = r - alpha * ap
        beta = _vdot(rn, rn) / jnp.maximum(_vdot(r, r), 1e-30)
        return x + alpha * p, rn, rn + beta * p, i + 1
    return lax.while_loop(lambda s: s[3] < 3, body, (jnp.zeros_like(b), b, b, 0))[0]


def _linear(scale, b):
    return lax.custom_linear_solve(lambda x: scale * _matvec(MAT, x), b, _cg, symmetric=True)


def test_custom_linear_solve_matches_the_implicit_derivative():
    b = np.array([1., 2., -1.], np.float32)
    m64 = MAT.astype(np.float64)
    x = np.linalg.solve(m64, b)
    np.testing.assert_allclose(_linear(np.float32(1), b), x, rtol=1e-5)
    np.testing.assert_allclose(plugax.jit(_linear)(np.float32(1), b), x, rtol=1e-5)
    # d/ds of (sA)^-1 b at s = 1 is -x; d/db sum(x) = A^-T 1
    g_s, g_b = plugax.grad(lambda s, v: _linear(s, v).sum(), argnums=(0, 1))(np.float32(1), b)
    np.testing.assert_allclose(g_s, -x.sum(), rtol=1e-5)
    np.testing.assert_allclose(g_b, np.linalg.solve(m64.T, np.ones(3)), rtol=1e-5)
    _, t = plugax.jvp(lambda s: _linear(s, b), (np.float32(1),), (np.float32(1),))
    np.testing.assert_allclose(t, -x, rtol=1e-5)
    batched = plugax.vmap(_linear, in_axes=(0, None))(np.array([1., 2.], np.float32), b)
    np.testing.assert_allclose(batched, [x, x / 2], rtol=1e-5)
    np.testing.assert_allclose(plugax.vmap(plugax.grad(lambda s: _linear(s, b).sum()))(
        np.array([1., 2.], np.float32)), [-x.sum(), -x.sum() / 4], rtol=1e-5)
    check_primitive(lambda v: _linear(np.float32(1), v), b)


def test_custom_linear_solve_transpose_solve_and_aux():
    upper = np.array([[2., 1.], [0., 4.]], np.float32)

    def back_substitute(b):        # upper @ x = b
        x1 = b[1] / 4
        return jnp.stack([(b[0] - x1) / 2, x1])

    def forward_substitute(b):     # upper.T @ y = b
        y0 = b[0] / 2
        return jnp.stack([y0, (b[1] - y0) / 4])
    solve = lambda mv, b: (back_substitute(b), {"n": 1})  # noqa: E731
    tsolve = lambda vm, b: (forward_substitute(b), {"n": 1})  # noqa: E731

    def f(b):
        return lax.custom_linear_solve(lambda x: _matvec(upper, x), b, solve, tsolve,
                                       has_aux=True)
    b = np.array([1., 3.], np.float32)
    x, aux = f(b)
    np.testing.assert_allclose(x, np.linalg.solve(upper, b), rtol=1e-6)
    assert aux["n"] == 1
    np.testing.assert_allclose(plugax.grad(lambda v: _vdot(f(v)[0], np.array([1., 2.], np.float32)))(b),
                               np.linalg.solve(upper.T.astype(np.float64), [1., 2.]), rtol=1e-6)
    with pytest.raises(TypeError, match="transpose_solve"):
        plugax.grad(lambda v: lax.custom_linear_solve(lambda x: _matvec(upper, x), v,
                                                      lambda mv, r: back_substitute(r)
                                                      ).sum())(b)


def test_small_names():
    assert lax.platform_dependent(1.0, cpu=lambda v: v + 1, default=lambda v: v) == 2.0
    assert lax.platform_dependent(1.0, tpu=lambda v: v + 1, default=lambda v: v) == 1.0
    token = lax.after_all(lax.create_token(), lax.create_token())
    assert plugax.jit(lambda t, v: (lax.after_all(t), v * 2))(token, 1.0)[1] == 2.0
    double = lax.composite(lambda v: v * 2, "my.double")
    assert double(3.0) == 6.0 and plugax.jit(double)(3.0) == 6.0
    np.testing.assert_array_equal(lax.shape_as_value((2, 3)), [2, 3])
    assert lax.stage(1.5) == 1.5 and lax.dce_sink(np.ones(2)) is None
    tree = {"w": np.ones(2, np.float32)}
    assert plugax.jit(lambda t: lax.with_sharding_constraint(t, None))(tree)["w"].shape == (2,)
