"""Collectives over named vmap axes (collectives.py, and the kernel's vmap(axis_name=)).

Every collective's values and its gradient (of a weighted sum) against jax 0.10.2's
(collectives_jax.json, recorded once with JAX), eagerly and under jit; then the
compositions JAX allows: collectives inside jit, scan and grad inside the vmap, nested
vmaps with several names, psum of unbatched values, and the NameError of an unbound
name."""
import json
from pathlib import Path

import numpy as np
import pytest

import plugax
import plugax.lax as lax
import plugax.numpy as jnp

REC = json.loads((Path(__file__).parent / "collectives_jax.json").read_text())
X = np.array(REC["X"], np.float32)
Y = np.array(REC["Y"], np.float32)
CASES = {
    "psum": (lambda a: lax.psum(a, "i"), X), "pmean": (lambda a: lax.pmean(a, "i"), X),
    "pmax": (lambda a: lax.pmax(a, "i"), X), "pmin": (lambda a: lax.pmin(a, "i"), X),
    "all_gather": (lambda a: lax.all_gather(a, "i", axis=1), X),
    "all_gather_tiled": (lambda a: lax.all_gather(a, "i", tiled=True), X),
    "ppermute": (lambda a: lax.ppermute(a, "i", [(0, 2), (1, 0), (2, 1)]), X),
    "pshuffle": (lambda a: lax.pshuffle(a, "i", [1, 2, 0]), X),
    "all_to_all": (lambda a: lax.all_to_all(a, "i", 0, 1), Y),
    "all_to_all_tiled": (lambda a: lax.all_to_all(a, "i", 1, 0, tiled=True),
                         np.tile(Y, (1, 1, 3))),
    "psum_scatter": (lambda a: lax.psum_scatter(a, "i"), Y),
    "psum_scatter_tiled": (lambda a: lax.psum_scatter(a, "i", scatter_dimension=1,
                                                      tiled=True), np.tile(Y, (1, 1, 3))),
    "pswapaxes": (lambda a: lax.pswapaxes(a, "i", 0), Y),
    "axis_index": (lambda a: a * lax.axis_index("i"), X),
}


def _named(f):
    return plugax.vmap(f, axis_name="i")


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_jax(name):
    f, arg = CASES[name]
    rec = REC["cases"][name]
    for fn in (_named(f), plugax.jit(_named(f))):
        np.testing.assert_allclose(fn(arg), rec["out"], rtol=1e-5, atol=1e-5)
    if "grad" in rec:
        wt = np.array(rec["wt"], np.float32)
        grad = plugax.grad(lambda a: (_named(f)(a) * wt).sum())(arg)
        np.testing.assert_allclose(grad, rec["grad"], rtol=1e-4, atol=1e-4)
        # the same inside the vmap: the collective's transpose runs under the named axis
        inner = plugax.vmap(plugax.grad(lambda a, w: (f(a) * w).sum()), axis_name="i")
        if name in ("psum", "pmean", "ppermute", "pshuffle", "axis_index"):
            np.testing.assert_allclose(inner(arg, wt), rec["grad"], rtol=1e-4, atol=1e-4)


def test_compositions():
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    # jit inside the vmap, scan inside the vmap
    np.testing.assert_allclose(_named(plugax.jit(lambda a: lax.psum(a, "i")))(x),
                               np.broadcast_to(x.sum(0), x.shape))
    scanned = _named(lambda a: lax.scan(lambda c, t: (c + lax.psum(t, "i"), None), 0.0, a)[0])
    np.testing.assert_allclose(scanned(x), [x.sum()] * 3)
    # nested vmaps: psum over both names, and over the outer name only
    ones = np.ones((2, 3, 4), np.float32)
    both = plugax.vmap(_named(lambda a: lax.psum(a, ("i", "j"))), axis_name="j")(ones)
    np.testing.assert_allclose(both, 6 * ones)
    outer = plugax.vmap(_named(lambda a: lax.psum(a, "j") + lax.axis_index("j")),
                        axis_name="j")(ones)
    np.testing.assert_allclose(outer[1], 3 * ones[1])
    # unbatched operands still see the whole axis; axis_size is a Python int
    np.testing.assert_allclose(plugax.vmap(lambda a: lax.psum(a, "i"), in_axes=None,
                                           axis_size=3, axis_name="i")(np.ones(2)),
                               np.full((3, 2), 3.0))
    assert _named(lambda a: a * lax.axis_size("i"))(x)[0, 1] == 3.0
    # integers: pmean gives floats
    assert _named(lambda a: lax.pmean(a, "i"))(np.arange(4)).dtype == np.float32
    # pytrees
    tree = _named(lambda a: lax.psum({"a": a, "b": 2 * a}, "i"))(x)
    np.testing.assert_allclose(tree["b"], 2 * tree["a"])
    # pbroadcast: every member gets the source's value, gradient only to the source
    np.testing.assert_allclose(_named(lambda a: lax.pbroadcast(a, "i", 1))(x),
                               np.broadcast_to(x[1], x.shape))
    g = plugax.grad(lambda a: _named(lambda b: lax.pbroadcast(b, "i", 1))(a).sum())(x)
    np.testing.assert_allclose(g, np.stack([0 * x[0], 3 + 0 * x[0], 0 * x[0]]))


