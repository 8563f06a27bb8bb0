"""Hook implementations of the nn family: `plugax.nn`, the functions of `jax.nn`.

A front-end-only family: it defines no primitive and gives no rules, only
functions written with plugax.numpy and plugax.lax (and custom derivatives
where JAX has them). Every transformation works on them because it works on
the primitives they are made of. A worked example of the smallest useful
plugin: `plugax_plugin_info` plus `plugax_frontend`.
"""
from __future__ import annotations

from typing import Callable

from plugax.extend import PluginInfo, hookimpl

from . import activations, initializers, normalize


@hookimpl
def plugax_plugin_info() -> PluginInfo:
    return PluginInfo(name="nn", requires=("elementwise", "shape", "reductions", "dot", "random",
                                            "special_functions"),
                      description="plugax.nn: activations, softmax, one_hot, attention")


@hookimpl
def plugax_frontend() -> dict[str, dict[str, Callable]]:
    names = {name: getattr(activations, name) for name in activations.__all__}
    names.update({name: getattr(normalize, name) for name in normalize.__all__})
    inits = {name: getattr(initializers, name) for name in initializers.__all__}
    return {"nn": {**names, "__absent__": ABSENT}, "nn.initializers": inits}


# JAX's nn names this family leaves out, and why: `plugax.nn.<name>` raises saying so
_SCALED = ("it is JAX's block-scaled (microscaling, MX) matmul for float8/float4 tensor "
           "cores, which JAX itself lowers only for GPUs")
ABSENT = {"scaled_matmul": _SCALED, "scaled_dot_general": _SCALED,
          "get_scaled_dot_general_config": _SCALED}
