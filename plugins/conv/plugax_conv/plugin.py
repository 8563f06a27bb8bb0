"""Hook implementations of the convolution and window family (work in progress: issue 15)."""
from __future__ import annotations

from plugax.extend import PluginInfo, hookimpl


@hookimpl
def plugax_plugin_info() -> PluginInfo:
    return PluginInfo(name="conv", requires=("elementwise", "shape", "reductions"),
                      description="convolutions and reduce_window (pooling)")


@hookimpl
def plugax_primitive_rules() -> list:
    return []
