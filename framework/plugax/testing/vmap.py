"""check_vmap: the vmap rule against a Python loop over the batch.

Why every placement of the batch axis: rules are usually written for the
common case (batch axis in front, all operands batched) and break when the
axis sits last, or when one operand is unbatched (`None`) and must be
broadcast or moved. Why also `axis_size=0`: empty batches are legal and catch
rules that index `x[0]` or infer sizes from data. The batched computation is
run on the kernel's BatchTrace directly (not `plugax.vmap`), so the check sees
the batch axis the rule reports, validates it, and needs no other family to
move axes around.
"""
from __future__ import annotations

import itertools
from typing import Any, Callable, Sequence

import numpy as np

from .. import dtypes
from ..core.array import Array
from ..core.avals import ShapedArray, get_aval
from ..core.rules import rule_owner, run_abstract_eval
from ..core.trace import Primitive, new_trace_context
from ..interpreters.batching import BatchTrace
from .failures import VmapMismatch, error_summary, fail
from .values import Target, as_list, to_array, variant_like

__all__ = ["check_vmap", "batch_placements", "CheckedBatchTrace"]


class CheckedBatchTrace(BatchTrace):
    """A BatchTrace that checks what every batching rule returns against abstract_eval.

    Why: a batching rule that returns a result of the wrong shape with a
    plausible out_dim is not caught by the trace; later primitives broadcast
    or index it, and the program computes a silently wrong result. Here each
    rule's result, with the batch axis removed at the out_dim it reports, must
    have the shape and dtype abstract_eval gives for the unbatched operands.
    The error names the primitive, the rule kind and the plugin that registered it.
    """

    def process_primitive(self, primitive: Primitive, args: tuple, params: dict) -> Any:
        out = super().process_primitive(primitive, args, params)
        vals, dims = zip(*map(self.to_val_dim, args)) if args else ((), ())
        if all(d is None for d in dims):
            return out
        expected = as_list(run_abstract_eval(primitive, [get_aval(a) for a in args], params,
                                             "vmap"))
        outs = out if primitive.multiple_results else [out]
        for k, (o, want) in enumerate(zip(outs, expected)):
            self._check_output(primitive, k, len(outs), o, want, vals, dims, params)
        return out

    def _check_output(self, primitive: Primitive, k: int, n: int, out: Any, want: ShapedArray,
                      vals: tuple, dims: tuple, params: dict) -> None:
        val, dim = self.to_val_dim(out)
        got = get_aval(val)
        which = f"output {k}" if n > 1 else "its output"
        notes = [f"batch axis {d}" if d is not None else "unbatched" for d in dims]
        report = lambda what, details: fail(
            VmapMismatch, f"primitive '{primitive.name}'", f"{what} (axis_size={self.axis_size})",
            vals, params, details, notes,
            owner=rule_owner.get(primitive, "no loaded plugin"))
        if dim is not None and (not 0 <= dim < got.ndim or got.shape[dim] != self.axis_size):
            report(f"{which} has an invalid batch axis",
                   f"the rule returned {got.str_short()} with out_dim={dim!r}; expected an "
                   f"axis of size {self.axis_size} there (or out_dim=None if unbatched)")
        per_example = got.shape if dim is None else got.shape[:dim] + got.shape[dim + 1:]
        if (per_example, got.dtype) != (want.shape, want.dtype):
            report(f"{which} disagrees with abstract_eval",
                   f"the rule returned {got.str_short()} with out_dim={dim}, i.e. "
                   f"{_short(got.dtype, per_example)} per example, but abstract_eval of the "
                   f"unbatched operands gives {want.str_short()}")


def check_vmap(prim: Primitive | Callable, *args: Any, axis_size: int = 3, rtol: float = 1e-5,
               atol: float = 1e-6, seed: int = 0, max_placements: int = 256,
               **params: Any) -> int:
    """Assert vmap(bind) equals a loop of binds, for every batch-axis placement.

    Each argument is batched along every axis 0..ndim or not at all (None);
    all combinations are tried (at most `max_placements`, else each argument is
    swept alone with the others unbatched, then with the others at axis 0).
    Batched inputs stack `axis_size` random variants of the example (see
    `random_args_like`); each placement is also tried with an empty batch.
    Returns the number of (placement, size) cases checked.
    """
    target = Target(prim, params)
    xs = [to_array(a) for a in args]
    rng = np.random.default_rng(seed)
    cases = 0
    for dims in batch_placements([np.ndim(x) for x in xs], max_placements):
        for size in dict.fromkeys((axis_size, 0)):
            _check_case(target, xs, dims, size, rng, rtol, atol)
            cases += 1
    return cases


