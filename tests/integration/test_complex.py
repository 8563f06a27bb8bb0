"""Complex numbers through plugax.numpy (issue 16): one table of name -> NumPy complex128
reference -> inputs, checked eagerly and under jit; JAX's differentiation convention
checked against values recorded once with jax 0.10.2 (this file does not import jax).

Why recorded values and not a formula: JAX's convention for a real-valued f of a
complex z (grad gives df/dx - i df/dy, the transpose and not the adjoint of the
linearised f) is a choice, and holomorphic grads give f'(z); the only way to be
sure plugax made the same choice is to compare with what JAX answers.
"""
import warnings

import numpy as np
import pytest

import plugax
import plugax.lax as lax
import plugax.numpy as pnp

Z = np.array([0.6 + 0.8j, -1.2 + 0.3j, 0.25 - 1.5j], np.complex64)
W = np.array([1.1 - 0.4j, 0.2 + 0.9j, -0.7 - 0.6j], np.complex64)
X = np.array([0.3, -1.1, 2.0], np.float32)
M = (np.arange(6).reshape(2, 3) * (0.5 - 0.25j) + 1j).astype(np.complex64)

# name -> (plugax function, NumPy reference on complex128, inputs)
TABLE = {
    "add": (lambda a, b: a + b, np.add, (Z, W)),
    "subtract": (pnp.subtract, np.subtract, (Z, W)),
    "multiply": (pnp.multiply, np.multiply, (Z, W)),
    "divide": (pnp.divide, np.divide, (Z, W)),
    "multiply_real": (pnp.multiply, np.multiply, (Z, X)),        # promotes f32 to c64
    "scalar": (lambda a: a * (2 - 1j) + 1, lambda a: a * (2 - 1j) + 1, (Z,)),
    "negative": (pnp.negative, np.negative, (Z,)),
    "square": (pnp.square, np.square, (Z,)),
    "power_int": (lambda a: a ** 3, lambda a: a ** 3, (Z,)),
    "power_neg": (lambda a: a ** -2, lambda a: a ** -2.0, (Z,)),
    "power": (pnp.power, np.power, (Z, W)),
    "one_over": (lambda a: 1 / a, lambda a: 1 / a, (Z,)),
    **{n: (getattr(pnp, n), getattr(np, n), (Z,)) for n in (
        "exp", "log", "log1p", "expm1", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh",
        "arcsin", "arccos", "arctan", "arcsinh", "arctanh", "exp2", "log2", "log10",
        "sign", "abs", "real", "imag", "conj", "conjugate", "angle", "iscomplex", "isreal")},
    "arccosh": (pnp.arccosh, np.arccosh, (Z + 2,)),
    "equal": (pnp.equal, np.equal, (Z, np.where([True, False, True], Z, W))),
    "not_equal": (pnp.not_equal, np.not_equal, (Z, np.where([True, False, True], Z, W))),
    "where": (lambda a, b: pnp.where(a.real > 0, a, b), lambda a, b: np.where(a.real > 0, a, b),
              (Z, W)),
    "angle_deg": (lambda a: pnp.angle(a, deg=True), lambda a: np.angle(a, deg=True), (Z,)),
    "angle_real": (pnp.angle, np.angle, (X,)),
    "real_of_real": (pnp.real, np.real, (X,)),
    "imag_of_real": (pnp.imag, np.imag, (X,)),
    "astype_float": (lambda a: a.astype(np.float32), lambda a: a.real, (Z,)),
    "astype_int": (lambda a: (a * 3).astype(np.int32), lambda a: (a * 3).real.astype(np.int32),
                   (Z,)),
    "astype_bool": (lambda a: a.astype(bool), lambda a: a != 0, (np.array([0, 1j, 2], np.complex64),)),
    "to_complex": (lambda a: a.astype(np.complex64), lambda a: a.astype(np.complex128), (X,)),
    "lax_complex": (lax.complex, lambda a, b: a + 1j * b, (X, X[::-1].copy())),
    "lax_conj_real": (lax.conj, lambda a: a.astype(np.complex128), (X,)),
    "sum": (pnp.sum, np.sum, (M,)),
    "sum_axis": (lambda a: pnp.sum(a, axis=0), lambda a: np.sum(a, axis=0), (M,)),
    "prod": (lambda a: pnp.prod(a, axis=1), lambda a: np.prod(a, axis=1), (M,)),
    "cumsum": (lambda a: pnp.cumsum(a, axis=1), lambda a: np.cumsum(a, axis=1), (M,)),
    "cumprod": (lambda a: pnp.cumprod(a, axis=1), lambda a: np.cumprod(a, axis=1), (M,)),
    "mean": (pnp.mean, np.mean, (M,)),
    "var": (lambda a: pnp.var(a, axis=1), lambda a: np.var(a, axis=1), (M,)),
    "std": (pnp.std, np.std, (M,)),
    "matmul": (pnp.matmul, np.matmul, (M, M.T.copy())),
    "dot_real": (pnp.dot, np.dot, (M, X)),
    "einsum": (lambda a, b: pnp.einsum("ij,kj->ik", a, b), lambda a, b: np.einsum("ij,kj->ik", a, b),
               (M, M)),
    "vdot": (pnp.vdot, np.vdot, (Z, W)),                        # conjugates the first operand
    "inner": (pnp.inner, np.inner, (Z, W)),
    "outer": (pnp.outer, np.outer, (Z, W)),
    "round": (lambda a: pnp.round(a * 3, 1), lambda a: np.round(a * 3, 1), (Z,)),
    "isfinite": (pnp.isfinite, np.isfinite, (np.array([1j, np.inf + 0j, complex(0, np.nan)],
                                                      np.complex64),)),
    "isnan": (pnp.isnan, np.isnan, (np.array([1j, np.inf + 0j, complex(0, np.nan)],
                                                np.complex64),)),
    "isinf": (pnp.isinf, np.isinf, (np.array([1j, complex(1, -np.inf), complex(0, np.nan)],
                                                np.complex64),)),
    "norm": (pnp.linalg.norm, np.linalg.norm, (M,)),
    "norm_axis": (lambda a: pnp.linalg.norm(a, axis=1), lambda a: np.linalg.norm(a, axis=1), (M,)),
    "cov": (pnp.cov, np.cov, (M,)),
    "corrcoef": (pnp.corrcoef, np.corrcoef, (M + np.arange(3) ** 2,)),
    "maximum": (pnp.maximum, np.maximum, (Z, np.where([True, False, False], Z + 0.5j, W))),
    "minimum": (pnp.minimum, np.minimum, (Z, np.where([True, False, False], Z + 0.5j, W))),
    "max": (pnp.max, np.max, (M,)), "min": (pnp.min, np.min, (M,)),
    "max_axis": (lambda a: pnp.max(a, axis=0), lambda a: np.max(a, axis=0), (M,)),
    "min_axis": (lambda a: pnp.min(a, axis=1), lambda a: np.min(a, axis=1), (M,)),
    "ptp": (pnp.ptp, np.ptp, (M,)),
    "sort": (pnp.sort, np.sort, (np.concatenate([Z, W, Z.real + 0.5j]),)),
    "argsort": (pnp.argsort, lambda a: np.argsort(a, kind="stable"),
                (np.concatenate([Z, W, Z.real + 0.5j]),)),
    "unique": (lambda a: pnp.unique(a, size=2), np.unique, (np.concatenate([Z[:2], Z[:2]]) * 1j,)),
    "nan_to_num": (pnp.nan_to_num, np.nan_to_num,
                   (np.array([complex(np.nan, 1), complex(np.inf, -np.inf), 1 + 2j], np.complex64),)),
    "reciprocal": (pnp.reciprocal, np.reciprocal, (Z,)),
    "arctan2": (pnp.arctan2, lambda a, b: -1j * np.log((b + 1j * a) / np.sqrt(a * a + b * b)),
                (Z, W)),
    "logaddexp": (pnp.logaddexp, lambda a, b: np.log(np.exp(a) + np.exp(b)), (Z, W)),
    "sort_complex": (pnp.sort_complex, np.sort_complex, (np.concatenate([Z, W, Z.real + 0j]),)),
}


