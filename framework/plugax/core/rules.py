"""The rule tables: one plain dict per rule kind, keyed by Primitive.

Why plain dicts: `bind` runs for every operation, and a dict lookup costs a few
tens of nanoseconds where a pluggy hook call costs microseconds. The plugin
registry fills these tables once from the plugins' RuleSets (and refills them,
in place, when the set of plugins changes); nothing else writes them.
"""
from __future__ import annotations

import threading
from typing import Any, Callable

from ..config import config
from ..errors import MissingRuleError
from .avals import ShapedArray, interned_aval
from .frames import user_frame

__all__ = [
    "RuleContext", "RuleKind", "rule_kinds", "define_rule_kind", "impl_rules",
    "abstract_eval_rules", "jvp_rules", "batching_rules", "transpose_rules",
    "partial_eval_rules", "lowering_rules", "all_weak", "first_weak", "rule_owner", "rule_origin", "missing_rule", "all_tables",
    "vjp_rules", "IMPL_CTX", "ABSTRACT_EVAL_CTX", "JVP_CTX", "TRANSPOSE_CTX", "VJP_CTX",
    "abstract_eval",
    "run_abstract_eval", "abstract_eval_cache", "forget_abstract_evals",
    "bypass_abstract_eval_cache", "overridden", "count_override",
]


class RuleContext:
    """The first argument of every rule.

    A context object instead of extra positional arguments means the kernel can
    add fields later (a new transformation wants to pass something) without
    breaking any plugin's rule signature.

    Fields: `transformation` ("eval", "abstract_eval", "jvp", "vmap",
    "transpose", "partial_eval", "vjp"), `axis_size` (vmap only, else None), `axis_name`
    (vmap only: the `axis_name=` the user gave vmap, which collectives such as
    lax.psum name; else None).
    """

    __slots__ = ("transformation", "axis_size", "axis_name")

    def __init__(self, transformation: str, axis_size: int | None = None,
                 axis_name: Any = None):
        self.transformation = transformation
        self.axis_size = axis_size
        self.axis_name = axis_name

    def __repr__(self) -> str:
        extra = f", axis_size={self.axis_size}" if self.axis_size is not None else ""
        return f"RuleContext({self.transformation!r}{extra})"


IMPL_CTX = RuleContext("eval")
ABSTRACT_EVAL_CTX = RuleContext("abstract_eval")
JVP_CTX = RuleContext("jvp")
TRANSPOSE_CTX = RuleContext("transpose")
VJP_CTX = RuleContext("vjp")


class RuleKind:
    """A kind of rule (jvp, batching, jet, ...): its name, its table and its signature.

    Why a record: a transformation is a plugin, so the kernel cannot know every
    kind of rule in advance. Defining a kind (`define_rule_kind`) creates its
    table, states the signature every rule of the kind must have (checked when a
    plugin loads, so a wrong rule fails with the plugin's name, not mid-trace),
    and lets `RuleSet(prim, <kind>=rule)` accept it.

    `positional` names the positional parameters, context first; `variadic`
    means operands follow them (``impl(ctx, *operands, **params)``);
    `per_platform` means a rule is given as ``{platform: rule}`` (lowering).
    """

    __slots__ = ("name", "positional", "variadic", "per_platform", "table", "doc",
                 "defined_by")

    def __init__(self, name: str, positional: tuple[str, ...], variadic: bool = False,
                 per_platform: bool = False, doc: str = "", defined_by: str = "plugax"):
        self.name = name
        self.positional = tuple(positional)
        self.variadic = variadic
        self.per_platform = per_platform
        self.table: dict = {}
        self.doc = doc
        self.defined_by = defined_by

    def signature(self) -> str:
        args = [*self.positional, *(["*operands"] if self.variadic else []), "**params"]
        return f"{self.name}({', '.join(args)})"

    def same_shape(self, other: "RuleKind") -> bool:
        return (self.positional, self.variadic, self.per_platform) == \
            (other.positional, other.variadic, other.per_platform)

    def __repr__(self) -> str:
        return f"RuleKind({self.signature()}, defined by {self.defined_by})"


rule_kinds: dict[str, RuleKind] = {}


