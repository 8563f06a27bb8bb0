"""Reverse mode on random programs: grad, jacrev and hessian against independent references.

Hypothesis draws a small straight-line program (about ten smooth primitives:
elementwise math, broadcasting binary ops, reductions, reshapes, transposes and
matrix products) over inputs of small random shapes. Each derivative is checked
against something that does not use the rule being tested: grad against
central finite differences of plain evaluation, jacrev against jacfwd (reverse
vs forward mode: transpose rules vs jvp rules), and the Hessian (forward over
reverse) against its own transpose.

A program is data: a list of steps `(op, i, j, k)` whose integers pick operands
and parameters *modulo* what is available, so every drawn program is valid and
shapes are decided while it runs (they are static, so tracing is unaffected).
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import plugax as px
import plugax.lax as lax
import plugax.numpy as pnp
from plugax.testing import x64

# Deterministic: the same examples on every run and machine, and few of them (fast suite).
deterministic = settings(max_examples=20, deadline=None, derandomize=True, database=None,
                         suppress_health_check=[HealthCheck.too_slow])

SHAPES = [(), (3,), (2, 3), (3, 2), (1, 3)]

UNARY = {
    "sin": pnp.sin,
    "cos": pnp.cos,
    "tanh": pnp.tanh,
    "logistic": lax.logistic,
    "exp_bounded": lambda x: pnp.exp(pnp.sin(x)),   # exp of a value in [-1, 1]
    "square_bounded": lambda x: pnp.square(pnp.tanh(x)),
    "neg": lambda x: -x,
}
BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
}
OPS = sorted(UNARY) + sorted(BINARY) + ["sum", "mean", "reshape", "transpose",
                                        "broadcast_to", "matmul"]


def _broadcastable(a: tuple, b: tuple) -> bool:
    return all(x == y or 1 in (x, y) for x, y in zip(a[::-1], b[::-1]))


def _matmul_partners(a: tuple, pool: list) -> list:
    """Values `b` with `a @ b` defined (both at least 1-d, inner dimensions equal)."""
    if len(a) == 0:
        return []
    return [v for v in pool if len(v.shape) >= 1 and v.shape[0 if len(v.shape) == 1 else -2]
            == a[-1]]


def _step(op: str, i: int, j: int, k: int, pool: list):
    """Apply one step to the values computed so far; returns the new value."""
    a = pool[i % len(pool)]
    shape = tuple(a.shape)
    if op in UNARY:
        return UNARY[op](a)
    if op in BINARY:
        partners = [v for v in pool if _broadcastable(shape, tuple(v.shape))]
        return BINARY[op](a, partners[j % len(partners)])
    if op in ("sum", "mean"):
        reduce = pnp.sum if op == "sum" else pnp.mean
        axis = None if not shape or k % (len(shape) + 1) == len(shape) else k % len(shape)
        return reduce(a, axis=axis)
    if op == "reshape":
        size = int(np.prod(shape, dtype=int))
        targets = [s for s in SHAPES + [(2, 1, 3), (2, 2)] if int(np.prod(s, dtype=int)) == size]
        return pnp.reshape(a, (targets + [(size,)])[k % (len(targets) + 1)])
    if op == "transpose":
        return pnp.transpose(a)
    if op == "broadcast_to":
        targets = [s for s in SHAPES
                   if _broadcastable(shape, s) and np.broadcast_shapes(shape, s) == s] + [shape]
        return pnp.broadcast_to(a, targets[k % len(targets)])
    partners = _matmul_partners(shape, pool)            # matmul
    return pnp.matmul(a, partners[j % len(partners)]) if partners else pnp.tanh(a)


def run_program(program: list, inputs: list) -> list:
    """All values the program computes (inputs excluded), in order."""
    pool = list(inputs)
    for step in program:
        pool.append(_step(*step, pool))
    return pool[len(inputs):]


def scalar_program(program: list):
    """A scalar function of the inputs that depends on every value computed."""
    def f(*inputs):
        return sum(pnp.sum(v) for v in run_program(program, list(inputs)))
    return f


def vector_program(program: list):
    """A vector-valued function: the last two computed values, raveled and concatenated."""
    def f(*inputs):
        return pnp.concatenate([pnp.ravel(v) for v in run_program(program, list(inputs))[-2:]])
    return f


steps = st.tuples(st.sampled_from(OPS), st.integers(0, 63), st.integers(0, 63),
                  st.integers(0, 63))
programs = st.lists(steps, min_size=6, max_size=12)
input_shapes = st.lists(st.sampled_from(SHAPES), min_size=1, max_size=3)


def _inputs(shapes: list, seed: int) -> list:
    rng = np.random.default_rng(seed)
    return [px.Array(rng.uniform(-1.5, 1.5, size=s)) for s in shapes]


def _directional_fd(f, xs: list, vs: list, h: float = 1e-5) -> float:
    plus = f(*[x + h * v for x, v in zip(xs, vs)])
    minus = f(*[x - h * v for x, v in zip(xs, vs)])
    return (float(plus) - float(minus)) / (2 * h)


@deterministic
@given(programs, input_shapes, st.integers(0, 2**16))
def test_grad_matches_finite_differences(program, shapes, seed):
    with x64():
        value = float(scalar_program(program)(*_inputs(shapes, seed)))
        assume(np.isfinite(value) and abs(value) < 1e6)   # finite differences need a tame f
        _check_grad(program, shapes, seed)


@deterministic
@given(programs, input_shapes, st.integers(0, 2**16))
def test_jacrev_equals_jacfwd(program, shapes, seed):
    with x64():
        xs = _inputs(shapes, seed)
        f = vector_program(program)
        nums = tuple(range(len(xs)))
        rev = px.jacrev(f, argnums=nums)(*xs)
        fwd = px.jacfwd(f, argnums=nums)(*xs)
        out_shape = f(*xs).shape
        for r, w, x in zip(rev, fwd, xs):
            assert r.shape == out_shape + x.shape == w.shape
            np.testing.assert_allclose(np.asarray(r), np.asarray(w), rtol=1e-10, atol=1e-12,
                                       err_msg=f"program {program} on shapes {shapes}")


@deterministic
@given(programs, st.sampled_from(SHAPES), st.integers(0, 2**16))
def test_hessian_is_symmetric(program, shape, seed):
    with x64():
        x, = _inputs([shape], seed)
        f = scalar_program(program)
        h = np.asarray(px.hessian(f)(x))
        assert h.shape == shape + shape
        n = int(np.prod(shape, dtype=int))
        h = h.reshape(n, n)
        assume(np.all(np.isfinite(h)))
        np.testing.assert_allclose(h, h.T, rtol=1e-9, atol=1e-11,
                                   err_msg=f"program {program} on shape {shape}")


def _check_grad(program: list, shapes: list, seed: int) -> None:
    xs = _inputs(shapes, seed)
    f = scalar_program(program)
    value = float(f(*xs))
    grads = px.grad(f, argnums=tuple(range(len(xs))))(*xs)
    for g, x in zip(grads, xs):
        assert g.shape == x.shape and g.dtype == np.float64
    vs = [px.Array(v) for v in _inputs(shapes, seed + 1)]
    analytic = sum(float(np.vdot(np.asarray(g), np.asarray(v))) for g, v in zip(grads, vs))
    numeric = _directional_fd(f, xs, vs)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-7 * (1 + abs(value)),
                               err_msg=f"program {program} on shapes {shapes}")


@pytest.mark.parametrize("op", OPS)
def test_each_op_alone(op):
    """Random programs may miss an op; here each one is differentiated on every shape."""
    with x64():
        for n, shape in enumerate(SHAPES):
            for choice in range(3):
                program = [(op, 0, choice, choice), ("sin", -1, 0, 0)]
                _check_grad(program, [shape, (2, 3)], seed=10 * n + choice)
                jac_rev = px.jacrev(vector_program(program))(*_inputs([shape], 0))
                jac_fwd = px.jacfwd(vector_program(program))(*_inputs([shape], 0))
                np.testing.assert_allclose(np.asarray(jac_rev), np.asarray(jac_fwd),
                                           rtol=1e-10, atol=1e-12)


def test_every_step_is_valid_on_every_shape():
    """Each op, with any operand choice, runs on every shape a program can produce."""
    shapes = SHAPES + [(6,), (2, 1, 3), (2, 2), (3, 3), (2,), (2, 3, 3)]
    with x64():
        for op in OPS:
            for shape in shapes:
                pool = _inputs([shape, (3,), (2, 3)], 0)
                for i, j, k in [(0, 0, 0), (0, 1, 1), (0, 2, 2), (0, 5, 3), (0, 7, 7)]:
                    out = _step(op, i, j, k, pool)
                    assert np.all(np.isfinite(np.asarray(out))), (op, shape, j, k)
