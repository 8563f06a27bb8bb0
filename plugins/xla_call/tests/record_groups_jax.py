"""Records JAX 0.10.2's results and errors for groups_cases.py into
groups_jax.json (not a test; run where jax is installed):

    XLA_FLAGS=--xla_force_host_platform_device_count=8 python record_groups_jax.py
"""
from __future__ import annotations

import json
import pathlib
import types

import numpy as np

from groups_cases import cases, outcome

if __name__ == "__main__":
    import jax
    from jax.sharding import Mesh, PartitionSpec
    mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
    api = types.SimpleNamespace(lax=jax.lax, shard_map=jax.shard_map, jit=jax.jit,
                                grad=jax.grad, jvp=jax.jvp, vmap=jax.vmap, P=PartitionSpec,
                                mesh=mesh)
    rec = {name: outcome(thunk) for name, thunk in cases(api).items()}
    out = pathlib.Path(__file__).with_name("groups_jax.json")
    out.write_text(json.dumps({"jax": jax.__version__, "cases": rec}) + "\n")
    print(f"{len(rec)} cases recorded in {out}")
