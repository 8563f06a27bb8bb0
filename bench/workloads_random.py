"""Random-number workloads (issue 16 part 1), exec'd into bench.py's namespace.

Both libraries hash counters with threefry2x32 and turn the bits into normals with
XLA's erf_inv polynomial, so the compiled programs should cost the same: plugax lowers
the cipher as straight-line StableHLO, JAX (on CPU) as a 5-step while loop.
"""

import importlib


def _random_module(impl: str):
    return importlib.import_module({"plugax": "plugax.random", "jax": "jax.random"}[impl])


@workload("random_normal_1e6", unit="ms", targets={"jax": 1.05})
def random_normal_1e6(impl: str) -> float:
    """jit(random.normal(key, (10**6,))): 10**6 float32 normals from one key."""
    random = _random_module(impl)
    key = random.PRNGKey(0)
    f = jit_fn(impl)(lambda k: random.normal(k, (10 ** 6,)))
    block(impl, f(key))
    return best_per_call(lambda: block(impl, f(key)), repeat=7)
