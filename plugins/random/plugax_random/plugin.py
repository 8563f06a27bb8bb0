"""Hook implementations of the random family (work in progress: issue 16)."""
from __future__ import annotations

from plugax.extend import PluginInfo, hookimpl


@hookimpl
def plugax_plugin_info() -> PluginInfo:
    return PluginInfo(name="random", requires=("elementwise", "shape", "reductions"),
                      description="plugax.random: threefry keys and samplers, bit-exact with JAX")


@hookimpl
def plugax_primitive_rules() -> list:
    return []