def _close(got, want, dtype):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape
    if want.dtype.kind in "cf":
        tol = 2e-5 if np.dtype(dtype).itemsize <= 8 else 1e-12
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", list(TABLE))
def test_numpy_complex_matches_numpy_eager_and_jit(name):
    fn, ref, args = TABLE[name]
    wide = [a.astype(np.complex128 if a.dtype.kind == "c" else np.float64) for a in args]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        warnings.simplefilter("ignore", DeprecationWarning)    # astype complex -> real
        want = ref(*wide)
        eager = fn(*[pnp.asarray(a) for a in args])
        jitted = plugax.jit(fn)(*args)
    _close(eager, want, np.complex64)
    _close(jitted, want, np.complex64)
    assert np.asarray(eager).dtype == np.asarray(jitted).dtype
    if np.asarray(want).dtype.kind == "c":
        assert np.asarray(eager).dtype == np.complex64     # no widening with x64 off
    elif name in ("abs", "real", "imag", "angle", "var", "std", "astype_float"):
        assert np.asarray(eager).dtype == np.float32        # complex -> its real dtype


def test_astype_complex_to_real_warns_as_jax():
    z = pnp.asarray(Z)
    with pytest.warns(DeprecationWarning, match="Casting from complex to real dtypes will soon"):
        assert z.astype(np.float32).dtype == np.float32
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert z.astype(bool).dtype == np.bool_ and z.astype(np.complex64).dtype == np.complex64
        assert lax.convert_element_type(z, np.float32).dtype == np.float32   # lax: silent


