"""Hook implementations of the linear-algebra family (issue 15).

Six primitives (`primitives`: cholesky, triangular_solve, lu, qr, eigh, svd) with
their differentiation rules (`ad`) and LAPACK lowerings (`lowering`); the front
ends `plugax.lax.linalg` (`lax_api`), `plugax.numpy.linalg` (`numpy_api`) and
`plugax.scipy.linalg` (`scipy_api`) are built on them.
"""
from __future__ import annotations

from plugax.extend import PluginInfo, RuleSet, hookimpl

from . import ad, eig as E, extra_api, scipy_more, lax_api, lowering, numpy_api, numpy_poly, primitives as P, scipy_api


@hookimpl
def plugax_plugin_info() -> PluginInfo:
    return PluginInfo(name="linalg", requires=("elementwise", "shape", "dot", "reductions"),
                      description="factorisations and solves (cholesky, lu, qr, eigh, svd)")


@hookimpl
def plugax_primitive_rules() -> list:
    return [RuleSet(p, impl=P.IMPL[p], abstract_eval=P.ABSTRACT_EVAL[p], jvp=ad.JVP[p],
                    batching=P.BATCHING[p], transpose=ad.TRANSPOSE.get(p),
                    lowering={"default": lowering.LOWERING[p]})
            for p in P.IMPL] + [
        RuleSet(E.eig_p, impl=E.RULES["impl"], abstract_eval=E.RULES["abstract_eval"],
                jvp=E.RULES["jvp"], batching=E.RULES["batching"],
                lowering={"default": E.RULES["lowering"]})]


@hookimpl
def plugax_frontend() -> dict:
    return {"lax.linalg": {**lax_api.LAX_LINALG, **E.LAX_LINALG},
            "numpy": {**numpy_poly.NUMPY, **E.NUMPY},
            "numpy.linalg": {**numpy_api.NUMPY_LINALG, **extra_api.NUMPY_LINALG_EXTRA,
                             **E.NUMPY_LINALG},
            "scipy.linalg": {**scipy_api.SCIPY_LINALG, **extra_api.SCIPY_LINALG_EXTRA,
                             **scipy_more.SCIPY_LINALG_MORE}}


@hookimpl
def plugax_test_cases() -> list:
    from .cases import cases  # imports plugax.testing: only when a test suite asks
    return cases()