@pytest.mark.parametrize("name, f, expected", [
    # collectives inside cond/scan/while/jit whose operands are not batched: the
    # higher-order primitive is still batched, so the collective sees the axis (JAX's
    # values, recorded with jax 0.10.2)
    ("cond", lambda x: lax.cond(True, lambda: lax.psum(1.0, "i"), lambda: 0.0) + x,
     [3, 4, 5]),
    ("scan", lambda x: lax.scan(lambda c, _: (c + lax.psum(1.0, "i"), None), 0.0, None,
                                length=3)[0] + x, [9, 10, 11]),
    ("while", lambda x: lax.while_loop(lambda c: c < 5.0, lambda c: c + lax.psum(1.0, "i"),
                                       0.0) + x, [6, 7, 8]),
    ("jit", lambda x: plugax.jit(lambda: lax.psum(1.0, "i"))() + x, [3, 4, 5]),
    ("jit_grad", lambda x: plugax.jit(plugax.grad(lambda y: lax.psum(y * y, "i")))(2.0) + x,
     [12, 13, 14]),
])
def test_collectives_in_unbatched_higher_order_primitives(name, f, expected):
    np.testing.assert_allclose(_named(f)(np.arange(3.0, dtype=np.float32)), expected)


def test_errors():
    with pytest.raises(NameError, match="unbound axis name: k"):
        lax.psum(1.0, "k")
    with pytest.raises(NameError, match="unbound axis name: k"):
        _named(lambda a: lax.psum(a, "k"))(np.ones(3))
    with pytest.raises(NameError, match="unbound axis name"):
        plugax.jit(lambda a: lax.axis_index("i"))(1.0)
    with pytest.raises(NameError, match="unbound axis name: j"):
        _named(lambda a: lax.cond(True, lambda: lax.psum(1.0, "j"), lambda: 0.0) + a)(
            np.ones(3))
    with pytest.raises(ValueError, match="permutation of all 3"):
        _named(lambda a: lax.ppermute(a, "i", [(0, 1)]))(np.ones(3))
    with pytest.raises(NotImplementedError, match="pmax"):
        _named(plugax.grad(lambda b: lax.pmax(b, "i")))(np.ones(3))
    with pytest.raises(NotImplementedError, match="axis_index_groups"):
        _named(lambda a: lax.psum(a, "i", axis_index_groups=[[0, 1, 2]]))(np.ones(3))
    with pytest.raises(AttributeError, match="shard_map"):
        lax.psend   # noqa: B018


# JAX 0.10.2's refusals of axis_index_groups over a vmap axis (recorded with it)
_REDUCTION = "axis_index_groups not supported in vmap collectives. Please open a feature request!"
_GATHER = "axis_index_groups not supported in vmap"
_A2A = "Please open a feature request!"


