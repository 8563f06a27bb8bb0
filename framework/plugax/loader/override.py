"""Scoped rule overrides: ``with plugax.extend.override(RuleSet(sin_p, impl=...)):``.

Inside the block, the rules the RuleSets give replace the loaded ones for
every use of the rule tables: eager evaluation (the front ends' fast paths
too), tracing (jvp, vmap, transpose, partial eval, third parties' rule kinds)
and jit (tracing, lowering and the compile cache, which keys on the active
overrides). On exit the previous rules are back, also after an exception.

Semantics with threads: an override is visible only in the thread that
entered the block. Each thread keeps a stack of its active overrides; nested
blocks stack (the innermost rule of a kind wins; leaving it restores the outer
one). Another thread running meanwhile sees the loaded rules.

How, and who pays: while any thread overrides a (primitive, rule kind), that
table entry holds a *dispatcher*, which looks the rule up in the calling
thread's stack and otherwise calls the loaded rule. Primitives nobody
overrides keep their rules in the tables and pay nothing. Inside a block the
thread's bottom interpreter is a separate EvalTrace instance, so `is_eager()`
is False there: every fast path that would skip a bind (plugax.numpy's, jit's
cached call, any family's) binds instead and meets the dispatcher. While an
override of a primitive's abstract_eval rule is active anywhere, that
primitive's abstract evaluations are not memoised (core/rules.py).

Limits: an override entered *inside* a transformation (in a function being
traced) changes the rules the transformation applies in the block, but an
equation staged there is lowered later, with the rules active then.
Registering or unregistering a plugin while blocks are active keeps them: the
new tables get the dispatchers back, over the new loaded rules.
"""
from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, Callable, Iterable

from ..core import rules as R
from ..core.trace import EvalTrace, Primitive, _state as _trace_state, close_block, \
    eval_trace, open_block
from ..errors import PlugaxError
from .registry import registry
from .ruleset import RuleSet
from .signatures import rule_signature_problem
from .snapshot import Snapshot, before_publish, publish_lock

__all__ = ["override", "OverrideError", "active_overrides"]


class OverrideError(PlugaxError, ValueError):
    """A RuleSet given to `plugax.extend.override` cannot override anything: an
    unknown primitive, an unknown rule kind, a rule that is not callable or has
    the wrong signature."""


class _OverrideEvalTrace(EvalTrace):
    """The bottom interpreter of a thread inside an override block. An EvalTrace
    like any other; being a different object is what makes `is_eager()` False,
    so code that would inline a loaded rule binds instead."""

    def describe(self) -> str:
        return "EvalTrace (inside plugax.extend.override)"


_override_trace = _OverrideEvalTrace()


class _Local(threading.local):
    """Per-thread override state: the merged active rules and the stack of blocks."""

    def __init__(self) -> None:
        self.active: dict = {}      # (kind, platform, primitive) -> rule
        self.stack: list = []       # _Frame, outermost first
        self.key: tuple = ()        # the RuleSets of the stack, outermost first


_local = _Local()


class _Slot:
    """One table entry that holds a dispatcher: the rule it replaced, and how many
    active blocks (in all threads) override it."""

    __slots__ = ("table", "base", "dispatcher", "count")

    def __init__(self, key: tuple, table: dict):
        self.table, self.base, self.count = table, table.get(key[2]), 0
        self.dispatcher = _make_dispatcher(key, self)


# (kind, platform, primitive) -> _Slot; changed under _lock only, which is the
# registry's publish lock: a rebuild and an override never write the tables at once
_slots: dict[tuple, _Slot] = {}
_lock = publish_lock


def _keep_dispatchers(snapshot: Snapshot) -> None:
    """A rebuild is about to publish `snapshot`: every entry overridden somewhere keeps
    its dispatcher, which now falls back to the rule the new registry loads."""
    for (kind, platform, primitive), slot in _slots.items():
        table = snapshot.table(kind, platform)
        slot.base = table.get(primitive)
        table[primitive] = slot.dispatcher


before_publish.append(_keep_dispatchers)


