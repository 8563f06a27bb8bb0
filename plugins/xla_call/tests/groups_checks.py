"""The collectives with `axis_index_groups` in shard_map on 8 CPU devices, against
JAX 0.10.2 (groups_jax.json, recorded by record_groups_jax.py from the same
groups_cases.py); run from sharding_checks.py in its subprocess.

Values must match JAX's; an error must be of JAX's type, with JAX's text where JAX
gives one (where JAX's NotImplementedError is empty, plugax says why)."""
from __future__ import annotations

import json
import pathlib
import types

import numpy as np

import plugax
from plugax.sharding import PartitionSpec as P

from groups_cases import cases, outcome


def shard_map_axis_index_groups(mesh) -> str:
    rec = json.loads((pathlib.Path(__file__).parent / "groups_jax.json").read_text())["cases"]
    api = types.SimpleNamespace(lax=plugax.lax, shard_map=plugax.shard_map, jit=plugax.jit,
                                grad=plugax.grad, jvp=plugax.jvp, vmap=plugax.vmap, P=P,
                                mesh=mesh)
    mine = cases(api)
    assert sorted(mine) == sorted(rec), sorted(set(mine) ^ set(rec))
    for name, thunk in mine.items():
        got, want = outcome(thunk), rec[name]
        if "out" in want:
            assert "out" in got, (name, got)
            np.testing.assert_allclose(np.asarray(got["out"], np.float32),
                                       np.asarray(want["out"], np.float32),
                                       rtol=1e-5, atol=1e-5, err_msg=name)
            continue
        assert got.get("error") == want["error"], (name, got, want)
        if want["message"]:
            assert got["message"] == want["message"], (name, got["message"], want["message"])
        else:
            assert "axis_index_groups" in got["message"], (name, got["message"])
    return f"{len(mine)} cases as JAX's"


def grad_of_the_shard_map_is_refused(mesh) -> None:
    """plugax's reverse mode of a whole shard_map runs the body as vmaps, where grouped
    collectives have no rule (nor in JAX): refused, saying what to do instead."""
    from groups_cases import G, X
    f = plugax.shard_map(lambda a: plugax.lax.psum(a, "x", axis_index_groups=G), mesh=mesh,
                         in_specs=P("x"), out_specs=P("x"), check_vma=False)
    try:
        plugax.grad(lambda a: f(a).sum())(X)
    except NotImplementedError as e:
        assert "axis_index_groups" in str(e) and "inside the body" in str(e), e
    else:
        raise AssertionError("grad of a shard_map with grouped collectives ran")


def groups_must_cover_the_axis(mesh) -> None:
    """JAX checks only that the groups hold 0..n-1 once; plugax also that n is the axis
    size (else devices would be in no group)."""
    from groups_cases import X
    f = plugax.shard_map(lambda a: plugax.lax.pmax(a, "x", axis_index_groups=[[0, 1]]),
                         mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    try:
        f(X)
    except ValueError as e:
        assert "must cover the 4 indices of axis 'x' exactly once" in str(e), e
    else:
        raise AssertionError("groups [[0, 1]] accepted on an axis of 4")


def run(check, mesh) -> None:
    for fn in (shard_map_axis_index_groups, grad_of_the_shard_map_is_refused,
               groups_must_cover_the_axis):
        def bound(fn=fn):
            if not hasattr(plugax.lax, "psum"):
                return "skipped: the control_flow family (the collectives) is not loaded"
            return fn(mesh)
        bound.__name__ = fn.__name__
        check(bound)
