"""The `jax.Array` methods issue 16 lists, on plugax Arrays and on tracers (under jit),
against the same NumPy method on float64/bool data: one table, name -> call."""
from __future__ import annotations

import numpy as np
import pytest

import plugax
import plugax.numpy as pnp

X = np.array([[0.25, -1.5, 2.75], [3.5, 0.0, -4.125]])

# name -> (method call, applied alike to a NumPy array and a plugax Array)
CALLS = {
    "clip": lambda a: a.clip(-1.0, 2.0),
    "clip_min_only": lambda a: a.clip(min=0.0),
    "round": lambda a: a.round(1),
    "sort": lambda a: np.sort(a, axis=1) if isinstance(a, np.ndarray) else a.sort(axis=1),
    "argsort": lambda a: a.argsort(axis=1),
    "take": lambda a: a.take(np.array([0, 4, 5])),
    "take_axis": lambda a: a.take(np.array([2, 0]), axis=1),
    "repeat": lambda a: a.repeat(2, axis=0),
    "copy": lambda a: a.copy(),
    "cumsum": lambda a: a.cumsum(axis=1),
    "prod": lambda a: a.prod(axis=0),
    "std": lambda a: a.std(axis=1),
    "var": lambda a: a.var(),
    "all": lambda a: (a > -5).all(axis=1),
    "any": lambda a: (a > 3).any(),
}


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("wrap", [lambda f: f, plugax.jit], ids=["eager", "jit"])
def test_method_matches_numpy(name, wrap):
    call = CALLS[name]
    want = call(X.copy())
    got = wrap(call)(pnp.asarray(X.astype(np.float32)))
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=1e-6, atol=1e-6)


def test_nonzero_item_tolist():
    a = pnp.asarray(X.astype(np.float32))
    for got, want in zip((a > 0).nonzero(), (X > 0).nonzero()):
        np.testing.assert_array_equal(np.asarray(got), want)
    padded = plugax.jit(lambda x: (x > 0).nonzero(size=4, fill_value=-1))(a)
    np.testing.assert_array_equal(np.asarray(padded[1]), [0, 2, 0, -1])
    assert a[1, 0].item() == 3.5 and isinstance(a[1, 0].item(), float)
    assert a.tolist() == X.astype(np.float32).tolist()