def test_complex128_under_x64_and_complex64_without():
    from plugax.testing import x64
    z = np.array([1 + 2j], np.complex128)
    assert pnp.asarray(z).dtype == np.complex64
    assert (pnp.asarray(X) * 1j).dtype == np.complex64      # weak complex scalar
    with x64():
        a = pnp.asarray(z)
        assert a.dtype == np.complex128
        assert (pnp.asarray(X) * 1j).dtype == np.complex64  # f32 with a weak c* -> c64
        assert (a * np.float64(2)).dtype == np.complex128
        assert pnp.abs(a).dtype == np.float64
        np.testing.assert_allclose(plugax.jit(pnp.exp)(a), np.exp(z), rtol=1e-14)


# --- JAX's differentiation convention: values recorded with jax 0.10.2 ------------------
# GRADS[name] = jax.grad(F[name])(Z) for a real-valued F of complex z
GRADS = {
    'abs_sq': [(1.2-1.6j), (-2.4-0.6j), (0.5+3j)],
    'abs': [(0.6-0.8j), (-0.970143-0.242536j), (0.164399+0.986394j)],
    'real_of_square': [(1.2+1.6j), (-2.4+0.6j), (0.5-3j)],
    'imag_of_exp': [(1.30711-1.26948j), (0.089009-0.287742j), (-1.28081-0.0908284j)],
    'angle': [(-0.8-0.6j), (-0.196078+0.784314j), (0.648649-0.108108j)],
    'abs_of_sin_times_w': [(0.518301-1.32104j), (-0.317557-0.299312j), (0.103099+2.15432j)],
    'real_of_conj_dot': [(1.1+0.4j), (0.2-0.9j), (-0.7+0.6j)],
    'abs_of_log': [(-0.8-0.6j), (-0.252972+0.767854j), (-0.590706+0.288961j)],
    'sqrt_real': [(0.447214-0.223607j), (0.0549299-0.446201j), (0.309375+0.26208j)],
    'real_of_z_over_w': [(-0.0370804+3.17197j), (4.28529-3.21882j), (-7.38603-1.54412j)],
    'astype_real': [(2-1j), (2-1j), (2-1j)],
    'abs_of_cumsum': [(-0.537357-0.925319j), (-1.13736-0.125319j), (-0.658505+0.752577j)],
    'abs_of_prod': [(1.12859-1.50479j), (-1.47529-0.368822j), (0.20335+1.2201j)],
    'tanh_abs': [(-0.0273322-1.12234j), (-0.257264-0.178925j), (-13.8857+4.28325j)],
    'abs_of_max': [(1.2-1.6j), 0j, (1+0j)],
}
F = {
    "abs_sq": lambda z: pnp.sum(pnp.abs(z) ** 2),
    "abs": lambda z: pnp.sum(pnp.abs(z)),
    "real_of_square": lambda z: pnp.sum(pnp.real(z * z)),
    "imag_of_exp": lambda z: pnp.sum(pnp.imag(pnp.exp(z))),
    "angle": lambda z: pnp.sum(pnp.angle(z)),
    "abs_of_sin_times_w": lambda z: pnp.sum(pnp.abs(pnp.sin(z) * W)),
    "real_of_conj_dot": lambda z: pnp.real(pnp.vdot(z, W)),
    "abs_of_log": lambda z: pnp.sum(pnp.abs(pnp.log(z))),
    "sqrt_real": lambda z: pnp.sum(pnp.real(pnp.sqrt(z))),
    "real_of_z_over_w": lambda z: pnp.sum(pnp.real(z / W + z ** 3)),
    "astype_real": lambda z: pnp.sum(pnp.real(z).astype(pnp.float32) * 2 + pnp.imag(z)),
    "abs_of_cumsum": lambda z: pnp.sum(pnp.abs(pnp.cumsum(z))),
    "abs_of_prod": lambda z: pnp.abs(pnp.prod(z)),
    "tanh_abs": lambda z: pnp.sum(pnp.abs(pnp.tanh(z))),
    "abs_of_max": lambda z: pnp.abs(pnp.max(z)) ** 2 + pnp.sum(pnp.real(pnp.maximum(z, W))),
}
# jax.vmap(jax.grad(H[name], holomorphic=True))(Z)
HOLOMORPHIC = {
    'sin': [(1.10383-0.501462j), (0.378786+0.283825j), (2.27928+0.526792j)],
    'z_cubed_over_w': [(-1.51533+2.06715j), (3.88248-0.551825j), (-4.61223-3.72263j)],
    'exp_log1p': [(1+0j), (1+0j), (1+0j)],
}
H = {"sin": pnp.sin, "z_cubed_over_w": lambda z: z ** 3 / W[0],
     "exp_log1p": lambda z: pnp.exp(pnp.log1p(z))}
