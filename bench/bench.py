"""plugax benchmarks against its peers (jax, numpy, autograd), in one run.

    python bench/bench.py [NAME ...] [--json PATH]      (or: make bench)

A workload is a function `fn(impl) -> seconds` registered with `@workload`; it
is run once per implementation whose module imports (peers come from the
optional `bench` extra: `pip install -e '.[bench]'`; a missing peer is skipped).
Add a workload by writing one more decorated function below.
"""
from __future__ import annotations

import os

os.environ["OPENBLAS_THREAD_TIMEOUT"] = "4"  # before numpy: idle BLAS threads must not spin

import argparse
import importlib
import importlib.util
import json
import subprocess
import sys
import timeit
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

IMPLS = ("plugax", "jax", "numpy", "autograd")


@dataclass
class Workload:
    name: str
    fn: Callable[[str], float]
    unit: str                                   # "ms" or "us": how seconds are shown
    impls: tuple[str, ...]
    targets: dict[str, float] = field(default_factory=dict)   # peer -> max plugax/peer ratio
    # (other workload, max ratio): plugax here against plugax there, e.g. applying a
    # linearized function against a fresh jvp
    versus: tuple[str, float] | None = None

    @property
    def doc(self) -> str:
        return (self.fn.__doc__ or "").strip().splitlines()[0]


WORKLOADS: dict[str, Workload] = {}


def workload(name: str, unit: str = "ms", impls: tuple[str, ...] = ("plugax", "jax"),
             targets: dict[str, float] | None = None,
             versus: tuple[str, float] | None = None) -> Callable:
    """Register `fn(impl) -> seconds` as a named workload."""
    def register(fn: Callable[[str], float]) -> Callable[[str], float]:
        WORKLOADS[name] = Workload(name, fn, unit, impls, targets or {}, versus)
        return fn
    return register


# --- helpers -----------------------------------------------------------------
def available(impl: str) -> bool:
    return importlib.util.find_spec(impl) is not None


def numpy_like(impl: str):
    """The NumPy-style namespace of an implementation."""
    return importlib.import_module({"plugax": "plugax.numpy", "jax": "jax.numpy",
                                    "numpy": "numpy", "autograd": "autograd.numpy"}[impl])


def as_array(impl: str, x: np.ndarray):
    if impl == "plugax":
        import plugax
        return plugax.Array(x)
    if impl == "jax":
        import jax.numpy as jnp
        return jnp.asarray(x)
    return x


def best_per_call(fn: Callable[[], object], repeat: int = 7) -> float:
    """Best of `repeat` timeit runs, in seconds per call."""
    timer = timeit.Timer(fn)
    number, _ = timer.autorange()
    return min(timer.repeat(repeat, number)) / number


# --- workloads ---------------------------------------------------------------
def fresh_process_seconds(impl: str, body: str, runs: int = 5) -> float:
    """Best of `runs` fresh interpreters, each timing `body` (with `{m}` the library's
    name) from its first statement: what a user's script pays before its own work."""
    if impl == "plugax":  # an editable install has no bytecode yet; pip installs of jax do
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        subprocess.run([sys.executable, "-m", "compileall", "-q",
                        os.path.join(root, "framework"), os.path.join(root, "plugins")],
                       check=True, capture_output=True)
    code = ("import time; t = time.perf_counter(); " + body.format(m=impl) +
            "; print(time.perf_counter() - t)")
    env = {k: v for k, v in os.environ.items()
           if k not in ("PLUGAX_LOAD_PLUGINS", "PLUGAX_DISABLE_PLUGINS")}
    times = [float(subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                  capture_output=True, text=True).stdout.splitlines()[-1])
             for _ in range(runs)]
    return min(times)


@workload("import", unit="ms", targets={"jax": 0.15})
def import_time(impl: str) -> float:
    """`import plugax; import plugax.numpy` (jax: jax, jax.numpy), fresh interpreter (best of 5).

    plugax discovers its plugins here and loads them on first use (import_first_op)."""
    return fresh_process_seconds(impl, "import {m}; import {m}.numpy")


