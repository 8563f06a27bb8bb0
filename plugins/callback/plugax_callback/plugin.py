"""Hook implementations of the callback family: `plugax.pure_callback`,
`plugax.debug.callback` and `plugax.debug.print`."""
from __future__ import annotations

from plugax.extend import PluginInfo, RuleSet, hookimpl

from . import api, iocallback, primitives, printing


@hookimpl
def plugax_plugin_info() -> PluginInfo:
    return PluginInfo(name="callback", description="Python callbacks that survive jit, vmap "
                      "and grad: pure_callback, debug.callback, debug.print")


@hookimpl
def plugax_primitive_rules() -> list[RuleSet]:
    return [*primitives.RULES, *printing.RULES, *iocallback.RULES]


@hookimpl
def plugax_frontend() -> dict:
    return {"plugax": {"pure_callback": api.pure_callback,
                       "effects_barrier": api.effects_barrier},
            "debug": {"callback": api.debug_callback, "print": api.debug_print,
                      "log": api.debug_log, "__absent__": DEBUG_ABSENT},
            "experimental": {"io_callback": iocallback.io_callback}}


# JAX's debug names this family leaves out, and why: `plugax.debug.<name>` raises saying so
DEBUG_ABSENT = {
    "breakpoint": "an interactive debugger stopping inside compiled code needs a host "
                  "callback that blocks on the terminal; use debug.print or disable_jit() "
                  "and Python's breakpoint()",
    "inspect_array_sharding": "plugax's SPMD jit does not call back with the partitioner's "
                              "chosen shardings; read x.sharding outside jit",
    "DebugEffect": "plugax's jaxprs carry no effect types (debug callbacks are kept from "
                   "dead-code elimination by their primitive instead)",
    "OrderedDebugEffect": "plugax's jaxprs carry no effect types (ordered=True chains a "
                          "token in the lowering instead)",
}


@hookimpl
def plugax_test_cases() -> list:
    from .cases import cases  # imports plugax.testing: only when a test suite asks
    return cases()