def _make_dispatcher(key: tuple, slot: _Slot) -> Callable:
    """The rule installed in the table while `key` is overridden somewhere: the
    calling thread's override, else the rule it replaced."""
    kind, platform, primitive = key
    local = _local

    def dispatch(ctx: Any, *args: Any, **params: Any) -> Any:
        rule = local.active.get(key)
        if rule is None:
            rule = slot.base
            if rule is None and platform not in (None, "default"):
                rule = R.lowering_rules.get("default", {}).get(primitive)
            if rule is None:
                what = kind if platform is None else f"lowering (platform '{platform}')"
                raise R.missing_rule(primitive, what,
                                     getattr(ctx, "transformation", None) or kind)
        return rule(ctx, *args, **params)
    dispatch.__name__ = f"{primitive}_{kind}_override_dispatch"
    dispatch.__qualname__ = dispatch.__name__
    return dispatch


def _table(kind: str, platform: str | None) -> dict:
    if platform is not None:
        return R.lowering_rules.setdefault(platform, {})
    return R.rule_kinds[kind].table


def _acquire(keys: Iterable[tuple]) -> None:
    with _lock:
        for key in keys:
            slot = _slots.get(key)
            if slot is None:
                kind, platform, primitive = key
                slot = _slots[key] = _Slot(key, _table(kind, platform))
                slot.table[primitive] = slot.dispatcher
                R.count_override(primitive, 1)
                if kind == "abstract_eval":
                    R.bypass_abstract_eval_cache(primitive, True)
            slot.count += 1


def _release(keys: Iterable[tuple]) -> None:
    with _lock:
        for key in keys:
            slot = _slots[key]
            slot.count -= 1
            if slot.count:
                continue
            del _slots[key]
            primitive = key[2]
            R.count_override(primitive, -1)
            if slot.table.get(primitive) is slot.dispatcher:   # else a rebuild replaced it
                if slot.base is None:
                    del slot.table[primitive]
                else:
                    slot.table[primitive] = slot.base
            if key[0] == "abstract_eval":
                R.bypass_abstract_eval_cache(primitive, False)


class _Frame:
    __slots__ = ("rules", "prev_active", "prev_key", "prev_trace", "token")


def _problem(rs: Any) -> list[tuple[str, str]]:
    """(rule kind or '', problem) for everything that makes `rs` unusable here."""
    if not isinstance(rs, RuleSet):
        return [("", f"override() takes RuleSets, got {type(rs).__name__} ({rs!r})")]
    prim = rs.primitive
    if not isinstance(prim, Primitive):
        return [("", f"its 'primitive' must be a plugax Primitive, got {prim!r}")]
    loaded = registry.primitives_by_name.get(prim.name)
    if loaded is None:
        return [("", f"no loaded plugin defines a primitive named '{prim.name}', so there "
                     f"is nothing to override")]
    if loaded is not prim:
        return [("", f"it is a different Primitive object than the loaded '{prim.name}'; "
                     f"use plugax.extend.get_primitive('{prim.name}') or "
                     f"plugax.lax.{prim.name.replace('-', '_')}_p")]
    found = []
    if rs.expand is not None:
        found.append(("expand", "an override gives rules, not a decomposition (expand); "
                                "give the rules of the kinds to replace"))
    if not rs.rules and not rs.lowering:
        found.append(("", "it gives no rules"))
    for kind_name, rule in rs.rules.items():
        kind = R.rule_kinds.get(kind_name)
        if kind is None or kind.per_platform:
            found.append((kind_name, f"unknown rule kind '{kind_name}' (defined kinds: "
                                     f"{', '.join(sorted(R.rule_kinds))}; lowering rules go "
                                     f"in lowering={{platform: rule}})"))
            continue
        found += [(kind_name, p) for p in _rule_problems(rule, kind)]
    if not isinstance(rs.lowering, Mapping):
        found.append(("lowering", "'lowering' must map platform names to rules"))
    else:
        kind = R.rule_kinds["lowering"]
        for platform, rule in rs.lowering.items():
            if not isinstance(platform, str):
                found.append(("lowering", f"platform {platform!r} is not a string"))
            found += [(f"lowering ({platform})", p) for p in _rule_problems(rule, kind)]
    return found


def _rule_problems(rule: Any, kind: R.RuleKind) -> list[str]:
    if not callable(rule):
        return [f"the rule must be callable, got {type(rule).__name__} ({rule!r})"]
    problem = rule_signature_problem(rule, kind)
    return [f"rule {getattr(rule, '__name__', rule)!r}: {problem}"] if problem else []