@workload("import_first_op", unit="ms")
def import_first_op(impl: str) -> float:
    """The import plus a first eager `numpy.sin(numpy.ones(3))` read back, fresh interpreter.

    Best of 5, no target: the honest total, with what `import` defers (plugax loads its
    plugins at this first use; jax compiles the two operations)."""
    return fresh_process_seconds(impl, "import numpy; import {m}; import {m}.numpy as xnp; "
                                       "numpy.asarray(xnp.sin(xnp.ones(3)))")


@workload("eager", unit="us", impls=IMPLS, targets={"jax": 0.08, "autograd": 1.0})
def eager(impl: str) -> float:
    """Eager `sin(x) + y` on float32[16], per call."""
    xnp = numpy_like(impl)
    rng = np.random.default_rng(0)
    x, y = (as_array(impl, rng.standard_normal(16).astype(np.float32)) for _ in range(2))
    if impl == "jax":
        return best_per_call(lambda: (xnp.sin(x) + y).block_until_ready())
    return best_per_call(lambda: xnp.sin(x) + y)


@workload("make_jaxpr", unit="ms", targets={"jax": 0.5})
def make_jaxpr_chain(impl: str, n_ops: int = 1000) -> float:
    """make_jaxpr of a 1000-op sin/mul/add chain on float32[128] (best of 5)."""
    xnp = numpy_like(impl)
    make_jaxpr = importlib.import_module(impl).make_jaxpr
    x = np.linspace(0, 1, 128, dtype=np.float32)

    def chain(x):
        y = x
        for i in range(n_ops):
            y = (xnp.sin(y), y * x, y + x)[i % 3]
        return y

    times = []
    for _ in range(5):
        fresh = lambda x: chain(x)  # a new function object each time: no tracing cache hit
        times.append(min(timeit.repeat(lambda: make_jaxpr(fresh)(x), repeat=1, number=1)))
    return min(times)


def grad_fn(impl: str) -> Callable:
    """The implementation's (non-jit) `grad`."""
    return importlib.import_module(impl).grad


def mlp_problem(impl: str) -> tuple[Callable, tuple, tuple]:
    """An 8->32->1 tanh MLP with a mean-squared-error loss, batch 8, float32.

    Returns `(loss(params, x, y), params, (x, y))`; params = (W1, b1, W2, b2).
    """
    xnp = numpy_like(impl)
    rng = np.random.default_rng(0)
    shapes = [(8, 32), (32,), (32, 1), (1,)]
    params = tuple(as_array(impl, (0.3 * rng.standard_normal(s)).astype(np.float32))
                   for s in shapes)
    data = tuple(as_array(impl, rng.standard_normal(s).astype(np.float32))
                 for s in [(8, 8), (8, 1)])

    def loss(params, x, y):
        w1, b1, w2, b2 = params
        h = xnp.tanh(x @ w1 + b1)
        return xnp.mean((h @ w2 + b2 - y) ** 2)

    return loss, params, data


def block(impl: str, tree):
    """Wait for a result's computation (jit dispatches asynchronously, in both).

    A single array waits through its own method in both libraries (what users
    write); a pytree through each library's tree utilities."""
    if hasattr(tree, "block_until_ready"):
        return tree.block_until_ready()
    if impl == "jax":
        import jax
        jax.block_until_ready(tree)
    elif impl == "plugax":
        import plugax
        plugax.tree_util.tree_map(lambda a: a.block_until_ready(), tree)
    return tree


@workload("grad_mlp", unit="ms", impls=("plugax", "jax", "autograd"),
          targets={"autograd": 0.8})
def grad_mlp(impl: str) -> float:
    """Non-jit `grad` of an 8->32->1 tanh MLP's MSE loss w.r.t. its 4 params, batch 8."""
    loss, params, (x, y) = mlp_problem(impl)
    g = grad_fn(impl)(loss)
    return best_per_call(lambda: block(impl, g(params, x, y)), repeat=5)


def elementwise_chain(impl: str, n_ops: int = 20) -> Callable:
    """A chain of `n_ops` ops cycling sin, mul, add (the kind of function linearize is for)."""
    xnp = numpy_like(impl)
    steps = (lambda y, x: xnp.sin(y), lambda y, x: y * x, lambda y, x: y + x)

    def chain(x):
        y = x
        for i in range(n_ops):
            y = steps[i % 3](y, x)
        return y

    return chain


