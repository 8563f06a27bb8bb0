"""The public API for plugin authors: the only kernel module plugins import.

Everything a primitive family needs: `Primitive` and `bind`, the typed records
(`RuleSet`, `PluginInfo`) and `hookimpl`, abstract values, symbolic zeros and
undefined primals for differentiation rules, batching utilities, the kernel's
structural primitives (`add_any`, `broadcast_in_dim`, `reduce_sum`, `reshape`,
`transpose`, `convert_element_type`: functions with lax's signatures, and their
`_p` primitives), the helper constructors, and the toolkit every family shares:
the errors plugax raises, dtype constants, predicates and constructors, the
configuration (`config`, read-only for plugins), constants (`shared_constant`,
`scalar_like`), NumPy-style promotion and broadcasting (`promote_args`, ...), and
the one spelling of operand types in error messages (`format_operands`).
Besides this module, plugins use only the front ends (`plugax.lax`, `plugax.numpy`,
`plugax.tree_util`, ...) and the user-level API (`plugax.jit`, ...): see
docs/plugin-api.md; tests/test_plugin_imports.py enforces it. Names here follow the
plugin API version `plugin_api_version`; they change only with a new version.
"""
from .config import config
from .core.avals import ShapedArray, format_operands, get_aval
from .core.array import (Array, array_value, host_array, shared_constant, signature_id,
                         signature_of, typed_array)
from .core.rules import RuleContext, RuleKind, define_rule_kind, rule_kinds, missing_rule
from .core.trace import Primitive, bind, Tracer, is_eager, Trace, new_trace_context, \
    set_dispatch_key, STAGING as DISPATCH_STAGING
from .core.device_arrays import register_device_array_type, device_array_types, is_device_array
from .dtypes import (canonicalize_dtype, result_type, promote_types, short_name, bool_, int8,
                     int16, int32, int64, uint8, uint16, uint32, uint64, float16, bfloat16,
                     float32, float64, float0, supported_dtypes, float_dtypes, is_float,
                     complex64, complex128, complex_dtypes, REAL_OF_COMPLEX, COMPLEX_OF_REAL,
                     is_integer, issubdtype_inexact, default_float_dtype, default_int_dtype,
                     to_inexact_dtype,
                     python_scalar_dtype, dtype_of_value, TypePromotionError)
from .errors import (ShapeError, PlugaxError, ConcretizationTypeError, PluginAPIVersionError,
                     MissingRuleError, PluginError, PluginConflictError, UnexpectedTracerError,
                     TracerArrayConversionError)
from .promotion import (promote_args, promote_dtypes, promoted_type, broadcast_arrays,
                        broadcast_shapes, broadcast_pair, BroadcastError)
from .interpreters.ad_util import (Zero, UndefPrimal, is_undefined_primal, instantiate,
                                   zeros_like_aval, tangent_aval)
from .structural import (add_any, add_any_p, add_tangents, broadcast_in_dim, broadcast_in_dim_p,
                         convert_element_type, convert_element_type_p, reduce_sum, reduce_sum_p,
                         reshape, reshape_p, transpose, transpose_p, concatenate,
                         concatenate_p, split, split_p, user_reduction_axes)
from .interpreters.batching import (not_mapped, moveaxis, broadcast_batched, bdim_at_front,
                                    move_batch_axis, named_axis_size, declare_collective,
                                    named_axes)
from .interpreters.higher_order import (jvp_jaxpr, batch_jaxpr, partial_eval_jaxpr,
                                        transpose_jaxpr)
from .interpreters.partial_eval import PartialEvalTrace
from .interpreters.vjp_tape.rules import linear_vjp, transpose_backward, zero_vjp
from .interpreters.staging import trace_to_jaxpr
from .jaxpr.ir import ClosedJaxpr, Jaxpr, JaxprEqn, Var, Literal, close_over_nothing
from .jaxpr.interpret import eval_jaxpr
from .jaxpr.check import typecheck_jaxpr, check_call_operands
from .lowering import LoweringRuleContext, LoweringRuleError, lower_jaxpr_to_module
from .lowering import custom_call  # noqa: F401  (jaxlib's kernels: LAPACK custom calls)
from .lowering.mlir import make_context as make_mlir_context
from .lowering.host_callback import CallbackError, emit_host_callback, \
    checked_outputs as checked_callback_outputs
from .api import flatten_fun
from .shapes import ShapeDtypeStruct, canonicalize_axis, leaf_aval
from .debugging import jit_disabled
from .core.trace import current_trace, eval_trace, user_frame, _state as trace_state, \
    non_eager_blocks
from .core.avals import interned_aval
from .core.eager_ops import eager_op
from operator import attrgetter as _attrgetter

