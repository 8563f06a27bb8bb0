"""The bad-input catalogue (issue 14, part 1): bad input gets an error, never a silent
answer, and eager, jit, vmap and grad agree on it.

The cases come from tables in `bad_input_cases.py` and `bad_input_transforms.py`
(each unary/binary function x bad operands, each reduction x bad axes, each
transformation x bad arguments, control-flow and pytree mismatches, non-numeric
values, complex where real is required). Each case
asserts the exception class (JAX's: TypeError for dtypes, ValueError for axes and
shapes) and a fragment of the message naming the mistake, in every mode that makes
sense for it, and that the trace stack is clean afterwards. Where JAX defines a result
instead of an error (integer division by zero, NaN propagation, out-of-range indices
that clamp or fill), eager and jit give JAX's value, recorded below from jax 0.10.2.
`tests/integration/test_bad_input.py` keeps the probe's original examples.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import plugax
import plugax.lax as lax
import plugax.numpy as pnp
from plugax.core import trace

sys.path.insert(0, str(Path(__file__).parent))   # the case tables, a plain module beside us
from bad_input_cases import Case, make_cases, run_mode  # noqa: E402
from bad_input_transforms import make_defined  # noqa: E402

CASES = make_cases(plugax, pnp, lax)
BY_NAME = {c.name: c for c in CASES}
DEFINED = {name: (fn, x) for name, fn, x in make_defined(pnp, lax)}
nan, inf = float("nan"), float("inf")


def _checked_modes(case: Case) -> tuple:
    xfailing = {m for m, _ in case.xfail}
    return tuple(m for m in case.applicable_modes() if m not in xfailing)


def _assert_clean_and_working() -> None:
    """After an error the trace stack is back at eval, and fresh work (a trace, a
    derivative, a jit) runs."""
    assert trace.current_trace() is trace.eval_trace
    assert float(plugax.grad(pnp.sin)(0.0)) == 1.0


def _raise_in(case: Case, mode: str) -> BaseException:
    with pytest.raises(case.error) as info:
        run_mode(case, mode, plugax, pnp)
    return info.value


def test_the_catalogue_is_large_and_generated():
    assert len(CASES) >= 150
    assert sum(len(_checked_modes(c)) for c in CASES) >= 450


@pytest.mark.parametrize("name", [c.name for c in CASES if _checked_modes(c)])
def test_bad_input_raises_the_same_named_error_in_every_mode(name):
    case = BY_NAME[name]
    raised = {}
    for mode in _checked_modes(case):
        err = _raise_in(case, mode)
        for fragment in case.fragments():
            assert fragment in str(err), f"{mode}: {fragment!r} not in {str(err)!r}"
        raised[mode] = type(err)
        _assert_clean_and_working()
    # eager, jit, vmap and grad agree: the same class of error everywhere
    assert len(set(raised.values())) == 1, raised


XFAILS = [pytest.param(c.name, mode, id=f"{c.name}-{mode}",
                       marks=pytest.mark.xfail(strict=True, reason=reason))
          for c in CASES for mode, reason in c.xfail if mode in c.applicable_modes()]


@pytest.mark.parametrize("name, mode", XFAILS)
def test_known_defects_outside_this_catalogues_code(name, mode):
    case = BY_NAME[name]
    err = _raise_in(case, mode)
    _assert_clean_and_working()
    for fragment in case.fragments():
        assert fragment in str(err)


# jax 0.10.2, eager and jit alike (jnp.asarray(x) then the function)
JAX_VALUES = {
    'floor_divide by zero, int8': ([-2, -2, -1], 'int8'),
    'remainder by zero, int8': ([0, 0, 0], 'int8'),
    'lax.div by zero, int8': ([-1, -1, -1], 'int8'),
    'lax.rem by zero, int8': ([7, -7, 0], 'int8'),
    'floor_divide by zero, int16': ([-2, -2, -1], 'int16'),
    'remainder by zero, int16': ([0, 0, 0], 'int16'),
    'lax.div by zero, int16': ([-1, -1, -1], 'int16'),
    'lax.rem by zero, int16': ([7, -7, 0], 'int16'),
    'floor_divide by zero, int32': ([-2, -2, -1], 'int32'),
    'remainder by zero, int32': ([0, 0, 0], 'int32'),
    'lax.div by zero, int32': ([-1, -1, -1], 'int32'),
    'lax.rem by zero, int32': ([7, -7, 0], 'int32'),
    'floor_divide by zero, uint8': ([255, 255, 255], 'uint8'),
    'remainder by zero, uint8': ([0, 0, 0], 'uint8'),
    'lax.div by zero, uint8': ([255, 255, 255], 'uint8'),
    'lax.rem by zero, uint8': ([7, 0, 3], 'uint8'),
    'floor_divide by zero, uint32': ([4294967295, 4294967295, 4294967295], 'uint32'),
    'remainder by zero, uint32': ([0, 0, 0], 'uint32'),
    'lax.div by zero, uint32': ([4294967295, 4294967295, 4294967295], 'uint32'),
    'lax.rem by zero, uint32': ([7, 0, 3], 'uint32'),
    'max with a NaN': (nan, 'float32'),
    'min with a NaN': (nan, 'float32'),
    'sum with a NaN': (nan, 'float32'),
    'argmax with a NaN': (1, 'int32'),
    'argmin with a NaN': (1, 'int32'),
    'maximum with a NaN': ([2.0, nan, 3.0], 'float32'),
    'minimum with a NaN': ([1.0, nan, 2.0], 'float32'),
    'clip of a NaN': ([1.0, nan, 2.0], 'float32'),
    'sign of a NaN': ([1.0, nan, 1.0], 'float32'),
    'lax.max with a NaN': ([3.0, nan, 3.0], 'float32'),
    'cumsum with a NaN': ([1.0, nan, nan], 'float32'),
    'round of a NaN': ([1.0, nan, 3.0], 'float32'),
    'float division by zero': ([inf, -inf, nan], 'float32'),
    'log of a negative': ([nan, -inf, 0.0], 'float32'),
    'sqrt of a negative': ([nan, 2.0], 'float32'),
    'exp overflows to inf': ([inf, 0.0], 'float32'),
    'int8 addition wraps': ([-56, 56], 'int8'),
    'uint8 subtraction wraps': ([254], 'uint8'),
    'float32 to int32 truncates toward zero': ([1, -2], 'int32'),
    'mean of an empty axis': ([nan, nan], 'float32'),
    'dynamic_slice starting past the end': ([2.0, 3.0, 4.0], 'float32'),
    'dynamic_slice starting below zero': ([0.0, 1.0], 'float32'),
    'dynamic_update_slice past the end': ([0.0, 1.0, 2.0, 1.0, 1.0], 'float32'),
    'take out of range fills NaN': ([1.0, nan], 'float32'),
    'take mode=clip': ([0.0, 4.0], 'float32'),
    'an integer array index out of range clamps': ([4.0, 0.0], 'float32'),
    'a static index past the end clamps': (4.0, 'float32'),
    'a static index below the start clamps': (0.0, 'float32'),
    'a slice past the end stops at the end': ([3.0, 4.0], 'float32'),
    'dynamic_index_in_dim past the end': ([4.0], 'float32'),
}


def test_the_defined_results_are_all_recorded():
    assert set(DEFINED) == set(JAX_VALUES)


@pytest.mark.parametrize("name", list(JAX_VALUES))
def test_where_jax_defines_a_result_eager_and_jit_give_it(name):
    fn, x = DEFINED[name]
    want, dtype = JAX_VALUES[name]
    with np.errstate(all="ignore"):
        for got in (fn(pnp.asarray(x)), plugax.jit(fn)(pnp.asarray(x))):
            assert np.asarray(got).dtype == np.dtype(dtype)
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want, dtype))


# --- the valid neighbours of what is now refused still work ---------------------------
def test_allow_int_gives_float0_gradients_eagerly_under_jit_and_vmap():
    f = lambda n, x: pnp.sum(n * x)
    for g in (plugax.grad(f, argnums=(0, 1), allow_int=True),
              plugax.jit(plugax.grad(f, argnums=(0, 1), allow_int=True))):
        dn, dx = g(np.arange(3, dtype=np.int32), np.ones(3, np.float32))
        assert dn.dtype == plugax.dtypes.float0 and dn.shape == (3,)
        np.testing.assert_array_equal(dx, [0.0, 1.0, 2.0])
    batched = plugax.vmap(plugax.grad(lambda n: pnp.sum(n * 2.0), allow_int=True))
    assert batched(np.ones((2, 3), np.int32)).dtype == plugax.dtypes.float0
    jac = plugax.jacrev(lambda n, x: n * x, argnums=(0, 1), allow_int=True)(
        np.ones(2, np.int32), np.full(2, 3.0, np.float32))
    assert jac[0].dtype == plugax.dtypes.float0 and jac[0].shape == (2, 2)
    np.testing.assert_array_equal(jac[1], np.eye(2))


def test_the_neighbours_of_refused_calls_still_work():
    x = np.array([[1.0, -2.0, 3.0]], np.float32)
    assert plugax.jit(lambda a, n=2: a * n, static_argnames="n")(1.0, n=3) == 3.0
    assert plugax.jit(lambda a, **kw: a, static_argnames="anything")(1.0) == 1.0
    np.testing.assert_array_equal(lax.lt(x, -x), [[False, True, False]])
    np.testing.assert_array_equal(pnp.abs(np.array([-3, 2], np.int32)), [3, 2])
    np.testing.assert_array_equal(pnp.floor(np.array([3, -2], np.int32)), [3, -2])
    np.testing.assert_array_equal(pnp.clip(x, -1.0, 1.0), [[1.0, -1.0, 1.0]])
    assert float(pnp.sum(x, axis=np.int64(1))[0]) == 2.0
    assert float(pnp.sum(x, axis=[0, 1])) == 2.0
    assert float(lax.reduce_max(x, (-1,))[0]) == 3.0 and lax.reduce_sum(x, (-2,)).shape == (3,)
    assert float(lax.switch(0, [lambda a: a + 1], 1.0)) == 2.0
    y, f_lin = plugax.linearize(lambda a: a * a, np.ones(3, np.float32))
    np.testing.assert_array_equal(f_lin(np.ones(3, np.float32)), [2.0, 2.0, 2.0])
    assert float(f_lin(np.ones(3, np.float32) * 2)[0]) == 4.0
    assert float(plugax.grad(lambda a, b: a * b, argnums=-1)(2.0, 3.0)) == 2.0
    with pytest.raises(TypeError, match="grad expects a callable"):
        plugax.grad(3)
    assert plugax.jvp(lambda a: a * 2, (1.0,), (1.0,))[1] == 2.0   # a Python float tangent
    assert plugax.grad(lambda a, b: a * b, argnums=(0, 1))(2.0, 3.0) == (3.0, 2.0)
    assert pnp.asarray(np.ones(2, np.complex64)).dtype == np.complex64   # arrays may hold it
    z = pnp.asarray(np.array([3 + 4j], np.complex64))     # JAX allows these on complex
    assert pnp.abs(z).dtype == np.float32 and float(pnp.abs(z)[0]) == 5.0
    assert pnp.asarray(x).astype(np.complex64).dtype == np.complex64
    assert pnp.asarray(np.float32(2.7)).astype(np.int32) == 2
