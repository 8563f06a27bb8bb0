"""Checks of traced use: a primitive used the way programs use it, under transformations.

Why: the rule checks (jvp, vmap, transpose) call each rule on concrete
values. A rule can pass all of them and still break in a real program: a jvp
rule that calls ``np.asarray`` on its operands works eagerly and raises under
``jit(grad)`` or ``vmap(jvp)``; a lowering rule may disagree with the impl; a
transpose rule may be missing although the jvp is linear, so ``grad`` fails
at run time. These checks run the primitive under the compositions users
write and compare each with its definition:

- ``grad``: eager reverse mode (a vjp with a random cotangent, i.e. the grad
  of the scalarised function <ct, f(x)>) is the adjoint of the jvp, which
  check_jvp compares with finite differences: <ct, J v> == <Jᵀ ct, v>.
- ``jit``: jit(f) equals eager f (values, dtype, weak type).
- ``jit_grad``: jit(grad) equals eager grad.
- ``vmap_jvp``: vmap(jvp) equals a Python loop of jvp.
- ``vmap_grad``: grad under vmap equals a loop of grads.
- ``jit_second_order``: jit(jacfwd(jacrev)) in its Hessian-vector form,
  jvp of the vjp, equals eager.

Reverse mode is taken as a vjp rather than ``grad(sum(ct * f))`` so the kit
needs no multiply or sum primitive (the kernel tests load no family). The jit
checks need ``plugax.jit``, which the xla_call plugin provides; without it
they raise `SkipCheck` and `check_primitive` records the reason instead of
running them.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .. import api, autodiff, dtypes
from ..core.array import Array
from ..core.avals import get_aval
from ..core.trace import Primitive, new_trace_context
from ..errors import MissingRuleError
from .failures import RuleCheckError, error_summary, fail
from .lowering import lowering_tolerance
from .vmap import CheckedBatchTrace
from .values import Target, as_list, is_differentiable, to_array, to_float64, variant_like, x64

__all__ = ["TracedUseMismatch", "SkipCheck", "TRACED_RULES", "JIT_RULES", "jit_or_skip",
           "check_grad", "check_jit", "check_jit_grad", "check_vmap_jvp", "check_vmap_grad",
           "check_jit_second_order"]

# check names, in the order check_primitive runs them; JIT_RULES need plugax.jit
TRACED_RULES = ("grad", "vmap_jvp", "vmap_grad", "jit", "jit_grad", "jit_second_order")
JIT_RULES = ("jit", "jit_grad", "jit_second_order")
NOT_TRACEABLE = ("(a rule that works on concrete values but not on tracers: does a jvp, "
                 "batching or transpose rule call NumPy (np.asarray, float(), a Python `if`) "
                 "on its operands? Rules must compute with primitives, via bind)")


def hint(err: Exception) -> str:
    """NOT_TRACEABLE after an error a tracer raises (a missing rule explains itself)."""
    return "" if isinstance(err, MissingRuleError) else "\n" + NOT_TRACEABLE


class TracedUseMismatch(RuleCheckError):
    """A composition of transformations disagrees with its definition (or raises)."""

    rule = "traced use"


class SkipCheck(Exception):
    """A check cannot run here (its reason is recorded by check_primitive, not raised)."""


def jit_or_skip() -> Callable:
    """`plugax.jit`, or SkipCheck when the xla_call plugin (which provides it) is not loaded."""
    import plugax
    jit = getattr(plugax, "jit", None)
    if jit is None:
        raise SkipCheck("needs jit, and the xla_call plugin (which provides plugax.jit) is not "
                        "loaded; check PLUGAX_LOAD_PLUGINS and `plugax plugins`")
    return jit


class _Setup:
    """The example split into what the checks differentiate and what they hold fixed."""

    def __init__(self, prim: Primitive | Callable, args: Sequence[Any], params: dict,
                 argnums: Sequence[int] | int | None, label: str, need_float_out: bool = True):
        self.target = Target(prim, params)
        self.label = label
        self.xs = [to_array(a) for a in args]
        picked = range(len(self.xs)) if argnums is None else (
            (argnums,) if isinstance(argnums, int) else argnums)
        self.nums = sorted({i % len(self.xs) for i in picked
                            if is_differentiable(self.xs[i % len(self.xs)])}) if self.xs else []
        if not self.nums:
            raise SkipCheck("no floating argument to differentiate")
        outs = self.target.eval(self.xs)
        self.float_outs = [k for k, o in enumerate(outs)
                           if dtypes.issubdtype_inexact(get_aval(o).dtype)]
        if need_float_out and not self.float_outs:
            raise SkipCheck("no floating output to differentiate")
        self.out_avals = [get_aval(o) for o in outs]
        self.notes = ["differentiated" if i in self.nums else "held fixed"
                      for i in range(len(self.xs))]

    def report(self, what: str, details: str, args: Sequence[Any] | None = None) -> None:
        fail(TracedUseMismatch, self.target.name, what, self.xs if args is None else args,
             self.target.params, details, self.notes, label=self.label)

    def primals(self) -> list:
        return [self.xs[i] for i in self.nums]

    def f(self, xs: Sequence[Any] | None = None) -> Callable:
        """The floating outputs as a function of the differentiated arguments."""
        fixed = list(self.xs if xs is None else xs)

        def f(*dyn: Any) -> list:
            full = list(fixed)
            for i, d in zip(self.nums, dyn):
                full[i] = d
            outs = self.target.eval(full)
            return [outs[k] for k in self.float_outs]
        return f

    def cotangents(self, rng: np.random.Generator) -> list:
        return [_normal(a.shape, a.dtype, rng) for a in
                (self.out_avals[k] for k in self.float_outs)]

    def directions(self, rng: np.random.Generator) -> list:
        return [_normal(np.shape(p), get_aval(p).dtype, rng) for p in self.primals()]

    def run(self, what: str, fn: Callable) -> Any:
        """fn(), with an exception other than a check failure reported as this check's."""
        try:
            return fn()
        except AssertionError:
            raise
        except Exception as err:  # noqa: BLE001 - the message says which composition raised
            self.report(f"{what} raised {type(err).__name__}", f"{err}{hint(err)}")


