"""Hook implementations of the random family (issue 16).

One primitive, `threefry2x32` (`threefry`), and the `plugax.random` namespace built
on it with other families' front ends (`keys`, `samplers`, ...); permutations sort with
the sort family's `lax.sort_key_val` / `lax.top_k`.
"""
from __future__ import annotations

from plugax.extend import PluginInfo, hookimpl

from . import api, gamma, rbg, threefry


@hookimpl
def plugax_plugin_info() -> PluginInfo:
    # special_functions: erf (truncated_normal), erf_inv (normal in float64), lgamma
    # (poisson); linalg and dot: multivariate_normal's factorisation and einsum, orthogonal
    return PluginInfo(name="random", requires=("elementwise", "shape", "reductions",
                                                "control_flow", "xla_call", "sort",
                                                "special_functions", "dot", "linalg"),
                      description="plugax.random: threefry keys and samplers, bit-exact with JAX")


@hookimpl
def plugax_primitive_rules() -> list:
    return list(threefry.RULES) + list(gamma.RULES) + list(rbg.RULES)


@hookimpl
def plugax_frontend() -> dict:
    return {"random": dict(api.RANDOM), "lax": dict(rbg.LAX)}
