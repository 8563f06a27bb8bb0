"""Typed records a plugin hands to the kernel: `RuleSet`, `PluginInfo`, `Transformation`.

Every rule takes a `RuleContext` first (see core/rules.py). The built-in rule
kinds (plugin API version 2):

=====================  ====================================================================
rule kind              signature
=====================  ====================================================================
impl                   ``impl(ctx, *arrays, **params) -> out``              NumPy in, NumPy out
abstract_eval          ``abstract_eval(ctx, *avals, **params) -> aval``    required
jvp                    ``jvp(ctx, primals, tangents, **params) -> (primal_out, tangent_out)``
                       tangents may be ``Zero(aval)``; return ``Zero`` for a zero tangent
batching               ``batching(ctx, args, dims, **params) -> (out, out_dim)``
                       ``dims[i]`` is an int or None (not batched); ``ctx.axis_size``
transpose              ``transpose(ctx, ct, *args, **params) -> [ct_in or None, ...]``
                       linear args arrive as ``UndefPrimal(aval)``; ``ct`` may be ``Zero``
partial_eval           ``partial_eval(ctx, trace, *tracers, **params) -> out`` (higher-order
                       primitives: split into a known and a staged part)
lowering               ``{platform: rule}``; ``rule(ctx, *operands, **params) -> [values]``
=====================  ====================================================================

Not a rule kind but a decomposition: ``expand(ctx, *args, **params) -> out``,
written with other primitives; every rule kind whose transformation knows how
to derive from a decomposition (all built-in ones, and third-party ones that
say so) is derived from it when not given.

Rule kinds defined by other distributions (`plugax.extend.define_rule_kind`)
are given by keyword the same way: ``RuleSet(sin_p, jet=sin_jet)``.

Multiple-result primitives take and return lists where the table says ``out``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional

from ..core.rules import rule_kinds
from ..core.trace import Primitive
from ..errors import PluginAPIVersionError

__all__ = ["RuleSet", "PluginInfo", "Transformation", "VERSION_1_NAMES"]

# keyword -> what plugin API version 2 did with it
VERSION_1_NAMES = {
    "vmap": "is called 'batching' in plugin API version 2 (JAX's name): RuleSet(batching=...)",
    "weak_type": "was removed in plugin API version 2: the abstract_eval rule's weak_type is "
                 "the only source of weak types",
    "partial_eval_jaxpr": "was removed in plugin API version 2 (no kernel code read it)",
}


class RuleSet:
    """Rules for one primitive, from one plugin.

    A RuleSet with an ``abstract_eval`` (or an ``expand``) *defines* the
    primitive; one without only *adds* rules of other kinds to a primitive
    another plugin defines (how a transformation's distribution gives its rules
    for the built-in primitives). ``overrides=True`` replaces the rules it gives
    for a primitive that is already defined.
    """

    __slots__ = ("primitive", "rules", "lowering", "expand", "overrides")

    def __init__(self, primitive: Primitive, *, lowering: Mapping[str, Callable] | None = None,
                 expand: Optional[Callable] = None, overrides: bool = False,
                 **rules: Optional[Callable]):
        for name in rules:
            if name in VERSION_1_NAMES:
                raise PluginAPIVersionError(
                    f"RuleSet({primitive}, {name}=...): '{name}' {VERSION_1_NAMES[name]}. "
                    f"See 'Changes in version 2' in docs/plugin-api.md.")
        object.__setattr__(self, "primitive", primitive)
        object.__setattr__(self, "rules", {k: v for k, v in rules.items() if v is not None})
        object.__setattr__(self, "lowering", dict(lowering or {}))
        object.__setattr__(self, "expand", expand)
        object.__setattr__(self, "overrides", overrides)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("RuleSet is immutable: build a new one")

    def __getattr__(self, kind: str) -> Optional[Callable]:
        # rs.jvp, rs.impl, rs.jet: the rule of that kind, or None
        if kind.startswith("__"):
            raise AttributeError(kind)
        return self.rules.get(kind)

    @property
    def defines(self) -> bool:
        """Whether this RuleSet defines its primitive (rather than adding rules to it)."""
        return "abstract_eval" in self.rules or self.expand is not None

    def replace(self, **changes: Any) -> "RuleSet":
        """A copy with some rules (or `primitive`, `lowering`, `expand`, `overrides`)
        replaced; a rule replaced by None is dropped."""
        fields = {"primitive": self.primitive, **self.rules, "lowering": self.lowering,
                  "expand": self.expand, "overrides": self.overrides, **changes}
        return RuleSet(**fields)

    def kinds(self) -> list[str]:
        """The rule kinds this RuleSet gives, lowering included."""
        return [*self.rules, *(["lowering"] if self.lowering else [])]

    def problems(self) -> list[str]:
        """What is malformed about this RuleSet (empty when it is well formed)."""
        found = []
        if not isinstance(self.primitive, Primitive):
            found.append(f"'primitive' must be a plugax Primitive, got {self.primitive!r}")
        if self.defines and "impl" not in self.rules and self.expand is None:
            found.append("an 'impl' rule is required (or an 'expand' to derive it)")
        if not self.defines and not self.overrides and not self.rules and not self.lowering:
            found.append("it gives no rules (a RuleSet that defines a primitive needs an "
                         "abstract_eval and an impl rule, or an expand)")
        for kind, rule in [*self.rules.items(), ("expand", self.expand)]:
            if kind != "expand" and kind not in rule_kinds:
                found.append(f"unknown rule kind '{kind}' (defined kinds: "
                             f"{', '.join(sorted(rule_kinds))}; a distribution defines a new "
                             f"one with plugax.extend.define_rule_kind)")
            elif rule is not None and not callable(rule):
                found.append(f"rule '{kind}' must be callable, got {type(rule).__name__}")
        if not isinstance(self.lowering, Mapping) or \
                not all(callable(r) for r in self.lowering.values()):
            found.append("'lowering' must map platform names to rules")
        return found

    def __repr__(self) -> str:
        what = "overrides" if self.overrides else "defines" if self.defines else "adds to"
        return f"RuleSet({what} {self.primitive}: {', '.join(self.kinds())})"


@dataclass(frozen=True)
class PluginInfo:
    """What a plugin says about itself.

    `api_versions` is the inclusive range of `plugax.plugin_api_version` the
    plugin was written for. `requires` names the other plugins (by entry-point
    name) whose primitives or front-end functions it uses.
    """

    name: str
    api_versions: tuple[int, int] = (2, 2)
    requires: tuple[str, ...] = ()
    description: str = ""
    version: Optional[str] = None
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Transformation:
    """A transformation, contributed through the `plugax_transformations` hook.

    Why a record: a transformation is a plugin like a primitive family. The
    kernel's own (eval, jvp, vmap, transpose, partial eval, lowering) are
    registered through the same hook, so a third party's (plugax-jet) has
    exactly the powers they have.

    - `name`: what users call it ("jvp", "vmap", "jet").
    - `rule_kind`: the rule kind it reads (defined with `define_rule_kind`).
    - `trace`: its Trace class, if it interprets by tracing (documentation and
      `plugax plugins`).
    - `jaxpr_transform`: its whole-jaxpr form (``jvp_jaxpr``, ``batch_jaxpr``),
      what higher-order primitives call on their bodies.
    - `derive`: ``derive(primitive, expand) -> rule`` builds this kind's rule
      from a primitive's decomposition; higher-order primitives that give an
      ``expand`` (a call inlines its body) get the rule the same way.
    - `check`: ``check(case)`` the conformance kit runs for every declared test
      case of a primitive that has a rule of this kind; raises on a failure.
    """

    name: str
    rule_kind: str
    description: str = ""
    trace: Optional[type] = None
    jaxpr_transform: Optional[Callable] = None
    derive: Optional[Callable] = None
    check: Optional[Callable] = None
