"""Hook implementations of plugax-special (entry point `special` in group `plugax`).

This module is what the entry point names: plugax imports it, registers it with
pluggy, and reads the hooks below once per registry build.
"""
from __future__ import annotations

from typing import Any

from plugax.extend import PluginInfo, RuleSet, hookimpl

from . import __version__
from .frontend import LAX, SCIPY_SPECIAL
from .primitives import RULES


@hookimpl
def plugax_plugin_info() -> PluginInfo:
    # elementwise: mul, exp, neg, square, add in the jvp rules and logsumexp;
    # reductions: max and sum in logsumexp; shape: squeeze, broadcasting.
    return PluginInfo(name="special", api_versions=(2, 2), version=__version__,
                      requires=("elementwise", "reductions", "shape"),
                      description="special functions: erf, erfc, erf_inv, lgamma, digamma, "
                                  "polygamma; scipy.special front end with logsumexp")


@hookimpl
def plugax_primitive_rules() -> list[RuleSet]:
    return list(RULES)


@hookimpl
def plugax_frontend() -> dict[str, dict[str, Any]]:
    return {"lax": LAX, "scipy.special": SCIPY_SPECIAL}


@hookimpl
def plugax_test_cases() -> list:
    from .cases import cases  # test-only code (imports plugax.testing): loaded on demand
    return cases()
