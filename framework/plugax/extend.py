"""The public API for plugin authors. Plugins import from here and nowhere else.

Everything a primitive family needs: `Primitive` and `bind`, the typed records
(`RuleSet`, `PluginInfo`) and `hookimpl`, abstract values, symbolic zeros and
undefined primals for differentiation rules, batching utilities, the kernel's
structural primitives (`add_any`, `broadcast_in_dim`, `reduce_sum`, `reshape`,
`transpose`, `convert_element_type`: functions with lax's signatures, and their
`_p` primitives), and the helper constructors. Names here follow the plugin API version
`plugin_api_version`; they change only with a new version.
"""
from .core.avals import ShapedArray, get_aval
from .core.array import Array, array_value, shared_constant, signature_id, signature_of
from .core.rules import RuleContext, RuleKind, define_rule_kind, rule_kinds, missing_rule
from .core.trace import Primitive, bind, Tracer, is_eager, Trace, new_trace_context
from .dtypes import canonicalize_dtype, result_type, promote_types, short_name
from .errors import ShapeError, PlugaxError, ConcretizationTypeError, PluginAPIVersionError
from .interpreters.ad_util import (Zero, UndefPrimal, is_undefined_primal, instantiate,
                                   zeros_like_aval, tangent_aval)
from .structural import (add_any, add_any_p, add_tangents, broadcast_in_dim, broadcast_in_dim_p,
                         convert_element_type, convert_element_type_p, reduce_sum, reduce_sum_p,
                         reshape, reshape_p, transpose, transpose_p)
from .interpreters.batching import (not_mapped, moveaxis, broadcast_batched, bdim_at_front,
                                    move_batch_axis)
from .interpreters.higher_order import (jvp_jaxpr, batch_jaxpr, partial_eval_jaxpr,
                                        transpose_jaxpr)
from .interpreters.partial_eval import PartialEvalTrace
from .interpreters.staging import trace_to_jaxpr
from .jaxpr.ir import ClosedJaxpr, Jaxpr, JaxprEqn, Var, Literal, close_over_nothing
from .jaxpr.interpret import eval_jaxpr
from .jaxpr.check import typecheck_jaxpr, check_call_operands
from .lowering import LoweringRuleContext, lower_jaxpr_to_module
from .api import flatten_fun
from .core.trace import current_trace, eval_trace, user_frame, _state as trace_state
from .loader.hookspec import hookimpl
from .loader.ruleset import RuleSet, PluginInfo, Transformation
from .loader.override import override, OverrideError, active_overrides
from .loader.registry import plugin_api_version, registry as _registry
from .loader.helpers import (all_weak, first_weak, standard_abstract_eval, defvectorized, defbroadcasting,
                              defjvp, deflinear, vectorized_vmap, broadcasting_vmap,
                              broadcasting_shape, same_dtypes)

__all__ = [
    "ShapedArray", "get_aval", "Array", "signature_id", "signature_of", "array_value",
    "shared_constant", "RuleContext", "RuleKind", "define_rule_kind", "rule_kinds",
    "Transformation", "get_primitive", "PluginAPIVersionError", "Primitive", "bind", "Tracer", "is_eager",
    "canonicalize_dtype", "result_type", "promote_types", "short_name",
    "ShapeError", "PlugaxError", "ConcretizationTypeError",
    "Zero", "UndefPrimal", "is_undefined_primal", "instantiate", "zeros_like_aval",
    "add_tangents", "tangent_aval",
    "add_any", "add_any_p", "broadcast_in_dim", "broadcast_in_dim_p", "convert_element_type",
    "convert_element_type_p", "reduce_sum", "reduce_sum_p", "reshape", "reshape_p",
    "transpose", "transpose_p",
    "not_mapped", "moveaxis", "broadcast_batched", "bdim_at_front", "move_batch_axis",
    "jvp_jaxpr", "batch_jaxpr", "partial_eval_jaxpr", "transpose_jaxpr", "close_over_nothing",
    "PartialEvalTrace", "trace_to_jaxpr", "ClosedJaxpr", "Jaxpr", "JaxprEqn", "Var", "Literal",
    "eval_jaxpr", "typecheck_jaxpr", "check_call_operands",
    "LoweringRuleContext", "lower_jaxpr_to_module", "flatten_fun", "current_trace",
    "eval_trace", "user_frame", "runtime", "registry_version", "trace_state",
    "hookimpl", "RuleSet", "PluginInfo", "plugin_api_version",
    "override", "OverrideError", "active_overrides",
    "all_weak", "first_weak", "standard_abstract_eval", "defvectorized", "defbroadcasting", "defjvp",
    "deflinear", "vectorized_vmap", "broadcasting_vmap", "broadcasting_shape", "same_dtypes",
    # for a transformation's own trace (plugax-jet): the base class, running it, and the
    # error a missing rule raises
    "Trace", "new_trace_context", "missing_rule",
]


def runtime():
    """The jaxlib runtime module (`plugax.runtime`), imported on first use so that
    `import plugax` never loads jaxlib."""
    from . import runtime as rt
    return rt


def registry_version() -> int:
    """Bumped whenever the set of plugins changes; caches of traced code key on it."""
    return _registry.version


def get_primitive(name: str) -> Primitive:
    """The loaded primitive called `name` (JAX's names: "sin", "reduce_sum", "pjit"),
    the handle a plugin needs to add or override rules without a private import."""
    prim = _registry.lookup_primitive(name)
    if prim is None:
        raise LookupError(f"no loaded plugin defines a primitive named {name!r} (loaded: "
                          f"{', '.join(sorted(_registry.primitives_by_name)) or 'none'})")
    return prim