# jax.vjp(lambda z: conj(z) * exp(z) + real(z), Z)[1](CT); jax.jvp(lambda z: abs(z) *
# angle(z), (Z,), (W,))[1]; jax.vjp(lambda x: exp(1j * x) * 2, X)[1](CT)
CT = np.array([0.5 - 1j, 2 + 0.1j, -0.3 + 0.3j], np.complex64)
VJP = [(3.11422-1.30711j), (1.94872-0.624918j), (-0.470994+0.226873j)]
JVP = [-0.80472, -0.851382, -1.45927]
VJP_REAL_IN = [1.61515, 3.47411, 0.795267]


@pytest.mark.parametrize("name", list(F))
def test_grad_of_real_function_of_complex_input_is_jaxs(name):
    for g in (plugax.grad(F[name]), plugax.jit(plugax.grad(F[name]))):
        got = g(Z)
        assert got.dtype == np.complex64
        np.testing.assert_allclose(got, GRADS[name], rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("name", list(H))
def test_holomorphic_grad_jacfwd_jacrev_are_jaxs(name):
    want = np.asarray(HOLOMORPHIC[name])
    got = plugax.vmap(plugax.grad(H[name], holomorphic=True))(Z)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)
    for jac in (plugax.jacfwd, plugax.jacrev):
        np.testing.assert_allclose(jac(H[name], holomorphic=True)(Z), np.diag(want),
                                   rtol=2e-5, atol=2e-5)


def test_vjp_and_jvp_of_complex_functions_are_jaxs():
    _, f_vjp = plugax.vjp(lambda z: pnp.conj(z) * pnp.exp(z) + pnp.real(z), Z)
    np.testing.assert_allclose(f_vjp(CT)[0], VJP, rtol=2e-5, atol=2e-5)
    _, t = plugax.jvp(lambda z: pnp.abs(z) * pnp.angle(z), (Z,), (W,))
    assert t.dtype == np.float32
    np.testing.assert_allclose(t, JVP, rtol=2e-5, atol=2e-5)
    _, f_vjp = plugax.vjp(lambda x: pnp.exp(1j * x) * 2, X)
    assert f_vjp(CT)[0].dtype == np.float32               # a real input's cotangent is real
    np.testing.assert_allclose(f_vjp(CT)[0], VJP_REAL_IN, rtol=2e-5, atol=2e-5)


