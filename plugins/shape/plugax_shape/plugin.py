"""Hook implementations of the shape family.

Primitives live in three modules by what they do to the operand (structural:
the whole array; slicing: rectangular windows; indexing: integer-array
indexing). Each module exports its RuleSets and its `plugax.lax` functions;
`numpy_api` and `getitem` are front ends written over those.
"""
from __future__ import annotations

from typing import Any, Callable

from plugax.extend import PluginInfo, hookimpl

from . import (advanced, gather_scatter, getitem, index_frontends, indexing, lax_extra,
               numpy_api,
               numpy_layout, scatter, slicing,
               structural)
from . import numpy_edit, numpy_index_tricks


@hookimpl
def plugax_plugin_info() -> PluginInfo:
    # elementwise: add, sub, lt, clamp, select_n in batching and transpose rules, index
    # normalisation and promotion. (reduce_sum, which transposes pad, is the kernel's.)
    return PluginInfo(name="shape", requires=("elementwise",),
                      description="broadcasting, reshaping, slicing, padding and indexing")


@hookimpl
def plugax_primitive_rules() -> list:
    return [*structural.RULES, *slicing.RULES, *indexing.RULES, *gather_scatter.RULES,
            *scatter.RULES]


@hookimpl
def plugax_test_cases() -> list:
    from .cases import cases  # imports plugax.testing: only when a test suite asks
    return cases()


@hookimpl
def plugax_frontend() -> dict[str, dict[str, Callable]]:
    return {"lax": {**structural.LAX, **slicing.LAX, **indexing.LAX, **gather_scatter.LAX,
                    **scatter.LAX, **index_frontends.LAX, **lax_extra.LAX},
            "numpy": {**numpy_api.FUNCTIONS, **index_frontends.NUMPY, **numpy_layout.NUMPY,
                      **numpy_edit.NUMPY, **numpy_index_tricks.NUMPY},
            # jax.ops: the segment reductions (the namespace is created on first use)
            "ops": dict(index_frontends.OPS),
            # jax.errors.NonConcreteBooleanIndexError's counterpart
            "errors": {"NonConcreteBooleanIndexError": advanced.NonConcreteBooleanIndexError}}


def _shape_args(args: tuple) -> Any:
    """`x.reshape(2, 3)` and `x.reshape((2, 3))` both work, as in NumPy."""
    return args[0] if len(args) == 1 else args


@hookimpl
def plugax_array_methods() -> dict[str, Any]:
    np_ = numpy_api
    return {
        "__getitem__": getitem.getitem,
        "reshape": lambda self, *shape, order="C": np_.reshape(self, _shape_args(shape), order),
        "ravel": lambda self, order="C": np_.ravel(self, order),
        "flatten": lambda self, order="C": np_.ravel(self, order),
        "transpose": lambda self, *axes: np_.transpose(self, _shape_args(axes) if axes else None),
        "T": property(lambda self: np_.transpose(self)),
        "squeeze": lambda self, axis=None: np_.squeeze(self, axis),
        "swapaxes": lambda self, a, b: np_.swapaxes(self, a, b),
        "at": property(getitem._IndexUpdateHelper),
        # jax.Array's methods over the shape family's NumPy functions
        "take": np_.FUNCTIONS["take"], "repeat": numpy_layout.NUMPY["repeat"],
        "copy": lambda self: numpy_edit.NUMPY["copy"](self),
    }
