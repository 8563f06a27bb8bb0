"""Smoke check of plugax's compiled path on whatever platform PLUGAX_PLATFORM selects.

    PLUGAX_PLATFORM=cuda python bench/gpu_check.py      (needs a GPU PJRT plugin,
                                                         e.g. jax-cuda13-pjrt)

Prints JSON: the platform and device, where jit's results live, how far jit(grad),
fori_loop, scan and an AOT-compiled call are from eager evaluation, and the time of
a jitted 512-wide MLP SGD step. CI has no GPU; run this where one is lent. On NVIDIA
GPUs float32 matmuls run in TF32 by default (as in JAX), so differences of ~1e-3
from eager NumPy are expected there.
"""
from __future__ import annotations

import json
import time

import numpy as np

import plugax as px
import plugax.lax as lax
import plugax.numpy as pnp
from plugax.runtime import backend

RNG = np.random.default_rng(0)


def normal(*shape: int, scale: float = 1.0):
    return pnp.asarray((scale * RNG.standard_normal(shape)).astype(np.float32))


def max_diff(xs, ys) -> float:
    return max(float(np.max(np.abs(np.asarray(x) - np.asarray(y)))) for x, y in zip(xs, ys))


def mlp_loss(params, x, y):
    w1, b1, w2, b2 = params
    return pnp.mean((pnp.tanh(x @ w1 + b1) @ w2 + b2 - y) ** 2)


def check_grad(report: dict) -> None:
    params = (normal(8, 32, scale=0.3), normal(32), normal(32, 1, scale=0.3), normal(1))
    x, y = normal(8, 8), normal(8, 1)
    compiled = px.jit(px.grad(mlp_loss))(params, x, y)
    report["result_platform"] = compiled[0]._buf.platform()
    report["jit_grad_vs_eager"] = max_diff(compiled, px.grad(mlp_loss)(params, x, y))
    aot = px.jit(mlp_loss).lower(params, x, y).compile()
    report["aot_vs_eager"] = abs(float(aot(params, x, y)) - float(mlp_loss(params, x, y)))


def check_loops(report: dict) -> None:
    f = px.jit(lambda x: lax.fori_loop(0, 1000, lambda i, x: x * 0.999 + 0.001, x))
    expected = np.ones(16, np.float32)
    for _ in range(1000):
        expected = expected * np.float32(0.999) + np.float32(0.001)
    report["fori_loop_vs_numpy"] = max_diff([f(pnp.ones(16, np.float32))], [expected])

    def rnn(w, h0, xs):
        return lax.scan(lambda h, x: (pnp.tanh(h @ w + x),) * 2, h0, xs)
    args = (normal(64, 64, scale=0.1), pnp.zeros(64, np.float32), normal(100, 64))
    report["scan_vs_eager"] = max_diff(px.jit(rnn)(*args), rnn(*args))


def time_mlp_step(report: dict, n: int = 50) -> None:
    params = (normal(512, 512, scale=0.05), normal(512), normal(512, 512, scale=0.05),
              normal(512))
    x = normal(4096, 512)

    def loss(p, x):
        w1, b1, w2, b2 = p
        return pnp.mean(pnp.tanh(pnp.tanh(x @ w1 + b1) @ w2 + b2) ** 2)
    step = px.jit(lambda p, x: tuple(a - 0.1 * g for a, g in zip(p, px.grad(loss)(p, x))))
    step(params, x)[0].block_until_ready()
    start = time.perf_counter()
    for _ in range(n):
        out = step(params, x)
    out[0].block_until_ready()
    report["mlp_step_ms"] = (time.perf_counter() - start) / n * 1e3


def main() -> None:
    b = backend()
    report = {"platform": b.platform, "device": str(b.device)}
    check_grad(report)
    check_loops(report)
    time_mlp_step(report)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
