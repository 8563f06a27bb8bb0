"""The collectives with `axis_index_groups` inside shard_map, written once for both
libraries: `cases(api)` takes a namespace holding `lax`, `shard_map`, `jit`, `grad`,
`jvp`, `vmap`, `P` and `mesh` (a (4, 2) mesh over "x", "y") from JAX or from plugax,
and returns name -> thunk. record_groups_jax.py runs them with JAX 0.10.2 into
groups_jax.json; groups_checks.py runs them with plugax and compares (no JAX there).

Groups [[0, 2], [3, 1]] are not in index order, so the order inside a group (which
member's block comes first in a gather, which chunk a member keeps) is checked too.
"""
from __future__ import annotations

import numpy as np

G = [[0, 2], [3, 1]]
UNEVEN = [[0], [1, 2, 3]]
X = np.arange(32, dtype=np.float32).reshape(8, 4)        # device row i holds X[2i:2i+2]
W = np.linspace(-1.0, 1.0, 32, dtype=np.float32).reshape(8, 4)


def cases(api) -> dict:
    lax, P = api.lax, api.P

    def sm(body, cv=False, ins=None, outs=None):
        return api.jit(api.shard_map(body, mesh=api.mesh, in_specs=ins or P("x"),
                                     out_specs=outs or P("x"), check_vma=cv))

    def weighted(f):             # grad inside the body of sum(f(b) * w)
        return lambda b, w: api.grad(lambda c: (f(c) * w).sum())(b)

    grad_specs = dict(ins=(P("x"), P("x")))
    wg = np.tile(W, (1, 2))
    return {
        "psum": lambda: sm(lambda a: lax.psum(a, "x", axis_index_groups=G))(X),
        "pmean": lambda: sm(lambda a: lax.pmean(a, "x", axis_index_groups=G))(X),
        "pmax": lambda: sm(lambda a: lax.pmax(a, "x", axis_index_groups=G), cv=True)(X),
        "pmin_uneven": lambda: sm(lambda a: lax.pmin(a, "x", axis_index_groups=UNEVEN))(X),
        "psum_uneven": lambda: sm(lambda a: lax.psum(a, "x", axis_index_groups=UNEVEN))(X),
        "psum_two_axes": lambda: sm(lambda a: lax.psum(a, ("x", "y"), axis_index_groups=[
            [0, 1, 2, 3], [4, 5, 6, 7]]), ins=P("x", "y"), outs=P("x", "y"))(X),
        "psum_constant": lambda: sm(lambda a: a * 0 + lax.psum(np.float32(3), "x",
                                                                  axis_index_groups=G),
                                    cv=True)(X),
        "all_gather": lambda: sm(lambda a: lax.all_gather(a, "x", axis_index_groups=G),
                                 cv=True)(X),
        "all_gather_tiled": lambda: sm(lambda a: lax.all_gather(
            a, "x", axis_index_groups=G, axis=1, tiled=True), cv=True)(X),
        "psum_scatter_tiled": lambda: sm(lambda a: lax.psum_scatter(
            a, "x", axis_index_groups=G, scatter_dimension=1, tiled=True), cv=True)(X),
        "psum_scatter": lambda: sm(lambda a: lax.psum_scatter(a, "x", axis_index_groups=G),
                                   cv=True)(X),
        "all_to_all_tiled": lambda: sm(lambda a: lax.all_to_all(
            a, "x", 1, 0, axis_index_groups=G, tiled=True), cv=True)(X),
        "all_to_all": lambda: sm(lambda a: lax.all_to_all(a, "x", 0, 1, axis_index_groups=G),
                                 cv=True)(X),
        "pswapaxes": lambda: sm(lambda a: lax.pswapaxes(a, "x", 0, axis_index_groups=G),
                                cv=True)(X),
        # transposes, inside the body
        "grad_psum": lambda: sm(weighted(lambda c: lax.psum(c * c, "x", axis_index_groups=G)),
                                **grad_specs)(X, W),
        "grad_all_gather": lambda: sm(weighted(lambda c: lax.all_gather(
            c, "x", axis_index_groups=G, axis=1, tiled=True) ** 2), **grad_specs)(X, wg),
        "grad_psum_scatter": lambda: sm(weighted(lambda c: lax.psum_scatter(
            c * c, "x", axis_index_groups=G, scatter_dimension=1, tiled=True)),
            **grad_specs)(X, W[:, :2]),
        "grad_all_to_all": lambda: sm(weighted(lambda c: lax.all_to_all(
            c * c, "x", 1, 0, axis_index_groups=G, tiled=True)),
            **grad_specs)(X, np.tile(W[:, :2], (2, 1))),
        # jvp of the shard_map
        "jvp_psum": lambda: api.jvp(sm(lambda a: lax.psum(a * a, "x", axis_index_groups=G)),
                                    (X,), (W,)),
        # refusals
        "not_a_cover": lambda: sm(lambda a: lax.psum(a, "x", axis_index_groups=[[0, 1],
                                                                                [1, 2]]))(X),
        "psum_check_vma": lambda: sm(lambda a: lax.psum(a, "x", axis_index_groups=G),
                                     cv=True)(X),
        "all_gather_invarying": lambda: sm(lambda a: lax.all_gather(
            a, "x", axis_index_groups=G, to="invarying"))(X),
        "vmap_psum": lambda: api.vmap(lambda a: lax.psum(a, "i", axis_index_groups=G),
                                      axis_name="i")(X[:4]),
        "vmap_all_gather": lambda: api.vmap(lambda a: lax.all_gather(
            a, "i", axis_index_groups=G), axis_name="i")(X[:4]),
        "vmap_all_to_all": lambda: api.vmap(lambda a: lax.all_to_all(
            a[:2], "i", 0, 0, axis_index_groups=G), axis_name="i")(X[:4]),
        "vmap_psum_constant": lambda: api.vmap(lambda a: a + lax.psum(
            np.float32(2), "i", axis_index_groups=G), axis_name="i")(X[:4]),
    }


def outcome(thunk) -> dict:
    """{"out": nested lists} or {"error": type name, "message": text}."""
    try:
        out = thunk()
    except Exception as e:                 # noqa: BLE001  (what is recorded)
        return {"error": type(e).__name__, "message": str(e)}
    if isinstance(out, tuple):
        return {"out": [np.asarray(o).tolist() for o in out]}
    return {"out": np.asarray(out).tolist()}
