"""Hook implementations of the reductions family.

Primitives live in `reduce` (reductions over a set of axes, argmax/argmin) and
`cumulative` (running sums, products, extrema); `numpy_api` builds the NumPy
front ends and Array methods on top of them.
"""
from __future__ import annotations

from plugax.extend import PluginInfo, RuleSet, hookimpl

from . import comparisons, cumulative, general, nonzero, numpy_api, numpy_stats, reduce
from . import numpy_more, numpy_select, numpy_ufunc


@hookimpl
def plugax_plugin_info() -> PluginInfo:
    return PluginInfo(name="reductions", requires=("elementwise", "shape"),
                      description="sum/prod/max/min/and/or reductions, argmax/argmin, "
                                  "cumulative sums, products and extrema")


@hookimpl
def plugax_primitive_rules() -> list[RuleSet]:
    return [*reduce.RULES, *cumulative.RULES, *general.RULES]


@hookimpl
def plugax_frontend() -> dict:
    return {"lax": {**reduce.LAX, **cumulative.LAX, **general.LAX}, "numpy": {**numpy_api.NUMPY, **comparisons.NUMPY,
                                                          **nonzero.NUMPY, **numpy_stats.NUMPY,
                                                          **numpy_more.NUMPY, **numpy_select.NUMPY,
                                                          **numpy_ufunc.NUMPY}}


@hookimpl
def plugax_array_methods() -> dict:
    return {**numpy_api.METHODS, "nonzero": nonzero.NUMPY["nonzero"]}
