"""Shared fixtures of the kernel tests.

The kernel tests must pass with no primitive family loaded
(``PLUGAX_LOAD_PLUGINS=""``), so they bring their own tiny primitives: the
`toy` fixture registers a plugin with sin, cos, neg, add, mul and gt for the
duration of one test, through the same registry path real plugins use.
"""
from __future__ import annotations

import types

import numpy as np
import pytest

import plugax
from plugax.extend import (Primitive, PluginInfo, Zero, hookimpl,
                           defbroadcasting, defjvp, deflinear, defvectorized)

sin_p = Primitive("sin")
cos_p = Primitive("cos")
neg_p = Primitive("neg")
add_p = Primitive("add")
mul_p = Primitive("mul")
gt_p = Primitive("gt")


def _gt_jvp(ctx, primals, tangents, **params):
    """A comparison is piecewise constant: its tangent is a symbolic zero."""
    out = gt_p.bind(*primals, **params)
    return out, Zero.from_value(out)


class ToyPlugin:
    """Enough of an elementwise family to differentiate, batch and trace small functions."""

    @hookimpl
    def plugax_plugin_info(self) -> PluginInfo:
        return PluginInfo(name="toy")

    @hookimpl
    def plugax_primitive_rules(self) -> list:
        return [
            defvectorized(sin_p, np.sin,
                          jvp=defjvp(sin_p, lambda g, ans, x: mul_p.bind(g, cos_p.bind(x)))),
            defvectorized(cos_p, np.cos,
                          jvp=defjvp(cos_p, lambda g, ans, x:
                                     neg_p.bind(mul_p.bind(g, sin_p.bind(x))))),
            defvectorized(neg_p, np.negative, jvp=deflinear(neg_p)),
            defbroadcasting(add_p, np.add, jvp=deflinear(add_p)),
            defbroadcasting(mul_p, np.multiply,
                            jvp=defjvp(mul_p, lambda g, ans, x, y: mul_p.bind(g, y),
                                       lambda g, ans, x, y: mul_p.bind(x, g))),
            defbroadcasting(gt_p, np.greater, dtype_rule=lambda *avals, **_: np.dtype(bool),
                            weak_type=lambda flags, **_: [False], jvp=_gt_jvp),
        ]

    @hookimpl
    def plugax_array_methods(self) -> dict:
        return {"__add__": lambda x, y: add_p.bind(x, y), "__radd__": lambda x, y: add_p.bind(y, x),
                "__mul__": lambda x, y: mul_p.bind(x, y), "__rmul__": lambda x, y: mul_p.bind(y, x),
                "__neg__": lambda x: neg_p.bind(x), "__gt__": lambda x, y: gt_p.bind(x, y)}


TOY_DISTRIBUTION, TOY_VERSION = "toy-dist", "1.2.3"


@pytest.fixture
def toy():
    """The toy plugin, registered for one test; yields its primitives by name."""
    with plugax.registry.scoped(ToyPlugin(), "toy", distribution=TOY_DISTRIBUTION,
                                version=TOY_VERSION):
        yield types.SimpleNamespace(sin_p=sin_p, cos_p=cos_p, neg_p=neg_p, add_p=add_p,
                                    mul_p=mul_p, gt_p=gt_p, sin=sin_p.bind, cos=cos_p.bind)
