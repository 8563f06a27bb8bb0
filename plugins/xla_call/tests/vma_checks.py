"""shard_map's check_vma on 8 CPU devices (a (4, 2) mesh over "x", "y"); run from
sharding_checks.py, in its subprocess, through `run(check, mesh)`.

The error texts are JAX 0.10.2's, recorded from `jax.jit(jax.shard_map(...)).trace`
on the same programs and mesh; each must be reproduced exactly. The valid programs
are compared with NumPy, and check_vma=False must keep the old behaviour (one
device's copy), which is what the check exists to refuse."""
from __future__ import annotations

import numpy as np

import plugax
import plugax.numpy as jnp
from plugax.sharding import PartitionSpec as P

HEAD = ("shard_map applied to the function '{name}' was given out_specs which require "
        "replication which can't be statically inferred given the mesh:\n\n"
        "The mesh given has shape (4, 2) with corresponding axis names ('x', 'y').\n\n")
TAIL = ("\n\nCheck if these output values are meant to be replicated over those mesh axes. "
        "If not, consider revising the corresponding out_specs entries. If so, consider "
        "disabling the check by passing the check_vma=False argument to `jax.shard_map`.")
NOT_X = ("out_specs{key} is P() which implies that the corresponding output value is only "
         "varying across mesh axes {{}} and not {{x}}, but it was inferred to be possibly "
         "varying over {{x}}")


def _jax(name: str, *parts: str) -> str:
    body = parts[0] if len(parts) == 1 else "\n\n".join("* " + p for p in parts)
    return HEAD.format(name=name) + body + TAIL


def _expect_error(f, mesh, in_specs, out_specs, want: str, x) -> None:
    try:
        plugax.shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs)(x)
    except ValueError as e:
        assert str(e) == want, f"\n got: {str(e)!r}\nwant: {want!r}"
    else:
        raise AssertionError(f"accepted: {want}")


def shard_map_check_vma_errors(mesh) -> None:
    from plugax import lax

    @plugax.custom_jvp
    def _shift(a):                       # a custom derivative's body is followed too
        return a + lax.axis_index("x")
    _shift.defjvp(lambda p, t: (_shift(p[0]), t[0]))
    x = np.arange(32, dtype=np.float32).reshape(8, 4)

    def two(a):
        return a, a * 2.0, lax.psum(a, "x")
    ring = [(i, (i + 1) % 4) for i in range(4)]
    cases = [
        (lambda a: a, P("x"), P(), _jax("<lambda>", NOT_X.format(key=""))),
        (lambda a: a, P("x", "y"), P("x"), _jax(
            "<lambda>", "out_specs is P('x',) which implies that the corresponding output "
            "value is replicated across mesh axis 'y', but could not infer replication over "
            "any axes")),
        (lambda a: lax.psum(a, "y"), P("x"), P(), _jax("<lambda>", NOT_X.format(key=""))),
        (lambda a: lax.all_gather(a, "x"), P("x"), P(), _jax("<lambda>", NOT_X.format(key=""))),
        (lambda a: lax.ppermute(a, "x", ring), P(), P(), _jax("<lambda>", NOT_X.format(key=""))),
        (lambda a: lax.psum_scatter(a, "x", tiled=True), P(), P(),
         _jax("<lambda>", NOT_X.format(key=""))),
        (lambda a: a[:1, :1] * 0 + lax.axis_index("y"), P(), P(), _jax(
            "<lambda>", "out_specs is P() which implies that the corresponding output value "
            "is only varying across mesh axes {} and not {y}, but it was inferred to be "
            "possibly varying over {y}")),
        (two, P("x"), (P(), P(), P()),
         _jax("two", NOT_X.format(key="[0]"), NOT_X.format(key="[1]"))),
        (lambda a: {"u": a, "v": [a]}, P("x"), {"u": P(), "v": [P()]},
         _jax("<lambda>", NOT_X.format(key="['u']"), NOT_X.format(key="['v'][0]"))),
        (lambda a: (a, a), P("x", "y"), (P(), P("x")), _jax(
            "<lambda>", "out_specs[0] is P() which implies that the corresponding output "
            "value is only varying across mesh axes {} and not {x,y}, but it was inferred "
            "to be possibly varying over {x,y}", "out_specs[1] is P('x',) which implies that "
            "the corresponding output value is replicated across mesh axis 'y', but could "
            "not infer replication over any axes")),
        # through control flow and calls (JAX refuses these too)
        (lambda a: lax.scan(lambda c, r: (c + r, c), a[0], a)[0], P("x"), P(),
         _jax("<lambda>", NOT_X.format(key=""))),
        (lambda a: plugax.jit(lambda b: b * 2.0)(a), P("x"), P(),
         _jax("<lambda>", NOT_X.format(key=""))),
        (lambda a: lax.cond(a.sum() > 0, lambda b: b * 0.0, lambda b: b * 0.0 + 1.0, a),
         P("x"), P(), _jax("<lambda>", NOT_X.format(key=""))),
        (lambda a: plugax.checkpoint(lambda b: b + lax.axis_index("x"))(a), P(), P(),
         _jax("<lambda>", NOT_X.format(key=""))),
        (lambda a: _shift(a), P(), P(), _jax("<lambda>", NOT_X.format(key=""))),
        # a loop whose carry picks up a varying value (JAX asks for a pcast; plugax widens)
        (lambda a: lax.fori_loop(0, 3, lambda i, c: c + lax.axis_index("x"), a), P(), P(),
         _jax("<lambda>", NOT_X.format(key=""))),
        # a while whose trip count differs per device
        (lambda a: lax.while_loop(lambda c: c[0] < lax.axis_index("x").astype(np.float32),
                                  lambda c: c + 1.0, jnp.zeros(2)), P(), P(),
         _jax("<lambda>", NOT_X.format(key=""))),
    ]
    for f, ins, outs, want in cases:
        _expect_error(f, mesh, ins, outs, want, x)
    try:
        lax.all_gather(x, "x", to="everywhere")
    except ValueError as e:
        assert "Allowed `to` values are" in str(e), e
    else:
        raise AssertionError("an unknown `to` accepted")


