"""Hook implementations of plugax-special (entry point `special` in group `plugax`).

This module is what the entry point names: plugax imports it, registers it with
pluggy, and reads the hooks below once per registry build. It requires the
built-in `special_functions` family, whose primitives it gives SciPy impls for.
"""
from __future__ import annotations

from plugax.extend import PluginInfo, RuleSet, hookimpl

from . import __version__
from .primitives import rules


@hookimpl
def plugax_plugin_info() -> PluginInfo:
    return PluginInfo(name="special", api_versions=(2, 2), version=__version__,
                      requires=("special_functions",),
                      description="SciPy (double-precision) eager impls for the built-in "
                                  "erf, erfc, erf_inv, lgamma, digamma, polygamma (overrides)")


@hookimpl
def plugax_primitive_rules() -> list[RuleSet]:
    return rules()


@hookimpl
def plugax_test_cases() -> list:
    from .cases import cases  # test-only code (imports plugax.testing): loaded on demand
    return cases()