@workload("linearize_apply", unit="us", impls=("plugax", "jax"), versus=("jvp_chain", 0.5))
def linearize_apply(impl: str) -> float:
    """Applying `linearize`'s linear function of a 20-op chain on float32[128], per call."""
    lib = importlib.import_module(impl)
    x = as_array(impl, np.linspace(0, 1, 128, dtype=np.float32))
    _, f_lin = lib.linearize(elementwise_chain(impl), x)
    return best_per_call(lambda: block(impl, f_lin(x)))


@workload("jvp_chain", unit="us", impls=("plugax", "jax"))
def jvp_chain(impl: str) -> float:
    """A fresh `jvp` of the same 20-op chain (what linearize_apply should beat 2x)."""
    lib = importlib.import_module(impl)
    x = as_array(impl, np.linspace(0, 1, 128, dtype=np.float32))
    chain = elementwise_chain(impl)
    return best_per_call(lambda: block(impl, lib.jvp(chain, (x,), (x,))))


# --- jit (issue: jit on XLA through jaxlib) ------------------------------------
def jit_fn(impl: str) -> Callable:
    return importlib.import_module(impl).jit


def device_array(impl: str, x: np.ndarray):
    """An input already on the device (a previous jitted call's output)."""
    return block(impl, jit_fn(impl)(lambda a: a)(as_array(impl, x)))


@workload("jit_dispatch", unit="us", targets={"jax": 1.5})
def jit_dispatch(impl: str) -> float:
    """A cached jit call of `sin(x) * y + 1` on float32[16] already on the device."""
    xnp = numpy_like(impl)
    f = jit_fn(impl)(lambda x, y: xnp.sin(x) * y + 1)
    x = device_array(impl, np.linspace(0, 1, 16, dtype=np.float32))
    block(impl, f(x, x))
    return best_per_call(lambda: f(x, x))


@workload("jit_dispatch_dict", unit="us", targets={"jax": 1.5})
def jit_dispatch_dict(impl: str) -> float:
    """The same, with a 10-leaf dict argument and a 10-leaf dict result."""
    f = jit_fn(impl)(lambda d: {k: v * 2 + 1 for k, v in d.items()})
    x = device_array(impl, np.linspace(0, 1, 16, dtype=np.float32))
    d = {f"w{i}": x for i in range(10)}
    block(impl, f(d))
    return best_per_call(lambda: f(d))


def clear_compile_caches(impl: str) -> None:
    if impl == "plugax":
        from plugax.runtime import clear_compiled_cache
        clear_compiled_cache()


@workload("jit_first_call", unit="ms", targets={"jax": 1.0})
def jit_first_call(impl: str) -> float:
    """First call of jit(grad(mlp loss)): trace + lower + compile (best of 5, fresh functions)."""
    loss, params, (x, y) = mlp_problem(impl)
    times = []
    for _ in range(5):
        clear_compile_caches(impl)
        fresh = jit_fn(impl)(grad_fn(impl)(lambda p, x, y: loss(p, x, y)))
        times.append(min(timeit.repeat(lambda: block(impl, fresh(params, x, y)),
                                       repeat=1, number=1)))
    return min(times)


def wide_mlp(impl: str, width: int = 512, batch: int = 128):
    xnp = numpy_like(impl)
    rng = np.random.default_rng(1)
    shapes = [(width, width), (width,), (width, width), (width,), (width, 1), (1,)]
    params = tuple(as_array(impl, (rng.standard_normal(s) / np.sqrt(s[0])).astype(np.float32))
                   for s in shapes)
    x = as_array(impl, rng.standard_normal((batch, width)).astype(np.float32))
    y = as_array(impl, rng.standard_normal((batch, 1)).astype(np.float32))

    def loss(params, x, y):
        w1, b1, w2, b2, w3, b3 = params
        h = xnp.tanh(x @ w1 + b1)
        h = xnp.tanh(h @ w2 + b2)
        return xnp.mean((h @ w3 + b3 - y) ** 2)

    return loss, params, x, y


