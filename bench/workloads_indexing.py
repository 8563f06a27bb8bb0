"""Indexing workloads (issue 15 part 1), exec'd into bench.py's namespace.

`x[idx]` and `x.at[idx].add(v)` with 10**5 int32 indices into f32[10**4], under jit:
both libraries emit one stablehlo.gather / stablehlo.scatter (PROMISE_IN_BOUNDS
for the read, FILL_OR_DROP for the update, after the same negative-index
normalisation), so the times should match.
"""

import numpy as np


def _indexing_problem(impl: str):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(10 ** 4).astype(np.float32)
    idx = rng.integers(0, 10 ** 4, 10 ** 5).astype(np.int32)
    v = rng.standard_normal(10 ** 5).astype(np.float32)
    return device_array(impl, x), device_array(impl, idx), device_array(impl, v)


@workload("jit_gather", unit="ms", targets={"jax": 1.05})
def jit_gather(impl: str) -> float:
    """jit(lambda x, i: x[i]): 10**5 traced int32 indices into f32[10**4] (one gather)."""
    x, idx, _ = _indexing_problem(impl)
    f = jit_fn(impl)(lambda x, i: x[i])
    block(impl, f(x, idx))
    return best_per_call(lambda: block(impl, f(x, idx)), repeat=5)


@workload("jit_scatter_add", unit="ms", targets={"jax": 1.05})
def jit_scatter_add(impl: str) -> float:
    """jit(lambda x, i, v: x.at[i].add(v)): 10**5 updates into f32[10**4], repeats summed."""
    x, idx, v = _indexing_problem(impl)
    f = jit_fn(impl)(lambda x, i, v: x.at[i].add(v))
    block(impl, f(x, idx, v))
    return best_per_call(lambda: block(impl, f(x, idx, v)), repeat=5)
