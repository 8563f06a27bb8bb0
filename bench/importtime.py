"""Where `import plugax, plugax.numpy` (and the first operation after it) spends its time.

    python bench/importtime.py [--runs N] [--python PY] [--before CHECKOUT]

Runs a fresh interpreter N times under `python -X importtime`, splits its report at
the end of the import, and sums the modules' *self* times by group (NumPy, ml_dtypes,
pluggy, the plugin families, the kernel's modules, the `plugax` package's own body,
everything else); keeps each group's minimum over the runs, since a busy machine only
ever adds time. Each phase's time outside any import (the `plugax` package body's
work shows there too; after the import, building the registry and running the
operation) is its wall time less its imports. The table in docs/architecture.md
("Import time") is its output; `--before` puts another checkout's framework/ and
plugins/*/ first on the path and measures it too, interleaved, with the same
interpreter (a worktree of the commit before a change).
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys

CODE = """
import sys, time
sys.stderr.write("=== import\\n")
t0 = time.perf_counter()
import plugax, plugax.numpy as xnp
t1 = time.perf_counter()
sys.stderr.write("=== first op\\n")
import numpy
numpy.asarray(xnp.sin(xnp.ones(3)))
t2 = time.perf_counter()
print(t1 - t0, t2 - t1)
"""
GROUPS = ("numpy", "ml_dtypes", "pluggy", "plugin families (plugax_*)",
          "plugax package body (discovery; before: loading)", "kernel modules (plugax.*)",
          "standard library and other")
_LINE = re.compile(r"import time:\s+(\d+) \|\s+\d+ \|\s*(\S+)")


def group_of(module: str) -> str:
    top = module.split(".")[0]
    if module == "plugax":
        return GROUPS[4]
    if top == "plugax":
        return GROUPS[5]
    if top.startswith("plugax_"):
        return GROUPS[3]
    return {"numpy": GROUPS[0], "ml_dtypes": GROUPS[1], "pluggy": GROUPS[2]}.get(top, GROUPS[6])


def one_run(python: str, env: dict) -> tuple[dict, dict, float, float]:
    """Self times (ms) by group during the import and during the first op, and walls."""
    run = subprocess.run([python, "-X", "importtime", "-c", CODE], capture_output=True,
                         text=True, env=env, check=True)
    phases: list[dict] = [dict.fromkeys(GROUPS, 0.0), dict.fromkeys(GROUPS, 0.0)]
    phase = -1   # the interpreter's own start-up (site, .pth files) is not counted
    for line in run.stderr.splitlines():
        if line.startswith("=== "):
            phase += 1
            continue
        match = _LINE.match(line)
        if match and phase >= 0:
            phases[phase][group_of(match.group(2))] += int(match.group(1)) / 1e3
    import_wall, op_wall = (float(v) * 1e3 for v in run.stdout.split())
    return phases[0], phases[1], import_wall, op_wall


def path_env(checkout: str | None) -> dict:
    """The environment, with `checkout`'s framework/ and plugins/*/ first on the path."""
    env = dict(os.environ)
    if checkout:
        root = os.path.abspath(checkout)
        plugins = os.path.join(root, "plugins")
        env["PYTHONPATH"] = os.pathsep.join(
            [os.path.join(root, "framework")] +
            [os.path.join(plugins, d) for d in sorted(os.listdir(plugins))])
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--before", metavar="CHECKOUT",
                        help="also measure this checkout (its framework/ and plugins/*/ first "
                             "on the path), interleaved with the installed one")
    args = parser.parse_args()
    configs = {"before": path_env(args.before)} if args.before else {}
    configs["now"] = path_env(None)
    runs: dict = {name: [] for name in configs}
    for _ in range(args.runs):          # interleaved: a busy spell hurts both alike
        for name, env in configs.items():
            runs[name].append(one_run(args.python, env))
    columns = [(f"{name}: {phase}", [r[i] for r in runs[name]], [r[2 + i] for r in runs[name]])
               for name in configs for i, phase in enumerate(("import", "first op"))]
    print(f"self time, ms (min of {args.runs} runs)".ljust(50) +
          "".join(f"{title:>17}" for title, _, _ in columns))
    for g in GROUPS:
        print(f"{g:50}" + "".join(f"{min(p[g] for p in phases):17.1f}"
                                   for _, phases, _ in columns))
    print(f"{'sum of the imports':50}" + "".join(
        f"{min(sum(p.values()) for p in phases):17.1f}" for _, phases, _ in columns))
    print(f"{'wall time (min)':50}" + "".join(f"{min(walls):17.1f}" for _, _, walls in columns))
    print(f"{'wall time outside imports (min)':50}" + "".join(
        f"{min(w - sum(p.values()) for p, w in zip(phases, walls)):17.1f}"
        for _, phases, walls in columns))


if __name__ == "__main__":
    main()
