"""What a lowering rule returned, checked against the equation it lowers.

A lowering rule that returns the wrong number of values, or a value of the
wrong shape or element type, would otherwise fail far from its cause: inside
MLIR's verifier, or in a later equation's builder, with text that names
neither the primitive nor the plugin. The walk (`lower.py`) checks every
rule's result here, against the equation's output avals (which the
primitive's abstract_eval rule produced), so the error names the primitive,
the rule (lowering, for which platform), the plugin that gave it, and what
was expected against what came back.

The check costs about a microsecond per equation (isinstance tests, a cached
lookup of the expected MLIR type, one type comparison per output), small
beside building the operation itself; lowering runs once per compile.
"""
from __future__ import annotations

from typing import Any, Callable, NoReturn, Sequence

from ..core import rules as R
from ..errors import PlugaxError
from .mlir import dialects, ir_type

__all__ = ["LoweringRuleError", "checked_results", "rule_source"]


class LoweringRuleError(PlugaxError, TypeError):
    """A lowering rule returned something other than one MLIR value per output,
    each of the type the primitive's abstract values say."""


def rule_source(primitive: Any, platform_key: str) -> str:
    """Who gave `primitive` its lowering rule for `platform_key` ("cpu", "default"):
    its defining plugin, an overriding plugin, or a derivation from `expand`."""
    owner = R.rule_owner.get(primitive, "no loaded plugin")
    origin = R.rule_origin.get((primitive, f"lowering:{platform_key}"), "own")
    if origin == "derived":
        return f"derived from the expand rule given by {owner}"
    if origin.startswith("from "):
        return f"plugin '{origin[5:]}', overriding the rules of {owner}"
    return owner


def checked_results(outs: Any, primitive: Any, platform_key: str, avals_out: Sequence[Any],
                    expected_type: Callable[[Any], Any] = ir_type) -> list:
    """The MLIR values `outs` of a lowering rule, as a list, once checked.

    A single-result primitive's rule may return its value bare (or the
    operation that makes it); a multiple-results rule returns a sequence
    (a list, a tuple, an operation's `results`). `expected_type(aval)` is the MLIR
    type of an output of that aval (the walk passes its module's cached one)."""
    ir = dialects().ir
    if isinstance(outs, (list, tuple)):
        values = list(outs)
    elif not primitive.multiple_results and isinstance(outs, (ir.Value, ir.OpView, ir.Operation)):
        values = [outs]
    elif primitive.multiple_results and isinstance(outs, ir.OpResultList):
        values = list(outs)
    else:
        _fail(primitive, platform_key, f"returned {_describe(outs)}; it must return " + (
            "a list of MLIR values, one per output" if primitive.multiple_results
            else "an MLIR value (or a list holding one)"))
    if len(values) != len(avals_out):
        _fail(primitive, platform_key,
              f"returned {len(values)} value{'s' * (len(values) != 1)} for "
              f"{len(avals_out)} output{'s' * (len(avals_out) != 1)} "
              f"({', '.join(a.str_short() for a in avals_out)})")
    for i, (value, aval) in enumerate(zip(values, avals_out)):
        if not isinstance(value, ir.Value):
            if isinstance(value, (ir.OpView, ir.Operation)) and len(value.results) == 1:
                value = values[i] = value.results[0]   # an op with one result stands for it
            else:
                _fail(primitive, platform_key, f"returned {_describe(value)} as output {i}; "
                      f"expected an MLIR value of type {expected_type(aval)}")
        if value.type != (want := expected_type(aval)):
            _fail(primitive, platform_key,
                  f"returned a value of type {value.type} as output {i}; the primitive's "
                  f"abstract value there is {aval.str_short()}, so expected {want}")
    return values


def _describe(x: Any) -> str:
    if x is None or isinstance(x, (bool, int, float, complex, str)):
        return repr(x)
    if isinstance(x, dialects().ir.Value):
        return f"a single MLIR value (of type {x.type})"
    return f"a {type(x).__module__}.{type(x).__qualname__}"


def _fail(primitive: Any, platform_key: str, what: str) -> NoReturn:
    raise LoweringRuleError(
        f"the lowering rule (platform '{platform_key}') of primitive '{primitive}', "
        f"given by {rule_source(primitive, platform_key)}, {what}")
