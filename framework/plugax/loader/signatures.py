"""Rule signatures, checked when a plugin loads.

Why at load: a rule with the wrong signature (a version-1 rule without the
context argument, a jvp taking two arguments) would otherwise fail on first
use, deep inside some trace, with a TypeError that names neither the plugin
nor the primitive. Each rule kind declares its positional parameters
(`RuleKind.positional`); a rule must accept exactly that many positionally
(more when the kind is variadic) and must not require more.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Iterable

from ..core.rules import RuleKind, rule_kinds

__all__ = ["signature_problems", "rule_signature_problem"]

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def rule_signature_problem(rule: Callable, kind: RuleKind) -> str | None:
    """Why `rule` cannot be called as a `kind` rule (None if it can, or if Python
    cannot tell: builtins and some C callables have no signature)."""
    try:
        sig = inspect.signature(rule)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())
    positional = [p for p in params if p.kind in _POSITIONAL]
    required = [p for p in positional if p.default is inspect.Parameter.empty]
    star = any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params)
    n = len(kind.positional)
    if not kind.variadic and len(required) > n:
        return (f"it requires {len(required)} positional arguments "
                f"({', '.join(p.name for p in required)}), but a {kind.name} rule is called "
                f"as {kind.signature()}")
    if len(positional) < n and not star:
        return (f"it takes {len(positional)} positional arguments "
                f"({', '.join(p.name for p in positional) or 'none'}), but a {kind.name} rule "
                f"is called as {kind.signature()} (plugin API version 2 passes the rule "
                f"context first)")
    return None


def signature_problems(rulesets: Iterable[Any]) -> list[str]:
    """Every rule of every RuleSet whose signature does not fit its kind."""
    found = []
    for rs in rulesets:
        rules = [*rs.rules.items(), *(("lowering", r) for r in rs.lowering.values())]
        if rs.expand is not None:
            rules.append(("expand", rs.expand))
        for kind_name, rule in rules:
            kind = _EXPAND if kind_name == "expand" else rule_kinds.get(kind_name)
            problem = rule_signature_problem(rule, kind) if kind is not None else None
            if problem:
                found.append(f"primitive '{rs.primitive}', {kind_name} rule "
                             f"{getattr(rule, '__name__', rule)!r}: {problem}")
    return found


_EXPAND = RuleKind("expand", ("ctx",), variadic=True, doc="a decomposition")
