"""Linear-algebra workloads (issue 15 part 2), exec'd into bench.py's namespace.

Both libraries call the same LAPACK kernels from jaxlib (getrf/trsm, potrf), so the
times should match; a gap means the code around the custom calls differs.
"""

import numpy as np


def _linalg_problem(impl: str, n: int = 256):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(np.float32)
    spd = (a @ a.T / n + np.eye(n)).astype(np.float32)
    b = rng.standard_normal((n,)).astype(np.float32)
    return a + n ** 0.5 * np.eye(n, dtype=np.float32), spd, b


def _on_device(impl: str, x: np.ndarray):
    return block(impl, jit_fn(impl)(lambda a: a)(as_array(impl, x)))


@workload("jit_solve", unit="ms", targets={"jax": 1.05})
def jit_solve(impl: str) -> float:
    """jit(jnp.linalg.solve) of f32[256,256] and f32[256] (LU with pivoting, two trsm)."""
    xnp = numpy_like(impl)
    a, _, b = _linalg_problem(impl)
    a, b = _on_device(impl, a), _on_device(impl, b)
    f = jit_fn(impl)(xnp.linalg.solve)
    block(impl, f(a, b))
    return best_per_call(lambda: block(impl, f(a, b)), repeat=5)


@workload("jit_solve_matrix", unit="ms", targets={"jax": 1.05})
def jit_solve_matrix(impl: str) -> float:
    """jit(jnp.linalg.solve) of f32[256,256] and a matrix right-hand side f32[256,256]."""
    xnp = numpy_like(impl)
    a, _, _ = _linalg_problem(impl)
    b = np.random.default_rng(1).standard_normal(a.shape).astype(np.float32)
    a, b = _on_device(impl, a), _on_device(impl, b)
    f = jit_fn(impl)(xnp.linalg.solve)
    block(impl, f(a, b))
    return best_per_call(lambda: block(impl, f(a, b)), repeat=5)


@workload("jit_cholesky", unit="ms", targets={"jax": 1.05})
def jit_cholesky(impl: str) -> float:
    """jit(jnp.linalg.cholesky) of a symmetric positive-definite f32[256,256]."""
    xnp = numpy_like(impl)
    _, spd, _ = _linalg_problem(impl)
    x = _on_device(impl, spd)
    f = jit_fn(impl)(xnp.linalg.cholesky)
    block(impl, f(x))
    return best_per_call(lambda: block(impl, f(x)), repeat=5)


