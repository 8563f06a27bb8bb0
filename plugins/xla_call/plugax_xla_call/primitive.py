"""The `pjit` primitive and its rules.

Each rule transforms the call's jaxpr as a whole and binds `pjit` again on the
result, so the transformed call stays one compiled unit: the jvp of a jitted
function is a jitted jvp, its batched form a jitted batched body, and reverse
mode splits it into a known call and a staged (linear) call, whose transpose is
again a call. The whole-jaxpr transformations come from the kernel
(`jvp_jaxpr`, `batch_jaxpr`, `partial_eval_jaxpr`, `transpose_jaxpr`) and are
memoised per jaxpr, so repeating `grad(jit(f))` reuses compiled executables.
Both memos key on the registry version and the thread's active rule overrides
(`plugax.extend.override`), the rules a transformation or a lowering reads.
"""
from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from plugax.extend import (ClosedJaxpr, Primitive, RuleSet, Zero, active_overrides,
                           batch_jaxpr, bdim_at_front, check_call_operands, is_undefined_primal, instantiate, jvp_jaxpr,
                           lower_jaxpr_to_module, partial_eval_jaxpr, registry_version, runtime,
                           transpose_jaxpr)

__all__ = ["pjit_p", "RULES", "executable_for"]

pjit_p = Primitive("pjit", multiple_results=True)


# --- memoised whole-jaxpr transformations ------------------------------------

_memo: "weakref.WeakKeyDictionary[ClosedJaxpr, dict]" = weakref.WeakKeyDictionary()


def _memoised(transform, closed: ClosedJaxpr, *args: Any) -> Any:
    """`transform(closed, *args)`, computed once per jaxpr, flags and set of rules."""
    table = _memo.setdefault(closed, {})
    key = (transform.__name__, registry_version(), active_overrides(), *args)
    if key not in table:
        table[key] = transform(closed, *args)
    return table[key]


# --- evaluation: compile once per jaxpr ---------------------------------------

_executables: "weakref.WeakKeyDictionary[ClosedJaxpr, tuple]" = weakref.WeakKeyDictionary()


def executable_for(closed: ClosedJaxpr, name: str, donated: tuple = ()) -> Any:
    """The compiled executable of `closed` (lowered and compiled on first use, and
    again when the plugins or the thread's overrides of lowering rules differ);
    `donated` lists the arguments whose buffers it consumes (donation.py)."""
    rules = (registry_version(), active_overrides(), donated)
    entry = _executables.get(closed)
    if entry is None or entry[0] != rules:
        rt = runtime()
        from .spmd import partitioned_executable, program_mesh
        mesh = program_mesh(closed.jaxpr)
        if mesh is not None:   # a shard_map or sharding constraint: SPMD over its mesh
            entry = _executables[closed] = (rules, partitioned_executable(closed, name, mesh))
            return entry[1]
        lowered = lower_jaxpr_to_module(closed, name, rt.backend().platform)
        text = lowered.text
        if donated:
            from .donation import mark_donated
            text = mark_donated(text, donated)
        exe = rt.compile_module(text, lowered.in_avals, lowered.out_avals,
                                lowered.host_callbacks)
        entry = _executables[closed] = (rules, exe)
    return entry[1]


def _impl(ctx, *args: np.ndarray, jaxpr: ClosedJaxpr, name: str) -> list:
    """Evaluating a pjit equation eagerly (e.g. inside grad): run its executable.

    The top-level `jit(f)(x)` call does not come here: it calls the executable
    directly on device buffers (see jit.py), so results stay on the device.
    """
    return executable_for(jaxpr, name)(args)


def _abstract_eval(ctx, *avals, jaxpr: ClosedJaxpr, name: str) -> list:
    check_call_operands(f"primitive 'pjit' ({name})", jaxpr, avals)
    return list(jaxpr.out_avals)


# --- forward mode and batching ---------------------------------------------------

def _jvp(ctx, primals, tangents, *, jaxpr: ClosedJaxpr, name: str):
    nonzeros = tuple(type(t) is not Zero for t in tangents)
    jvp_closed, out_nonzeros = _memoised(jvp_jaxpr, jaxpr, nonzeros)
    nz_tangents = [t for t in tangents if type(t) is not Zero]
    outs = pjit_p.bind(*primals, *nz_tangents, jaxpr=jvp_closed, name=f"jvp({name})")
    n = len(jaxpr.out_avals)
    primals_out, nz_out = outs[:n], iter(outs[n:])
    tangents_out = [next(nz_out) if nz else Zero.from_value(p)
                    for p, nz in zip(primals_out, out_nonzeros)]
    return primals_out, tangents_out


def _vmap(ctx, args, dims, *, jaxpr: ClosedJaxpr, name: str):
    batched = tuple(d is not None for d in dims)
    args = [bdim_at_front(x, d, ctx.axis_size) if d is not None else x
            for x, d in zip(args, dims)]
    batched_closed, out_batched = _memoised(batch_jaxpr, jaxpr, ctx.axis_size, batched)
    outs = pjit_p.bind(*args, jaxpr=batched_closed, name=name)
    return outs, [0 if b else None for b in out_batched]


# --- reverse mode -----------------------------------------------------------------

def _partial_eval(ctx, trace, *args: Any, jaxpr: ClosedJaxpr, name: str) -> list:
    """Known inputs run now (a pjit of the known half); the rest is staged as a pjit."""
    unknowns = tuple(trace.is_unknown(x) for x in args)
    known, unknown, out_unknowns, num_res = _memoised(partial_eval_jaxpr, jaxpr, unknowns)
    known_args = [x for x, u in zip(args, unknowns) if not u]
    known_outs = trace.bind_known(pjit_p, known_args, dict(jaxpr=known, name=name))
    n_known = len(known_outs) - num_res
    residuals = known_outs[n_known:]
    unknown_args = [x for x, u in zip(args, unknowns) if u]
    staged = iter(trace.stage(pjit_p, [*residuals, *unknown_args],
                              dict(jaxpr=unknown, name=name)))
    known_iter = iter(known_outs[:n_known])
    return [next(staged) if u else next(known_iter) for u in out_unknowns]


def _transpose(ctx, cts, *args: Any, jaxpr: ClosedJaxpr, name: str) -> list:
    linear = tuple(is_undefined_primal(x) for x in args)
    transposed = _memoised(transpose_jaxpr, jaxpr, linear)
    residuals = [x for x, lin in zip(args, linear) if not lin]
    cts = [instantiate(ct) for ct in cts]
    cts_in = iter(pjit_p.bind(*residuals, *cts, jaxpr=transposed, name=f"transpose({name})"))
    return [next(cts_in) if lin else None for lin in linear]


def _lowering(ctx, *args: Any, jaxpr: ClosedJaxpr, name: str) -> list:
    """A nested jit is a call to a private function of the module (emitted once)."""
    return ctx.call_jaxpr(jaxpr, name, *args)


RULES = [RuleSet(pjit_p, abstract_eval=_abstract_eval, impl=_impl, jvp=_jvp, batching=_vmap,
                 partial_eval=_partial_eval, transpose=_transpose,
                 lowering={"default": _lowering})]