# The NumPy value of a host Array, read by a C getter for eager fast paths: it raises
# AttributeError for a device-backed Array not read yet (`array_value` fetches it).
eager_value = _attrgetter("_value")
from .loader.hookspec import hookimpl
from .loader.namespaces import overrides_name
from .loader.ruleset import RuleSet, PluginInfo, Transformation
from .loader.override import override, OverrideError, active_overrides
from .loader.registry import plugin_api_version, registry as _registry
from .loader.helpers import (all_weak, first_weak, standard_abstract_eval, defvectorized, defbroadcasting,
                              defjvp, deflinear, vectorized_vmap, broadcasting_vmap,
                              broadcasting_shape, same_dtypes, scalar_like)
from .structural import (axes_removing_batching, checked_impl, linear_jvp, shape_error,
                         unary_transpose)

__all__ = [
    "overrides_name", "ShapedArray", "get_aval", "Array", "signature_id", "signature_of", "array_value", "host_array",
    "typed_array", "eager_value", "interned_aval", "non_eager_blocks", "eager_op",
    "shared_constant", "RuleContext", "RuleKind", "define_rule_kind", "rule_kinds",
    "Transformation", "get_primitive", "PluginAPIVersionError", "Primitive", "bind", "Tracer", "is_eager",
    # dtypes: constants, predicates, constructors, the promotion lattice
    "canonicalize_dtype", "result_type", "promote_types", "short_name", "bool_", "int8",
    "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "bfloat16",
    "float32", "float64", "float0", "supported_dtypes", "float_dtypes", "is_float",
    "complex64", "complex128", "complex_dtypes", "REAL_OF_COMPLEX", "COMPLEX_OF_REAL",
    "is_integer", "issubdtype_inexact", "default_float_dtype", "default_int_dtype",
    "to_inexact_dtype",
    "python_scalar_dtype", "dtype_of_value",
    # errors plugins raise or catch
    "ShapeError", "PlugaxError", "ConcretizationTypeError", "MissingRuleError", "PluginError",
    "PluginConflictError", "UnexpectedTracerError", "TracerArrayConversionError",
    "TypePromotionError", "LoweringRuleError", "BroadcastError",
    # configuration (read it; users set it) and NumPy-style promotion and broadcasting
    "config", "promote_args", "promote_dtypes", "promoted_type", "broadcast_arrays",
    "broadcast_shapes", "broadcast_pair",
    # constants, operand formatting, builders of linear (structural-like) rules
    "scalar_like", "format_operands", "shape_error", "checked_impl", "linear_jvp",
    "unary_transpose", "axes_removing_batching",
    # builders of `vjp` rules (the optional top-level reverse-mode rule kind)
    "linear_vjp", "zero_vjp", "transpose_backward",
    "Zero", "UndefPrimal", "is_undefined_primal", "instantiate", "zeros_like_aval",
    "add_tangents", "tangent_aval",
    "add_any", "add_any_p", "concatenate", "concatenate_p", "split", "split_p",
    "broadcast_in_dim", "broadcast_in_dim_p", "convert_element_type",
    "convert_element_type_p", "reduce_sum", "reduce_sum_p", "reshape", "reshape_p",
    "transpose", "transpose_p",
    "not_mapped", "moveaxis", "broadcast_batched", "bdim_at_front", "move_batch_axis",
    "named_axis_size", "declare_collective", "named_axes",
    "jvp_jaxpr", "batch_jaxpr", "partial_eval_jaxpr", "transpose_jaxpr", "close_over_nothing",
    "PartialEvalTrace", "trace_to_jaxpr", "ClosedJaxpr", "Jaxpr", "JaxprEqn", "Var", "Literal",
    "eval_jaxpr", "typecheck_jaxpr", "check_call_operands",
    "canonicalize_axis", "LoweringRuleContext", "lower_jaxpr_to_module", "make_mlir_context",
    "emit_host_callback", "CallbackError", "checked_callback_outputs",
    "flatten_fun", "current_trace",
    "eval_trace", "user_frame", "runtime", "registry_version", "trace_state",
    "ShapeDtypeStruct", "leaf_aval", "jit_disabled", "user_reduction_axes",
    "hookimpl", "RuleSet", "PluginInfo", "plugin_api_version",
    "override", "OverrideError", "active_overrides",
    "all_weak", "first_weak", "standard_abstract_eval", "defvectorized", "defbroadcasting", "defjvp",
    "deflinear", "vectorized_vmap", "broadcasting_vmap", "broadcasting_shape", "same_dtypes",
    # for a transformation's own trace (plugax-jet): the base class, running it, and the
    # error a missing rule raises
    "Trace", "new_trace_context", "missing_rule",
    # for jit's C++ dispatch (xla_call): the trace state in jaxlib's key, and jaxlib's
    # device arrays accepted as Arrays
    "set_dispatch_key", "DISPATCH_STAGING", "register_device_array_type", "device_array_types",
    "is_device_array",
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
