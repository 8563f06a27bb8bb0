"""Hook implementations of the nn family (work in progress: issue 16)."""
from __future__ import annotations

from plugax.extend import PluginInfo, hookimpl


@hookimpl
def plugax_plugin_info() -> PluginInfo:
    return PluginInfo(name="nn", requires=("elementwise", "shape", "reductions", "dot"),
                      description="plugax.nn: activations, softmax, one_hot, initializers")
