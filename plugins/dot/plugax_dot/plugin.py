"""Hook implementations of the dot family.

One primitive, `dot_general` (module `dot_general`); the NumPy products
(`numpy_api`) and einsum (`einsum`) are front ends that build it.
"""
from __future__ import annotations

from plugax.extend import PluginInfo, RuleSet, hookimpl

from . import dot_general, einsum, lax_extra, numpy_api, numpy_contractions
from .precision import Precision, canonicalize_precision


@hookimpl
def plugax_plugin_info() -> PluginInfo:
    return PluginInfo(name="dot", requires=("shape", "reductions", "elementwise"),
                      description="dot_general and the products built on it: dot, matmul, "
                                  "outer, inner, vdot, tensordot, einsum")


@hookimpl
def plugax_primitive_rules() -> list[RuleSet]:
    return list(dot_general.RULES)


@hookimpl
def plugax_frontend() -> dict:
    # canonicalize_precision is JAX's internal lax.lax function, public here so the conv
    # family (which may reach dot only through plugax.lax) canonicalises the same way
    return {"lax": {**dot_general.LAX, "Precision": Precision,
                    "canonicalize_precision": canonicalize_precision, **lax_extra.LAX},
            "numpy": {**numpy_api.NUMPY, **einsum.NUMPY, **numpy_contractions.NUMPY}}


@hookimpl
def plugax_array_methods() -> dict:
    return dict(numpy_api.METHODS)
