"""Neural-network workloads (issue 16 part 2), exec'd into bench.py's namespace.

softmax and log_softmax are the last layer of every classifier; jitted, each
should compile to the same reduce-max / subtract / exp / reduce-sum / divide (or
log) program as JAX's, so the compiled calls should cost the same.
"""

import importlib


def _nn_module(impl: str):
    return importlib.import_module({"plugax": "plugax.nn", "jax": "jax.nn"}[impl])


def _jitted_on_1024(impl: str, fname: str) -> float:
    nn = _nn_module(impl)
    x = as_array(impl, np.random.default_rng(5).standard_normal((1024, 1024))
                 .astype(np.float32))
    f = jit_fn(impl)(getattr(nn, fname))
    block(impl, f(x))
    return best_per_call(lambda: block(impl, f(x)), repeat=7)


@workload("softmax_1024", unit="ms", targets={"jax": 1.05})
def softmax_1024(impl: str) -> float:
    """jit(nn.softmax) on float32[1024, 1024] (last axis)."""
    return _jitted_on_1024(impl, "softmax")


@workload("log_softmax_1024", unit="ms", targets={"jax": 1.05})
def log_softmax_1024(impl: str) -> float:
    """jit(nn.log_softmax) on float32[1024, 1024] (last axis)."""
    return _jitted_on_1024(impl, "log_softmax")
