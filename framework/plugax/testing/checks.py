"""The registry of named checks that `check_primitive` runs, and what it runs by default.

Why a module of its own: `Case` (declared examples) reads the defaults and
`check_primitive` reads the registry; keeping both here lets each import it
without importing the other.

Why a registry (`register_check`): new transformations bring new agreements
to check, and adding them here makes every family's existing examples
exercise them, with no change to any family's tests. (A third-party
transformation contributes its check through its `Transformation` record
instead; see suite.py.)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

__all__ = ["RuleCheck", "register_check", "DEFAULT_RULES", "REGISTRY", "CheckResult"]


@dataclass(frozen=True)
class RuleCheck:
    """One named check: `run(prim, *args, **options, **params)`.

    `table` is the rule table whose entry the check needs (None: nothing to
    look up, e.g. a check of a whole function); `applies(args, linear_argnums)`
    says whether the check means anything for these arguments. `optional`: the
    table's rule kind is optional (vjp), so a primitive without a rule there is not
    checked (rather than failed).
    """

    name: str
    run: Callable
    table: dict | None = None
    applies: Callable[[Sequence[Any], Any], bool] = lambda args, linear: True
    optional: bool = False


REGISTRY: dict[str, RuleCheck] = {}
# What check_primitive runs when `rules` is not given: the rule checks, then the
# checks of traced use (traced.py), cheapest first.
DEFAULT_RULES: list[str] = ["abstract_eval", "jvp", "vmap", "grad", "vmap_jvp", "vmap_grad",
                            "jit", "jit_grad", "jit_second_order"]


def register_check(name: str, run: Callable, *, table: dict | None = None,
                   applies: Callable[[Sequence[Any], Any], bool] | None = None,
                   default: bool = False, optional: bool = False) -> RuleCheck:
    """Make `name` a valid entry of check_primitive's `rules=` (and of DEFAULT_RULES).
    `optional`: run only for primitives that have a rule in `table` (see RuleCheck)."""
    check = RuleCheck(name, run, table, applies or (lambda args, linear: True), optional)
    REGISTRY[name] = check
    if default and name not in DEFAULT_RULES:
        DEFAULT_RULES.append(name)
    return check


class CheckResult(list):
    """The names of the checks that ran, in order; `skipped` maps the names of those
    that could not run here (say, jit without the xla_call plugin) to the reason."""

    def __init__(self, ran: Sequence[str] = (), skipped: dict[str, str] | None = None):
        super().__init__(ran)
        self.skipped: dict[str, str] = dict(skipped or {})

    def __repr__(self) -> str:
        extra = f", skipped={self.skipped!r}" if self.skipped else ""
        return f"CheckResult({list(self)!r}{extra})"
