"""Hook implementations of the reductions family (placeholder until rules land)."""
from plugax.extend import PluginInfo, hookimpl


@hookimpl
def plugax_plugin_info():
    return PluginInfo(name="reductions", requires=("shape",))


@hookimpl
def plugax_primitive_rules():
    return []
