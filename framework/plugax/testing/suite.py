"""check_primitive: every applicable rule check for one primitive and one example.

Why "applicable": a family calls this once per primitive and example, and
should not have to spell out that `argmax` has no derivative or that a
comparison has no transpose. The jvp check runs when some argument is
floating; the transpose check when `linear_argnums` is given. A check named
in `rules` whose rule is missing fails loudly instead of being skipped, so a
forgotten rule cannot pass unnoticed.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ..core import rules as R
from ..core.trace import Primitive
from .abstract_eval import check_abstract_eval
from .failures import RuleCheckError
from .jvp import check_jvp
from .transpose import check_transpose
from .values import Target, is_differentiable
from .vmap import check_vmap

__all__ = ["check_primitive", "CHECKS"]

CHECKS = ("abstract_eval", "jvp", "vmap", "transpose")
_TABLES = {"abstract_eval": R.abstract_eval_rules, "jvp": R.jvp_rules, "vmap": R.vmap_rules,
           "transpose": R.transpose_rules}


def check_primitive(prim: Primitive | Callable, *args: Any,
                    rules: Sequence[str] = ("abstract_eval", "jvp", "vmap"),
                    linear_argnums: Sequence[int] | int | None = None,
                    jvp_options: dict | None = None, vmap_options: dict | None = None,
                    **params: Any) -> list[str]:
    """Run the checks in `rules` that apply to `prim` on `args`; return the ones run.

    `jvp_options` / `vmap_options` pass tolerances and the like to check_jvp
    and check_vmap (e.g. `{"rtol": 1e-3}`); `linear_argnums` turns on the
    transpose check when "transpose" is in `rules`.
    """
    unknown = [r for r in rules if r not in CHECKS]
    if unknown:
        raise ValueError(f"unknown rule check(s) {unknown}; choose from {CHECKS}")
    target = Target(prim, params)
    ran = []
    for kind in rules:
        if not _applies(kind, args, linear_argnums):
            continue
        if not target.has_rule(_TABLES[kind]):
            raise RuleCheckError(f"{kind} rule of {target.name}: none is registered "
                                 f"(check_primitive was asked to check it); add it to the "
                                 f"RuleSet or leave '{kind}' out of rules=")
        if kind == "abstract_eval":
            check_abstract_eval(prim, *args, **params)
        elif kind == "jvp":
            check_jvp(prim, *args, **(jvp_options or {}), **params)
        elif kind == "vmap":
            check_vmap(prim, *args, **(vmap_options or {}), **params)
        else:
            check_transpose(prim, *args, linear_argnums=linear_argnums, **params)
        ran.append(kind)
    return ran


def _applies(kind: str, args: Sequence[Any], linear_argnums: Any) -> bool:
    if kind == "jvp":
        return any(is_differentiable(a) for a in args)
    if kind == "vmap":
        return len(args) > 0
    if kind == "transpose":
        return linear_argnums is not None
    return True
