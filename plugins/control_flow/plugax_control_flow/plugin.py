"""Hook implementations of the control-flow family."""
from __future__ import annotations

from typing import Callable

from plugax.extend import PluginInfo, RuleSet, hookimpl

from . import (collectives, cond, extras, folds, frontend, lowering, pcast, scan, scan_ad,
               solvers, while_loop)


@hookimpl
def plugax_plugin_info() -> PluginInfo:
    # elementwise: convert_element_type, clamp, ne/lt, add, select_n (batched predicates);
    # shape: broadcast_in_dim and transpose (batching); reductions: reduce_or (batched
    # while predicates) and reduce_sum (transposes of broadcasts in bodies).
    return PluginInfo(name="control_flow", requires=("elementwise", "shape", "reductions"),
                      description="higher-order primitives: cond, while, scan")


@hookimpl
def plugax_primitive_rules() -> list:
    scan_rules = RuleSet(primitive=scan.scan_p, impl=scan.scan_impl,
                         abstract_eval=scan.scan_abstract_eval, jvp=scan.scan_jvp,
                         batching=scan.scan_vmap, partial_eval=scan_ad.scan_partial_eval,
                         transpose=scan_ad.scan_transpose,
                         lowering={"default": lowering.lower_scan})
    cond_rules = cond.RULES[0].replace(lowering={"default": lowering.lower_cond})
    while_rules = while_loop.RULES[0].replace(lowering={"default": lowering.lower_while})
    return [cond_rules, while_rules, scan_rules, *extras.RULES, *solvers.RULES,
            *collectives.RULES, *pcast.RULES]


@hookimpl
def plugax_frontend() -> dict[str, dict[str, Callable]]:
    return {"lax": {**frontend.LAX, **extras.LAX, **solvers.LAX, **collectives.LAX,
                    **pcast.LAX, **folds.LAX}}
