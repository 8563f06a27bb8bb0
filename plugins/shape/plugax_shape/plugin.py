"""Hook implementations of the shape family (placeholder until rules land)."""
from plugax.extend import PluginInfo, hookimpl


@hookimpl
def plugax_plugin_info():
    return PluginInfo(name="shape", requires=("shape",))


@hookimpl
def plugax_primitive_rules():
    return []
