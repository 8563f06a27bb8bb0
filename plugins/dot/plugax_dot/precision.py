"""lax.Precision and the canonical form of a `precision=` argument.

As in JAX, precision is a hint to the compiler (XLA's `precision_config` of a
dot or convolution: how many bf16 passes an accelerator may use for f32
operands); it never changes the Python-level result. The primitives carry it
canonicalised, `None` or a pair `(lhs, rhs)` of `Precision` values, so equal
requests give equal params (one compiled program) and the jaxpr prints as
JAX's does: `precision=(Precision.HIGHEST, Precision.HIGHEST)`.
"""
from __future__ import annotations

import enum
from typing import Any

__all__ = ["Precision", "canonicalize_precision"]


class Precision(enum.Enum):
    """lax.Precision: DEFAULT (fastest), HIGH, HIGHEST (full f32)."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value: Any) -> "Precision | None":
        # JAX's spellings: enum names, and the jax.default_matmul_precision aliases
        if isinstance(value, str):
            name = _ALIASES.get(value.lower())
            if name is not None:
                return cls[name]
        return None

    def __repr__(self) -> str:
        return f"Precision.{self.name}"

    def __str__(self) -> str:
        return self.name


_ALIASES = {"default": "DEFAULT", "fastest": "DEFAULT", "bfloat16": "DEFAULT",
            "high": "HIGH", "tensorfloat32": "HIGH", "bfloat16_3x": "HIGH",
            "highest": "HIGHEST", "float32": "HIGHEST"}


def canonicalize_precision(precision: Any, fn_name: str = "dot_general"
                           ) -> tuple[Precision, Precision] | None:
    """None, or `(lhs, rhs)` Precisions, from None / a Precision / a string / a pair."""
    if precision is None:
        return None
    if getattr(precision, "is_dot_algorithm", False):
        # lax.DotAlgorithm / DotAlgorithmPreset (lax_extra.py): accelerator hints that
        # leave the CPU's results unchanged
        return None
    if isinstance(precision, (Precision, str)):
        one = _one(precision, fn_name)
        return (one, one)
    if isinstance(precision, (tuple, list)) and len(precision) == 2:
        return (_one(precision[0], fn_name), _one(precision[1], fn_name))
    raise ValueError(f"{fn_name}: precision argument must be None, a string in "
                     f"{sorted(_ALIASES)}, a lax.Precision value or a tuple of two "
                     f"lax.Precision values or strings; got {precision!r}")


def _one(value: Any, fn_name: str) -> Precision:
    try:
        return value if isinstance(value, Precision) else Precision(value)
    except ValueError:
        raise ValueError(f"{fn_name}: unknown precision {value!r}; expected one of "
                         f"{sorted(_ALIASES)} or a lax.Precision value") from None
