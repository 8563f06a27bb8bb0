"""Lowering: jaxprs to StableHLO text that XLA compiles.

Plugins contribute one lowering rule per primitive (`RuleSet.lowering`,
``{platform: rule}``); `context.py` documents what a rule receives. The rule
tables are filled by the registry like every other rule kind; this package
imports jaxlib's MLIR bindings only when something is lowered. Modules:
`mlir.py` (bindings, types), `context.py` (the rule's view), `checks.py` (a
rule's result against the primitive's avals), `lower.py` (the walk),
`custom_call.py` (jaxlib's LAPACK kernels) and `host_callback.py` (Python called
from the compiled program: `plugax.extend.emit_host_callback`).
"""
from .checks import LoweringRuleError
from .context import LoweringRuleContext
from .lower import LoweredModule, ModuleContext, call_function, jaxpr_subcomp, \
    lower_jaxpr_to_module, lowering_rule

__all__ = ["LoweringRuleContext", "ModuleContext", "LoweredModule", "LoweringRuleError",
           "lower_jaxpr_to_module", "jaxpr_subcomp", "call_function", "lowering_rule"]
