"""The errors the kit raises, and the wording they share.

Why AssertionError subclasses: pytest shows them as ordinary test failures
(with the message, no internal traceback noise), and a family's test can still
catch one kind precisely (`pytest.raises(JVPMismatch)`). Every message names
the rule, the primitive, the inputs (shape, dtype, weak type, batch dims) and
how far off the rule was, so a failure in CI is diagnosable without a debugger.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..core.avals import get_aval

__all__ = ["RuleCheckError", "AbstractEvalMismatch", "JVPMismatch", "VmapMismatch",
           "TransposeMismatch", "describe_value", "describe_args", "error_summary", "fail"]


class RuleCheckError(AssertionError):
    """A primitive's rule disagrees with what it must agree with."""

    rule = "rule"


class AbstractEvalMismatch(RuleCheckError):
    """abstract_eval (or the weak-type rule) disagrees with the impl's actual result."""

    rule = "abstract_eval"


class JVPMismatch(RuleCheckError):
    """The jvp rule disagrees with central finite differences or with evaluation."""

    rule = "jvp"


class VmapMismatch(RuleCheckError):
    """The batching (vmap) rule disagrees with a Python loop over the batch, or with
    abstract_eval about the type of what it returns."""

    rule = "batching"


class TransposeMismatch(RuleCheckError):
    """The transpose rule is not the adjoint of the primitive (dot-product test)."""

    rule = "transpose"


class VJPMismatch(RuleCheckError):
    """The vjp rule disagrees with the jvp rule (primal output, or the dot-product test
    of its backward function against the jvp)."""

    rule = "vjp"


def describe_value(x: Any) -> str:
    """`f32[3,4]`, with `weak` appended for weakly typed values."""
    aval = get_aval(x)
    return aval.str_short() + (" weak" if aval.weak_type else "")


def describe_args(args: Sequence[Any], notes: Sequence[str] | None = None) -> str:
    """`x0=f32[3], x1=i32[] weak (no tangent)`: the inputs as a failure message shows them."""
    notes = notes or [""] * len(args)
    return ", ".join(f"x{i}={describe_value(a)}{f' ({n})' if n else ''}"
                     for i, (a, n) in enumerate(zip(args, notes)))


def error_summary(actual: Any, expected: Any) -> str:
    """Max absolute and relative error, and the worst element (NaN == NaN counts as equal)."""
    kind = np.asarray(actual).dtype.kind
    a = np.asarray(actual) if kind == "c" else np.asarray(actual, dtype=np.float64)
    e = np.asarray(expected, dtype=a.dtype)
    if a.size == 0:
        return "no elements"
    diff = np.abs(a - e)
    diff = np.where(np.isnan(a) & np.isnan(e), 0.0, diff)
    diff = np.where(np.isnan(diff), np.inf, diff)
    nonzero = np.abs(e) > 0
    rel = (f"{float(np.max(diff[nonzero] / np.abs(e[nonzero]))):.3g}" if nonzero.any()
           else "n/a (all expected values are 0)")
    worst = np.unravel_index(int(np.argmax(diff)), diff.shape) if diff.ndim else ()
    return (f"max abs error {float(np.max(diff)):.3g}, max rel error {rel} "
            f"(worst at index {tuple(int(i) for i in worst)}: got {a[worst].item()!r}, "
            f"expected {e[worst].item()!r})")


def fail(kind: type, name: str, what: str, args: Sequence[Any], params: dict,
         details: str, notes: Sequence[str] | None = None, *, label: str | None = None,
         owner: str | None = None) -> None:
    """Raise `kind` with the kit's standard message layout.

    The first line names the rule ("jvp rule of primitive 'sin'") or, with
    `label`, the composition that failed ("jit(grad) of primitive 'sin'");
    `owner` (the plugin that registered the rule) adds a line naming it."""
    head = f"{label} of {name}" if label else f"{kind.rule} rule of {name}"
    lines = [f"{head}: {what}",
             *([f"  registered by: {owner}"] if owner else []),
             f"  inputs: {describe_args(args, notes)}",
             f"  params: {_params(params)}"]
    lines += [f"  {line}" for line in details.splitlines() if line]
    raise kind("\n".join(lines))


def _params(params: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(params.items())) or "(none)"
