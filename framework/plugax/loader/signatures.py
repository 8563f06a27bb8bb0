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
import types
from typing import Any, Callable, Iterable

from ..core.rules import RuleKind, rule_kinds

__all__ = ["signature_problems", "rule_signature_problem"]

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _positional_shape(rule: Callable) -> tuple[list[str], int, bool] | None:
    """(positional parameter names, how many are required, whether *args is taken),
    or None when Python cannot tell (builtins, some C callables).

    Plain functions are read from their code object: every plugin's rules are
    checked at import, and `inspect.signature` would cost most of the registry
    build (several milliseconds for the built-in families)."""
    code = getattr(rule, "__code__", None)
    if type(rule) is types.FunctionType and code is not None:
        names = list(code.co_varnames[:code.co_argcount])
        required = len(names) - len(rule.__defaults__ or ())
        return names, required, bool(code.co_flags & inspect.CO_VARARGS)
    try:
        sig = inspect.signature(rule)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())
    positional = [p for p in params if p.kind in _POSITIONAL]
    required = sum(p.default is inspect.Parameter.empty for p in positional)
    star = any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params)
    return [p.name for p in positional], required, star


_verdicts: dict[tuple, str | None] = {}


def rule_signature_problem(rule: Callable, kind: RuleKind) -> str | None:
    """Why `rule` cannot be called as a `kind` rule (None if it can, or if Python
    cannot tell). Memoised per code object: the helpers' rules (one closure per
    primitive) share a handful of them, and the registry rebuilds on every plugin
    change."""
    code = getattr(rule, "__code__", None)
    if type(rule) is not types.FunctionType or code is None:
        return _problem(rule, kind)
    key = (code, len(rule.__defaults__ or ()), kind.name, kind.positional, kind.variadic)
    try:
        return _verdicts[key]
    except KeyError:
        verdict = _verdicts[key] = _problem(rule, kind)
        return verdict


def _problem(rule: Callable, kind: RuleKind) -> str | None:
    shape = _positional_shape(rule)
    if shape is None:
        return None
    positional, n_required, star = shape
    required = positional[:n_required]
    n = len(kind.positional)
    if not kind.variadic and len(required) > n:
        return (f"it requires {len(required)} positional arguments "
                f"({', '.join(required)}), but a {kind.name} rule is called "
                f"as {kind.signature()}")
    if len(positional) < n and not star:
        return (f"it takes {len(positional)} positional arguments "
                f"({', '.join(positional) or 'none'}), but a {kind.name} rule "
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
