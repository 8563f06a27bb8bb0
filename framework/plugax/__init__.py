"""plugax: JAX-style transformations of NumPy-style Python, built from plugins.

The kernel (this package) owns `bind`, the current trace and the jaxpr types;
every primitive family arrives as a plugin found through the entry-point group
``plugax``. Importing plugax discovers them (see `plugax.loader.registry`).
"""
import warnings as _warnings

# Like JAX, plugax computes inf/nan silently: NumPy's floating-point RuntimeWarnings
# raised inside rules (attributed to plugax's own modules and its plugins') are
# ignored. The filter names only those modules, so the user's NumPy code still warns.
_warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"(plugax|plugax_\w+)(\.|$)")

from .config import config
from .core.array import Array
from .core.avals import ShapedArray
from .core.trace import Primitive
from .errors import (ConcretizationTypeError, UnexpectedTracerError, MissingRuleError,
                     PluginError, PluginConflictError, ShapeError, PlugaxError,
                     TracerArrayConversionError, ResourceExhaustedError)
from .jaxpr import ClosedJaxpr, Jaxpr, typecheck_jaxpr, eval_jaxpr
from .api import jvp, vmap, make_jaxpr, block_until_ready
from .autodiff import linearize, vjp, grad, value_and_grad, linear_transpose
from .jacobians import jacfwd, jacrev, hessian
from .jacobians import jacrev as jacobian
from .shapes import ShapeDtypeStruct, eval_shape, typeof
from .checkpoint import checkpoint, remat, checkpoint_policies
from .debugging import disable_jit, named_call, named_scope
from .dtypes import float0
from .custom_derivatives import custom_jvp, custom_vjp, kernel_plugin
from .interpreters.builtin import transformations_plugin
from .structural import structural_plugin
from .loader.registry import registry, plugin_api_version
from . import tree_util, tree, numpy, lax, dtypes, test_util
from .toplevel import (enable_x64, default_prng_impl, threefry_partitionable, clear_caches,
                       closure_convert, custom_gradient, fwd_and_bwd, ensure_compile_time_eval,
                       host_count, host_id, host_ids, process_indices, print_environment_info,
                       copy_to_host_async, numpy_rank_promotion, numpy_dtype_promotion,
                       default_matmul_precision, legacy_prng_key, enable_custom_prng,
                       debug_key_reuse, check_tracer_leaks, enable_checks, transfer_guard,
                       transfer_guard_host_to_device, transfer_guard_device_to_host,
                       transfer_guard_device_to_device)

__version__ = "0.1.0"

__all__ = ["config", "Array", "ShapedArray", "Primitive", "ConcretizationTypeError",
           "UnexpectedTracerError", "MissingRuleError", "PluginError", "PluginConflictError",
           "ShapeError", "PlugaxError", "TracerArrayConversionError", "ResourceExhaustedError", "ClosedJaxpr", "Jaxpr", "typecheck_jaxpr", "eval_jaxpr",
           "jvp", "vmap", "jacfwd", "make_jaxpr", "linearize", "vjp", "grad", "value_and_grad",
           "jacrev", "hessian", "linear_transpose", "block_until_ready", "custom_jvp",
           "custom_vjp", "registry", "plugin_api_version",
           "tree_util", "tree", "numpy", "lax", "dtypes", "test_util", "jacobian",
           "ShapeDtypeStruct", "eval_shape", "typeof", "checkpoint", "remat",
           "checkpoint_policies", "disable_jit", "named_call", "named_scope", "float0",
           "enable_x64", "default_prng_impl", "threefry_partitionable", "clear_caches",
           "closure_convert", "custom_gradient", "fwd_and_bwd", "ensure_compile_time_eval",
           "host_count", "host_id", "host_ids", "process_indices", "print_environment_info",
           "copy_to_host_async", "numpy_rank_promotion", "numpy_dtype_promotion",
           "default_matmul_precision", "legacy_prng_key", "enable_custom_prng",
           "debug_key_reuse", "check_tracer_leaks", "enable_checks", "transfer_guard",
           "transfer_guard_host_to_device", "transfer_guard_device_to_host",
           "transfer_guard_device_to_device"]

registry.add_builtin(transformations_plugin, "transformations")
registry.add_builtin(structural_plugin, "structural")
registry.add_builtin(kernel_plugin, "kernel")
registry.load_entry_points()


def __getattr__(name: str):
    """JAX's top-level names plugax leaves out on purpose say why (toplevel.ABSENT);
    `Device` is jaxlib's device type, imported only when asked for (jaxlib is lazy)."""
    if name == "Device":
        from jaxlib._jax import Device
        return Device
    from .toplevel import ABSENT
    if name in ABSENT:
        raise AttributeError(f"plugax has no {name!r}; JAX's {name} is not supported because "
                             f"{ABSENT[name]}")
    raise AttributeError(f"module 'plugax' has no attribute {name!r}")
