"""The public API for plugin authors. Plugins import from here and nowhere else.

Everything a primitive family needs: `Primitive` and `bind`, the typed records
(`RuleSet`, `PluginInfo`) and `hookimpl`, abstract values, symbolic zeros and
undefined primals for differentiation rules, batching utilities, and the
helper constructors. Names here follow the plugin API version
`plugin_api_version`; they change only with a new version.
"""
from .core.avals import ShapedArray, get_aval
from .core.array import Array
from .core.rules import RuleContext
from .core.trace import Primitive, bind, Tracer
from .dtypes import canonicalize_dtype, result_type, promote_types, short_name
from .errors import ShapeError, PlugaxError, ConcretizationTypeError
from .interpreters.ad_util import (Zero, UndefPrimal, is_undefined_primal, instantiate,
                                   zeros_like_aval, add_tangents, tangent_aval)
from .interpreters.batching import (not_mapped, moveaxis, broadcast_batched, bdim_at_front,
                                    move_batch_axis)
from .plugins.hookspec import hookimpl
from .plugins.ruleset import RuleSet, PluginInfo
from .plugins.registry import plugin_api_version
from .plugins.helpers import (all_weak, standard_abstract_eval, defvectorized, defbroadcasting,
                              defjvp, deflinear, vectorized_vmap, broadcasting_vmap,
                              broadcasting_shape, same_dtypes)

__all__ = [
    "ShapedArray", "get_aval", "Array", "RuleContext", "Primitive", "bind", "Tracer",
    "canonicalize_dtype", "result_type", "promote_types", "short_name",
    "ShapeError", "PlugaxError", "ConcretizationTypeError",
    "Zero", "UndefPrimal", "is_undefined_primal", "instantiate", "zeros_like_aval",
    "add_tangents", "tangent_aval",
    "not_mapped", "moveaxis", "broadcast_batched", "bdim_at_front", "move_batch_axis",
    "hookimpl", "RuleSet", "PluginInfo", "plugin_api_version",
    "all_weak", "standard_abstract_eval", "defvectorized", "defbroadcasting", "defjvp",
    "deflinear", "vectorized_vmap", "broadcasting_vmap", "broadcasting_shape", "same_dtypes",
]
