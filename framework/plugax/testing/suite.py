"""The built-in checks, registered by name, and the loop that runs those that apply.

Why "applicable": a family calls `check_primitive` once per primitive and
example, and should not have to spell out that `argmax` has no derivative or
that a comparison has no transpose. The derivative checks run when some
argument is floating; the transpose check when the primitive is declared
linear. A check named in `rules` whose rule is missing fails loudly instead of
being skipped, so a forgotten rule cannot pass unnoticed; only a check that
cannot run in this environment (jit without the xla_call plugin) is skipped,
with its reason recorded in the result.

Linear means declared linear: `linear_argnums` given, or a jvp rule made by
`deflinear` (linear in all operands jointly, so reverse mode will transpose
the primitive itself). Either way the transpose check runs, and a missing
transpose rule is a failure.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ..core import rules as R
from ..core.trace import Primitive
from .abstract_eval import check_abstract_eval
from .checks import DEFAULT_RULES, REGISTRY, CheckResult, RuleCheck, register_check
from .failures import RuleCheckError, TransposeMismatch
from .jvp import check_jvp
from .lowering import check_lowering, has_lowering
from .second_order import check_second_order
from .traced import (TRACED_RULES, SkipCheck, check_grad, check_jit, check_jit_grad,
                     check_jit_second_order, check_vmap_grad, check_vmap_jvp)
from .transpose import check_transpose
from .values import Target, is_differentiable
from .vjp import check_vjp
from .vmap import check_vmap

__all__ = ["run_rule_checks", "register_check", "RuleCheck", "CHECKS", "DEFAULT_RULES",
           "declared_linear"]

_REGISTRY = REGISTRY   # the name earlier versions of the kit (and its tests) use


def _differentiable(args: Sequence[Any], linear: Any) -> bool:
    return any(is_differentiable(a) for a in args)


def _run_transpose(prim: Any, *args: Any, linear_argnums: Any = None, **params: Any) -> None:
    check_transpose(prim, *args, linear_argnums=linear_argnums, **params)


register_check("abstract_eval", check_abstract_eval, table=R.abstract_eval_rules)
register_check("jvp", check_jvp, table=R.jvp_rules, applies=_differentiable)
register_check("vmap", check_vmap, table=R.batching_rules,
               applies=lambda args, linear: len(args) > 0)
register_check("transpose", _run_transpose, table=R.transpose_rules,
               applies=lambda args, linear: linear is not None)
# vjp rules are optional: checked (against the jvp rule) for primitives that give one
register_check("vjp", check_vjp, table=R.vjp_rules, applies=_differentiable, default=True,
               optional=True)
register_check("second_order", check_second_order, table=R.jvp_rules, applies=_differentiable)
register_check("lowering", check_lowering)   # check_lowering says itself when a rule is missing
register_check("grad", check_grad, table=R.jvp_rules, applies=_differentiable)
register_check("vmap_jvp", check_vmap_jvp, table=R.jvp_rules, applies=_differentiable)
register_check("vmap_grad", check_vmap_grad, table=R.jvp_rules, applies=_differentiable)
register_check("jit", check_jit)
register_check("jit_grad", check_jit_grad, table=R.jvp_rules, applies=_differentiable)
register_check("jit_second_order", check_jit_second_order, table=R.jvp_rules,
               applies=_differentiable)

CHECKS = tuple(REGISTRY)  # the built-in ones; `REGISTRY` also holds later registrations
# checks that differentiate: they take `argnums` from the jvp options when not given their own
_DIFFERENTIATING = ("second_order",) + tuple(r for r in TRACED_RULES if r != "jit")


def declared_linear(prim: Any, args: Sequence[Any]) -> tuple[int, ...] | None:
    """The argnums a primitive is declared linear in by its jvp rule: every floating
    argument when the rule was made by `deflinear` (linear in all operands jointly);
    None otherwise."""
    rule = R.jvp_rules.get(prim) if isinstance(prim, Primitive) else None
    if rule is None or not (getattr(rule, "linear", False)
                            or getattr(rule, "__qualname__", "").startswith("deflinear.")):
        return None
    nums = tuple(i for i, a in enumerate(args) if is_differentiable(a))
    return nums or None


def run_rule_checks(prim: Primitive | Callable, *args: Any, rules: Sequence[str],
                    linear_argnums: Sequence[int] | int | None = None,
                    options: dict[str, dict] | None = None, **params: Any) -> CheckResult:
    """Run the registered checks in `rules` that apply; return those run (and skipped).

    The caller (`check_primitive`) has settled `rules`: defaults, lowering and
    the transpose check of a linear primitive are already in it.
    """
    unknown = [r for r in rules if r not in REGISTRY]
    if unknown:
        raise ValueError(f"unknown rule check(s) {unknown}; choose from {tuple(REGISTRY)}")
    options = {k: dict(v) for k, v in (options or {}).items()}
    if linear_argnums is not None:
        options.setdefault("transpose", {})["linear_argnums"] = linear_argnums
    jvp_argnums = options.get("jvp", {}).get("argnums")
    if jvp_argnums is not None:
        for kind in _DIFFERENTIATING:
            options.setdefault(kind, {}).setdefault("argnums", jvp_argnums)
    target = Target(prim, params)
    result = CheckResult()
    for kind in rules:
        check = REGISTRY[kind]
        if not check.applies(args, linear_argnums):
            continue
        if check.optional and (target.prim is None or not target.has_rule(check.table)):
            continue   # an optional rule kind (vjp) the primitive does not give
        if check.table is not None and not target.has_rule(check.table):
            _missing(kind, check.table, target, linear_argnums)
        try:
            check.run(prim, *args, **options.get(kind, {}), **params)
        except SkipCheck as skip:
            result.skipped[kind] = str(skip)
            continue
        result.append(kind)
    return result


def _missing(kind: str, table: dict, target: Target, linear_argnums: Any) -> None:
    owner = R.rule_owner.get(target.prim, "no loaded plugin")
    rule_kind = next((n for n, k in R.rule_kinds.items() if k.table is table), kind)
    needs = f" (the '{kind}' check needs it)" if rule_kind != kind else ""
    if kind == "transpose":
        raise TransposeMismatch(
            f"transpose rule of {target.name}: none is registered, but the primitive is "
            f"declared linear (in arguments {linear_argnums}: linear_argnums, or a jvp rule "
            f"made by deflinear), so grad and vjp transpose it and fail at run time. Add "
            f"transpose= to its RuleSet.\n  registered by: {owner}")
    raise RuleCheckError(f"{rule_kind} rule of {target.name}: none is registered{needs} "
                         f"(check_primitive was asked to check it); add it to the "
                         f"RuleSet or leave '{kind}' out of rules=\n  registered by: {owner}")


def wants_lowering(lowering: bool | None, prim: Any, rules: tuple) -> bool:
    """Whether check_primitive's `lowering=` adds the "lowering" check to `rules`."""
    if "lowering" in rules:
        return False
    if lowering is None:
        return isinstance(prim, Primitive) and has_lowering(prim)
    return lowering
