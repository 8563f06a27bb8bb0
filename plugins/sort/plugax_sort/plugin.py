"""Hook implementations of the sort family (work in progress: issue 16)."""
from __future__ import annotations

from plugax.extend import PluginInfo, hookimpl


@hookimpl
def plugax_plugin_info() -> PluginInfo:
    return PluginInfo(name="sort", requires=("elementwise", "shape", "reductions"),
                      description="lax.sort and what is built on it: argsort, top_k, "
                                  "searchsorted, median/quantile, unique")


@hookimpl
def plugax_primitive_rules() -> list:
    return []
