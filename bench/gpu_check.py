"""Smoke check of plugax's compiled path on whatever platform PLUGAX_PLATFORM selects.

    PLUGAX_PLATFORM=cuda python bench/gpu_check.py      (needs a GPU PJRT plugin,
                                                         e.g. jax-cuda13-pjrt)

Prints JSON: the platform and device, where jit's results live, how far jit(grad),
fori_loop, scan and an AOT-compiled call are from eager evaluation, the time of
a jitted 512-wide MLP SGD step, and the linear algebra under jit against NumPy
(`linalg`: each factorisation's relative error, the cuSOLVER kernels the modules
call, `linalg_ok`). CI has no GPU; run this where one is lent. On NVIDIA GPUs
float32 matmuls run in TF32 by default (as in JAX), so differences of ~1e-3 from
eager NumPy are expected there. The factorisations need jaxlib's CUDA kernels:
pip install jax-cuda13-plugin==<jaxlib's version> (jax-cuda13-pjrt alone runs
everything else).
"""
from __future__ import annotations

import json
import re
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


def _rel(got, want) -> float:
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return float(np.max(np.abs(got - want)) / max(1.0, float(np.max(np.abs(want)))))


def _linalg_checks() -> dict:
    """name -> (jitted function, its arguments, error of its result against NumPy).
    Batched (3 x 6 x 6) unless named otherwise; svd_wide is gesvd's transposed call
    (m < n, n > 1024), svd_thin the thin Jacobi one (m, n > 32), eig the right
    vectors alone (cuSOLVER geev where cuSOLVER >= 11.7.1) and with left ones (hybrid)."""
    import plugax.lax.linalg as L
    a = np.asarray(normal(3, 6, 6))
    spd = a @ np.swapaxes(a, -1, -2) + 6 * np.eye(6, dtype=np.float32)
    b = np.asarray(normal(3, 6, 2))
    tall, wide, thin = (np.asarray(normal(*s)) for s in ((3, 7, 4), (20, 1100), (40, 50)))
    mT = lambda x: np.swapaxes(np.asarray(x), -1, -2)  # noqa: E731

    def svd_err(x, out):
        u, s, vt = map(np.asarray, out)
        k = s.shape[-1]
        return max(_rel(s, np.linalg.svd(x, compute_uv=False)),
                   _rel((u[..., :, :k] * s[..., None, :]) @ vt[..., :k, :], x))

    def eig_err(x, out):
        w, vr = np.asarray(out[0]), np.asarray(out[-1])
        return _rel(x.astype(np.complex64) @ vr, vr * w[..., None, :])
    return {
        "solve": (pnp.linalg.solve, (a, b), lambda o: _rel(o, np.linalg.solve(a, b))),
        "cholesky": (pnp.linalg.cholesky, (spd,), lambda o: _rel(o, np.linalg.cholesky(spd))),
        "triangular_solve": (lambda l, y: L.triangular_solve(l, y, left_side=True, lower=True),
                             (np.tril(spd), b), lambda o: _rel(np.tril(spd) @ o, b)),
        "lu": (L.lu, (a,), lambda o: _rel(np.take_along_axis(a, np.asarray(o[2])[..., None], 1),
                                          (np.tril(o[0], -1) + np.eye(6)) @ np.triu(o[0]))),
        "qr": (pnp.linalg.qr, (tall,), lambda o: max(_rel(np.asarray(o[0]) @ o[1], tall),
                                                     _rel(mT(o[0]) @ o[0], np.eye(4)))),
        "eigh": (pnp.linalg.eigh, (spd,), lambda o: max(
            _rel(o[0], np.linalg.eigvalsh(spd)), _rel(spd @ o[1], np.asarray(o[1]) * o[0][
                ..., None, :]))),
        "svd": (pnp.linalg.svd, (a,), lambda o: svd_err(a, o)),
        "svd_wide": (lambda x: pnp.linalg.svd(x, full_matrices=False), (wide,),
                     lambda o: svd_err(wide, o)),
        "svd_thin": (lambda x: pnp.linalg.svd(x, full_matrices=False), (thin,),
                     lambda o: svd_err(thin, o)),
        "eig_right": (lambda x: L.eig(x, compute_left_eigenvectors=False), (a,),
                      lambda o: eig_err(a, o)),
        "eig": (L.eig, (a,), lambda o: eig_err(a, o)),
    }


def gpu_kernel_packages() -> dict:
    """Which of jaxlib's CUDA kernel modules import here (jax-cuda1x-plugin: the solver,
    linalg and hybrid kernels, and the extension that registers them with the PJRT
    plugin) and the cuSOLVER version they load: what to look at when a factorisation
    fails to compile on a GPU."""
    from jaxlib.plugin_support import import_from_plugin
    from plugax.extend import custom_call
    found = {m: import_from_plugin("cuda", m) is not None
             for m in ("_solver", "_linalg", "_hybrid", "cuda_plugin_extension")}
    return {**found, "cusolver_version": custom_call.cusolver_version()}


def check_linalg(report: dict, tol: float = 2e-3) -> None:
    report["gpu_kernel_packages"] = gpu_kernel_packages()
    errors, failures, kernels = {}, {}, set()
    for name, (fn, args, err) in _linalg_checks().items():
        try:
            kernels |= set(re.findall(r"custom_call @(\w+)", px.jit(fn).lower(*args).as_text()))
            errors[name] = err(px.jit(fn)(*args))
        except Exception as exc:  # report every check, not the first failure only
            failures[name] = f"{type(exc).__name__}: {exc}"[:300]
    report["linalg"] = errors
    report["linalg_kernels"] = sorted(kernels)
    if failures:
        report["linalg_failures"] = failures
    report["linalg_ok"] = not failures and all(e < tol for e in errors.values())


def main() -> None:
    b = backend()
    report = {"platform": b.platform, "device": str(b.device)}
    check_grad(report)
    check_loops(report)
    time_mlp_step(report)
    check_linalg(report)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