def shard_map_check_vma_valid(mesh) -> None:
    from plugax import lax
    x = np.arange(32, dtype=np.float32).reshape(8, 4)
    rows = x.reshape(4, 2, 4)                    # device row i holds rows[i]
    sm = lambda f, i, o: plugax.shard_map(f, mesh=mesh, in_specs=i, out_specs=o)(x)  # noqa

    np.testing.assert_allclose(np.asarray(sm(lambda a: lax.psum(a, "x"), P("x"), P())),
                               rows.sum(0))
    np.testing.assert_allclose(np.asarray(sm(lambda a: lax.pmax(a, ("x", "y")), P("x", "y"),
                                             P())),
                               x.reshape(4, 2, 2, 2).max(axis=(0, 2)))
    np.testing.assert_allclose(np.asarray(sm(lambda a: lax.all_gather(
        a, "x", tiled=True, to="invarying"), P("x"), P())), x)
    np.testing.assert_allclose(np.asarray(sm(lambda a: a * 2.0, P("x", "y"), P("x", "y"))),
                               2 * x)
    np.testing.assert_allclose(np.asarray(sm(lambda a: lax.psum(a, "x") * 0 + 1.0, P("x"),
                                             P())), np.ones((2, 4)))
    # all_gather (varying) with the axis kept in out_specs: 4 gathered copies stacked
    np.testing.assert_allclose(np.asarray(sm(lambda a: lax.all_gather(a, "x", tiled=True),
                                             P("x"), P("x"))), np.tile(x, (4, 1)))
    # an unvarying value, a constant and a value reduced inside a loop or a jit
    out = sm(lambda a: (a + 1.0, jnp.ones(3),
                        lax.fori_loop(0, 2, lambda i, c: lax.pmean(c, "x"),
                                      lax.pmean(a, "x")),
                        plugax.jit(lambda b: lax.psum(b, "x"))(a)), P(), P())
    np.testing.assert_allclose(np.asarray(out[0]), x + 1)
    np.testing.assert_allclose(np.asarray(out[1]), np.ones(3))
    np.testing.assert_allclose(np.asarray(out[2]), x)
    np.testing.assert_allclose(np.asarray(out[3]), 4 * x)
    # axis_index varies over its axis only
    idx = sm(lambda a: a[:1, :1] * 0 + lax.axis_index("y").astype(np.float32), P(),
             P(None, "y"))
    np.testing.assert_allclose(np.asarray(idx), [[0, 1]])
    # pbroadcast: every member of x gets member 1's block (lowered inside shard_map)
    pb = sm(lambda a: lax.pbroadcast(a, "x", 1), P("x"), P("x"))
    np.testing.assert_allclose(np.asarray(pb), np.tile(rows[1], (4, 1)))
    # the two all_gathers' transposes (JAX's numbers: 2v when invariant, 8v when varying)
    v = np.arange(8, dtype=np.float32)
    for to, factor in (("invarying", 2.0), ("varying", 8.0)):
        g = plugax.shard_map(lambda w: plugax.grad(lambda w: jnp.sum(
            lax.all_gather(w, "x", tiled=True, to=to) ** 2))(w), mesh=mesh, in_specs=P("x"),
            out_specs=P("x"))(v)
        np.testing.assert_allclose(np.asarray(g), factor * v, err_msg=to)


