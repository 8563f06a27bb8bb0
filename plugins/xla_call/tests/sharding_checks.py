"""Checks of sharded arrays and SPMD jit on 8 CPU devices, run by test_sharding.py in a
subprocess (the device count is fixed when jaxlib's client is made, so it cannot be
changed inside a test process that may already have one). Prints one JSON object:
check name -> [passed, detail]."""
from __future__ import annotations

import json
import os
import sys
import traceback

import numpy as np

import plugax
import plugax.numpy as jnp
from plugax.sharding import NamedSharding, PartitionSpec as P, SingleDeviceSharding

results: dict = {}


def check(fn):
    try:
        detail = fn()
        results[fn.__name__] = [True, detail]
    except Exception:
        results[fn.__name__] = [False, traceback.format_exc(limit=6)]
    return fn


mesh = plugax.make_mesh((4, 2), ("x", "y"))
rng = np.random.default_rng(0)
X = rng.standard_normal((8, 6)).astype(np.float32)


@check
def devices():
    assert plugax.device_count() == 8 and len(plugax.devices()) == 8
    assert mesh.shape == {"x": 4, "y": 2} and mesh.size == 8
    assert [d.id for d in mesh.devices.flat] == list(range(8))


@check
def device_put_shards():
    a = plugax.device_put(X, NamedSharding(mesh, P("x", "y")))
    assert a.sharding == NamedSharding(mesh, P("x", "y"))
    assert np.array_equal(np.asarray(a), X)
    shards = a.addressable_shards
    assert len(shards) == 8
    for s in shards:   # device k = mesh position (k // 2, k % 2): rows 2*(k//2), cols 3*(k%2)
        k = s.device.id
        r, c = 2 * (k // 2), 3 * (k % 2)
        assert s.index == (slice(r, r + 2), slice(c, c + 3)), (k, s.index)
        assert np.array_equal(np.asarray(s.data), X[s.index]), k
    r = plugax.device_put(X, NamedSharding(mesh, P("y")))   # replicated over x
    reps = sorted(s.replica_id for s in r.addressable_shards)
    assert reps == [0, 0, 1, 1, 2, 2, 3, 3], reps
    assert a.is_fully_addressable and not a.is_fully_replicated
    assert a.devices() == set(plugax.devices()) and len(plugax.device_put(X).devices()) == 1
    assert "Array(" in repr(a) and str(np.asarray(a)[0, 0]) in repr(a)
    assert plugax.device_put(X, NamedSharding(mesh, P())).is_fully_replicated
    one = plugax.device_put(X)
    assert isinstance(one.sharding, SingleDeviceSharding)
    assert str(a) == str(X) or np.allclose(np.asarray(a), X)


@check
def visualize():
    """Every picture JAX 0.10.2 printed for these shardings (visualize_jax.json,
    recorded by record_visualize_jax.py), character for character; then the
    printing front ends."""
    import contextlib
    import io
    import pathlib

    from plugax.sharding import Mesh
    from plugax_xla_call.visualize import sharding_picture
    rec = json.loads((pathlib.Path(__file__).parent / "visualize_jax.json").read_text())
    devs = np.array(plugax.devices())
    for case in rec["cases"]:
        m = Mesh(devs[case.get("order", list(range(8)))].reshape(case["mesh"]),
                 tuple(case["names"]))
        spec = P(*[tuple(e) if isinstance(e, list) else e for e in case["spec"]])
        got = sharding_picture(case["shape"], NamedSharding(m, spec),
                               use_color=case.get("color", False),
                               unicode=not case.get("ascii"), **case.get("kwargs", {}))
        assert got == case["out"], f"{case}\n got:\n{got}\nwant:\n{case['out']}"
    want = rec["cases"][8]["out"]                 # (4, 2) mesh, P('x', 'y'), (8, 6)
    assert rec["cases"][8]["spec"] == ["x", "y"] and rec["cases"][8]["shape"] == [8, 6]
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):       # not a terminal: no colours, as JAX
        plugax.debug.visualize_array_sharding(
            plugax.device_put(X, NamedSharding(mesh, P("x", "y"))))
        plugax.debug.visualize_sharding((8, 6), NamedSharding(mesh, P("x", "y")))
    assert buf.getvalue() == want * 2, buf.getvalue()
    colored = next(c["out"] for c in rec["cases"] if c.get("color") and c["spec"] == ["x", "y"])
    os.environ["FORCE_COLOR"] = "1"            # as a terminal (rich reads it too)
    try:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            plugax.debug.visualize_sharding((8, 6), NamedSharding(mesh, P("x", "y")))
            plugax.debug.visualize_sharding((8, 6), NamedSharding(mesh, P("x", "y")),
                                            use_color=False)
    finally:
        del os.environ["FORCE_COLOR"]
    assert buf.getvalue() == colored + want, buf.getvalue()
    try:
        plugax.debug.visualize_sharding((2, 2, 2), NamedSharding(mesh, P()))
    except ValueError as e:
        assert str(e) == ("`visualize_sharding` only works for shapes with 1 and 2 "
                          "dimensions."), e
    else:
        raise AssertionError("a 3-D shape was drawn")
    return f"{len(rec['cases'])} pictures equal to JAX's"