@pytest.mark.parametrize("f, message", [
    (lambda a: lax.psum(a, "i", axis_index_groups=[[0, 1], [2, 3]]), _REDUCTION),
    (lambda a: lax.pmean(a, "i", axis_index_groups=[[0, 1], [2, 3]]), _REDUCTION),
    (lambda a: lax.pmax(a, "i", axis_index_groups=[[0, 1], [2, 3]]), _REDUCTION),
    (lambda a: lax.pmin(a, "i", axis_index_groups=[[0, 3], [2, 1]]), _REDUCTION),
    (lambda a: lax.all_gather(a, "i", axis_index_groups=[[0, 1], [2, 3]]), _GATHER),
    (lambda a: lax.all_gather(a, "i", axis_index_groups=[[0, 1], [2, 3]], tiled=True),
     _GATHER),
    (lambda a: lax.psum_scatter(a, "i", axis_index_groups=[[0, 1], [2, 3]], tiled=True),
     _GATHER),
    (lambda a: lax.all_to_all(a[:2], "i", 0, 0, axis_index_groups=[[0, 1], [2, 3]]), _A2A),
    (lambda a: lax.pswapaxes(a[:2], "i", 0, axis_index_groups=[[0, 1], [2, 3]]), _A2A),
])
def test_axis_index_groups_over_a_vmap_axis_are_refused_as_in_jax(f, message):
    x = np.arange(16.0, dtype=np.float32).reshape(4, 4)
    with pytest.raises(NotImplementedError) as err:
        _named(f)(x)
    assert str(err.value) == message


def test_axis_index_groups_known_values_and_checks():
    """A psum of a value known at trace time is the value times the group size (JAX's
    constant path, no collective), so it works over a vmap axis too; the groups must
    cover the indices once (JAX's ValueError)."""
    x = np.arange(16.0, dtype=np.float32).reshape(4, 4)
    c = np.arange(4.0, dtype=np.float32)
    np.testing.assert_allclose(_named(lambda a: lax.psum(c, "i", axis_index_groups=[
        [0, 1], [2, 3]]))(x), np.tile(2 * c, (4, 1)))        # JAX: [[0, 2, 4, 6]] * 4
    np.testing.assert_allclose(_named(lambda a: lax.pmean(c, "i", axis_index_groups=[
        [0, 1], [2, 3]]))(x), np.tile(c, (4, 1)))
    with pytest.raises(ValueError, match="^axis_index_groups must cover all indices "
                                         "exactly once$"):
        _named(lambda a: lax.psum(a, "i", axis_index_groups=[[0, 1], [1, 2]]))(x)
    with pytest.raises(ValueError, match="the same size"):
        _named(lambda a: lax.all_gather(a, "i", axis_index_groups=[[0], [1, 2, 3]]))(x)
    with pytest.raises(NotImplementedError, match="to='invarying'"):
        _named(lambda a: lax.all_gather(a, "i", axis_index_groups=[[0, 1], [2, 3]],
                                        to="invarying"))(x)
    # an inner (unnamed) vmap passes the groups on, except all_to_all (JAX refuses)
    with pytest.raises(NotImplementedError, match=_REDUCTION):
        _named(plugax.vmap(lambda a: lax.psum(a, "i", axis_index_groups=[[0, 1], [2, 3]])))(
            x[:, :, None])
    with pytest.raises(NotImplementedError, match=_A2A):
        _named(plugax.vmap(lambda a: lax.all_to_all(a, "i", 0, 0, axis_index_groups=[
            [0, 1], [2, 3]])))(np.ones((4, 3, 2), np.float32))


def test_all_gather_to():
    """`to` (shard_map's type of the result) does not change values on a vmap axis; the
    invariant form's transpose takes each member's own slice of its cotangent."""
    want = _named(lambda a: lax.all_gather(a, "i", axis=1))(X)
    np.testing.assert_allclose(_named(lambda a: lax.all_gather(a, "i", axis=1,
                                                               to="invarying"))(X), want)
    w = np.arange(X.shape[0] * X.shape[0], dtype=np.float32).reshape(X.shape[0], X.shape[0])
    g = plugax.vmap(plugax.grad(lambda a, wm: (lax.all_gather(a[0], "i", to="invarying")
                                               * wm).sum()), axis_name="i")(X[:, :1], w)
    np.testing.assert_allclose(g[:, 0], np.diag(w))        # member m: d/da_m of w_m . a
    with pytest.raises(NotImplementedError, match="reduced"):
        _named(lambda a: lax.all_gather(a, "i", to="reduced"))(X)
    with pytest.raises(ValueError, match="Allowed `to` values"):
        _named(lambda a: lax.all_gather(a, "i", to="sideways"))(X)