def _normal(shape: Sequence[int], dtype: Any, rng: np.random.Generator) -> Array:
    """Random normal values; complex ones get an imaginary part too."""
    value = rng.standard_normal(tuple(shape))
    if np.dtype(dtype).kind == "c":
        value = value + 1j * rng.standard_normal(tuple(shape))
    return Array(value.astype(dtype))


def vjp_of(f: Callable) -> Callable:
    """(primals..., cts) -> the cotangents of the primals: grad of <cts, f(primals)>."""
    def pullback(primals: Sequence[Any], cts: Sequence[Any]) -> list:
        _, pull = autodiff.vjp(f, *primals)
        return list(pull(list(cts)))
    return pullback


# --- eager reverse mode ------------------------------------------------------------------------
def check_grad(prim: Primitive | Callable, *args: Any, argnums: Sequence[int] | int | None = None,
               rtol: float = 1e-6, atol: float = 1e-9, seed: int = 0, **params: Any) -> None:
    """Assert that reverse mode is the adjoint of forward mode: <ct, J v> == <Jᵀ ct, v>.

    Runs in float64, with random ct and v. This exercises every transpose rule
    the linearized jvp uses (the primitive's own when it is linear), so a
    missing transpose rule fails here, naming itself, instead of in a user's grad.
    """
    with x64():
        setup = _Setup(prim, [to_float64(a) for a in args], params, argnums, "grad (reverse mode)")
        rng = np.random.default_rng(seed)
        cts, vs = setup.cotangents(rng), setup.directions(rng)
        f = setup.f()
        _, jv = setup.run("jvp", lambda: api.jvp(f, setup.primals(), vs))
        vjp = setup.run("grad (vjp)", lambda: vjp_of(f)(setup.primals(), cts))
        for i, (g, p) in enumerate(zip(vjp, setup.primals())):
            if get_aval(g).shape != get_aval(p).shape:
                setup.report(f"the cotangent of x{setup.nums[i]} has the wrong shape",
                             f"got {get_aval(g).str_short()} for a primal of type "
                             f"{get_aval(p).str_short()}")
        lhs = sum(_dot(c, t) for c, t in zip(cts, as_list(jv)))
        rhs = sum(_dot(g, v) for g, v in zip(vjp, vs))
        scale = max(abs(lhs), abs(rhs))
        if abs(lhs - rhs) > atol + rtol * scale:
            setup.report("reverse mode is not the adjoint of the jvp",
                         f"<ct, jvp(v)> = {lhs:.10g} but <vjp(ct), v> = {rhs:.10g} (random ct "
                         f"and v, seeded, float64): a transpose rule used by grad disagrees "
                         f"with the jvp rule")


