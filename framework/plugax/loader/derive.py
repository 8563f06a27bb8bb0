"""Rules derived from a primitive's `expand` decomposition.

A plugin may describe a primitive as a composition of other primitives. Any
rule it does not give is then obtained from that composition by the
transformation that owns the rule kind: each `Transformation` with a `derive`
says how (evaluation runs the composition, jvp differentiates it, lowering
traces it to a jaxpr and lowers that inline, a third party's jet runs it
under jet). Reverse mode needs nothing extra: linearizing the expansion only
ever stages the *other* primitives, whose transpose rules already exist.
"""
from __future__ import annotations

from ..core import rules as R
from .ruleset import RuleSet, Transformation
from .snapshot import Snapshot

__all__ = ["derive_missing_rules"]


def derive_missing_rules(snapshot: Snapshot, rulesets: list[RuleSet],
                         transformations: list[Transformation]) -> None:
    """Fill `snapshot`, for each primitive with an `expand`, with every rule kind it
    lacks whose transformation can derive one."""
    derivers = [t for t in transformations if t.derive is not None]
    for rs in rulesets:
        if rs.expand is None:
            continue
        for t in derivers:
            kind = R.rule_kinds.get(t.rule_kind)
            if kind is None:
                continue
            table = snapshot.table(t.rule_kind)
            if kind.per_platform:
                if not any(rs.primitive in per_platform for per_platform in table.values()):
                    snapshot.table(t.rule_kind, "default")[rs.primitive] = \
                        t.derive(rs.primitive, rs.expand)
                    snapshot.origin[(rs.primitive, f"{t.rule_kind}:default")] = "derived"
            elif rs.primitive not in table:
                table[rs.primitive] = t.derive(rs.primitive, rs.expand)
                snapshot.origin[(rs.primitive, t.rule_kind)] = "derived"