@check
def elementwise():
    s = NamedSharding(mesh, P("x", "y"))
    f = plugax.jit(lambda a, b: jnp.sin(a) * b + 1.0, in_shardings=(s, s))
    out = f(X, X)
    np.testing.assert_allclose(np.asarray(out), np.sin(X) * X + 1.0, rtol=1e-6, atol=1e-6)
    assert out.sharding == s, out.sharding


@check
def matmul_batch_and_column_sharded():
    W = rng.standard_normal((6, 4)).astype(np.float32)
    a = plugax.device_put(X, NamedSharding(mesh, P("x", None)))   # batch-sharded
    w = plugax.device_put(W, NamedSharding(mesh, P(None, "y")))   # column-sharded
    out_s = NamedSharding(mesh, P("x", "y"))
    f = plugax.jit(lambda a, w: a @ w, in_shardings=(a.sharding, w.sharding),
                   out_shardings=out_s)
    out = f(a, w)
    single = plugax.jit(lambda a, w: a @ w)(X, W)
    np.testing.assert_allclose(np.asarray(out), np.asarray(single), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(out), X.astype(np.float64) @ W, rtol=1e-4, atol=1e-4)
    assert out.sharding == out_s
    assert out.addressable_shards[3].data.shape == (2, 2)


def _mlp_loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    pred = h @ params["w2"]
    return jnp.mean((pred - y) ** 2)


@check
def data_parallel_mlp_step():
    params = {"w1": rng.standard_normal((6, 16)).astype(np.float32) * 0.3,
              "b1": np.zeros(16, np.float32),
              "w2": rng.standard_normal((16, 2)).astype(np.float32) * 0.3}
    x = rng.standard_normal((32, 6)).astype(np.float32)
    y = rng.standard_normal((32, 2)).astype(np.float32)
    dp = plugax.make_mesh((8,), ("batch",))
    rep, batch = NamedSharding(dp, P()), NamedSharding(dp, P("batch"))

    def step(params, x, y):
        loss, grads = plugax.value_and_grad(_mlp_loss)(params, x, y)
        new = plugax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)
        return loss, grads, new

    sharded = plugax.jit(step, in_shardings=(rep, batch, batch), out_shardings=rep)
    loss, grads, new = sharded(params, x, y)
    loss1, grads1, new1 = plugax.jit(step)(params, x, y)
    np.testing.assert_allclose(float(loss), float(loss1), rtol=1e-5)
    for k in params:
        np.testing.assert_allclose(np.asarray(grads[k]), np.asarray(grads1[k]),
                                   rtol=1e-4, atol=1e-6)
        assert grads[k].sharding == rep
    # the unsharded gradient in float64 by central differences, one entry
    p64 = {k: v.astype(np.float64) for k, v in params.items()}

    def loss64(p):
        h = np.tanh(x @ p["w1"] + p["b1"])
        return np.mean((h @ p["w2"] - y) ** 2)
    e = 1e-6
    up = dict(p64, w2=p64["w2"].copy()); up["w2"][3, 1] += e
    dn = dict(p64, w2=p64["w2"].copy()); dn["w2"][3, 1] -= e
    fd = (loss64(up) - loss64(dn)) / (2 * e)
    np.testing.assert_allclose(float(np.asarray(grads["w2"])[3, 1]), fd, rtol=1e-3)
    # a second step on the (sharded) outputs reuses the executable and agrees too
    loss2, _, _ = sharded(new, x, y)
    loss2_1, _, _ = plugax.jit(step)(new1, x, y)
    np.testing.assert_allclose(float(loss2), float(loss2_1), rtol=1e-5)
    # out_shardings as a prefix of the output tree: one per top-level output
    cols = NamedSharding(dp, P(None, "batch"))
    by_output = plugax.jit(step, in_shardings=(rep, batch, batch),
                           out_shardings=(rep, {"w1": cols, "b1": rep, "w2": rep}, rep))
    _, g_split, new_split = by_output(params, x, y)
    assert g_split["w1"].sharding == cols and new_split["w1"].sharding == rep
    np.testing.assert_allclose(np.asarray(g_split["w1"]), np.asarray(grads1["w1"]),
                               rtol=1e-4, atol=1e-6)


