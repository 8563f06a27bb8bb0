"""Hook implementations of the sort family.

`sort` holds the one primitive (lax.sort's: operands sorted together by their
first `num_keys`); `lax_api` builds sort_key_val and top_k on it, and
`numpy_api` / `quantiles` / `setops` the NumPy front ends (argsort, searchsorted,
median and quantiles, unique, histograms), all written with primitives that
other families own, so every transformation works through them.
"""
from __future__ import annotations

from plugax.extend import PluginInfo, RuleSet, hookimpl

from . import interp, numpy_api, numpy_pad, quantiles, setops, setops1d, sort, sort_complex, topk


@hookimpl
def plugax_plugin_info() -> PluginInfo:
    return PluginInfo(name="sort", requires=("elementwise", "shape", "reductions"),
                      description="lax.sort and what is built on it: argsort, top_k, "
                                  "searchsorted, median/quantile, unique")


@hookimpl
def plugax_primitive_rules() -> list[RuleSet]:
    return [*sort.RULES, *topk.RULES]


@hookimpl
def plugax_frontend() -> dict:
    return {"lax": {"sort": sort.sort, "sort_key_val": sort.sort_key_val,
                    "top_k": topk.top_k, **numpy_api.LAX},
            "numpy": {**numpy_api.NUMPY, **interp.NUMPY, **quantiles.NUMPY,
                      **setops.NUMPY, **setops1d.NUMPY, **sort_complex.NUMPY,
                      **numpy_pad.NUMPY}}


@hookimpl
def plugax_array_methods() -> dict:
    """The sorting methods jax.Array has: x.sort(), x.argsort(), x.searchsorted(v),
    x.argpartition(kth)."""
    return {name: numpy_api.NUMPY[name] for name in ("sort", "argsort", "searchsorted",
                                                      "argpartition")}


@hookimpl
def plugax_test_cases() -> list:
    from .cases import cases  # imports plugax.testing: only when a test suite asks
    return cases()
