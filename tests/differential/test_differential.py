"""Differential test: every function of plugax.numpy and plugax.lax against NumPy and JAX.

For each table entry (diff_table.py, diff_table_lax.py) and each of its cases:

- eager: output types (dtype, weak type, shape) equal JAX's, recorded in
  jax_expected.json; values match the NumPy float64 reference (or JAX's recorded value
  where JAX and NumPy differ); where JAX raises, plugax must raise too;
- jit: the compiled function gives the eager types and values (all cases of an entry
  in one compilation; Python numbers that are data are traced too, weakly typed);
- grad: the gradient of sum(f(x) * weights) equals JAX's recorded one at every case
  (edges and kinks included) and central finite differences of the reference in
  float64 at smooth cases; jit(grad) equals grad;
- vmap: batching every array argument in front, only the first one, and every one at
  its last axis, equals a Python loop.

One test per (check, function): a failure lists every case that differs.
"""
from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import plugax
import plugax.lax
import plugax.numpy
from plugax.extend import get_aval
from plugax.testing import x64

from diff_cases import float_positions, is_traced, weights
from diff_table import NUMPY
from diff_table_lax import LAX

# NaN and inf inputs are the point here: plugax computes them silently, as JAX does
# (NumPy's RuntimeWarnings come back under pytest, which resets warning filters)
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

EXPECTED = json.loads((Path(__file__).parent / "jax_expected.json").read_text())
TABLES = {"numpy": NUMPY, "lax": LAX}
MODULES = {"numpy": plugax.numpy, "lax": plugax.lax}
LOW_PRECISION = {"float16": 2e-3, "bfloat16": 2e-2}


def _entries():
    params = []
    for ns, table in TABLES.items():
        for name in table:
            present = hasattr(MODULES[ns], name)
            marks = () if present else pytest.mark.skip(reason=f"plugax.{ns}.{name} is not "
                                                               f"installed")
            params.append(pytest.param(ns, name, id=f"{ns}.{name}", marks=marks))
    return params


ENTRIES = _entries()


# --- helpers -----------------------------------------------------------------------------
def leaves(out):
    if isinstance(out, (tuple, list)):
        return [leaf for o in out for leaf in leaves(o)]
    return [out]


def leaf_type(x):
    if type(x) in (bool, int, float):
        return [f"py_{type(x).__name__}", False, []]
    aval = get_aval(x)
    return [np.dtype(aval.dtype).name, bool(aval.weak_type), list(aval.shape)]


def call(spec, fn, case, args=None):
    args = case.args if args is None else args
    if spec.call is not None:
        return spec.call(fn, *args, **case.kwargs)
    return fn(*args, **case.kwargs)


def ref_arg(a):
    if is_traced(a) and np.asarray(a).dtype.kind in "fV":
        return np.asarray(a, np.float64)
    return a


def reference(spec, case, args=None):
    args = case.args if args is None else args
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return leaves(call(spec, spec.ref, case, [ref_arg(a) for a in args]))


def as_float(x):
    return np.asarray(np.asarray(x, dtype=object).tolist() if isinstance(x, list) else x,
                      dtype=np.float64)


def mismatch(got, want, dtype, spec, scale=1.0):
    """None if `got` matches `want` (NaNs and infinities in the same places), else why."""
    got, want = as_float(got), as_float(want)
    if got.size == want.size == 0:
        return None      # JSON keeps no shape for an empty array: the types compare that
    if got.shape != want.shape:
        return f"shape {got.shape} != {want.shape}"
    name = np.dtype(dtype).name if dtype is not None else ""
    if dtype is not None and np.dtype(dtype).kind in "biu":
        rtol = atol = 0.0
    elif name in LOW_PRECISION:
        rtol = atol = LOW_PRECISION[name]
    else:
        rtol, atol = spec.rtol * scale, spec.atol * scale
    if np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
        return None
    bad = ~np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    return (f"values differ at {np.argwhere(bad)[:3].tolist()}: got "
            f"{got[bad][:3].tolist()}, want {want[bad][:3].tolist()}")


