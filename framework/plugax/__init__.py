"""plugax: JAX-style transformations of NumPy-style Python, built from plugins.

The kernel (this package) owns `bind`, the current trace and the jaxpr types;
every primitive family arrives as a plugin found through the entry-point group
``plugax``. Importing plugax discovers them (see `plugax.plugins.registry`).
"""
from .config import config
from .core.array import Array
from .core.avals import ShapedArray
from .core.trace import Primitive
from .errors import (ConcretizationTypeError, UnexpectedTracerError, MissingRuleError,
                     PluginError, PluginConflictError, ShapeError, PlugaxError)
from .jaxpr import ClosedJaxpr, Jaxpr, typecheck_jaxpr, eval_jaxpr
from .api import jvp, vmap, jacfwd, make_jaxpr
from .plugins.registry import registry, plugin_api_version
from . import tree_util, numpy, lax, dtypes

__version__ = "0.1.0"

__all__ = ["config", "Array", "ShapedArray", "Primitive", "ConcretizationTypeError",
           "UnexpectedTracerError", "MissingRuleError", "PluginError", "PluginConflictError",
           "ShapeError", "PlugaxError", "ClosedJaxpr", "Jaxpr", "typecheck_jaxpr", "eval_jaxpr",
           "jvp", "vmap", "jacfwd", "make_jaxpr", "registry", "plugin_api_version",
           "tree_util", "numpy", "lax", "dtypes"]

registry.load_entry_points()
