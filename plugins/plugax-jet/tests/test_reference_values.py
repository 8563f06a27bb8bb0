"""jet against JAX's jet (values recorded from jax 0.10.2, x64) and against values by hand."""
import math

import numpy as np
import pytest

import plugax.numpy as jnp
from plugax import lax
from plugax.experimental.jet import jet

X = np.array([0.3, 0.7, 1.2])
SERIES = [np.array([1.0, -0.5, 0.25]), np.array([0.3, 0.1, -0.2]), np.array([0.1, 0.2, 0.3])]

# Computed once with jax 0.10.2 (jax_enable_x64) as
#   jax.experimental.jet.jet(f, (X,), (SERIES,))
# and pasted: (primal_out, [term_1, term_2, term_3]).
JAX_RESULTS = {
    "sin_exp": (lambda v: jnp.sin(jnp.exp(v)),
                [0.9756924260160704, 0.903488472004459, -0.1775774905169722],
                [[0.2958140654990666, 0.43155968051881094, -0.8168374274288127],
                 [-1.3932692276937193, -1.2180483817924235, 0.5716023350358657],
                 [-6.880907539253452, 1.5507276229464182, -0.18025974328553462]]),
    "tanh_sq": (lambda v: jnp.tanh(v) * v ** 2,
                [0.02621813512064317, 0.29614021078741004, 1.2004626340975035],
                [[0.2571498940353511, -0.5785686435277168, 0.6099999628419603],
                 [1.7099481782676094, 0.7682293722655855, -0.3380577840472711],
                 [5.903544719102904, -0.24078718540325086, 0.35841281288813365]]),
    "log_div": (lambda v: jnp.log(1 + v) / (v + 2),
                [0.11407141933369178, 0.1965289818748779, 0.24639292511383445],
                [[0.28485189125959887, -0.07253820597088317, 0.01626191636184532],
                 [-0.4195095451658409, -0.044397320391861006, -0.01958583975241954],
                 [0.6284633743192977, 0.012786833990125215, 0.03775588982472494]]),
    "logistic_sqrt": (lambda v: lax.logistic(jnp.sqrt(v)),
                      [0.6336070457102082, 0.6977613130463034, 0.7494056848611509],
                      [[0.21192221696511074, -0.0630155787219305, 0.021429280411411684],
                       [-0.3413216349787444, -0.017349943599896906, -0.020595369960679445],
                       [1.6118892790006143, 0.012578425721009583, 0.03504316373445028]]),
    "sum_pow": (lambda v: jnp.sum(v ** 3 - jnp.cos(v)), 0.015463569113231879,
                [0.8214211345343007, 3.7998644091302403, 7.76992402637785]),
    "dot": (lambda v: jnp.dot(jnp.outer(v, v), jnp.sin(v)),
            [0.4974166038676371, 1.16063874235782, 1.9896664154705483],
            [[1.758265738845081, -0.595203423666939, 0.8153554070348604],
             [1.7913804156212756, 1.292191457010361, 2.338984362278864],
             [7.123217817250841, -1.7693675763196823, 3.453075451850568]]),
}


@pytest.mark.parametrize("name", sorted(JAX_RESULTS))
def test_matches_jax_jet(name):
    f, primal, terms = JAX_RESULTS[name]
    p, s = jet(f, (X,), (SERIES,))
    np.testing.assert_allclose(np.asarray(p), primal, rtol=1e-12)
    assert len(s) == 3
    for k, (got, want) in enumerate(zip(s, terms), start=1):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10, atol=1e-12,
                                   err_msg=f"{name}, term {k}")


def test_jax_docstring_example_by_faa_di_bruno():
    # sin(h(z)) with h(z) = z^3 at z = 0.5: h0, h1, h2 = z^3, 3 z^2, 6 z
    h0, h1, h2 = 0.5 ** 3, 3 * 0.5 ** 2, 6 * 0.5
    f0, (f1, f2) = jet(jnp.sin, (h0,), ((h1, h2),))
    assert math.isclose(float(f0), math.sin(h0), rel_tol=1e-12)
    assert math.isclose(float(f1), math.cos(h0) * h1, rel_tol=1e-12)
    assert math.isclose(float(f2), -math.sin(h0) * h1 ** 2 + math.cos(h0) * h2, rel_tol=1e-12)


def test_geometric_series_has_factorial_derivatives():
    # 1 / (1 - x) at 0: the k-th derivative is k!
    _, terms = jet(lambda x: 1.0 / (1.0 - x), (0.0,), ([1.0, 0.0, 0.0, 0.0, 0.0],))
    assert [float(t) for t in terms] == [1.0, 2.0, 6.0, 24.0, 120.0]


def test_exp_along_a_line_and_a_scaled_curve():
    # exp(x(t)) with x(t) = 2t: k-th derivative 2^k; with x(t) = t^2 (h_2 = 2): 0, 2, 0, 12
    _, line = jet(jnp.exp, (0.0,), ([2.0, 0.0, 0.0, 0.0],))
    assert [float(t) for t in line] == [2.0, 4.0, 8.0, 16.0]
    _, curve = jet(jnp.exp, (0.0,), ([0.0, 2.0, 0.0, 0.0],))
    np.testing.assert_allclose([float(t) for t in curve], [0.0, 2.0, 0.0, 12.0], atol=1e-12)


def test_order_zero_is_just_the_primal():
    p, s = jet(jnp.sin, (0.5,), ([],))
    assert math.isclose(float(p), math.sin(0.5)) and s == []