@check
def sharding_constraint():
    def f(a):
        b = jnp.sin(a) * 2.0
        b = plugax.lax.with_sharding_constraint(b, NamedSharding(mesh, P(None, "y")))
        return b.sum(axis=0)
    j = plugax.jit(f, in_shardings=NamedSharding(mesh, P("x")))
    text = j.lower(X).as_text()
    assert 'sdy.sharding_constraint' in text and '<@mesh, [{}, {"y"}]>' in text, text
    np.testing.assert_allclose(np.asarray(j(X)), (np.sin(X) * 2).sum(0), rtol=1e-5)
    # on one device (plain jit, eager) the constraint is the identity
    np.testing.assert_allclose(np.asarray(plugax.jit(f)(X)), (np.sin(X) * 2).sum(0), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(f(X)), (np.sin(X) * 2).sum(0), rtol=1e-5)
    with mesh:   # a bare PartitionSpec names the mesh of the `with` block
        g = plugax.jit(lambda a: plugax.lax.with_sharding_constraint(a * 3, P("x", "y")),
                       in_shardings=NamedSharding(mesh, P()))
        out = g(X)
    np.testing.assert_allclose(np.asarray(out), X * 3, rtol=1e-6)
    assert out.sharding == NamedSharding(mesh, P("x", "y")), out.sharding


@check
def lowering_text_and_compile():
    s = NamedSharding(mesh, P("x", "y"))
    lowered = plugax.jit(lambda a: jnp.tanh(a), in_shardings=s, out_shardings=s).lower(X)
    text = lowered.as_text()
    for piece in ('sdy.mesh @mesh = <["x"=4, "y"=2]>', "mhlo.num_partitions = 8",
                  'sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>'):
        assert piece in text, (piece, text)
    compiled = lowered.compile()
    cost = compiled.cost_analysis()
    assert "flops" in cost or "transcendentals" in cost, cost
    assert compiled.memory_analysis() is not None
    np.testing.assert_allclose(np.asarray(compiled(X)), np.tanh(X), rtol=1e-6)
    assert compiled.output_shardings == [s]


@check
def composes_with_grad_and_vmap():
    s = NamedSharding(mesh, P("x"))
    f = plugax.jit(lambda a: jnp.sum(jnp.sin(a) ** 2), in_shardings=s)
    g = plugax.grad(f)(X)
    np.testing.assert_allclose(np.asarray(g), 2 * np.sin(X) * np.cos(X), rtol=1e-5, atol=1e-6)
    h = plugax.jit(lambda a: a * 2.0, in_shardings=NamedSharding(mesh, P("x")))
    v = plugax.vmap(h)(np.stack([X, X + 1]))
    np.testing.assert_allclose(np.asarray(v), 2 * np.stack([X, X + 1]), rtol=1e-6)
    gj = plugax.jit(plugax.grad(lambda a: jnp.sum(jnp.sin(a) ** 2)), in_shardings=s,
                    out_shardings=s)(X)
    np.testing.assert_allclose(np.asarray(gj), 2 * np.sin(X) * np.cos(X), rtol=1e-5, atol=1e-6)
    assert gj.sharding == s


@check
def composes_with_scan():
    if not hasattr(plugax.lax, "scan"):
        return "skipped: the control_flow family is not loaded"

    def f(a):
        def body(c, row):
            return c + jnp.sin(row), c.sum()
        return plugax.lax.scan(body, jnp.zeros(a.shape[1]), a)
    j = plugax.jit(f, in_shardings=NamedSharding(mesh, P(None, "y")))
    c, ys = j(X)
    c1, ys1 = plugax.jit(f)(X)
    np.testing.assert_allclose(np.asarray(c), np.asarray(c1), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(ys), np.asarray(ys1), rtol=1e-5, atol=1e-5)


