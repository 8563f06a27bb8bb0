"""Sorting workloads (issue 16 part 3), exec'd into bench.py's namespace.

Both libraries lower a sort to one stablehlo.sort with a comparator region: JAX's
comparator canonicalises -0.0 and NaNs, then compares with TOTALORDER; plugax's does
the same, so the compiled sorts should cost the same. top_k is a primitive of its own
in both, lowered to chlo.top_k (XLA's partial sort): a full sort and a slice instead
measured 233 ms against JAX's 4 ms here.
"""

import importlib

import numpy as np


def _sort_problem(impl: str, shape: tuple):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    return importlib.import_module(f"{impl}.numpy"), importlib.import_module(f"{impl}.lax"), \
        device_array(impl, x)


@workload("jit_sort_1e6", unit="ms", targets={"jax": 1.05})
def jit_sort_1e6(impl: str) -> float:
    """jit(jnp.sort) of f32[10**6] (one stable stablehlo.sort)."""
    jnp, _, x = _sort_problem(impl, (10 ** 6,))
    f = jit_fn(impl)(jnp.sort)
    block(impl, f(x))
    return best_per_call(lambda: block(impl, f(x)), repeat=5)


@workload("jit_argsort_rows", unit="ms", targets={"jax": 1.05})
def jit_argsort_rows(impl: str) -> float:
    """jit(jnp.argsort(x, axis=-1)) of f32[1024, 1024] (a key-value sort per row)."""
    jnp, _, x = _sort_problem(impl, (1024, 1024))
    f = jit_fn(impl)(lambda v: jnp.argsort(v, axis=-1))
    block(impl, f(x))
    return best_per_call(lambda: block(impl, f(x)), repeat=5)


@workload("jit_median_grad", unit="ms", targets={"jax": 1.05})
def jit_median_grad(impl: str) -> float:
    """jit(grad(sum of per-row medians)) of f32[1024, 1024]."""
    jnp, _, x = _sort_problem(impl, (1024, 1024))
    lib = importlib.import_module(impl)
    f = jit_fn(impl)(lib.grad(lambda v: jnp.sum(jnp.median(v, axis=1))))
    block(impl, f(x))
    return best_per_call(lambda: block(impl, f(x)), repeat=5)


@workload("jit_top_k_8", unit="ms", targets={"jax": 1.05})
def jit_top_k_8(impl: str) -> float:
    """jit(lax.top_k(x, 8)) of f32[1024, 1024] (one chlo.top_k)."""
    _, lax, x = _sort_problem(impl, (1024, 1024))
    f = jit_fn(impl)(lambda v: lax.top_k(v, 8))
    block(impl, f(x))
    return best_per_call(lambda: block(impl, f(x)), repeat=5)