def define_rule_kind(name: str, positional: tuple[str, ...] = ("ctx",), *,
                     variadic: bool = False, per_platform: bool = False, doc: str = "",
                     defined_by: str = "plugax") -> dict:
    """Define a rule kind and return its table (``{primitive: rule}``).

    Idempotent: defining a kind again with the same signature returns the same
    table (a module may be imported twice, or by two distributions that share a
    kind); a different signature is refused, naming both definers.
    """
    if not name.isidentifier() or name in _RESERVED:
        raise ValueError(f"rule kind name {name!r} is not usable: it must be a Python "
                         f"identifier and not one of {sorted(_RESERVED)}")
    kind = RuleKind(name, positional, variadic, per_platform, doc, defined_by)
    existing = rule_kinds.get(name)
    if existing is not None:
        if not existing.same_shape(kind):
            raise ValueError(f"rule kind '{name}' is already defined by {existing.defined_by} "
                             f"as {existing.signature()}; {defined_by} defines it as "
                             f"{kind.signature()}")
        return existing.table
    rule_kinds[name] = kind
    return kind.table


# RuleSet fields that are not rule kinds
_RESERVED = frozenset({"primitive", "expand", "overrides", "rules"})

impl_rules = define_rule_kind(
    "impl", ("ctx",), variadic=True, doc="evaluate on NumPy arrays (eager)")
abstract_eval_rules = define_rule_kind(
    "abstract_eval", ("ctx",), variadic=True, doc="output avals from input avals (required)")
jvp_rules = define_rule_kind(
    "jvp", ("ctx", "primals", "tangents"), doc="forward-mode derivative")
batching_rules = define_rule_kind(
    "batching", ("ctx", "args", "dims"), doc="vmap: the batched operation and output dims")
transpose_rules = define_rule_kind(
    "transpose", ("ctx", "ct"), variadic=True, doc="reverse mode of a linear primitive")
# Optional: a primitive without one is taped by linearizing its jvp rule (vjp_tape).
vjp_rules = define_rule_kind(
    "vjp", ("ctx", "primals", "wanted"),
    doc="top-level reverse mode (optional): (primal_out, backward(ct) -> cotangents)")
partial_eval_rules = define_rule_kind(
    "partial_eval", ("ctx", "trace"), variadic=True,
    doc="split a higher-order primitive into known and unknown parts")
lowering_rules_kind = define_rule_kind(
    "lowering", ("ctx",), variadic=True, per_platform=True, doc="emit StableHLO (jit)")
# platform -> {primitive: rule}; the "lowering" kind's table
lowering_rules: dict[str, dict[Any, Callable]] = lowering_rules_kind
# primitive -> "plugin 'name' (distribution dist version)"
rule_owner: dict[Any, str] = {}
# (primitive, kind) -> "own" | "derived"
rule_origin: dict[tuple, str] = {}


def all_weak(weak_flags, **params) -> list[bool]:
    """Elementwise weak-type rule: the result is weak only if every operand is."""
    return [all(weak_flags)]


def first_weak(weak_flags, **params) -> list[bool]:
    """Weak-type rule of ops that rearrange or reduce their first operand (shape ops,
    reductions): the result is weak exactly when that operand is."""
    return [weak_flags[0]]


def all_tables() -> dict[str, dict]:
    """Every single-level table by rule-kind name (lowering, per platform, is apart)."""
    return {name: kind.table for name, kind in rule_kinds.items() if not kind.per_platform}


def missing_rule(primitive: Any, kind: str, transformation: str) -> MissingRuleError:
    owner = rule_owner.get(primitive, "no loaded plugin (was its plugin disabled or removed?)")
    return MissingRuleError(primitive, kind, transformation, owner)


# (primitive, operand signature ids..., params items...) -> output aval
abstract_eval_cache: dict[tuple, Any] = {}
_CACHE_LIMIT = 4096
# primitives whose abstract_eval is overridden in some thread (plugax.extend.override):
# their results depend on the thread, so they are never cached while it lasts
_uncached: set = set()
_cache_lock = threading.Lock()
# bumped by every forget_abstract_evals: an evaluation that started before the rules
# changed must not store its (possibly old-rule) result after the cache was emptied
_generation = [0]