@check
def errors():
    try:
        NamedSharding(mesh, P("z"))
    except ValueError as e:
        assert "z" in str(e) and "not found in mesh" in str(e), e
    else:
        raise AssertionError("unknown axis accepted")
    try:
        plugax.device_put(np.ones((6, 4), np.float32), NamedSharding(mesh, P("x")))
    except ValueError as e:
        assert "divisible by 4" in str(e) and "dimension 0" in str(e), e
    else:
        raise AssertionError("6 rows over 4 devices accepted")
    try:
        plugax.jit(lambda a: a, in_shardings=NamedSharding(mesh, P(None, "x")))(X)
    except ValueError as e:
        assert "divisible by 4" in str(e) and "dimension 1" in str(e), e
    else:
        raise AssertionError("6 columns over 4 devices accepted")
    try:
        plugax.jit(lambda a: (a, a, a), out_shardings=(NamedSharding(mesh, P()),) * 2)(X)
    except ValueError as e:
        assert "do not match the structure" in str(e), e
    else:
        raise AssertionError("2 out_shardings for 3 outputs accepted")
    try:
        plugax.jit(lambda a: a, in_shardings=NamedSharding(mesh, P()), donate_argnums=0)
    except NotImplementedError as e:
        assert "donate" in str(e), e
    else:
        raise AssertionError("donation with shardings silently ignored")
    try:
        plugax.make_mesh((4, 4), ("a", "b"))
    except ValueError as e:
        assert "16 devices" in str(e), e
    else:
        raise AssertionError("a 16-device mesh on 8 devices accepted")


@check
def committed_inputs_keep_their_sharding():
    s = NamedSharding(mesh, P("x", "y"))
    a = plugax.device_put(X, s)
    f = plugax.jit(lambda t: t * 2.0 + 1.0)
    one = f(X)                  # the same signature on one device first
    out = f(a)                  # a committed sharded input: the SPMD path, its sharding kept
    again = f(a)
    np.testing.assert_allclose(np.asarray(out), X * 2 + 1, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(again), X * 2 + 1, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(one), X * 2 + 1, rtol=1e-6)
    assert out.sharding == s and again.sharding == s, (out.sharding, again.sharding)
    assert isinstance(f(X).sharding, SingleDeviceSharding)


@check
def shard_map_collectives():
    if not hasattr(plugax.lax, "psum"):
        return "skipped: the control_flow family (the collectives) is not loaded"
    from plugax import lax
    v = np.arange(8, dtype=np.float32) ** 2
    blocks = v.reshape(4, 2)        # device row i of the mesh holds blocks[i] (over x)

    def body(t):
        return (lax.psum(t, "x"), lax.pmax(t, "x"), lax.pmin(t, "x"), lax.pmean(t, "x"),
                lax.all_gather(t, "x", tiled=True, to="invarying"),
                lax.all_gather(t, "x", to="invarying"),
                lax.ppermute(t, "x", [(i, (i + 1) % 4) for i in range(4)]),
                lax.axis_index("x")[None] * 10 + lax.axis_index("y")[None],
                lax.psum_scatter(lax.all_gather(t, "x", tiled=True), "x", tiled=True),
                lax.all_to_all(lax.all_gather(t, "x", tiled=True), "x", 0, 0, tiled=True),
                lax.psum(t, ("x", "y")), lax.psum(t, "y"))
    outs = plugax.shard_map(body, mesh=mesh, in_specs=P("x"),
                            out_specs=(P(), P(), P(), P(), P(), P(), P("x"), P(("x", "y")),
                                       P("x"), P("x"), P(), P("x")))(v)
    a, mx, mn, me, ag, ag2, pp, idx, rs, a2a, both, over_y = [np.asarray(o) for o in outs]
    # untiled all_to_all: member i's j-th row goes to member j, stacked in member order
    u = np.arange(48, dtype=np.float32).reshape(16, 3)
    a2u = plugax.shard_map(lambda t: lax.all_to_all(t.reshape(4, 1, 3), "x", 0, 0)[None],
                           mesh=mesh, in_specs=P("x"), out_specs=P("x"))(u)
    a2u = np.asarray(a2u).reshape(4, 4, 3)
    for i in range(4):
        for j in range(4):
            np.testing.assert_array_equal(a2u[i, j], u[4 * j + i])
    # calling again traces and compiles nothing new
    from plugax_xla_call import shard_map as sm
    sq = plugax.shard_map(lambda t: lax.psum(t * t, "x"), mesh=mesh, in_specs=P("x"),
                          out_specs=P())
    first = np.asarray(sq(v))
    runners = len(sm._runners)
    np.testing.assert_allclose(np.asarray(sq(v)), first)
    np.testing.assert_allclose(first, (blocks ** 2).sum(0))
    assert len(sm._runners) == runners
    np.testing.assert_allclose(a, blocks.sum(0))
    np.testing.assert_allclose(mx, blocks.max(0))
    np.testing.assert_allclose(mn, blocks.min(0))
    np.testing.assert_allclose(me, blocks.mean(0), rtol=1e-6)
    np.testing.assert_allclose(ag, v)
    np.testing.assert_allclose(ag2, blocks)
    np.testing.assert_allclose(pp, np.roll(blocks, 1, axis=0).reshape(-1))
    assert idx.tolist() == [10 * i + j for i in range(4) for j in range(2)], idx
    np.testing.assert_allclose(rs, 4 * v)        # every device held all of v: 4 copies summed
    np.testing.assert_allclose(a2a, np.tile(blocks, (1, 4)).reshape(4, 4, 2)
                               .transpose(0, 1, 2).reshape(-1))
    np.testing.assert_allclose(both, 2 * blocks.sum(0))   # y replicates: 2 copies over y
    np.testing.assert_allclose(over_y, 2 * v)     # device (i, j) holds blocks[i]: summed over j


