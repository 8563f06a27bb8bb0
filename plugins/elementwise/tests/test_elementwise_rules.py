"""Conformance of a representative set of elementwise primitives (plugax.testing)."""
import numpy as np
import pytest

import plugax.lax as lax
from plugax.testing import check_primitive
from plugax_elementwise import plugin

PRIMS = {rs.primitive.name: rs.primitive for rs in plugin.plugax_primitive_rules()}
x = np.linspace(0.2, 0.9, 6).astype(np.float32).reshape(2, 3)
y = np.linspace(1.1, 1.9, 6).astype(np.float32).reshape(2, 3)


@pytest.mark.parametrize("name", ["sin", "cos", "exp", "log", "tanh", "neg", "sqrt", "logistic"])
def test_unary_rules(name):
    assert check_primitive(PRIMS[name], x)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "max", "min", "atan2"])
def test_binary_rules(name):
    assert check_primitive(PRIMS[name], x, y)


def test_linear_transposes():
    for name in ["add", "sub"]:
        assert "transpose" in check_primitive(PRIMS[name], x, y, rules=("transpose",),
                                              linear_argnums=(0, 1))
    assert "transpose" in check_primitive(PRIMS["neg"], x, rules=("transpose",),
                                          linear_argnums=(0,))


def test_comparison_has_bool_output_and_zero_tangent():
    out = lax.lt(x, y)
    assert out.dtype == np.bool_ and bool(np.all(np.asarray(out)))