def batch_placements(ndims: Sequence[int], limit: int = 256) -> list[tuple]:
    """The in_dims tuples to try for arguments of ranks `ndims` (never all None)."""
    options = [[None, *range(n + 1)] for n in ndims]
    total = int(np.prod([len(o) for o in options])) - 1
    if total <= limit:
        return [d for d in itertools.product(*options) if any(x is not None for x in d)]
    found: dict[tuple, None] = {}
    for i, opts in enumerate(options):
        for d in opts[1:]:
            for rest in (None, 0):
                found[tuple(d if j == i else rest for j in range(len(ndims)))] = None
    return list(found)


def _stack(x: Array, dim: int | None, size: int, rng: np.random.Generator) -> tuple:
    """(batched input, per-example inputs) for one argument."""
    if dim is None:
        return x, [x] * size
    rows = ([x] + [variant_like(x, rng) for _ in range(size - 1)])[:size]
    value = np.asarray(x)
    if size:
        stacked = np.stack([np.asarray(r) for r in rows], axis=dim)
    else:
        stacked = np.empty(value.shape[:dim] + (0,) + value.shape[dim:], value.dtype)
    return Array(stacked, x.weak_type), rows


def _run_batched(target: Target, batched: list, dims: tuple, size: int) -> list:
    trace = CheckedBatchTrace(size)
    with new_trace_context(trace):
        outs = target.eval([trace.box(x, d) for x, d in zip(batched, dims)])
        return [trace.to_val_dim(o) for o in outs]


def _check_case(target: Target, xs: list, dims: tuple, size: int,
                rng: np.random.Generator, rtol: float, atol: float) -> None:
    batched, rows = zip(*[_stack(x, d, size, rng) for x, d in zip(xs, dims)])
    notes = [f"batch axis {d}" if d is not None else "unbatched" for d in dims]
    where = f"in_dims={dims}, axis_size={size}"
    report = lambda what, details: fail(VmapMismatch, target.name, f"{what} ({where})",
                                        batched, target.params, details, notes)
    per_example = [target.eval([r[b] for r in rows]) for b in range(size)]
    reference = per_example[0] if size else target.eval(xs)
    try:
        results = _run_batched(target, list(batched), dims, size)
    except AssertionError:
        raise
    except Exception as err:
        report("batched evaluation raised", f"{type(err).__name__}: {err}")
    if len(results) != len(reference):
        report("wrong number of outputs", f"vmap gives {len(results)}, the loop {len(reference)}")
    for k, ((val, out_dim), ref) in enumerate(zip(results, reference)):
        which = f"output {k}" if len(reference) > 1 else "the output"
        ref_aval, val_aval = get_aval(ref), get_aval(val)
        if out_dim is None:
            got = np.broadcast_to(np.asarray(val), (size,) + np.shape(val))
        elif not isinstance(out_dim, (int, np.integer)) or not 0 <= out_dim < val_aval.ndim \
                or val_aval.shape[out_dim] != size:
            report(f"rule returned an invalid batch axis for {which}",
                   f"out_dim={out_dim!r} for a result of type {val_aval.str_short()}; "
                   f"expected an axis of size {size} (or None if unbatched)")
        else:
            got = np.moveaxis(np.asarray(val), int(out_dim), 0)
        want_shape = (size,) + ref_aval.shape
        detail = f"(rule's out_dim={out_dim}, raw result {val_aval.str_short()})"
        if got.shape != want_shape or val_aval.dtype != ref_aval.dtype:
            report(f"{which} has the wrong type",
                   f"vmap gives {_short(val_aval.dtype, got.shape)} (batch axis moved to the "
                   f"front), the loop {_short(ref_aval.dtype, want_shape)} {detail}")
        if val_aval.weak_type != ref_aval.weak_type:
            report(f"{which} has the wrong weak type",
                   f"vmap gives weak_type={val_aval.weak_type}, the loop "
                   f"{ref_aval.weak_type} {detail}")
        if not size:
            continue
        want = np.stack([np.asarray(outs[k]) for outs in per_example])
        same = (np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
                if dtypes.issubdtype_inexact(ref_aval.dtype) else np.array_equal(got, want))
        if not same:
            report(f"{which} differs from a Python loop",
                   f"{error_summary(got, want)}\n{detail}; indices are (batch, ...)")


def _short(dtype: np.dtype, shape: tuple) -> str:
    return ShapedArray(shape, dtype).str_short()
