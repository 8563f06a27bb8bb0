"""Mistakes get errors that say what is wrong with which argument or primitive."""
import numpy as np
import pytest

import plugax
import plugax.numpy as jnp
from plugax.extend import PluginInfo, Primitive, RuleSet, ShapedArray, hookimpl
from plugax.experimental.jet import jet, zero_series
from plugax.testing import scoped_plugin

X = np.array([0.3, 0.7, 1.2])


@pytest.mark.parametrize("primals, series, error, message", [
    ((X, X), ([X], [X, X]), ValueError,
     r"inconsistent lengths for different arguments \(argument 0 has 1, argument 1 has 2\)"),
    ((X,), ([X, np.ones(2)],), ValueError,
     r"term 1 of the series of argument 0 has shape \(2,\), but the primal has shape \(3,\)"),
    ((X,), (X,), TypeError, r"series\[0\] must be a list of terms"),
    ((X,), ([X], [X]), ValueError, "got 1 primals but 2 series"),
    ((np.arange(3),), ([np.ones(3)],), TypeError,
     "argument 0 has dtype int.*no Taylor series; pass zero_series"),
    (({"a": X},), ([X],), ValueError, r"series\[0\] must have the structure of primals\[0\]"),
])
def test_bad_input_is_named(primals, series, error, message):
    with pytest.raises(error, match=message):
        jet(lambda *a: a[0], primals, series)


def test_primals_and_series_must_be_sequences():
    with pytest.raises(TypeError, match="primals and series must be tuples or lists"):
        jet(jnp.sin, X, [X])


def test_an_integer_argument_may_come_with_zero_series():
    p, (s,) = jet(lambda x, n: x * n, (X, np.arange(3)), ([X], zero_series))
    np.testing.assert_allclose(np.asarray(s), X * np.arange(3))


class _NoJet:
    """A primitive from a plugin that knows nothing about jet."""
    prim = Primitive("jetless_double")

    @hookimpl
    def plugax_plugin_info(self):
        return PluginInfo(name="jetless")

    @hookimpl
    def plugax_primitive_rules(self):
        return [RuleSet(self.prim, impl=lambda ctx, x: x * 2,
                        abstract_eval=lambda ctx, x: ShapedArray(x.shape, x.dtype),
                        jvp=lambda ctx, p, t: (self.prim.bind(*p), self.prim.bind(*t)))]


def test_a_primitive_without_a_jet_rule_names_itself_and_plugax_jet():
    with scoped_plugin(_NoJet(), "jetless"):
        assert np.allclose(np.asarray(_NoJet.prim.bind(X)), 2 * X)
        with pytest.raises(plugax.MissingRuleError,
                           match="primitive 'jetless_double' has no jet rule.*plugax-jet"):
            jet(_NoJet.prim.bind, (X,), ([X],))
        # constants never reach the rule table: no series, no rule needed
        p, (s,) = jet(lambda x: x + _NoJet.prim.bind(X), (X,), ([X],))
        np.testing.assert_allclose(np.asarray(p), 3 * X)
