"""Hook implementations of the xla_call family: `pjit`, and `jit` in the `plugax` namespace."""
from __future__ import annotations

from plugax.extend import PluginInfo, RuleSet, hookimpl

from . import (aot, fastpath, devices, distributed, global_arrays, jit, placement, primitive,
               shard_map, sharding, spmd, visualize)


@hookimpl
def plugax_plugin_info() -> PluginInfo:
    return PluginInfo(name="xla_call", description="jit through XLA (jaxlib): the pjit "
                      "primitive, the compile cache, and ahead-of-time lower/compile")


@hookimpl
def plugax_primitive_rules() -> list[RuleSet]:
    return [*primitive.RULES, *spmd.RULES, *shard_map.RULES]


@hookimpl
def plugax_frontend() -> dict:
    return {"plugax": {"jit": jit.jit,
                       "deserialize_compiled": aot.deserialize_compiled,
                       "make_mesh": sharding.make_mesh, "P": sharding.PartitionSpec,
                       "shard_map": shard_map.shard_map,
                       "NamedSharding": sharding.NamedSharding, "Shard": sharding.Shard,
                       "set_mesh": sharding.set_mesh,
                       "make_array_from_single_device_arrays":
                           global_arrays.make_array_from_single_device_arrays,
                       "make_array_from_callback": global_arrays.make_array_from_callback,
                       "make_array_from_process_local_data":
                           global_arrays.make_array_from_process_local_data,
                       **{name: getattr(devices, name) for name in devices.__all__},
                       **{name: getattr(placement, name) for name in placement.__all__}},
            "sharding": {name: getattr(sharding, name) for name in (
                "Mesh", "PartitionSpec", "NamedSharding", "SingleDeviceSharding", "Sharding",
                "set_mesh")},
            "lax": {"with_sharding_constraint": spmd.with_sharding_constraint},
            "distributed": {name: getattr(distributed, name) for name in distributed.__all__},
            "debug": {"visualize_array_sharding": visualize.visualize_array_sharding,
                      "visualize_sharding": visualize.visualize_sharding}}


@hookimpl
def plugax_array_methods() -> dict:
    return dict(sharding.ARRAY_METHODS)


@hookimpl
def plugax_rules_published() -> None:
    fastpath.on_rules_published()