def expected(ns, name, case):
    record = EXPECTED[ns].get(name, {}).get(case.label)
    if record is None:
        raise LookupError(f"no JAX record for {ns}.{name}[{case.label}]: run "
                          f"tests/differential/record_jax.py with jax installed")
    return record


def traced_positions(case):
    return [i for i, a in enumerate(case.args) if is_traced(a)]


def with_args(case, positions, values):
    args = list(case.args)
    for p, v in zip(positions, values):
        args[p] = v
    return args


def run_cases(ns, name, check):
    spec, fn = TABLES[ns][name], getattr(MODULES[ns], name)
    failures = []
    for case in spec.cases():
        try:
            problem = check(spec, fn, case, expected(ns, name, case))
        except Exception as err:   # noqa: BLE001 -- reported with the case it broke
            problem = f"raised {type(err).__name__}: {str(err)[:300]}"
        if problem:
            failures.append(f"[{case.label}] {problem}")
    assert not failures, f"plugax.{ns}.{name}:\n  " + "\n  ".join(failures)


# --- the checks ----------------------------------------------------------------------------
def check_eager(spec, fn, case, exp):
    if case.label in spec.differs:
        return check_known_difference(spec, fn, case, exp)
    if "error" in exp:
        try:
            out = call(spec, fn, case)
        except Exception:   # noqa: BLE001 -- JAX raises too; which error is not compared
            return None
        return f"JAX raises {exp['error']}; plugax returned {[leaf_type(x) for x in leaves(out)]}"
    outs = leaves(call(spec, fn, case))
    types = [leaf_type(x) for x in outs]
    if types != exp["out"]:
        return f"types {types} != JAX's {exp['out']}"
    wants = exp["value"] if "value" in exp else reference(spec, case) if spec.ref else None
    for out, want, t in zip(outs, wants or [], types):
        problem = mismatch(out, want, None if t[0].startswith("py_") else t[0], spec)
        if problem:
            return problem
    return None


def check_known_difference(spec, fn, case, exp):
    """A listed difference must still be one (else the list is stale); plugax's values,
    when it returns any, must still match NumPy."""
    try:
        outs = leaves(call(spec, fn, case))
    except Exception:   # noqa: BLE001
        if "error" in exp:
            return "listed in `differs` but raises like JAX: remove it from the list"
        return None
    types = [leaf_type(x) for x in outs]
    if types == exp.get("out"):
        return "listed in `differs` but agrees with JAX now: remove it from the list"
    for out, want, t in zip(outs, reference(spec, case) if spec.ref else [], types):
        problem = mismatch(out, want, None if t[0].startswith("py_") else t[0], spec)
        if problem:
            return problem
    return None


def eager_outputs(spec, fn, case, exp):
    """plugax's eager outputs, or None where JAX raises (then nothing else is compared)."""
    if "error" in exp and case.label not in spec.differs:
        return None
    try:
        return leaves(call(spec, fn, case))
    except Exception:   # noqa: BLE001 -- check_eager reports it
        return None


def jit_all(ns, name):
    """Every case of an entry compiled as *one* jitted function (one XLA compilation per
    entry, not per case: compiling dominates the run time), then compared with eager
    evaluation case by case."""
    spec, fn = TABLES[ns][name], getattr(MODULES[ns], name)
    if not spec.jit:
        return []
    cases = [c for c in spec.cases() if eager_outputs(spec, fn, c, expected(ns, name, c))]

    def run(case, values):
        return leaves(call(spec, fn, case, with_args(case, jit_positions(case), values)))
    return compiled_vs_eager(spec, cases, run, lambda c: [c.args[p] for p in jit_positions(c)])


