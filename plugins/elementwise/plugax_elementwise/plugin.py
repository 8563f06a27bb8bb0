"""Hook implementations of the elementwise family.

The primitives live in four modules by kind (arithmetic, transcendental, logic,
selection); the user-facing functions in lax_api (strict, JAX's lax), numpy_api
(promoting and broadcasting) and methods (operators). `promote` holds the
NumPy-style promotion that other families' numpy functions reuse.
"""
from __future__ import annotations

from plugax.extend import PluginInfo, RuleSet, hookimpl

from . import arithmetic, bits, complex_ops, logic, selection, transcendental
from .lax_api import LAX
from .methods import METHODS
from .numpy_complex import METHODS_COMPLEX, NUMPY_COMPLEX
from . import numpy_api
from .numpy_api import NUMPY
from .numpy_extra import NUMPY_EXTRA
from .numpy_more import NUMPY_MORE
from .scipy_special import SCIPY_SPECIAL


@hookimpl
def plugax_plugin_info() -> PluginInfo:
    # The lowest family: broadcast_in_dim, reduce_sum and convert_element_type are the
    # kernel's (plugax.structural), so it requires no other family.
    return PluginInfo(name="elementwise", requires=(),
                      description="elementwise arithmetic, math, comparison, logic, "
                                  "selection and conversion")


@hookimpl
def plugax_primitive_rules() -> list[RuleSet]:
    return [*arithmetic.RULES, *transcendental.RULES, *logic.RULES, *selection.RULES,
            *bits.RULES, *complex_ops.RULES]


@hookimpl
def plugax_frontend() -> dict:
    return {"lax": {**LAX, **bits.LAX},
            "numpy": {**NUMPY, **NUMPY_EXTRA, **NUMPY_MORE, **NUMPY_COMPLEX},
            "scipy.special": SCIPY_SPECIAL}


@hookimpl
def plugax_rules_published() -> None:
    # the new tables are live: the eager fast paths look again at which impl rules
    # are this family's own (another plugin's override may have replaced one)
    numpy_api.refresh_eager_paths()


@hookimpl
def plugax_array_methods() -> dict:
    return {**METHODS, **METHODS_COMPLEX}


@hookimpl
def plugax_test_cases() -> list:
    from .cases import cases  # imports plugax.testing: only when a test suite asks
    return cases()
