"""Records what JAX 0.10.2's `jax.debug.visualize_sharding` prints (it draws with
`rich`) into visualize_jax.json, for sharding_checks.py's `visualize` check to
compare plugax's pictures with. Not a test: run it once, where jax and rich are
installed (`pip install -e '.[bench]' rich`):

    XLA_FLAGS=--xla_force_host_platform_device_count=8 python record_visualize_jax.py

Each case names a mesh (shape, axis names, device order), a PartitionSpec (a
JSON list: null, a name, or a list of names), an array shape and the keyword
options; `color` cases are printed as on a truecolor terminal (rich reads
FORCE_COLOR and COLORTERM), `ascii` ones to a stream that cannot encode the
box characters.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import pathlib

import numpy as np

CASES = [
    # a 1-D mesh
    dict(mesh=[8], names=["x"], spec=["x"], shape=[8]),
    dict(mesh=[8], names=["x"], spec=[], shape=[16]),
    dict(mesh=[8], names=["x"], spec=["x"], shape=[8, 8]),
    dict(mesh=[8], names=["x"], spec=[None, "x"], shape=[8, 8]),
    dict(mesh=[8], names=["x"], spec=[None, "x"], shape=[4, 64]),
    dict(mesh=[8], names=["x"], spec=["x"], shape=[64, 4]),
    dict(mesh=[8], names=["x"], spec=[], shape=[8, 8]),
    dict(mesh=[8], names=["x"], spec=["x"], shape=[16], order=[3, 1, 0, 2, 7, 5, 4, 6]),
    # a 2-D mesh: fully sharded, partially replicated, replicated
    dict(mesh=[4, 2], names=["x", "y"], spec=["x", "y"], shape=[8, 6]),
    dict(mesh=[4, 2], names=["x", "y"], spec=["y", "x"], shape=[8, 8]),
    dict(mesh=[4, 2], names=["x", "y"], spec=[None, "y"], shape=[8, 6]),
    dict(mesh=[4, 2], names=["x", "y"], spec=["x"], shape=[8, 6]),
    dict(mesh=[4, 2], names=["x", "y"], spec=["y"], shape=[8, 6]),
    dict(mesh=[4, 2], names=["x", "y"], spec=[], shape=[8, 6]),
    dict(mesh=[4, 2], names=["x", "y"], spec=["x"], shape=[16]),
    dict(mesh=[4, 2], names=["x", "y"], spec=[["x", "y"]], shape=[16]),
    dict(mesh=[4, 2], names=["x", "y"], spec=["y"], shape=[16]),
    dict(mesh=[4, 2], names=["x", "y"], spec=[["x", "y"]], shape=[8, 16]),
    dict(mesh=[4, 2], names=["x", "y"], spec=[None, ["x", "y"]], shape=[8, 16]),
    dict(mesh=[4, 2], names=["x", "y"], spec=["x", "y"], shape=[8, 6], order=list(range(7, -1, -1))),
    dict(mesh=[2, 4], names=["x", "y"], spec=["x", "y"], shape=[2, 8]),
    dict(mesh=[2, 4], names=["x", "y"], spec=[None, "x"], shape=[4, 4]),
    dict(mesh=[2, 2, 2], names=["x", "y", "z"], spec=["x", ["y", "z"]], shape=[4, 8]),
    # the options
    dict(mesh=[4, 2], names=["x", "y"], spec=["x", "y"], shape=[32, 32], kwargs={"scale": 0.5}),
    dict(mesh=[4, 2], names=["x", "y"], spec=["x", "y"], shape=[8, 6], kwargs={"scale": 2.0}),
    dict(mesh=[4, 2], names=["x", "y"], spec=["x", "y"], shape=[8, 6], kwargs={"min_width": 20}),
    dict(mesh=[8], names=["x"], spec=[None, "x"], shape=[4, 64], kwargs={"max_width": 40}),
    dict(mesh=[2, 4], names=["x", "y"], spec=[None, "x"], shape=[4, 4],
         kwargs={"max_width": 12}),
    dict(mesh=[8], names=["x"], spec=["x"], shape=[64], kwargs={"max_width": 5}),
    dict(mesh=[4, 2], names=["x", "y"], spec=["x"], shape=[8, 6],
         kwargs={"min_width": 3, "scale": 0.3}),
    # coloured (a truecolor terminal) and ASCII boxes
    dict(mesh=[4, 2], names=["x", "y"], spec=["x", "y"], shape=[8, 6], color=True),
    dict(mesh=[4, 2], names=["x", "y"], spec=["x"], shape=[16], color=True),
    dict(mesh=[8], names=["x"], spec=[None, "x"], shape=[8, 8], color=True),
    dict(mesh=[2, 2, 2], names=["x", "y", "z"], spec=[["x", "y"], "z"], shape=[8, 8],
         color=True, kwargs={"scale": 0.5}),
    dict(mesh=[4, 2], names=["x", "y"], spec=["x", "y"], shape=[8, 6], ascii=True),
]


class _AsciiStream(io.StringIO):
    encoding = "ascii"


def _spec(entries):
    from jax.sharding import PartitionSpec
    return PartitionSpec(*[tuple(e) if isinstance(e, list) else e for e in entries])


def record(case: dict) -> str:
    import jax
    from jax.sharding import Mesh, NamedSharding
    devices = np.array(jax.devices())[case.get("order", list(range(8)))]
    mesh = Mesh(devices.reshape(case["mesh"]), tuple(case["names"]))
    sharding = NamedSharding(mesh, _spec(case["spec"]))
    buf = _AsciiStream() if case.get("ascii") else io.StringIO()
    color = case.get("color", False)
    env = {"FORCE_COLOR": "1", "COLORTERM": "truecolor"} if color else {}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        with contextlib.redirect_stdout(buf):
            jax.debug.visualize_sharding(tuple(case["shape"]), sharding, use_color=color,
                                         **case.get("kwargs", {}))
    finally:
        for k, v in saved.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
    return buf.getvalue()


if __name__ == "__main__":
    import jax
    cases = [dict(case, out=record(case)) for case in CASES]
    out = pathlib.Path(__file__).with_name("visualize_jax.json")
    out.write_text(json.dumps({"jax": jax.__version__, "cases": cases}, indent=1,
                              ensure_ascii=False) + "\n")
    print(f"{len(cases)} pictures recorded in {out}")