def test_jvp_of_complex_functions_matches_finite_differences():
    """Along a complex direction, in complex128 (independent of the recorded values)."""
    from plugax.testing import x64
    fns = [lambda z: pnp.exp(z) * pnp.conj(z), lambda z: pnp.abs(pnp.sin(z)),
           lambda z: pnp.angle(z) + pnp.real(z ** 3), lambda z: pnp.sqrt(z) / (z + 2j),
           lambda z: pnp.cumsum(pnp.log(z)) * pnp.imag(z)]
    with x64():
        z, d, eps = Z.astype(np.complex128), W.astype(np.complex128), 1e-6
        for f in fns:
            _, t = plugax.jvp(f, (z,), (d,))
            fd = (np.asarray(f(z + eps * d)) - np.asarray(f(z - eps * d))) / (2 * eps)
            np.testing.assert_allclose(t, fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("call,message", [
    (lambda: plugax.grad(lambda z: z * z)(Z[0]), "but got complex64. For holomorphic"),
    (lambda: plugax.grad(pnp.sin, holomorphic=True)(X[0]),
     "grad with holomorphic=True requires inputs with complex dtype, but got float32"),
    (lambda: plugax.grad(pnp.abs, holomorphic=True)(Z[0]),
     "grad with holomorphic=True requires outputs with complex dtype, but got float32"),
    (lambda: plugax.jacfwd(pnp.sin)(Z), "jacfwd requires real-valued inputs"),
    (lambda: plugax.jacrev(pnp.sin)(Z), "jacrev requires real-valued outputs"),
    (lambda: plugax.jacfwd(pnp.sin, holomorphic=True)(X),
     "jacfwd with holomorphic=True requires inputs with complex dtype"),
    (lambda: pnp.floor(Z), "'floor' does not accept dtype complex64"),
    (lambda: pnp.less(Z, W), "'lt' does not accept dtype complex64"),
    (lambda: lax.real(X), "'real' does not accept dtype float32"),
    (lambda: lax.complex(Z, Z), "'complex' needs two operands of one dtype"),
    (lambda: pnp.cbrt(Z), "'cbrt' does not accept dtype complex64"),
    (lambda: pnp.fabs(Z), "ufunc 'fabs' does not support complex dtypes"),
])
def test_complex_errors_are_jaxs(call, message):
    with pytest.raises(TypeError, match=message.replace("(", r"\(")):
        call()


def test_hypot_of_complex_is_refused_as_jax():
    with pytest.raises(ValueError, match="jnp.hypot is not well defined for complex-valued"):
        pnp.hypot(Z, W)


def test_complex_dtype_names_are_numpys_scalar_types():
    assert pnp.complex64 is np.complex64 and pnp.csingle is np.complex64
    assert pnp.complex128 is np.complex128 and pnp.cdouble is np.complex128
    assert pnp.complex_ is np.complex128 and pnp.complexfloating is np.complexfloating
    assert pnp.iscomplexobj(Z) and pnp.iscomplexobj(1j) and not pnp.iscomplexobj(X)
    assert pnp.isrealobj(X) and not pnp.isrealobj(pnp.asarray(Z)) and not pnp.iscomplexobj(None)
    a = pnp.asarray(Z)
    np.testing.assert_array_equal(a.real, Z.real)
    np.testing.assert_array_equal(a.imag, Z.imag)
    np.testing.assert_array_equal(a.conj(), Z.conj())
    np.testing.assert_array_equal(a.conjugate(), Z.conj())
    assert pnp.asarray(X).conj().dtype == np.float32      # a real array stays real


# jax.lax.cummax / cummin of [1+1j, 0.5+3j, 2-1j]
CUMMAX = [(1 + 1j), (1 + 1j), (2 - 1j)]
CUMMIN = [(1 + 1j), (0.5 + 3j), (0.5 + 3j)]


def test_cummax_cummin_of_complex_are_jaxs():
    z = np.array([1 + 1j, 0.5 + 3j, 2 - 1j], np.complex64)
    for f, want in ((lax.cummax, CUMMAX), (lax.cummin, CUMMIN)):
        np.testing.assert_array_equal(f(z), want)
        np.testing.assert_array_equal(plugax.jit(f)(z), want)


def test_max_and_min_reductions_of_complex_with_the_kit():
    """reduce_max/min order complex numbers lexicographically (NumPy's and JAX's order);
    the kit checks the jvp (JAX's chooser rule) against finite differences, vmap, jit
    and the lowering (a lexicographic stablehlo.reduce body) against NumPy."""
    from plugax.testing import check_primitive
    for fn in (lambda a: lax.reduce_max(a, (1,)), lambda a: lax.reduce_min(a, (0, 1)),
               lambda a: lax.cummax(a, axis=1), lambda a: lax.cummin(a, axis=0, reverse=True)):
        ran = check_primitive(fn, M, transformations=False, lowering=True)
        assert "jvp" in ran and "lowering" in ran


def test_sort_with_complex_keys_with_the_kit():
    """lax.sort orders complex keys by real part, then imaginary part (as XLA's and
    NumPy's): the kit checks jvp (the tangents follow the permutation), vmap, jit and
    the lowering (the comparator compares the parts) against NumPy's lexsort. Distinct
    real parts here (a tie makes the sort discontinuous along complex directions); the
    ties broken by the imaginary part are in the table above."""
    from plugax.testing import check_primitive
    keys = np.concatenate([Z, W, Z.real + 0.3 + 0.5j]).astype(np.complex64)
    ran = check_primitive(lambda a: lax.sort(a), keys, transformations=False, lowering=True)
    assert "jvp" in ran and "lowering" in ran
