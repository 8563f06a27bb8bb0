"""One process of the 2-process test (test_distributed.py): joins the run, then runs a
jitted global reduction and a data-parallel gradient over the 4 devices of both
processes, printing its results as JSON."""
import json
import sys

import numpy as np

import plugax
import plugax.numpy as jnp
from plugax.sharding import NamedSharding, PartitionSpec as P

address, pid = sys.argv[1], int(sys.argv[2])
plugax.distributed.initialize(address, num_processes=2, process_id=pid,
                              initialization_timeout=20)
try:
    mesh = plugax.make_mesh((plugax.device_count(),), ("x",))
    x = np.arange(16, dtype=np.float32).reshape(8, 2)     # the same global value everywhere
    total = plugax.jit(lambda a: jnp.sum(a * a), in_shardings=NamedSharding(mesh, P("x")),
                       out_shardings=NamedSharding(mesh, P()))(x)

    def loss(w, a, y):
        return jnp.mean((jnp.tanh(a @ w) - y) ** 2)
    w = np.full((2, 3), 0.1, np.float32)
    y = np.ones((8, 3), np.float32)
    grad = plugax.jit(plugax.grad(loss), in_shardings=(
        NamedSharding(mesh, P()), NamedSharding(mesh, P("x")), NamedSharding(mesh, P("x"))),
        out_shardings=NamedSharding(mesh, P()))(w, x / 16, y)
    sharded = plugax.device_put(x, NamedSharding(mesh, P("x")))
    # each process gives only its half of the rows
    from_local = plugax.make_array_from_process_local_data(NamedSharding(mesh, P("x")),
                                                           x[4 * pid: 4 * pid + 4])
    local_total = plugax.jit(lambda a: jnp.sum(a * a), out_shardings=NamedSharding(mesh, P())
                             )(from_local)
    try:
        np.asarray(sharded)
        partial_error = ""
    except RuntimeError as err:
        partial_error = str(err)
    print("RESULT " + json.dumps({
        "devices": plugax.device_count(), "local": plugax.local_device_count(),
        "process_index": plugax.process_index(), "process_count": plugax.process_count(),
        "total": float(total), "local_total": float(local_total), "grad": np.asarray(grad).tolist(),
        "shards": [[plugax.devices().index(s.device), np.asarray(s.data).tolist()]
                   for s in sharded.addressable_shards],
        "fully_addressable": sharded.is_fully_addressable, "partial_error": partial_error}),
        flush=True)
finally:
    plugax.distributed.shutdown()
