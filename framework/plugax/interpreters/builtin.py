"""The kernel's own transformations, registered as a plugin like any other.

Eval, abstract evaluation, jvp, vmap, transpose, partial evaluation and
lowering are `Transformation` records contributed through the same
`plugax_transformations` hook a third-party distribution (plugax-jet) uses:
the registry learns from these records which rule kinds exist for whom and
how each kind is derived from a primitive's `expand` decomposition. No
transformation is special-cased elsewhere.
"""
from __future__ import annotations

from functools import partial
from typing import Any, Callable

from ..core.array import Array, host_value
from ..core.rules import IMPL_CTX
from ..core.avals import ShapedArray
from ..core.trace import EvalTrace, Primitive
from ..loader.hookspec import hookimpl
from ..loader.ruleset import PluginInfo, Transformation
from .batching import BatchTrace, all_front, vmap_flat
from .higher_order import batch_jaxpr, jvp_jaxpr, partial_eval_jaxpr, transpose_jaxpr
from .jvp import JVPTrace, jvp_flat
from .partial_eval import PartialEvalTrace
from .staging import JaxprTrace, trace_to_jaxpr

__all__ = ["builtin_transformations", "expand_as_function"]


def expand_as_function(prim: Primitive, expand: Callable, params: dict) -> Callable:
    """The decomposition as a flat function of arrays returning a list (what every
    transformation's `*_flat` entry point takes)."""
    def fun(*xs: Any) -> list:
        out = expand(IMPL_CTX, *xs, **params)
        return list(out) if prim.multiple_results else [out]
    return fun


def _one(prim: Primitive, outs: list) -> Any:
    return outs if prim.multiple_results else outs[0]


def _derive_impl(prim: Primitive, expand: Callable) -> Callable:
    def impl(ctx, *args, **params):
        outs = expand_as_function(prim, expand, params)(*[Array(a) for a in args])
        return _one(prim, [host_value(o) if isinstance(o, Array) else o for o in outs])
    return impl


def _derive_abstract_eval(prim: Primitive, expand: Callable) -> Callable:
    def abstract_eval(ctx, *avals, **params):
        closed = trace_to_jaxpr(expand_as_function(prim, expand, params), avals)
        return _one(prim, [ShapedArray(a.shape, a.dtype, a.weak_type)
                           for a in closed.out_avals])
    return abstract_eval


def _derive_jvp(prim: Primitive, expand: Callable) -> Callable:
    def jvp(ctx, primals, tangents, **params):
        p_out, t_out = jvp_flat(expand_as_function(prim, expand, params), primals, tangents)
        return (p_out, t_out) if prim.multiple_results else (p_out[0], t_out[0])
    return jvp


def _derive_batching(prim: Primitive, expand: Callable) -> Callable:
    def batching(ctx, args, dims, **params):
        outs = vmap_flat(expand_as_function(prim, expand, params), ctx.axis_size, dims, args,
                         out_dims=all_front())
        return (outs, [0] * len(outs)) if prim.multiple_results else (outs[0], 0)
    return batching


def _derive_lowering(prim: Primitive, expand: Callable) -> Callable:
    def lowering(ctx, *args, **params):
        return ctx.lower_fun(lambda *xs: expand(ctx, *xs, **params), *args,
                             multiple_results=prim.multiple_results)
    return lowering


def builtin_transformations() -> list[Transformation]:
    return [
        Transformation("eval", "impl", "run on NumPy arrays, one primitive at a time",
                       trace=EvalTrace, derive=_derive_impl),
        Transformation("abstract_eval", "abstract_eval", "output types from input types",
                       trace=JaxprTrace, derive=_derive_abstract_eval),
        Transformation("jvp", "jvp", "forward-mode differentiation", trace=JVPTrace,
                       jaxpr_transform=jvp_jaxpr, derive=_derive_jvp),
        Transformation("vmap", "batching", "vectorising map", trace=BatchTrace,
                       jaxpr_transform=batch_jaxpr, derive=_derive_batching),
        Transformation("transpose", "transpose",
                       "reverse mode of linear primitives (not derived: linearizing an "
                       "expansion stages only other primitives)",
                       jaxpr_transform=transpose_jaxpr),
        Transformation("partial_eval", "partial_eval",
                       "split known from unknown (linearize, vjp, grad)",
                       trace=PartialEvalTrace, jaxpr_transform=partial_eval_jaxpr),
        Transformation("lowering", "lowering", "emit StableHLO for jit",
                       derive=_derive_lowering),
    ]


class _BuiltinTransformations:
    @hookimpl
    def plugax_plugin_info(self) -> PluginInfo:
        return PluginInfo(name="transformations",
                          description="the built-in transformations (eval, jvp, vmap, "
                                      "transpose, partial eval, lowering)")

    @hookimpl
    def plugax_transformations(self) -> list[Transformation]:
        return builtin_transformations()


transformations_plugin = _BuiltinTransformations()
