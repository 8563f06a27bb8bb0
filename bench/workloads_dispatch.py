"""Cached jit dispatch (issue 18 part 1), exec'd into bench.py's namespace.

What a user pays per step when calling a small jitted function in a Python loop:
plugax's `jit` returns jaxlib's C++ dispatcher (the object jax.jit returns), its
device arrays are jaxlib's `ArrayImpl` and its trace state is in the C++ key, so
a cached call runs the same machinery as JAX's, without entering Python.
`PLUGAX_JIT_CPP_DISPATCH=0` measures the pure-Python path.
"""

import numpy as np


@workload("dispatch", unit="us", targets={"jax": 1.0})
def dispatch(impl: str) -> float:
    """A cached jit call of `sin(x) * y + 1` on f32[16] on the device, not waited for."""
    xnp = numpy_like(impl)
    f = jit_fn(impl)(lambda x, y: xnp.sin(x) * y + 1)
    x = device_array(impl, np.linspace(0, 1, 16, dtype=np.float32))
    block(impl, f(x, x))
    return best_per_call(lambda: f(x, x))


@workload("dispatch_tree", unit="us", targets={"jax": 1.0})
def dispatch_tree(impl: str) -> float:
    """A cached jit call with a 10-leaf dict argument and a 10-leaf dict result."""
    f = jit_fn(impl)(lambda d: {k: v * 2 + 1 for k, v in d.items()})
    x = device_array(impl, np.linspace(0, 1, 16, dtype=np.float32))
    d = {f"w{i}": x for i in range(10)}
    block(impl, f(d))
    return best_per_call(lambda: f(d))


@workload("dispatch_block", unit="us", targets={"jax": 1.0})
def dispatch_block(impl: str) -> float:
    """The `dispatch` call, then waiting for its result (`block_until_ready`)."""
    xnp = numpy_like(impl)
    f = jit_fn(impl)(lambda x, y: xnp.sin(x) * y + 1)
    x = device_array(impl, np.linspace(0, 1, 16, dtype=np.float32))
    block(impl, f(x, x))
    return best_per_call(lambda: f(x, x).block_until_ready())
