"""Hook implementations of the linear-algebra family (work in progress: issue 15)."""
from __future__ import annotations

from plugax.extend import PluginInfo, hookimpl


@hookimpl
def plugax_plugin_info() -> PluginInfo:
    return PluginInfo(name="linalg", requires=("elementwise", "shape", "dot", "reductions"),
                      description="factorisations and solves (cholesky, lu, qr, eigh, svd)")


@hookimpl
def plugax_primitive_rules() -> list:
    return []