@workload("jit_mlp_step", unit="ms", targets={"jax": 1.03})
def jit_mlp_step(impl: str) -> float:
    """A jitted SGD step of a 512-wide 2-hidden-layer tanh MLP, batch 128."""
    lib = importlib.import_module(impl)
    loss, params, x, y = wide_mlp(impl)

    @lib.jit
    def step(params, x, y):
        grads = lib.grad(loss)(params, x, y)
        return tuple(p - 0.01 * g for p, g in zip(params, grads))

    params = block(impl, step(params, x, y))
    return best_per_call(lambda: block(impl, step(params, x, y)), repeat=5)


@workload("jit_per_example_grads", unit="ms", targets={"jax": 1.03})
def jit_per_example_grads(impl: str) -> float:
    """jit(vmap(grad)) per-example gradients of the same MLP, batch 128."""
    lib = importlib.import_module(impl)
    loss, params, x, y = wide_mlp(impl)
    per_example = lib.jit(lib.vmap(lib.grad(loss), in_axes=(None, 0, 0)))
    x1, y1 = x[:, None, :], y[:, None, :]
    block(impl, per_example(params, x1, y1))
    return best_per_call(lambda: block(impl, per_example(params, x1, y1)), repeat=5)


# --- control flow under jit ---------------------------------------------------
@workload("jit_scan_rnn", unit="ms", targets={"jax": 1.05})
def jit_scan_rnn(impl: str) -> float:
    """jit(scan) of a 1000-step tanh RNN, hidden 64 (one call, best of repeats)."""
    lib, xnp = importlib.import_module(impl), numpy_like(impl)
    lax = importlib.import_module(f"{impl}.lax")
    rng = np.random.default_rng(2)
    w = as_array(impl, (rng.standard_normal((64, 64)) / 8).astype(np.float32))
    xs = as_array(impl, rng.standard_normal((1000, 64)).astype(np.float32))
    h0 = as_array(impl, np.zeros(64, np.float32))

    @lib.jit
    def rnn(w, h0, xs):
        def step(h, x):
            h = xnp.tanh(h @ w + x)
            return h, h
        return lax.scan(step, h0, xs)

    block(impl, rnn(w, h0, xs))
    return best_per_call(lambda: block(impl, rnn(w, h0, xs)), repeat=5)


@workload("jit_fori_loop", unit="ms", targets={"jax": 1.05})
def jit_fori_loop(impl: str) -> float:
    """A jitted 10,000-iteration fori_loop (x = x * 0.999 + 0.001 on float32[16])."""
    lib = importlib.import_module(impl)
    lax = importlib.import_module(f"{impl}.lax")
    x = as_array(impl, np.ones(16, np.float32))
    f = lib.jit(lambda x: lax.fori_loop(0, 10000, lambda i, x: x * 0.999 + 0.001, x))
    block(impl, f(x))
    return best_per_call(lambda: block(impl, f(x)), repeat=5)


@workload("eager_scan_1e4", unit="ms", targets={"jax": 1.1})
def eager_scan_1e4(impl: str) -> float:
    """Eager (no jit) lax.scan of 10,000 steps, tanh(0.9 c + x) on float32[16], again with
    the same body (what a loop of eager calls pays: JAX compiles it once, so do we)."""
    lib, xnp = importlib.import_module(impl), numpy_like(impl)
    lax = importlib.import_module(f"{impl}.lax")
    rng = np.random.default_rng(3)
    xs = as_array(impl, rng.standard_normal((10000, 16)).astype(np.float32))
    c0 = as_array(impl, np.zeros(16, np.float32))

    def step(c, x):
        c = xnp.tanh(c * 0.9 + x)
        return c, c.sum()

    block(impl, lax.scan(step, c0, xs))
    return best_per_call(lambda: block(impl, lax.scan(step, c0, xs)), repeat=5)


# --- the array families' sections (bench/workloads_<family>.py) ---------------
def load_family_sections() -> None:
    """Run each `bench/workloads_*.py` in this module's namespace, so a family's
    workloads sit in a file of their own but register with `@workload` here and
    use the helpers above (the file names its own imports)."""
    folder = os.path.dirname(os.path.abspath(__file__))
    for name in sorted(os.listdir(folder)):
        if name.startswith("workloads_") and name.endswith(".py"):
            path = os.path.join(folder, name)
            with open(path) as f:
                exec(compile(f.read(), path, "exec"), globals())


