"""Hook implementations of the special_functions family.

`primitives` holds the functions XLA has CHLO ops for (erf, erfc, erf_inv, lgamma,
digamma, polygamma, zeta, bessel_i1e), `expanded` those JAX writes in lax code
(igamma, igammac, igamma_grad_a, regularized_incomplete_beta, bessel_i0e), as
decompositions; `lax_api`, `scipy_api`, `scipy_more` and `scipy_complex` (wofz)
the front ends.
"""
from __future__ import annotations

from plugax.extend import PluginInfo, RuleSet, hookimpl

from . import expanded, lax_api, primitives, scipy_api, scipy_complex, scipy_more


@hookimpl
def plugax_plugin_info() -> PluginInfo:
    # elementwise, shape, reductions: the jvps, decompositions and front ends;
    # control_flow: the while_loops of the series and continued fractions
    return PluginInfo(name="special_functions",
                      requires=("elementwise", "shape", "reductions", "control_flow"),
                      description="special functions: erf, erf_inv, lgamma, digamma, polygamma, "
                                  "zeta, igamma, betainc, Bessel i0e/i1e; plugax.scipy.special")


@hookimpl
def plugax_primitive_rules() -> list[RuleSet]:
    return [*primitives.RULES, *expanded.RULES]


@hookimpl
def plugax_frontend() -> dict:
    return {"lax": lax_api.LAX, "scipy.special": {**scipy_api.SCIPY, **scipy_more.SCIPY,
                                                   **scipy_complex.SCIPY}}


@hookimpl
def plugax_test_cases() -> list:
    from .cases import cases  # imports plugax.testing: only when a test suite asks
    return cases()
