"""check_primitive: every applicable rule check for one primitive and one example.

Why "applicable": a family calls this once per primitive and example, and
should not have to spell out that `argmax` has no derivative or that a
comparison has no transpose. The jvp check runs when some argument is
floating; the transpose check when `linear_argnums` is given. A check named
in `rules` whose rule is missing fails loudly instead of being skipped, so a
forgotten rule cannot pass unnoticed.

Why a check registry (`register_check`): new transformations bring new
agreements to check — "jit (lowering) equals eager (impl)" is the next one —
and adding them here makes every family's existing examples exercise them,
with no change to any family's tests.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..core import rules as R
from ..core.trace import Primitive
from .abstract_eval import check_abstract_eval
from .failures import RuleCheckError
from .jvp import check_jvp
from .lowering import check_lowering, has_lowering
from .second_order import check_second_order
from .transpose import check_transpose
from .values import Target, is_differentiable
from .vmap import check_vmap

__all__ = ["check_primitive", "register_check", "RuleCheck", "CHECKS", "DEFAULT_RULES"]


@dataclass(frozen=True)
class RuleCheck:
    """One named check: `run(prim, *args, **options, **params)`.

    `table` is the rule table whose entry the check needs (None: nothing to
    look up, e.g. a check of a whole function); `applies(args, linear_argnums)`
    says whether the check means anything for these arguments.
    """

    name: str
    run: Callable
    table: dict | None = None
    applies: Callable[[Sequence[Any], Any], bool] = lambda args, linear: True


_REGISTRY: dict[str, RuleCheck] = {}
# What check_primitive runs when `rules` is not given; a later transformation
# (jit) may append its check here to make it part of every family's tests.
DEFAULT_RULES: list[str] = ["abstract_eval", "jvp", "vmap"]


def register_check(name: str, run: Callable, *, table: dict | None = None,
                   applies: Callable[[Sequence[Any], Any], bool] | None = None,
                   default: bool = False) -> RuleCheck:
    """Make `name` a valid entry of check_primitive's `rules=` (and of DEFAULT_RULES)."""
    check = RuleCheck(name, run, table, applies or (lambda args, linear: True))
    _REGISTRY[name] = check
    if default and name not in DEFAULT_RULES:
        DEFAULT_RULES.append(name)
    return check


def _differentiable(args: Sequence[Any], linear: Any) -> bool:
    return any(is_differentiable(a) for a in args)


def _run_transpose(prim: Any, *args: Any, linear_argnums: Any = None, **params: Any) -> None:
    check_transpose(prim, *args, linear_argnums=linear_argnums, **params)


register_check("abstract_eval", check_abstract_eval, table=R.abstract_eval_rules)
register_check("jvp", check_jvp, table=R.jvp_rules, applies=_differentiable)
register_check("vmap", check_vmap, table=R.batching_rules, applies=lambda args, linear: len(args) > 0)
register_check("transpose", _run_transpose, table=R.transpose_rules,
               applies=lambda args, linear: linear is not None)
register_check("second_order", check_second_order, table=R.jvp_rules, applies=_differentiable)
register_check("lowering", check_lowering)   # check_lowering says itself when a rule is missing

CHECKS = tuple(_REGISTRY)  # the built-in ones; `_REGISTRY` also holds later registrations


def check_primitive(prim: Primitive | Callable, *args: Any,
                    rules: Sequence[str] | None = None,
                    linear_argnums: Sequence[int] | int | None = None,
                    jvp_options: dict | None = None, vmap_options: dict | None = None,
                    options: dict[str, dict] | None = None, lowering: bool | None = False,
                    **params: Any) -> list[str]:
    """Run the checks in `rules` that apply to `prim` on `args`; return the ones run.

    `rules` defaults to DEFAULT_RULES (abstract_eval, jvp, vmap); add
    "transpose" (with `linear_argnums`) and "second_order" where they apply.
    `options` maps a check name to extra keyword arguments for it
    (tolerances, say `{"jvp": {"rtol": 1e-3}}`); `jvp_options` /
    `vmap_options` are shorthands for two of its entries. `lowering=True` adds "jit
    equals eager" (the "lowering" check; None: when the primitive has a lowering rule). Off by
    default: each call compiles a module, which would multiply the cost of
    hypothesis-driven rule tests; families test lowering in batches (check_lowerings).
    """
    rules = tuple(DEFAULT_RULES if rules is None else rules)
    if _wants_lowering(lowering, prim, rules):
        rules += ("lowering",)
    unknown = [r for r in rules if r not in _REGISTRY]
    if unknown:
        raise ValueError(f"unknown rule check(s) {unknown}; choose from {tuple(_REGISTRY)}")
    options = {"jvp": dict(jvp_options or {}), "vmap": dict(vmap_options or {}),
               **{k: dict(v) for k, v in (options or {}).items()}}
    if linear_argnums is not None:
        options.setdefault("transpose", {})["linear_argnums"] = linear_argnums
    target = Target(prim, params)
    ran = []
    for kind in rules:
        check = _REGISTRY[kind]
        if not check.applies(args, linear_argnums):
            continue
        if check.table is not None and not target.has_rule(check.table):
            raise RuleCheckError(f"{kind} rule of {target.name}: none is registered "
                                 f"(check_primitive was asked to check it); add it to the "
                                 f"RuleSet or leave '{kind}' out of rules=")
        check.run(prim, *args, **options.get(kind, {}), **params)
        ran.append(kind)
    return ran


def _wants_lowering(lowering: bool | None, prim: Any, rules: tuple) -> bool:
    if "lowering" in rules:
        return False
    if lowering is None:
        return isinstance(prim, Primitive) and has_lowering(prim)
    return lowering
