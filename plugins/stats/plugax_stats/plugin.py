"""Hook implementations of the stats family: `plugax.scipy.stats`, `plugax.scipy.optimize`
and `plugax.scipy.signal`.

A front-end-only family, like nn: no primitive, no rules, only functions written with
plugax.numpy, plugax.lax and plugax.scipy.special, so grad, jit and vmap work through
them because they work on the primitives underneath. Each distribution becomes a
dotted namespace (`scipy.stats.norm`), which the loader turns into the module
`plugax.scipy.stats.norm` that JAX programs import.
"""
from __future__ import annotations

from typing import Callable

from plugax.extend import PluginInfo, hookimpl

from . import continuous, continuous_special, discrete, multivariate  # noqa: F401 (register)
from . import kde, optimize, signal, summaries
from ._registry import DISTRIBUTIONS


@hookimpl
def plugax_plugin_info() -> PluginInfo:
    # special_functions: gammaln, logsumexp, ndtr/log_ndtr/ndtri, betaln/betainc,
    # gammainc/gammaincc, i0e; elementwise: xlogy, xlog1py, expit, logit, entr (all looked
    # up in plugax.scipy.special when called, see _common.special); linalg:
    # multivariate_normal, gaussian_kde; sort: rankdata, mode; control_flow: minimize's
    # while_loops; conv: scipy.signal; random: gaussian_kde.resample
    return PluginInfo(name="stats",
                      requires=("elementwise", "reductions", "shape", "dot", "special_functions",
                                "linalg", "sort", "control_flow", "conv", "random"),
                      description="plugax.scipy.stats distributions, scipy.optimize.minimize "
                                  "(BFGS), scipy.signal convolutions")


@hookimpl
def plugax_frontend() -> dict[str, dict[str, Callable]]:
    stats: dict = {"gaussian_kde": kde.gaussian_kde, "mode": summaries.mode,
                   "rankdata": summaries.rankdata, "sem": summaries.sem}
    namespaces: dict = {"scipy.stats": stats}
    for name, members in DISTRIBUTIONS.items():
        namespaces[f"scipy.stats.{name}"] = dict(members)
    namespaces["scipy.optimize"] = dict(optimize.NAMES)
    namespaces["scipy.signal"] = dict(signal.NAMES)
    return namespaces