def _collect(rulesets: tuple) -> dict[tuple, Callable]:
    """(kind, platform, primitive) -> rule for every rule given; raises OverrideError
    naming the primitive and rule kind of each problem."""
    problems = []
    for rs in rulesets:
        for kind, p in _problem(rs):
            name = getattr(getattr(rs, "primitive", None), "name", None)
            where = f"primitive '{name}'" if name else "override()"
            problems.append(f"{where}{', rule kind ' + repr(kind) if kind else ''}: {p}")
    if problems:
        raise OverrideError("plugax.extend.override: " + "; ".join(problems))
    rules: dict[tuple, Callable] = {}
    for rs in rulesets:
        given = [((k, None, rs.primitive), r) for k, r in rs.rules.items()]
        given += [(("lowering", p, rs.primitive), r) for p, r in rs.lowering.items()]
        for key, rule in given:
            if key in rules:
                kind = key[0] if key[1] is None else f"lowering ({key[1]})"
                raise OverrideError(f"plugax.extend.override: primitive '{key[2]}', rule kind "
                                    f"'{kind}': given by two RuleSets of one override; "
                                    f"nest two overrides to stack them")
            rules[key] = rule
    return rules


class override:
    """Replace some rules of loaded primitives for the duration of a ``with`` block.

    ``with override(RuleSet(sin_p, impl=my_impl, jvp=my_jvp)):`` makes every use
    of sin in this thread (``plugax.numpy.sin``, ``lax.sin``, ``grad``, ``vmap``,
    ``jit``) run ``my_impl`` and ``my_jvp`` until the block ends; other rules of
    sin, and other threads, are unchanged. Why scoped rather than a plugin with
    ``overrides=True``: to try a rule, test a fallback or instrument a primitive
    without a distribution, and with the loaded rule back afterwards whatever
    happens. Nested blocks stack. A RuleSet may give rules of any defined rule
    kind (third parties' included) and per-platform lowering rules; it must not
    define a new primitive.

    Every RuleSet is checked when the object is made: an unknown primitive, an
    unknown rule kind, a rule that is not callable or whose signature does not
    fit its kind raises OverrideError naming the primitive and the rule kind.
    """

    __slots__ = ("rulesets", "rules", "_frames")

    def __init__(self, *rulesets: RuleSet):
        self.rulesets = rulesets
        self.rules = _collect(rulesets)
        self._frames: dict[int, list] = {}   # thread id -> this object's open frames

    def __enter__(self) -> "override":
        frame = _Frame()
        frame.rules = self.rules
        _acquire(self.rules)
        local = _local
        frame.prev_active, frame.prev_key = local.active, local.key
        local.active = {**local.active, **self.rules}
        local.key = (*local.key, *self.rulesets)
        local.stack.append(frame)
        frame.prev_trace = _trace_state.trace
        # jit's C++ dispatch must not serve calls here
        frame.token = open_block(True if _trace_state.trace is eval_trace else None)
        if _trace_state.trace is eval_trace:
            _trace_state.trace = _override_trace
        self._frames.setdefault(threading.get_ident(), []).append(frame)
        return self

    def __exit__(self, *exc_info: Any) -> None:
        frames = self._frames.get(threading.get_ident())
        frame = frames.pop()
        if not frames:
            del self._frames[threading.get_ident()]
        local = _local
        if not local.stack or local.stack[-1] is not frame:
            raise RuntimeError("plugax.extend.override blocks were exited out of order "
                               "(use them as nested `with` blocks)")
        local.stack.pop()
        local.active, local.key = frame.prev_active, frame.prev_key
        if _trace_state.trace is _override_trace and frame.prev_trace is eval_trace:
            _trace_state.trace = eval_trace
        close_block(frame.token, frame.prev_trace)
        _release(self.rules)

    def __repr__(self) -> str:
        return f"override({', '.join(map(repr, self.rulesets))})"


def active_overrides() -> tuple:
    """The RuleSets of this thread's active override blocks, outermost first (empty
    outside any block). Caches of traced or compiled code key on it: what they hold
    was built with the rules active when it was built."""
    return _local.key
