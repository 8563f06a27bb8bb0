"""The eager fast path skips the thread-local trace check only while no thread is in a
trace: a thread tracing must still see its tracers, and another thread running eagerly
meanwhile must get plain Arrays (non_eager_blocks counts the open blocks)."""
import threading

import numpy as np

import plugax
import plugax.numpy as xnp
from plugax.extend import is_eager, non_eager_blocks


def test_one_thread_traces_while_another_runs_eagerly():
    x = xnp.asarray(np.linspace(0, 1, 16, dtype=np.float32))
    inside, release, seen = threading.Event(), threading.Event(), {}

    def traced(v):
        seen["eager_inside"] = is_eager()
        out = xnp.sin(v) + v   # the fast path's operands are tracers here
        inside.set()
        release.wait(10)
        seen["after"] = type(xnp.sin(v) + v).__name__
        return out

    worker = threading.Thread(target=lambda: seen.setdefault("jaxpr", plugax.make_jaxpr(traced)(x)))
    worker.start()
    assert inside.wait(10)
    assert non_eager_blocks[0] > 0 and is_eager()   # this thread is still eager
    y = xnp.sin(x) + x
    assert type(y) is plugax.Array
    np.testing.assert_allclose(np.asarray(y), np.sin(np.asarray(x)) + np.asarray(x), rtol=1e-6)
    release.set()
    worker.join(10)
    assert seen["eager_inside"] is False and seen["after"] != "Array"
    assert "sin" in str(seen["jaxpr"])
    assert non_eager_blocks[0] == 0


def test_fast_path_result_carries_the_interned_aval():
    x = xnp.asarray(np.ones(16, np.float32))
    for _ in range(3):
        y = xnp.sin(x) + x
    assert y.aval is x.aval and y.shape == (16,) and y.dtype == np.float32 and not y.weak_type
