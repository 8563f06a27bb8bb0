"""Typed records a plugin hands to the kernel: `RuleSet` and `PluginInfo`.

Every rule takes a `RuleContext` first (see core/rules.py). Signatures:

=====================  ====================================================================
rule kind              signature
=====================  ====================================================================
impl                   ``impl(ctx, *arrays, **params) -> out``              NumPy in, NumPy out
abstract_eval          ``abstract_eval(ctx, *avals, **params) -> aval``    required
jvp                    ``jvp(ctx, primals, tangents, **params) -> (primal_out, tangent_out)``
                       tangents may be ``Zero(aval)``; return ``Zero`` for a zero tangent
vmap                   ``vmap(ctx, args, dims, **params) -> (out, out_dim)``
                       ``dims[i]`` is an int or None (not batched); ``ctx.axis_size``
transpose              ``transpose(ctx, ct, *args, **params) -> [ct_in or None, ...]``
                       linear args arrive as ``UndefPrimal(aval)``; ``ct`` may be ``Zero``
lowering               ``{platform: rule}``; ``rule(ctx, *operands, **params) -> [values]``
partial_eval           trace-level partial evaluation of a higher-order primitive
partial_eval_jaxpr     jaxpr-level partial evaluation of a higher-order primitive
expand                 ``expand(*args, **params) -> out`` written with other primitives;
                       impl, abstract_eval, jvp, vmap and transpose are derived from it
                       when not given
weak_type              ``weak_type(weak_flags, **params) -> [bool, ...]`` a fast path for
                       eager evaluation; derived from abstract_eval when absent
=====================  ====================================================================

Multiple-result primitives take and return lists where the table says ``out``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional

from ..core.trace import Primitive

__all__ = ["RuleSet", "PluginInfo", "RULE_KINDS"]

RULE_KINDS = ("impl", "abstract_eval", "jvp", "vmap", "transpose", "lowering",
              "partial_eval", "partial_eval_jaxpr")


@dataclass(frozen=True)
class RuleSet:
    """Everything the kernel knows about one primitive, from one plugin."""

    primitive: Primitive
    abstract_eval: Optional[Callable] = None
    impl: Optional[Callable] = None
    jvp: Optional[Callable] = None
    vmap: Optional[Callable] = None
    transpose: Optional[Callable] = None
    lowering: Mapping[str, Callable] = field(default_factory=dict)
    partial_eval: Optional[Callable] = None
    partial_eval_jaxpr: Optional[Callable] = None
    expand: Optional[Callable] = None
    weak_type: Optional[Callable] = None
    overrides: bool = False

    def problems(self) -> list[str]:
        """What is malformed about this RuleSet (empty when it is well formed)."""
        found = []
        if not isinstance(self.primitive, Primitive):
            found.append(f"'primitive' must be a plugax Primitive, got {self.primitive!r}")
        if self.abstract_eval is None and self.expand is None:
            found.append("an 'abstract_eval' rule is required (or an 'expand' to derive it)")
        if self.impl is None and self.expand is None:
            found.append("an 'impl' rule is required (or an 'expand' to derive it)")
        for kind in ("abstract_eval", "impl", "jvp", "vmap", "transpose", "partial_eval",
                     "partial_eval_jaxpr", "expand", "weak_type"):
            rule = getattr(self, kind)
            if rule is not None and not callable(rule):
                found.append(f"rule '{kind}' must be callable, got {type(rule).__name__}")
        if not isinstance(self.lowering, Mapping):
            found.append("'lowering' must map platform names to rules")
        return found


@dataclass(frozen=True)
class PluginInfo:
    """What a plugin says about itself.

    `api_versions` is the inclusive range of `plugax.plugin_api_version` the
    plugin was written for. `requires` names the other plugins (by entry-point
    name) whose primitives or front-end functions it uses.
    """

    name: str
    api_versions: tuple[int, int] = (1, 1)
    requires: tuple[str, ...] = ()
    description: str = ""
    version: Optional[str] = None
    extra: Mapping[str, Any] = field(default_factory=dict)