@check
def shard_map_matmul_in_jit():
    W = rng.standard_normal((6, 4)).astype(np.float32)

    def local(xb, w):               # each device: its rows times all of w, then a psum check
        return xb @ w
    sm = plugax.shard_map(local, mesh=mesh, in_specs=(P("x"), P()), out_specs=P("x"))
    j = plugax.jit(sm, in_shardings=(NamedSharding(mesh, P("x")), NamedSharding(mesh, P())))
    out = j(X, W)
    np.testing.assert_allclose(np.asarray(out), X.astype(np.float64) @ W, rtol=1e-4, atol=1e-4)
    text = j.lower(X, W).as_text()
    assert "sdy.manual_computation" in text and 'manual_axes={"x", "y"}' in text, text
    plain = plugax.jit(sm)      # a plain jit holding a shard_map is partitioned too
    for _ in range(2):          # (the second call: the C++ dispatcher's path)
        out = plain(X, W)
        np.testing.assert_allclose(np.asarray(out), X.astype(np.float64) @ W, rtol=1e-4,
                                   atol=1e-4)
    assert out.sharding == NamedSharding(mesh, P("x")), out.sharding
    g = plugax.jit(lambda a: plugax.lax.with_sharding_constraint(a * 2.0,
                                                                 NamedSharding(mesh, P("x"))))
    assert g(X).sharding == NamedSharding(mesh, P("x"))
    try:
        plugax.shard_map(local, mesh=mesh, in_specs=(P("z"), P()), out_specs=P("x"))(X, W)
    except ValueError as e:
        assert "not found in mesh" in str(e), e
    else:
        raise AssertionError("unknown axis accepted")
    try:
        plugax.shard_map(local, mesh=mesh, in_specs=(P(None, "x"), P()), out_specs=P("x"))(X, W)
    except ValueError as e:
        assert "not divisible by 4" in str(e), e
    else:
        raise AssertionError("6 columns over 4 devices accepted")


@check
def shard_map_jvp_vmap_and_grad_inside():
    if not hasattr(plugax.lax, "psum"):
        return "skipped: the control_flow family (the collectives) is not loaded"
    from plugax import lax
    dp = plugax.make_mesh((8,), ("b",))
    v = np.linspace(-1, 1, 16).astype(np.float32)
    f = plugax.shard_map(lambda t: lax.psum(jnp.sin(t) * t, "b"), mesh=dp, in_specs=P("b"),
                         out_specs=P())
    blocks = v.reshape(8, 2)
    y, t = plugax.jvp(f, (v,), (np.ones_like(v),))
    np.testing.assert_allclose(np.asarray(y), (np.sin(blocks) * blocks).sum(0), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(t), (np.cos(blocks) * blocks + np.sin(blocks)).sum(0),
                               rtol=1e-5)
    batch = np.stack([v, 2 * v, 3 * v])
    out = plugax.vmap(f)(batch)
    for i in range(3):
        b = batch[i].reshape(8, 2)
        np.testing.assert_allclose(np.asarray(out[i]), (np.sin(b) * b).sum(0), rtol=1e-5)
    # data-parallel gradients taken inside the body and averaged with pmean
    w = np.array([0.5, -0.25], np.float32)
    xs = rng.standard_normal((16, 2)).astype(np.float32)
    ys = rng.standard_normal(16).astype(np.float32)

    def local_loss(w, xb, yb):
        return jnp.mean((jnp.tanh(xb @ w) - yb) ** 2)

    def body(w, xb, yb):
        return lax.pmean(plugax.grad(local_loss)(w, xb, yb), "b")
    g = plugax.shard_map(body, mesh=dp, in_specs=(P(), P("b"), P("b")), out_specs=P())(w, xs, ys)
    g1 = plugax.grad(local_loss)(w, xs, ys)      # equal-sized shards: mean of means
    np.testing.assert_allclose(np.asarray(g), np.asarray(g1), rtol=1e-4, atol=1e-6)