load_family_sections()


# --- running and reporting -----------------------------------------------------
ROUNDS = 2


def measure_in_subprocess(name: str, impl: str) -> float:
    """Seconds for one workload and implementation, timed in a fresh interpreter.

    Each library runs in a process of its own, as its users run it: importing
    jax changes how jaxlib behaves for everyone in the process (plugax's jit
    dispatch measured ~1.7 us slower once jax is imported), and what earlier
    workloads leave alive would tax later ones through the garbage collector.
    """
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--measure", name, impl],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["failed"])[-1]
        raise RuntimeError(last)
    return float(proc.stdout.strip().splitlines()[-1])


def run(names: list[str], rounds: int = ROUNDS) -> dict:
    results = {}
    for name in names:
        w = WORKLOADS[name]
        row = {"doc": w.doc, "unit": w.unit, "seconds": {}, "errors": {}, "ratios": {},
               "targets": w.targets}
        # Rounds (two by default), implementations alternating, best of each: a
        # machine that speeds up or slows down during the run then favours no one.
        for _ in range(rounds):
            for impl in w.impls:
                if not available(impl):
                    row["errors"][impl] = "not installed (pip install -e '.[bench]')"
                    continue
                try:
                    seconds = measure_in_subprocess(name, impl)
                except RuntimeError as err:  # one failing implementation must not stop the others
                    row["errors"][impl] = str(err)
                    continue
                row["seconds"][impl] = min(seconds, row["seconds"].get(impl, seconds))
        mine = row["seconds"].get("plugax")
        for peer, limit in w.targets.items():
            if mine is not None and peer in row["seconds"]:
                ratio = mine / row["seconds"][peer]
                row["ratios"][peer] = {"ratio": ratio, "target": limit, "met": ratio <= limit}
        results[name] = row
    for name in names:   # after every row, so both sides were timed the same way
        w, row = WORKLOADS[name], results[name]
        mine = row["seconds"].get("plugax")
        if w.versus and mine is not None:
            other, limit = w.versus
            theirs = (results[other]["seconds"].get("plugax") if other in results
                      else measure_in_subprocess(other, "plugax"))
            ratio = mine / theirs
            row["versus"] = {"workload": other, "ratio": ratio, "target": limit,
                             "met": ratio <= limit}
    return results


def report(results: dict) -> None:
    scale = {"ms": 1e3, "us": 1e6}
    header = ["workload", "unit", *IMPLS, "plugax/jax", "plugax/autograd"]
    rows = [header]
    for name, row in results.items():
        cells = [name, row["unit"]]
        for impl in IMPLS:
            s = row["seconds"].get(impl)
            cells.append("-" if s is None else f"{s * scale[row['unit']]:.2f}")
        for peer in ("jax", "autograd"):
            r = row["ratios"].get(peer)
            cells.append("-" if r is None else
                         f"{r['ratio']:.2f}x (<= {r['target']}x {'ok' if r['met'] else 'MISSED'})")
        rows.append(cells)
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    for i, r in enumerate(rows):
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        if i == 0:
            print("  ".join("-" * w for w in widths))
    print()
    for name, row in results.items():
        v = row.get("versus")
        if v:
            print(f"{name} / {v['workload']} (plugax): {v['ratio']:.2f}x "
                  f"(<= {v['target']}x {'ok' if v['met'] else 'MISSED'})")
    print()
    for name, row in results.items():
        print(f"{name}: {row['doc']}")
        for impl, err in row["errors"].items():
            print(f"    {impl} skipped: {err}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", choices=[[], *WORKLOADS], metavar="NAME",
                        help=f"workloads to run (default: all of {', '.join(WORKLOADS)})")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--rounds", type=int, default=ROUNDS,
                        help=f"alternating rounds per workload, best kept (default {ROUNDS}; "
                             f"more on a noisy machine)")
    parser.add_argument("--measure", nargs=2, metavar=("NAME", "IMPL"),
                        help="(internal) time one workload for one implementation, print seconds")
    args = parser.parse_args(argv)
    if args.measure:
        name, impl = args.measure
        print(WORKLOADS[name].fn(impl))
        return 0
    results = run(args.names or list(WORKLOADS), args.rounds)
    report(results)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
