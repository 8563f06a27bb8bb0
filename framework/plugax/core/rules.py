"""The rule tables: one plain dict per rule kind, keyed by Primitive.

Why plain dicts: `bind` runs for every operation, and a dict lookup costs a few
tens of nanoseconds where a pluggy hook call costs microseconds. The plugin
registry fills these tables once from the plugins' RuleSets (and refills them,
in place, when the set of plugins changes); nothing else writes them.
"""
from __future__ import annotations

from typing import Any, Callable

from ..config import config
from ..errors import MissingRuleError
from .frames import user_frame

__all__ = [
    "RuleContext", "impl_rules", "abstract_eval_rules", "jvp_rules", "vmap_rules",
    "transpose_rules", "partial_eval_rules", "partial_eval_jaxpr_rules", "lowering_rules",
    "weak_type_rules", "all_weak", "first_weak", "rule_owner", "rule_origin", "missing_rule", "all_tables",
    "IMPL_CTX", "ABSTRACT_EVAL_CTX", "JVP_CTX", "TRANSPOSE_CTX", "abstract_eval",
    "run_abstract_eval", "abstract_eval_cache", "forget_abstract_evals",
]


class RuleContext:
    """The first argument of every rule.

    A context object instead of extra positional arguments means the kernel can
    add fields later (a new transformation wants to pass something) without
    breaking any plugin's rule signature.

    Fields: `transformation` ("eval", "abstract_eval", "jvp", "vmap",
    "transpose", "partial_eval"), `axis_size` (vmap only, else None).
    """

    __slots__ = ("transformation", "axis_size")

    def __init__(self, transformation: str, axis_size: int | None = None):
        self.transformation = transformation
        self.axis_size = axis_size

    def __repr__(self) -> str:
        extra = f", axis_size={self.axis_size}" if self.axis_size is not None else ""
        return f"RuleContext({self.transformation!r}{extra})"


IMPL_CTX = RuleContext("eval")
ABSTRACT_EVAL_CTX = RuleContext("abstract_eval")
JVP_CTX = RuleContext("jvp")
TRANSPOSE_CTX = RuleContext("transpose")

impl_rules: dict[Any, Callable] = {}
abstract_eval_rules: dict[Any, Callable] = {}
jvp_rules: dict[Any, Callable] = {}
vmap_rules: dict[Any, Callable] = {}
transpose_rules: dict[Any, Callable] = {}
partial_eval_rules: dict[Any, Callable] = {}
partial_eval_jaxpr_rules: dict[Any, Callable] = {}
weak_type_rules: dict[Any, Callable] = {}
# platform -> {primitive: rule}
lowering_rules: dict[str, dict[Any, Callable]] = {}
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
    """Every single-level table by rule-kind name (used by the registry and the CLI)."""
    return {"impl": impl_rules, "abstract_eval": abstract_eval_rules, "jvp": jvp_rules,
            "vmap": vmap_rules, "transpose": transpose_rules,
            "partial_eval": partial_eval_rules, "partial_eval_jaxpr": partial_eval_jaxpr_rules,
            "weak_type": weak_type_rules}


def missing_rule(primitive: Any, kind: str, transformation: str) -> MissingRuleError:
    owner = rule_owner.get(primitive, "no loaded plugin (was its plugin disabled or removed?)")
    return MissingRuleError(primitive, kind, transformation, owner)


# (primitive, operand signature ids..., params items...) -> output aval
abstract_eval_cache: dict[tuple, Any] = {}
_CACHE_LIMIT = 4096


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
        out = run_abstract_eval(primitive, avals_in, params, transformation)
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


def forget_abstract_evals() -> None:
    """Empty the abstract_eval cache (the rules changed, or the config did)."""
    abstract_eval_cache.clear()


config.on_change(lambda name, value: forget_abstract_evals())