@check
def shard_map_grad():
    if not hasattr(plugax.lax, "psum"):
        return "skipped: the control_flow family (the collectives) is not loaded"
    from plugax import lax
    W = rng.standard_normal((6, 3)).astype(np.float32)

    def body(xb, wb):            # device (i, j): rows i, columns j of X; rows j of W
        return lax.psum(jnp.sum(jnp.tanh(xb @ wb) ** 2), ("x", "y"))[None]
    f = plugax.shard_map(body, mesh=mesh, in_specs=(P("x", "y"), P("y")), out_specs=P())

    def loss(X, W):
        return f(X, W)[0]

    def reference(X, W):         # the same sum, block by block, on one device
        return sum(jnp.sum(jnp.tanh(X[2 * i:2 * i + 2, 3 * j:3 * j + 3] @ W[3 * j:3 * j + 3])
                           ** 2) for i in range(4) for j in range(2))
    np.testing.assert_allclose(float(loss(X, W)), float(reference(X, W)), rtol=1e-5)
    want = plugax.grad(reference, argnums=(0, 1))(X, W)
    for got in (plugax.grad(loss, argnums=(0, 1))(X, W),
                plugax.jit(plugax.grad(loss, argnums=(0, 1)),
                           in_shardings=(NamedSharding(mesh, P("x", "y")),
                                         NamedSharding(mesh, P("y"))))(X, W)):
        for a, b in zip(got, want):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-5)
    # a replicated parameter used with sharded data: its gradient sums over devices;
    # used alone, it is counted once (JAX's answers, with check_vma)
    w = np.float32(0.7)
    v = np.arange(8, dtype=np.float32)
    g1 = plugax.grad(lambda w: plugax.shard_map(
        lambda w, vb: lax.psum(jnp.sum(vb * w), "x")[None], mesh=mesh,
        in_specs=(P(), P("x")), out_specs=P())(w, v)[0])(w)
    np.testing.assert_allclose(float(g1), v.sum(), rtol=1e-6)
    g2 = plugax.grad(lambda w: plugax.shard_map(lambda w: (w * 2.0)[None], mesh=mesh,
                                                in_specs=P(), out_specs=P())(w)[0])(w)
    np.testing.assert_allclose(float(g2), 2.0)


@check
def make_array_from_callback():
    s = NamedSharding(mesh, P("x", "y"))
    seen = []

    def cb(index):
        seen.append(index)
        return X[index]
    a = plugax.make_array_from_callback(X.shape, s, cb)
    assert len(seen) == 8 and a.sharding == s
    np.testing.assert_array_equal(np.asarray(a), X)
    c = plugax.make_array_from_single_device_arrays(
        X.shape, s, [a.addressable_shards[k].data for k in range(8)])
    np.testing.assert_array_equal(np.asarray(c), X)
    assert c.sharding == s
    with plugax.set_mesh(mesh):   # a bare spec names the mesh set
        d = plugax.jit(lambda t: plugax.lax.with_sharding_constraint(t * 1.0, P("y")),
                       in_shardings=s)(X)
    assert d.sharding == NamedSharding(mesh, P("y"))
    b = plugax.make_array_from_process_local_data(NamedSharding(mesh, P("x")), X)
    np.testing.assert_array_equal(np.asarray(b), X)
    try:
        plugax.make_array_from_callback(X.shape, s, lambda index: X)
    except ValueError as e:
        assert "returned shape (8, 6)" in str(e), e
    else:
        raise AssertionError("a wrong piece shape accepted")


import vma_checks                  # noqa: E402  (beside this script: the check_vma checks)
vma_checks.run(check, mesh)
import groups_checks               # noqa: E402  (the collectives with axis_index_groups)
groups_checks.run(check, mesh)


@check
def no_jax_import():
    assert "jax" not in sys.modules or os.environ.get("PLUGAX_ALLOW_JAX")


print("RESULTS " + json.dumps(results))
