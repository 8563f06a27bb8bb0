"""Hook implementations of the xla_call family: `pjit`, and `jit` in the `plugax` namespace."""
from __future__ import annotations

from plugax.extend import PluginInfo, RuleSet, hookimpl

from . import aot, devices, jit, primitive


@hookimpl
def plugax_plugin_info() -> PluginInfo:
    return PluginInfo(name="xla_call", description="jit through XLA (jaxlib): the pjit "
                      "primitive, the compile cache, and ahead-of-time lower/compile")


@hookimpl
def plugax_primitive_rules() -> list[RuleSet]:
    return list(primitive.RULES)


@hookimpl
def plugax_frontend() -> dict:
    return {"plugax": {"jit": jit.jit,
                       "deserialize_compiled": aot.deserialize_compiled,
                       **{name: getattr(devices, name) for name in devices.__all__}}}
