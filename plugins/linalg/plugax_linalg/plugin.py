"""Hook implementations of the linear-algebra family (issue 15).

Six primitives (`primitives`: cholesky, triangular_solve, lu, qr, eigh, svd) with
their differentiation rules (`ad`) and lowerings (`lowering`: LAPACK on CPU, cuSOLVER
on GPUs, with `gpu` for what GPUs do otherwise), and three with their rules in one
module each (`eig`: the general eigensolver; `hessenberg`; `schur`); `platforms`
says which rule lowers each on which platform. The front
ends `plugax.lax.linalg` (`lax_api`), `plugax.numpy.linalg` (`numpy_api`) and
`plugax.scipy.linalg` (`scipy_api`) are built on them.
"""
from __future__ import annotations

from plugax.extend import PluginInfo, RuleSet, hookimpl

from . import (ad, eig as E, extra_api, hessenberg as H, lax_api, numpy_api, numpy_poly,
               platforms, primitives as P, schur as S, schur_funcs, scipy_api, scipy_more)


@hookimpl
def plugax_plugin_info() -> PluginInfo:
    return PluginInfo(name="linalg", requires=("elementwise", "shape", "dot", "reductions"),
                      description="factorisations and solves (cholesky, lu, qr, eigh, svd, eig, "
                                  "hessenberg)")


@hookimpl
def plugax_primitive_rules() -> list:
    return [RuleSet(p, impl=P.IMPL[p], abstract_eval=P.ABSTRACT_EVAL[p], jvp=ad.JVP[p],
                    batching=P.BATCHING[p], transpose=ad.TRANSPOSE.get(p),
                    lowering=platforms.LOWERING[p])
            for p in P.IMPL] + [
        RuleSet(E.eig_p, impl=E.RULES["impl"], abstract_eval=E.RULES["abstract_eval"],
                jvp=E.RULES["jvp"], batching=E.RULES["batching"],
                lowering=platforms.LOWERING[E.eig_p]),
        RuleSet(H.hessenberg_p, impl=H.RULES["impl"], abstract_eval=H.RULES["abstract_eval"],
                batching=H.RULES["batching"], lowering=platforms.LOWERING[H.hessenberg_p]),
        RuleSet(S.schur_p, impl=S.RULES["impl"], abstract_eval=S.RULES["abstract_eval"],
                batching=S.RULES["batching"], lowering=platforms.LOWERING[S.schur_p])]


@hookimpl
def plugax_frontend() -> dict:
    return {"lax.linalg": {**lax_api.LAX_LINALG, **E.LAX_LINALG, **H.LAX_LINALG,
                           **S.LAX_LINALG},
            "numpy": {**numpy_poly.NUMPY, **E.NUMPY},
            "numpy.linalg": {**numpy_api.NUMPY_LINALG, **extra_api.NUMPY_LINALG_EXTRA,
                             **E.NUMPY_LINALG},
            "scipy.linalg": {**scipy_api.SCIPY_LINALG, **extra_api.SCIPY_LINALG_EXTRA,
                             **scipy_more.SCIPY_LINALG_MORE, **H.SCIPY_LINALG,
                             **S.SCIPY_LINALG, **schur_funcs.SCIPY_LINALG_SCHUR_FUNCS}}


@hookimpl
def plugax_test_cases() -> list:
    from .cases import cases  # imports plugax.testing: only when a test suite asks
    return cases()