def shard_map_check_vma_false(mesh) -> str | None:
    from plugax import lax
    x = np.arange(32, dtype=np.float32).reshape(8, 4)
    out = plugax.shard_map(lambda a: a, mesh=mesh, in_specs=P("x"), out_specs=P(),
                           check_vma=False)(x)
    got = np.asarray(out)                # one device's block (which one: XLA's choice)
    assert got.shape == (2, 4) and any(np.array_equal(got, b) for b in x.reshape(4, 2, 4)), got
    if not hasattr(lax, "all_gather"):
        return "collective part skipped: the control_flow family is not loaded"
    out = plugax.shard_map(lambda a: lax.all_gather(a, "x", tiled=True), mesh=mesh,
                           in_specs=P("x"), out_specs=P(), check_vma=False)(x)
    np.testing.assert_allclose(np.asarray(out), x)


def run(check, mesh) -> None:
    for fn in (shard_map_check_vma_errors, shard_map_check_vma_valid,
               shard_map_check_vma_false, shard_map_pcast):
        def bound(fn=fn):
            if fn is not shard_map_check_vma_false and not hasattr(plugax.lax, "psum"):
                return "skipped: the control_flow family (the collectives) is not loaded"
            return fn(mesh)
        bound.__name__ = fn.__name__
        check(bound)


def shard_map_pcast(mesh) -> None:
    """lax.pcast(to='varying') against JAX 0.10.2 (values and errors recorded with it
    on this mesh): the identity on values, varying for check_vma, and a psum in its
    transpose (so a replicated parameter's gradient taken inside the body is summed
    over the devices); a no-op with check_vma=False."""
    from plugax import lax
    x = np.arange(32, dtype=np.float32).reshape(8, 4)
    w = np.array([0.5, -1.0, 2.0, 0.25], np.float32)
    sm = lambda f, i, o, cv=True: plugax.jit(plugax.shard_map(  # noqa: E731
        f, mesh=mesh, in_specs=i, out_specs=o, check_vma=cv))
    cast = lambda a: lax.pcast(a, "x", to="varying")  # noqa: E731
    np.testing.assert_allclose(np.asarray(sm(cast, P(), P("x"))(x)), np.tile(x, (4, 1)))
    both = sm(lambda a: lax.pcast(a, ("x", "y"), to="varying"), P(), P("x", "y"))(x)
    np.testing.assert_allclose(np.asarray(both), np.tile(x, (4, 2)))

    def inside(w, xb):
        return plugax.grad(lambda w: (cast(w) * xb).sum())(w)
    np.testing.assert_allclose(np.asarray(sm(inside, (P(), P("x")), P())(w, x)), x.sum(0))
    np.testing.assert_allclose(np.asarray(sm(inside, (P(), P("x")), P("x"), cv=False)(w, x)),
                               x.reshape(4, 2, 4).sum(1).ravel())     # JAX: no psum
    g = plugax.grad(lambda w: sm(lambda w, xb: cast(w) * xb, (P(), P("x")), P("x"))(
        w, x).sum())(w)
    np.testing.assert_allclose(np.asarray(g), x.sum(0))
    t = plugax.jvp(sm(lambda a: cast(a) * 2, P(), P("x")), (w,), (w,))[1]
    np.testing.assert_allclose(np.asarray(t), np.tile(2 * w, 4))
    _expect_error(cast, mesh, P(), P(), _jax("<lambda>", NOT_X.format(key="")), x)
    errors = [
        (lambda: sm(cast, P("x"), P("x"))(x), ValueError,
         "Unsupported pcast from=varying, to='varying'"),
        (lambda: sm(lambda a: lax.pcast(a, ("x", "y"), to="varying"), P("x"), P("x", "y"))(x),
         ValueError, "jax.lax.pcast can only accept axis_name which corresponds to one of "
         "varying, unreduced, reduced or invarying state of the input. Got input type: "
         "float32[2,4]{V:x}, axes: ('x', 'y') and input state: {'invarying', 'varying'}"),
        (lambda: cast(w), ValueError, "pvary should be called under jax.shard_map."),
        (lambda: plugax.vmap(lambda a: lax.pcast(a, "i", to="varying"), axis_name="i")(x),
         ValueError, "pvary should be called under jax.shard_map."),
        (lambda: lax.pcast(w, {"x"}, to="varying"), TypeError,
         "axis_name={'x'} must be a tuple or a str. Got {'x'}"),
    ]
    for thunk, kind, want in errors:
        try:
            thunk()
        except kind as e:
            got = str(e)
            if "input state" in want:     # JAX prints a set: its order varies by run
                got, want = got.split("input state")[0], want.split("input state")[0]
            assert got == want or want in got, f"\n got: {got!r}\nwant: {want!r}"
        else:
            raise AssertionError(f"accepted: {want}")
    assert lax.pcast(w, (), to="varying") is w
    try:
        lax.pcast(w, "x", to="sideways")
    except ValueError as e:
        assert str(e).startswith("Got unexpected `to` value. Allowed `to` values are: "), e
    try:
        lax.pvary   # noqa: B018
    except AttributeError as e:
        assert "pcast(..., to='varying')" in str(e), e