def jit_positions(case):
    """The arguments jit traces: arrays, and Python numbers that are data (weak_args)."""
    return [i for i, a in enumerate(case.args) if is_traced(a) or (
        case.weak_args and type(a) in (int, float))]


def jit_of_grad_all(ns, name):
    """jit(grad(f)) against grad(f), every differentiable case in one compilation."""
    spec, fn = TABLES[ns][name], getattr(MODULES[ns], name)
    if not (spec.jit and spec.grad):
        return []
    cases = [c for c in spec.cases() if float_positions(c) and c.label not in spec.differs
             and c.label not in spec.jit_differs and "grad" in expected(ns, name, c)]

    def run(case, values):
        positions = float_positions(case)
        return list(plugax.grad(weighted_loss(spec, fn, case, positions),
                                argnums=tuple(range(len(positions))))(*values))
    return compiled_vs_eager(spec, cases, run, lambda c: [c.args[p] for p in
                                                          float_positions(c)])


def compiled_vs_eager(spec, cases, run, args_of):
    """`run(case, args)` for every case under one jit, compared with running it eagerly.
    If the combined function fails, each case is compiled on its own so that the failure
    names its case."""
    def all_cases(*flat):
        outs, k = [], 0
        for case in cases:
            n = len(args_of(case))
            outs.append(run(case, flat[k:k + n]))
            k += n
        return outs
    flat = [a for c in cases for a in args_of(c)]
    try:
        compiled = plugax.jit(all_cases)(*flat)
    except Exception:   # noqa: BLE001 -- find and name the case that breaks jit
        compiled = []
        for case in cases:
            try:
                compiled.append(plugax.jit(lambda *xs, c=case: run(c, xs))(*args_of(case)))
            except Exception as err:  # noqa: BLE001
                compiled.append(f"jit raised {type(err).__name__}: {str(err)[:300]}")
    return [f"[{case.label}] {problem}" for case, outs in zip(cases, compiled)
            for problem in [compare_jit(spec, run(case, args_of(case)), outs)] if problem]


def compare_jit(spec, eager, outs):
    if isinstance(outs, str):
        return outs
    types, eager_types = [leaf_type(x) for x in outs], [leaf_type(x) for x in eager]
    if types != eager_types:
        return f"jit: types {types} != eager {eager_types}"
    for out, want, t in zip(outs, eager, types):
        problem = mismatch(out, want, t[0], spec, scale=4.0)
        if problem:
            return f"jit vs eager: {problem}"
    return None


def weighted_loss(spec, fn, case, positions):
    def loss(*floats):
        outs = leaves(call(spec, fn, case, with_args(case, positions, floats)))
        total = 0.0
        for out in outs:
            if np.dtype(get_aval(out).dtype).kind == "f":
                total = total + plugax.numpy.sum(out * weights(out.shape, out.dtype))
        return total
    return loss


def finite_differences(spec, case, positions, eps=1e-6):
    """Central differences of sum(reference(x) * weights) in float64."""
    def loss(args):   # outputs that are NaN or infinite whatever x is carry no slope
        outs = [np.asarray(o, np.float64) for o in reference(spec, case, args)]
        return sum(float(np.sum(np.where(np.isfinite(o), o, 0.0) * weights(o.shape)))
                   for o in outs)
    grads = []
    for p in positions:
        x = np.asarray(case.args[p], np.float64)
        g = np.zeros_like(x)
        for i in np.ndindex(x.shape):
            step = eps * max(1.0, abs(x[i]))
            hi, lo = x.copy(), x.copy()
            hi[i] += step
            lo[i] -= step
            g[i] = (loss(with_args(case, [p], [hi])) - loss(with_args(case, [p], [lo]))) / (
                2 * step)
        grads.append(g)
    return grads


