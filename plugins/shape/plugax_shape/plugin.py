"""Hook implementations of the shape family: primitives, lax and numpy front ends,
Array indexing methods."""
from __future__ import annotations

from plugax.extend import PluginInfo, hookimpl

from . import structural


@hookimpl
def plugax_plugin_info() -> PluginInfo:
    return PluginInfo(name="shape", requires=("reductions", "elementwise"),
                      description="broadcasting, reshaping, slicing, padding, indexing")


@hookimpl
def plugax_primitive_rules() -> list:
    return [*structural.RULES]


@hookimpl
def plugax_frontend() -> dict:
    return {"lax": {**structural.LAX}}
