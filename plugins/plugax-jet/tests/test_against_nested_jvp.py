"""jet agrees with nested jvp up to order 4 on many functions.

The reference never touches a jet rule: the k-th output term along the curve
x(t) = x + sum_k h_k t^k / k! is d^k/dt^k f(x(t)) at 0, computed by k nested
`plugax.jvp`s. Two curves per function: a straight line (h = [v, 0, 0, 0],
so the terms are the directional derivatives f^(k)(x)[v, ..., v]) and a
curved one (every h_k nonzero, which exercises every coefficient of every
recurrence).
"""
import numpy as np
import pytest

import plugax
import plugax.numpy as jnp
from plugax import lax
from plugax.experimental.jet import jet
from plugax_jet.derive import nested_jvp_series

X = np.array([0.3, 0.7, 1.2, -0.4])
LINE = [np.array([1.0, -0.5, 0.25, 0.8]), np.zeros(4), np.zeros(4), np.zeros(4)]
CURVE = [np.array([1.0, -0.5, 0.25, 0.8]), np.array([0.3, 0.1, -0.2, 0.5]),
         np.array([-0.4, 0.2, 0.1, 0.3]), np.array([0.1, 0.2, 0.3, -0.1])]

FUNCTIONS = {
    "sin": jnp.sin, "cos": jnp.cos, "tan": jnp.tan, "tanh": jnp.tanh, "exp": jnp.exp,
    "log": lambda v: jnp.log(v + 1.0), "sqrt": lambda v: jnp.sqrt(v + 1.0),
    "rsqrt": lambda v: lax.rsqrt(v + 1.0), "logistic": lax.logistic, "log1p": jnp.log1p,
    "expm1": jnp.expm1, "cbrt": lambda v: jnp.cbrt(v + 2.0), "exp2": jnp.exp2,
    "sinh_cosh": lambda v: jnp.sinh(v) * jnp.cosh(v),
    "pow_const": lambda v: (v + 1.0) ** 2.5, "pow_negative_base": lambda v: lax.pow(v - 2.0, 3.0),
    "pow_varying": lambda v: jnp.power(v + 1.0, jnp.cos(v)),
    "integer_pow": lambda v: v ** 3 + lax.integer_pow(v + 2.0, -2),
    "square_at_zero": lambda v: jnp.square(v * 0.0 + v - v) + v ** 2,
    "abs": lambda v: jnp.abs(v - 0.5), "sign_floor": lambda v: jnp.sign(v) * v + jnp.floor(v),
    "div": lambda v: jnp.sin(v) / (v + 2.0), "rem": lambda v: lax.rem(v * 3.0, 0.7),
    "max_min": lambda v: jnp.maximum(v, 0.5) * jnp.minimum(jnp.cos(v), 0.8),
    "atan_asinh": lambda v: jnp.arctan(v) + jnp.arcsinh(v),
    "asin_acos_atanh": lambda v: jnp.arcsin(v / 2) * jnp.arccos(v / 3) + jnp.arctanh(v / 2),
    "acosh": lambda v: jnp.arccosh(v + 2.0), "atan2": lambda v: jnp.arctan2(v, 1.5 - v),
    "where_compare": lambda v: jnp.where(v > 0.5, v ** 2, jnp.cos(v)),
    "clip": lambda v: jnp.clip(v, -0.1, 1.0) * v,
    "convert": lambda v: lax.convert_element_type(jnp.sin(v), np.float32).astype(np.float64),
    "sum": lambda v: jnp.sum(jnp.sin(v) ** 2), "mean_axis": lambda v: jnp.mean(
        jnp.reshape(v, (2, 2)) ** 3, axis=0),
    "reduce_max_min": lambda v: jnp.max(jnp.sin(v)) * jnp.min(jnp.exp(v)),
    "argmax_take": lambda v: v[jnp.argmax(v)] ** 2,
    "cumsum": lambda v: jnp.cumsum(v ** 2), "prod": lambda v: jnp.prod(v + 1.0),
    "cumprod_cummax": lambda v: jnp.cumprod(v) + lax.cummax(jnp.sin(v)),
    "dot": lambda v: jnp.dot(jnp.outer(v, v), jnp.sin(v)),
    "matmul_2d": lambda v: jnp.reshape(v, (2, 2)) @ jnp.exp(jnp.reshape(v, (2, 2))),
    "structural": lambda v: jnp.concatenate([v[::-1], jnp.transpose(
        jnp.broadcast_to(v, (2, 4)))[1:3, 0] ** 2, lax.pad(v, 0.5, [(1, 2, 1)])]),
    "dynamic_slice_gather": lambda v: lax.dynamic_slice(v, (1,), (2,)) * v[jnp.array([0, 3])],
    "cond": lambda v: lax.cond(jnp.sum(v) > 0, lambda z: jnp.sin(z), lambda z: z ** 2, v),
    "while": lambda v: lax.while_loop(lambda c: c[0] < 3,
                                      lambda c: (c[0] + 1, jnp.sin(c[1]) * 1.5), (0, v))[1],
    "scan": lambda v: lax.scan(lambda c, e: (c * e + jnp.sin(e), c * e), 1.0, v),
    "jit_inside": plugax.jit(lambda v: jnp.exp(jnp.sin(v))),
    # logsumexp comes from the special_functions family, which the jet tox env does not load
    "logsumexp": lambda v: plugax.scipy.special.logsumexp(v)
    if hasattr(getattr(plugax, "scipy", None), "special")
    and hasattr(plugax.scipy.special, "logsumexp") else jnp.sum(v),
}


# float32 on the way: both sides round there, differently
RTOL = {"convert": 1e-6}


def _leaves(out):
    return list(out) if isinstance(out, (tuple, list)) and not _is_terms(out) else [out]


def _is_terms(x):
    return isinstance(x, list) and all(hasattr(t, "shape") for t in x)


@pytest.mark.parametrize("curve", [LINE, CURVE], ids=["line", "curve"])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_jet_matches_nested_jvp_to_order_4(name, curve):
    f = FUNCTIONS[name]
    primal, series = jet(f, (X,), (curve,))
    want = nested_jvp_series(f, [X], [curve])
    got = series if isinstance(series, tuple) else [series]
    assert len(got) == len(want)
    np.testing.assert_allclose(np.asarray(_leaves(primal)[0]), np.asarray(_leaves(f(X))[0]),
                               rtol=1e-12)
    for out_index, (g_terms, w_terms) in enumerate(zip(got, want)):
        assert len(g_terms) == 4
        for k, (g, w) in enumerate(zip(g_terms, w_terms), start=1):
            np.testing.assert_allclose(np.asarray(g), w, rtol=RTOL.get(name, 1e-9), atol=1e-10,
                                       err_msg=f"{name}: output {out_index}, order {k}")


def test_there_are_at_least_twenty_functions():
    assert len(FUNCTIONS) >= 20


def test_the_reference_is_not_trivially_zero():
    # a comparison of zeros with zeros would pass for any rule
    want = nested_jvp_series(jnp.sin, [X], [CURVE])[0]
    assert all(np.max(np.abs(w)) > 0.1 for w in want)