def check_grad(spec, fn, case, exp):
    positions = float_positions(case)
    if not spec.grad or not positions or "grad" not in exp or case.label in spec.differs:
        return None
    loss = weighted_loss(spec, fn, case, positions)
    grads = plugax.grad(loss, argnums=tuple(range(len(positions))))(
        *[case.args[p] for p in positions])
    for p, g, want in zip(positions, grads, exp["grad"]):
        problem = mismatch(g, want, np.asarray(case.args[p]).dtype, spec, scale=50.0)
        if problem:
            return f"grad wrt argument {p} vs JAX: {problem}"
    if case.smooth and spec.ref is not None:
        with x64():
            args64 = [np.asarray(a, np.float64) if i in positions else a
                      for i, a in enumerate(case.args)]
            case64 = type(case)(case.label, tuple(args64), case.kwargs, case.smooth)
            grads = plugax.grad(weighted_loss(spec, fn, case64, positions),
                                argnums=tuple(range(len(positions))))(
                *[args64[p] for p in positions])
            for p, g, want in zip(positions, grads, finite_differences(spec, case64,
                                                                       positions)):
                problem = mismatch(g, want, "float64", spec, scale=10.0)
                if problem:
                    return f"float64 grad wrt argument {p} vs finite differences: {problem}"
    return None


def variant(a, k):
    """The k-th member of a batch built from `a`: same values rolled (indices stay
    valid, domains are kept), rank-0 values nudged."""
    a = np.asarray(a)
    if a.ndim:
        return np.roll(a.ravel(), k).reshape(a.shape)
    if a.dtype == bool:
        return a ^ bool(k % 2)
    return (a + k if a.dtype.kind in "iu" else a * (1 + 0.25 * k)).astype(a.dtype)


def check_vmap(spec, fn, case, exp):
    positions = traced_positions(case)
    if not spec.vmap or not positions or eager_outputs(spec, fn, case, exp) is None:
        return None
    # every array argument batched in front, only the first one, and every one at its end
    for batched, axis in ((positions, 0), (positions[:1], 0), (positions, -1)):
        args = [[variant(a, k) if i in batched else a for i, a in enumerate(case.args)]
                for k in range(3)]
        loop = [leaves(call(spec, fn, case, a)) for a in args]
        mapped = plugax.vmap(lambda *xs: call(spec, fn, case, with_args(case, batched, xs)),
                             in_axes=axis)(
            *[np.stack([a[p] for a in args], axis=axis) for p in batched])
        for j, out in enumerate(leaves(mapped)):
            want = np.stack([np.asarray(member[j]) for member in loop])
            dtype = np.dtype(get_aval(out).dtype)
            if dtype != get_aval(loop[0][j]).dtype:
                return f"vmap over arguments {batched} (axis {axis}): dtype {dtype} != the loop's"
            problem = mismatch(out, want, dtype, spec, scale=4.0)
            if problem:
                return f"vmap over arguments {batched} (axis {axis}) vs a loop: {problem}"
    return None


@pytest.mark.parametrize("ns, name", ENTRIES)
def test_eager_matches_numpy_and_jax_types(ns, name):
    run_cases(ns, name, check_eager)


@pytest.mark.parametrize("ns, name", ENTRIES)
def test_jit_matches_eager(ns, name):
    failures = jit_all(ns, name)
    assert not failures, f"plugax.{ns}.{name} under jit:\n  " + "\n  ".join(failures)


@pytest.mark.parametrize("ns, name", ENTRIES)
def test_jit_of_grad_matches_grad(ns, name):
    failures = jit_of_grad_all(ns, name)
    assert not failures, f"plugax.{ns}.{name}, jit(grad):\n  " + "\n  ".join(failures)


@pytest.mark.parametrize("ns, name", ENTRIES)
def test_grad_matches_jax_and_finite_differences(ns, name):
    run_cases(ns, name, check_grad)


@pytest.mark.parametrize("ns, name", ENTRIES)
def test_vmap_matches_a_loop(ns, name):
    run_cases(ns, name, check_vmap)
