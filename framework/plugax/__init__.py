"""plugax: JAX-style transformations of NumPy-style Python, built from plugins.

The kernel (this package) owns `bind`, the current trace and the jaxpr types;
every primitive family arrives as a plugin found through the entry-point group
``plugax``. Importing plugax discovers them and nothing more: the plugins load on
their first use (see `plugax.first_use`), and the kernel's own modules are imported
when one of their names is first asked for (`_LAZY`, PEP 562), so `import plugax`
costs about what reading the entry points does (docs/architecture.md, "Import time").
"""
import warnings as _warnings

# Like JAX, plugax computes inf/nan silently: NumPy's floating-point RuntimeWarnings
# raised inside rules (attributed to plugax's own modules and its plugins') are
# ignored. The filter names only those modules, so the user's NumPy code still warns.
_warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"(plugax|plugax_\w+)(\.|$)")

from .config import config    # eager: `import plugax.config` would otherwise rebind the name
from .checkpoint import checkpoint, remat, checkpoint_policies   # likewise (stdlib only)
from .loader.lazy import discover_plugins as _discover_plugins
from . import first_use as _first_use

__version__ = "0.1.0"

# JAX's top-level switches and helpers, defined in toplevel.py
_TOPLEVEL = (
    "enable_x64", "default_prng_impl", "threefry_partitionable", "clear_caches",
    "closure_convert", "custom_gradient", "fwd_and_bwd", "ensure_compile_time_eval",
    "host_count", "host_id", "host_ids", "process_indices", "print_environment_info",
    "copy_to_host_async", "numpy_rank_promotion", "numpy_dtype_promotion",
    "default_matmul_precision", "legacy_prng_key", "enable_custom_prng",
    "debug_key_reuse", "check_tracer_leaks", "enable_checks", "transfer_guard",
    "transfer_guard_host_to_device", "transfer_guard_device_to_host",
    "transfer_guard_device_to_device")

__all__ = ["config", "Array", "ShapedArray", "Primitive", "ConcretizationTypeError",
           "UnexpectedTracerError", "MissingRuleError", "PluginError", "PluginConflictError",
           "ShapeError", "PlugaxError", "TracerArrayConversionError", "ResourceExhaustedError", "ClosedJaxpr", "Jaxpr", "typecheck_jaxpr", "eval_jaxpr",
           "jvp", "vmap", "jacfwd", "make_jaxpr", "linearize", "vjp", "grad", "value_and_grad",
           "jacrev", "hessian", "linear_transpose", "block_until_ready", "custom_jvp",
           "custom_vjp", "registry", "plugin_api_version",
           "tree_util", "tree", "numpy", "lax", "dtypes", "test_util", "jacobian",
           "ShapeDtypeStruct", "eval_shape", "typeof", "checkpoint", "remat",
           "checkpoint_policies", "disable_jit", "named_call", "named_scope", "float0",
           *_TOPLEVEL]

# name -> (module, attribute): the kernel's public names, imported on first access
_LAZY: dict[str, tuple[str, str | None]] = {
    **{n: (".core.array", n) for n in ("Array",)},
    **{n: (".core.avals", n) for n in ("ShapedArray",)},
    **{n: (".core.trace", n) for n in ("Primitive",)},
    **{n: (".errors", n) for n in (
        "ConcretizationTypeError", "UnexpectedTracerError", "MissingRuleError", "PluginError",
        "PluginConflictError", "ShapeError", "PlugaxError", "TracerArrayConversionError",
        "ResourceExhaustedError")},
    **{n: (".jaxpr", n) for n in ("ClosedJaxpr", "Jaxpr", "typecheck_jaxpr", "eval_jaxpr")},
    **{n: (".api", n) for n in ("jvp", "vmap", "make_jaxpr", "block_until_ready")},
    **{n: (".autodiff", n) for n in (
        "linearize", "vjp", "grad", "value_and_grad", "linear_transpose")},
    **{n: (".jacobians", n) for n in ("jacfwd", "jacrev", "hessian")},
    "jacobian": (".jacobians", "jacrev"),
    **{n: (".shapes", n) for n in ("ShapeDtypeStruct", "eval_shape", "typeof")},
    **{n: (".debugging", n) for n in ("disable_jit", "named_call", "named_scope")},
    "float0": (".dtypes", "float0"),
    **{n: (".custom_derivatives", n) for n in ("custom_jvp", "custom_vjp", "kernel_plugin")},
    "transformations_plugin": (".interpreters.builtin", "transformations_plugin"),
    "structural_plugin": (".structural", "structural_plugin"),
    **{n: (".loader.registry", n) for n in ("registry", "plugin_api_version")},
    **{n: (f".{n}", None) for n in ("tree_util", "tree", "numpy", "lax", "dtypes", "test_util")},
    **{n: (".toplevel", n) for n in _TOPLEVEL},
}
_MISSING = object()


def _import_lazy(name: str) -> object:
    """Import the kernel module that defines `name` and keep the name here."""
    from importlib import import_module
    module, attribute = _LAZY[name]
    value = import_module(module, __name__)
    if attribute is not None:
        value = getattr(value, attribute)
    globals()[name] = value
    return value


def _bind_lazy_names() -> None:
    """Before the plugins' front ends are planned: every kernel name bound here, so a
    plugin giving a top-level name is checked against the kernel's, as before."""
    for name in _LAZY:
        if name not in globals():
            _import_lazy(name)


def __getattr__(name: str):
    """The kernel's names are imported on first access (`_LAZY`); a kernel submodule or a
    namespace plugins make (`plugax.nn`) is imported, which loads the plugins if they are
    not (see plugax.first_use); so are the names plugins give (`plugax.jit`). JAX's
    top-level names plugax leaves out on purpose say why (toplevel.ABSENT); `Device` is
    jaxlib's device type, imported only when asked for (jaxlib is lazy)."""
    if name in _LAZY:
        return _import_lazy(name)
    if name.startswith("__"):   # what tools probe a module for
        raise AttributeError(f"module 'plugax' has no attribute {name!r}")
    from importlib import import_module
    try:
        return import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as err:
        if err.name != f"{__name__}.{name}":
            raise
    value = _first_use.lookup_after_load(globals(), name, _MISSING)   # (loaded by now)
    if value is not _MISSING:
        return value
    if name == "Device":
        from jaxlib._jax import Device
        return Device
    from .toplevel import ABSENT
    if name in ABSENT:
        raise AttributeError(f"plugax has no {name!r}; JAX's {name} is not supported because "
                             f"{ABSENT[name]}")
    raise AttributeError(f"module 'plugax' has no attribute {name!r}")


def __dir__() -> list[str]:
    """Every name: the kernel's, including those not imported yet, and the plugins'."""
    return _first_use.names_after_load(globals(), tuple(_LAZY))


_first_use.before_load.append(_bind_lazy_names)
_discover_plugins()