def _dot(a: Any, b: Any) -> float:
    """<a, b> = Re(sum(a * b)), the pairing of JAX's complex convention (see
    transpose._dot); the plain sum of products for real values."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind == "c" or b.dtype.kind == "c":
        return float(np.sum(a.astype(np.complex128) * b.astype(np.complex128)).real)
    return float(np.sum(np.asarray(a, np.float64) * np.asarray(b, np.float64)))


# --- jit ----------------------------------------------------------------------------------------
def check_jit(prim: Primitive | Callable, *args: Any, rtol: float | None = None,
              atol: float | None = None, **params: Any) -> None:
    """Assert jit(prim) equals eager prim: shape, dtype, weak type and values
    (within the dtype's tolerance for floats, exactly otherwise)."""
    jit = jit_or_skip()
    target = Target(prim, params)
    xs = [to_array(a) for a in args]
    want = target.eval(xs)
    report = lambda what, details: fail(TracedUseMismatch, target.name, what, xs, params,
                                        details, label="jit")
    try:
        got = as_list(jit(lambda *a: target.eval(a))(*xs))
    except Exception as err:  # noqa: BLE001
        report(f"jit raised {type(err).__name__}", f"{err}{hint(err)}")
    _compare(report, "jit", got, want, rtol, atol, weak=True)


def check_jit_grad(prim: Primitive | Callable, *args: Any,
                   argnums: Sequence[int] | int | None = None, rtol: float | None = None,
                   atol: float | None = None, seed: int = 0, **params: Any) -> None:
    """Assert jit(grad) equals eager grad (grad of <ct, f(x)>, a vjp, random ct)."""
    jit = jit_or_skip()
    setup = _Setup(prim, args, params, argnums, "jit(grad)")
    cts = setup.cotangents(np.random.default_rng(seed))
    pullback, n = vjp_of(setup.f()), len(setup.nums)
    want = setup.run("eager grad", lambda: pullback(setup.primals(), cts))
    got = setup.run("jit(grad)", lambda: jit(lambda *a: pullback(a[:n], a[n:]))(
        *setup.primals(), *cts))
    _compare(setup.report, "jit(grad)", as_list(got), want, rtol, atol, scale=10)


def check_jit_second_order(prim: Primitive | Callable, *args: Any,
                           argnums: Sequence[int] | int | None = None,
                           rtol: float | None = None, atol: float | None = None, seed: int = 0,
                           **params: Any) -> None:
    """Assert jit(jvp(grad)) (a Hessian-vector product, what jacfwd(jacrev) computes
    one column at a time) equals eager."""
    jit = jit_or_skip()
    setup = _Setup(prim, args, params, argnums, "jit(jacfwd(jacrev))")
    rng = np.random.default_rng(seed)
    cts, vs = setup.cotangents(rng), setup.directions(rng)
    pullback, n, m = vjp_of(setup.f()), len(setup.nums), len(cts)

    def hvp(*a: Any) -> list:
        primals, c, v = a[:n], a[n:n + m], a[n + m:]
        return as_list(api.jvp(lambda *p: pullback(p, c), list(primals), list(v))[1])

    want = setup.run("eager jvp of grad", lambda: hvp(*setup.primals(), *cts, *vs))
    got = setup.run("jit(jvp of grad)", lambda: jit(hvp)(*setup.primals(), *cts, *vs))
    _compare(setup.report, "jit(jvp of grad)", as_list(got), want, rtol, atol, scale=100)


def _compare(report: Callable, what: str, got: list, want: list, rtol: float | None,
             atol: float | None, weak: bool = False, scale: float = 1) -> None:
    if len(got) != len(want):
        report(f"{what} gives the wrong number of outputs", f"{len(got)}, eager {len(want)}")
    for k, (g, e) in enumerate(zip(got, want)):
        which = f"output {k}" if len(want) > 1 else "the output"
        ga, ea = get_aval(g), get_aval(e)
        if (ga.shape, ga.dtype) != (ea.shape, ea.dtype):
            report(f"{which} of {what} has the wrong type",
                   f"{what} gives {ga.str_short()}, eager gives {ea.str_short()}")
        if weak and ga.weak_type != ea.weak_type:
            report(f"{which} of {what} has the wrong weak type",
                   f"{what} gives weak_type={ga.weak_type}, eager {ea.weak_type}")
        gv, ev = np.asarray(g), np.asarray(e)
        if not _close(gv, ev, rtol, atol, scale):
            report(f"{which} of {what} differs from eager", error_summary(gv, ev))


def _close(got: np.ndarray, want: np.ndarray, rtol: float | None, atol: float | None,
           scale: float) -> bool:
    if got.dtype == dtypes.float0:
        return True
    default_rtol, default_atol = lowering_tolerance(got.dtype)
    rtol = default_rtol * scale if rtol is None else rtol
    atol = default_atol * scale if atol is None else atol
    if rtol == 0 and atol == 0:
        return bool(np.array_equal(got, want, equal_nan=got.dtype.kind in "fc"))
    wide = np.complex128 if got.dtype.kind == "c" else np.float64
    return bool(np.allclose(got.astype(wide), want.astype(wide), rtol=rtol, atol=atol,
                            equal_nan=True))


# --- vmap of derivatives ------------------------------------------------------------------------
def check_vmap_jvp(prim: Primitive | Callable, *args: Any,
                   argnums: Sequence[int] | int | None = None, axis_size: int = 3,
                   rtol: float = 1e-5, atol: float = 1e-6, seed: int = 0,
                   **params: Any) -> None:
    """Assert vmap(jvp) equals a Python loop of jvp (primals and tangents batched at 0)."""
    setup = _Setup(prim, args, params, argnums, "vmap(jvp)", need_float_out=False)
    rng = np.random.default_rng(seed)
    rows = [_rows(p, axis_size, rng) for p in setup.primals()]
    tans = [[_normal(np.shape(p), get_aval(p).dtype, rng) for _ in range(axis_size)]
            for p in setup.primals()]
    f = _all_outputs(setup)

    def jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> list:
        p_out, t_out = api.jvp(f, list(primals), list(tangents))
        return as_list(p_out) + as_list(t_out)

    _against_loop(setup, "vmap(jvp)", jvp, [rows, tans], axis_size, rtol, atol)


def check_vmap_grad(prim: Primitive | Callable, *args: Any,
                    argnums: Sequence[int] | int | None = None, axis_size: int = 3,
                    rtol: float = 1e-5, atol: float = 1e-6, seed: int = 0,
                    **params: Any) -> None:
    """Assert grad under vmap (a vjp per example, primals and cotangents batched at 0)
    equals a Python loop of grads."""
    setup = _Setup(prim, args, params, argnums, "vmap(grad)")
    rng = np.random.default_rng(seed)
    rows = [_rows(p, axis_size, rng) for p in setup.primals()]
    cts = [[_normal(a.shape, a.dtype, rng) for _ in range(axis_size)]
           for a in (setup.out_avals[k] for k in setup.float_outs)]
    _against_loop(setup, "vmap(grad)", vjp_of(setup.f()), [rows, cts], axis_size, rtol, atol)


def _all_outputs(setup: _Setup) -> Callable:
    def f(*dyn: Any) -> list:
        full = list(setup.xs)
        for i, d in zip(setup.nums, dyn):
            full[i] = d
        return setup.target.eval(full)
    return f


def _rows(x: Array, size: int, rng: np.random.Generator) -> list:
    return ([x] + [variant_like(x, rng) for _ in range(size - 1)])[:size]


def _against_loop(setup: _Setup, what: str, fn: Callable, groups: list, size: int,
                  rtol: float, atol: float) -> None:
    """fn(*groups) under a BatchTrace (every argument batched at axis 0) vs a loop."""
    stacked = [[Array(np.stack([np.asarray(r) for r in rows]), rows[0].weak_type)
                for rows in group] for group in groups]
    want = [setup.run(f"the loop (no vmap) of {what}",
                      lambda b=b: fn(*[[rows[b] for rows in group] for group in groups]))
            for b in range(size)]

    def batched() -> list:
        trace = CheckedBatchTrace(size)
        with new_trace_context(trace):
            outs = fn(*[[trace.box(x, 0) for x in group] for group in stacked])
            return [trace.to_val_dim(o) for o in outs]

    results = setup.run(what, batched)
    for k, (val, dim) in enumerate(results):
        which = f"output {k}" if len(results) > 1 else "the output"
        ref = np.stack([np.asarray(w[k]) for w in want])
        got = (np.broadcast_to(np.asarray(val), (size,) + np.shape(val)) if dim is None
               else np.moveaxis(np.asarray(val), int(dim), 0))
        if got.shape != ref.shape or np.asarray(val).dtype != ref.dtype:
            setup.report(f"{which} of {what} has the wrong type",
                         f"{what} gives {got.dtype.name}{list(got.shape)} (batch axis in "
                         f"front), the loop {ref.dtype.name}{list(ref.shape)}")
        if not _close(got, ref, rtol, atol, 1):
            setup.report(f"{which} of {what} differs from a loop",
                         f"{error_summary(got, ref)}; indices are (batch, ...)")
