"""Data-parallel training of an MLP over every device, with XLA's SPMD partitioner.

The parameters are replicated and each batch is split over a one-axis mesh
("batch"); one jitted step computes the loss, the gradients and the SGD update.
XLA partitions the program and inserts the all-reduce of the gradients, so the
step is the same program as on one device. The script checks that: the sharded
step's gradients equal the single-device step's, and training lowers the loss.
Then it times the step on all devices against one device (and, with
--compare-jax and jax installed, JAX's jit of the same step on the same mesh).

    python examples/data_parallel.py [--devices 8] [--size small|large] [--compare-jax]

Run as a script, it asks for `--devices` CPU devices (XLA_FLAGS) before plugax
makes its client; imported into a process that already computed, it uses the
devices that process has.
"""
import os
import sys
import time

if __name__ == "__main__" and "plugax" not in sys.modules:
    n_req = int(sys.argv[sys.argv.index("--devices") + 1]) if "--devices" in sys.argv else 8
    os.environ.setdefault("XLA_FLAGS", f"--xla_force_host_platform_device_count={n_req}")

import numpy as np

import plugax
import plugax.numpy as jnp
from plugax.sharding import NamedSharding, PartitionSpec as P

SIZES = {"tiny": (64, 32, 64, 10), "small": (2048, 256, 512, 10),
         "large": (16384, 512, 2048, 10)}   # batch, inputs, hidden, classes


def init(rng, d_in, hidden, d_out):
    return {"w1": (rng.standard_normal((d_in, hidden)) / np.sqrt(d_in)).astype(np.float32),
            "b1": np.zeros(hidden, np.float32),
            "w2": (rng.standard_normal((hidden, d_out)) / np.sqrt(hidden)).astype(np.float32),
            "b2": np.zeros(d_out, np.float32)}


def loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    logits = h @ params["w2"] + params["b2"]
    logp = logits - jnp.log(jnp.sum(jnp.exp(logits), axis=1, keepdims=True))
    return -jnp.mean(jnp.sum(logp * y, axis=1))


def step(params, x, y):
    value, grads = plugax.value_and_grad(loss)(params, x, y)
    new = plugax.tree_util.tree_map(lambda p, g: p - 0.5 * g, params, grads)
    return value, grads, new


def timed(fn, *args, repeat=5):
    out = fn(*args)
    plugax.tree_util.tree_map(lambda a: a.block_until_ready(), out)
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn(*args)
        plugax.tree_util.tree_map(lambda a: a.block_until_ready(), out)
        best = min(best, time.perf_counter() - t)
    return best


def jax_time(batch_size, params, x, y, n):
    import jax
    import jax.numpy as jjnp
    from jax.sharding import Mesh, NamedSharding as JNS, PartitionSpec as JP

    def jloss(p, x, y):
        h = jjnp.tanh(x @ p["w1"] + p["b1"])
        logits = h @ p["w2"] + p["b2"]
        logp = logits - jjnp.log(jjnp.sum(jjnp.exp(logits), axis=1, keepdims=True))
        return -jjnp.mean(jjnp.sum(logp * y, axis=1))

    def jstep(p, x, y):
        value, grads = jax.value_and_grad(jloss)(p, x, y)
        return value, grads, jax.tree.map(lambda a, g: a - 0.5 * g, p, grads)
    mesh = Mesh(np.array(jax.devices()[:n]), ("batch",))
    rep, bat = JNS(mesh, JP()), JNS(mesh, JP("batch"))
    f = jax.jit(jstep, in_shardings=(rep, bat, bat), out_shardings=rep)
    args = (jax.device_put(params, rep), jax.device_put(x, bat), jax.device_put(y, bat))
    out = f(*args)
    jax.block_until_ready(out)
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        jax.block_until_ready(f(*args))
        best = min(best, time.perf_counter() - t)
    return best


def main(argv):
    size = argv[argv.index("--size") + 1] if "--size" in argv else "tiny"
    batch, d_in, hidden, d_out = SIZES[size]
    n = plugax.device_count()
    batch -= batch % n
    rng = np.random.default_rng(0)
    params = init(rng, d_in, hidden, d_out)
    x = rng.standard_normal((batch, d_in)).astype(np.float32)
    y = np.eye(d_out, dtype=np.float32)[rng.integers(0, d_out, batch)]

    mesh = plugax.make_mesh((n,), ("batch",))
    rep, bat = NamedSharding(mesh, P()), NamedSharding(mesh, P("batch"))
    sharded = plugax.jit(step, in_shardings=(rep, bat, bat), out_shardings=rep)
    single = plugax.jit(step)

    # the same step: gradients equal the single-device ones
    v1, g1, _ = single(params, x, y)
    vn, gn, new = sharded(params, plugax.device_put(x, bat), plugax.device_put(y, bat))
    for k in params:
        np.testing.assert_allclose(np.asarray(gn[k]), np.asarray(g1[k]), rtol=2e-4, atol=1e-6)
        assert gn[k].sharding == rep
    np.testing.assert_allclose(float(vn), float(v1), rtol=1e-5)

    # training lowers the loss
    xs, ys = plugax.device_put(x, bat), plugax.device_put(y, bat)
    p = new
    for _ in range(20):
        value, _, p = sharded(p, xs, ys)
    assert float(value) < float(v1), (float(value), float(v1))

    t_n = timed(sharded, plugax.device_put(params, rep), xs, ys)
    t_1 = timed(single, params, x, y)
    print(f"{n} devices: {t_n * 1e3:.2f} ms/step; 1 device: {t_1 * 1e3:.2f} ms/step; "
          f"speedup {t_1 / t_n:.2f}x (batch {batch}, {d_in}-{hidden}-{d_out} MLP, "
          f"{os.cpu_count()} CPU cores)")
    result = {"devices": n, "t_sharded": t_n, "t_single": t_1, "loss": float(value)}
    if "--compare-jax" in argv:
        try:
            t_jax = jax_time(batch, params, x, y, n)
        except ImportError:
            print("jax is not installed: no comparison")
        else:
            print(f"JAX, same program and mesh: {t_jax * 1e3:.2f} ms/step; plugax/JAX "
                  f"{t_n / t_jax:.2f}x")
            result["t_jax"] = t_jax
    print("all checks passed")
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
