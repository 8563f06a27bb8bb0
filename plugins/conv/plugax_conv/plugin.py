"""Hook implementations of the convolution and window family (issue 15).

Primitives: `conv_general_dilated` (module `conv`, front ends in `api`) and the
window reductions (module `windows`). The family builds on the dot family's
lax.Precision (reached through plugax.lax), so it requires "dot".
"""
from __future__ import annotations

from plugax.extend import PluginInfo, RuleSet, hookimpl

from . import api, conv, generic, lax_extra, window_api, windows


@hookimpl
def plugax_plugin_info() -> PluginInfo:
    return PluginInfo(name="conv", requires=("elementwise", "shape", "reductions", "dot"),
                      description="convolutions and reduce_window (pooling)")


@hookimpl
def plugax_primitive_rules() -> list[RuleSet]:
    return [*conv.RULES, *windows.RULES, *generic.RULES]


@hookimpl
def plugax_frontend() -> dict:
    return {"lax": {**api.LAX, **window_api.LAX, **lax_extra.LAX}, "numpy": dict(api.NUMPY)}


@hookimpl
def plugax_test_cases() -> list:
    from .cases import cases  # imports plugax.testing: only when a test suite asks
    return cases()
