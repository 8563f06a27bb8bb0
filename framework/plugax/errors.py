"""Errors plugax raises on purpose. Each names the user's mistake.

They subclass the builtin a user would expect (TypeError, ValueError,
LookupError) so existing `except` clauses keep working.
"""
from __future__ import annotations

from . import first_use as _first_use

__all__ = [
    "PlugaxError", "ConcretizationTypeError", "UnexpectedTracerError",
    "MissingRuleError", "PluginError", "PluginConflictError", "ShapeError",
    "TracerArrayConversionError", "PluginAPIVersionError", "ResourceExhaustedError",
]


class PlugaxError(Exception):
    """Base of every error plugax raises deliberately."""


class ConcretizationTypeError(PlugaxError, TypeError):
    """A concrete Python value (bool, int, index) was needed from an abstract tracer."""


class TracerArrayConversionError(PlugaxError, TypeError):
    """A tracer was converted to a NumPy array (`np.asarray`, `np.array`).

    Always an error, even where the tracer knows a concrete value (a JVP primal):
    the conversion would silently drop what the trace carries (the tangent), and
    a derivative would come out wrong instead of failing."""


class UnexpectedTracerError(PlugaxError, TypeError):
    """A tracer escaped the transformation that created it and was used later."""


class ShapeError(PlugaxError, TypeError):
    """Operands of a primitive have incompatible shapes or dtypes."""


class MissingRuleError(PlugaxError, NotImplementedError):
    """A primitive lacks the rule a transformation needs."""

    def __init__(self, primitive, rule_kind: str, transformation: str, owner: str):
        self.primitive, self.rule_kind, self.transformation = primitive, rule_kind, transformation
        super().__init__(
            f"primitive '{primitive}' has no {rule_kind} rule, which {transformation} needs; "
            f"it is defined by {owner}. Add a '{rule_kind}' rule to its RuleSet "
            f"(or an 'expand' decomposition from which it can be derived).")


class PluginError(PlugaxError, RuntimeError):
    """A plugin failed to load or declared something inconsistent."""


class PluginConflictError(PluginError):
    """Two plugins define the same primitive and neither declares an override."""


class PluginAPIVersionError(PluginError, TypeError):
    """A plugin uses a name or signature of another plugin API version."""


class ResourceExhaustedError(PlugaxError, MemoryError):
    """An eager result could never fit in memory (XLA's RESOURCE_EXHAUSTED, eagerly)."""


# Plugins add errors here (the shape family's NonConcreteBooleanIndexError, as in
# jax.errors) when they load, on first use: a name not here yet loads them.
_MISSING = object()


def __getattr__(name: str):
    value = _first_use.lookup_after_load(globals(), name, _MISSING)
    if value is _MISSING:
        raise AttributeError(f"module 'plugax.errors' has no attribute {name!r}")
    return value


def __dir__() -> list[str]:
    return _first_use.names_after_load(globals())