def abstract_eval(primitive: Any, avals_in: list, params: dict, transformation: str) -> Any:
    """The output aval(s) of `primitive` applied to `avals_in`, memoized.

    Every bind needs this: staging traces to type each equation, and eager
    evaluation to check its operands exactly as tracing would (so an eager
    call accepts what a traced one accepts, and its result has the same
    type). abstract_eval rules are pure functions of (avals, params), so a
    lookup is far cheaper than rerunning the shape, dtype and weak-type rules.

    The key is the primitive, each operand's signature id (`ShapedArray._sig`,
    the same number as `Array._sig`) and the params; EvalTrace builds the same
    key straight from its Arrays. The cache is emptied when the rule tables
    are rebuilt (`forget_abstract_evals`) and when the config changes
    (enable_x64 changes what dtypes rules produce); unhashable params and
    multiple-result primitives (higher-order ones, whose params hold jaxprs a
    cache would keep alive) skip it. When full it starts over.
    """
    if primitive.multiple_results:
        return run_abstract_eval(primitive, avals_in, params, transformation)
    key = [primitive]   # built by a loop: a comprehension costs a call of its own
    for a in avals_in:
        key.append(a._sig)
    if params:
        key += params.items()
    key = tuple(key)
    try:
        out = abstract_eval_cache.get(key)
    except TypeError:   # an unhashable param value
        return run_abstract_eval(primitive, avals_in, params, transformation)
    if out is None:
        generation = _generation[0]
        out = run_abstract_eval(primitive, avals_in, params, transformation)
        if type(out) is ShapedArray:   # shared: eager results carry it (see interned_aval)
            out = interned_aval(out)
        # under the lock: an override starting in another thread meanwhile either
        # purges this entry or is seen here (see bypass_abstract_eval_cache); a
        # rebuild meanwhile bumped the generation
        with _cache_lock:
            if primitive not in _uncached and generation == _generation[0]:
                if len(abstract_eval_cache) >= _CACHE_LIMIT:
                    abstract_eval_cache.clear()
                abstract_eval_cache[key] = out
    return out


def run_abstract_eval(primitive: Any, avals_in: list, params: dict,
                      transformation: str) -> Any:
    """Call the abstract_eval rule (no cache). A rejection (TypeError, ValueError)
    gets the user's call site appended, so it reads the same whether the
    operation ran eagerly or under a trace, and points at the offending line."""
    rule = abstract_eval_rules.get(primitive)
    if rule is None:
        raise missing_rule(primitive, "abstract_eval", transformation)
    try:
        return rule(ABSTRACT_EVAL_CTX, *avals_in, **params)
    except (TypeError, ValueError) as err:
        _add_call_site(err)
        raise


def _add_call_site(err: Exception) -> None:
    """Append "at file:line (function)", the user's call site, to a rule's error message,
    once (an error re-raised through an enclosing bind keeps the innermost site)."""
    if getattr(err, "_plugax_call_site", False) or not err.args \
            or not isinstance(err.args[0], str):
        return
    err.args = (f"{err.args[0]}\n  at {user_frame()}", *err.args[1:])
    try:
        err._plugax_call_site = True
    except AttributeError:   # an exception type with __slots__: marking is best effort
        pass


def bypass_abstract_eval_cache(primitive: Any, bypass: bool) -> None:
    """Stop (or resume) caching `primitive`'s abstract evaluations, dropping its entries.

    Why: while a scoped override of its abstract_eval rule is active in some
    thread, the result for one signature depends on the thread asking, so no
    entry may be served; EvalTrace's fast path reads the cache directly, so the
    entries must be gone, not just ignored. Other primitives keep their entries.
    """
    with _cache_lock:
        if bypass:
            _uncached.add(primitive)
        else:
            _uncached.discard(primitive)
        for key in [k for k in abstract_eval_cache if k[0] is primitive]:
            del abstract_eval_cache[key]


# primitive -> how many of its (rule kind, platform) table entries hold an override
# dispatcher (plugax.extend.override, in any thread). The VJP tape reads it: a vjp
# rule stands for the jvp rule transposed, so while a primitive's rules are
# overridden somewhere the tape linearizes it with the (dispatched) jvp rule instead.
overridden: dict = {}


def count_override(primitive: Any, delta: int) -> None:
    """Count a dispatcher installed (+1) or removed (-1) for `primitive`."""
    n = overridden.get(primitive, 0) + delta
    if n > 0:
        overridden[primitive] = n
    else:
        overridden.pop(primitive, None)


def forget_abstract_evals() -> None:
    """Empty the abstract_eval cache (the rules changed, or the config did)."""
    with _cache_lock:
        _generation[0] += 1
        abstract_eval_cache.clear()


config.on_change(lambda name, value: forget_abstract_evals())
