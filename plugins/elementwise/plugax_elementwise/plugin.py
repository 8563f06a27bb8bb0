"""Hook implementations of the elementwise family (placeholder until rules land)."""
from plugax.extend import PluginInfo, hookimpl


@hookimpl
def plugax_plugin_info():
    return PluginInfo(name="elementwise", requires=("shape",))


@hookimpl
def plugax_primitive_rules():
    return []
