"""The checks third-party transformations bring: `Transformation.check(case)`.

Why here: a transformation is a plugin (plugax-jet, say). Its author knows
what its rules must agree with (jet with nested jvp); the kit knows every
primitive's examples. So for each case the kit runs, it calls the `check` of
every loaded transformation that has a rule for the case's primitive (an
entry in the table of the transformation's rule kind, own or derived).
Built-in transformations have `check=None`: the kit's own checks cover them.
"""
from __future__ import annotations

from typing import Any, Sequence

from ..core.rules import rule_kinds
from ..core.trace import Primitive
from .checks import CheckResult
from .failures import RuleCheckError
from .traced import SkipCheck

__all__ = ["transformation_checks", "run_transformation_checks"]


def transformation_checks(prim: Any) -> list[tuple[str, Any, Any]]:
    """(name, Transformation, PluginRecord) of the loaded transformations that have a
    check and a rule for `prim`, by name."""
    from ..loader.registry import registry
    if not isinstance(prim, Primitive):
        return []
    found = []
    for name, (t, record) in sorted(registry.transformations.items()):
        kind = rule_kinds.get(t.rule_kind)
        if t.check is None or kind is None:
            continue
        table = kind.table
        has_rule = (any(prim in rules for rules in table.values()) if kind.per_platform
                    else prim in table)
        if has_rule:
            found.append((name, t, record))
    return found


def run_transformation_checks(case: Any, result: CheckResult, *, every: bool,
                              named: Sequence[str] = ()) -> None:
    """Run the checks of `transformation_checks(case.prim)` on `case` (all of them when
    `every`, else those `named`), recording each in `result`.

    A check reports a failure by raising AssertionError (a RuleCheckError, say),
    which propagates as is; raising `SkipCheck` records a skip; any other
    exception is a failure too, named with the transformation and its plugin.
    """
    for name, t, record in transformation_checks(case.prim):
        if not every and name not in named:
            continue
        try:
            t.check(case)
        except AssertionError:
            raise
        except SkipCheck as skip:
            result.skipped[name] = str(skip)
            continue
        except Exception as err:  # noqa: BLE001 - named with its plugin below
            raise RuleCheckError(
                f"{name} check of primitive '{case.prim.name}' (case {case.id!r}) raised "
                f"{type(err).__name__}: {err}\n  the check belongs to transformation '{name}' "
                f"(rule kind '{t.rule_kind}') of {record.owner()}") from err
        result.append(name)
