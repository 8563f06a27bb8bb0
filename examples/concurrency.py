"""JAX programs that call jit and grad from several threads, ported by changing only
the imports (`import plugax as jax`, `import plugax.numpy as jnp`).

JAX's concurrency page says clients may call its APIs (jit, grad) concurrently
from separate Python threads. The three programs below do that, and the last
one also registers and unregisters a plugin while the workers run, which JAX
has no counterpart for: plugax's registry publishes each rebuild as a whole
(docs/plugin-api.md, "Threads").

Sources:
1. JAX's `api_test.py::test_concurrent_jit`: one jitted function called on ten
   inputs of different shapes from a thread pool (ten traces racing).
2. The `jax-conc.py` script from joschkabraun/hpc20: device_put/device_get round
   trips and a jitted function over a pool, checked element by element (its
   ProcessPoolExecutor becomes a ThreadPoolExecutor: threads are the point here).
3. A hyper-parameter sweep in the style of the JAX tutorials: each worker thread
   runs gradient descent on a least-squares loss with its own learning rate.
"""
import concurrent.futures
from functools import partial

import numpy as onp

import plugax as jax
import plugax.numpy as jnp
from plugax.extend import PluginInfo, hookimpl


# --- 1. api_test.py::test_concurrent_jit -----------------------------------------
def concurrent_jit():
    @jax.jit
    def f(x):
        return x + x - 3.

    xs = [onp.random.randn(i) for i in range(10)]
    with concurrent.futures.ThreadPoolExecutor() as executor:
        futures = [executor.submit(partial(f, x)) for x in xs]
        ys = [f.result() for f in futures]
    for x, y in zip(xs, ys):
        onp.testing.assert_allclose(x * 2 - 3., y, rtol=1e-6, atol=1e-6)


# --- 2. hpc20/jax/jax-conc.py --------------------------------------------------------
def round_trips():
    def f(x):
        for _ in range(10):
            y = jax.device_put(x)
            x = jax.device_get(y)
        return x

    @jax.jit
    def g(x):
        return x - 3.

    xs = [onp.random.randn(i).astype(onp.float32) for i in range(10)]
    with concurrent.futures.ThreadPoolExecutor() as executor:
        futures = [executor.submit(partial(g, x)) for x in xs]
        futures += [executor.submit(partial(f, x)) for x in xs]
        ys = [f.result() for f in futures]
    for x, y in zip(xs + xs, ys[:10]):
        assert all(jnp.equal(x - 3., y)), "These are not the same"
    for x, y in zip(xs, ys[10:]):
        assert all(jnp.equal(x, y)), "These are not the same"


# --- 3. a learning-rate sweep, one thread per rate -------------------------------------
def sweep():
    rng = onp.random.RandomState(0)
    A = rng.randn(20, 5).astype(onp.float32)
    w_true = rng.randn(5).astype(onp.float32)
    b = A @ w_true

    def loss(w):
        r = jnp.dot(A, w) - b
        return jnp.mean(r ** 2)

    step = jax.jit(lambda w, lr: w - lr * jax.grad(loss)(w))

    def train(lr):
        w = jnp.zeros(5)
        for _ in range(300):
            w = step(w, lr)
        return float(loss(w))

    class Unrelated:              # registered and removed while the workers train
        @hookimpl
        def plugax_plugin_info(self):
            return PluginInfo(name="unrelated")

    rates = [0.01, 0.03, 0.1, 0.2]
    with concurrent.futures.ThreadPoolExecutor() as executor:
        futures = [executor.submit(train, lr) for lr in rates]
        for _ in range(20):
            jax.registry.register(Unrelated(), "unrelated")
            jax.registry.unregister("unrelated")
        losses = [f.result() for f in futures]
    serial = [train(lr) for lr in rates]
    onp.testing.assert_allclose(losses, serial, rtol=1e-5)
    assert losses[-1] < 1e-4 < losses[0], losses     # larger rates converge further


if __name__ == "__main__":
    concurrent_jit()
    round_trips()
    sweep()
    print("all checks passed")
