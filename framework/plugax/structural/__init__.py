"""The structural primitives: what the transformations themselves need.

The kernel's transformations move and sum data while they work, whatever
primitives the program uses:

=======================  ==================================================================
primitive                why the kernel needs it
=======================  ==================================================================
``add_any``              differentiation sums (co)tangents: a jvp of several operands,
                         a backward pass into a variable used twice (`add_tangents`)
``broadcast_in_dim``     vmap gives an unbatched value a batch axis; the transpose of
                         reduce_sum; zeros that stay one literal when traced
``reduce_sum``           vmap sums a cotangent over the batch when its input was
                         unbatched; the transpose of broadcast_in_dim
``transpose``            vmap moves batch axes (`moveaxis`); reshape's transpose
``reshape``              jacfwd/jacrev shape Jacobian blocks; undoing a broadcast of
                         size-1 axes in broadcast_in_dim's transpose
``convert_element_type`` every family converts dtypes with it (promotion, ``dtype=``,
                         predicates); it needs no other primitive, so the lowest family
                         depends on the kernel alone
``split``                jacfwd/jacrev cut the Jacobian of a stacked basis into one block
                         per leaf (one vmap, one evaluation of the function)
``concatenate``          split's transpose (and split is its)
=======================  ==================================================================

That is the whole set: each one's rules (jvp, transpose, batching, lowering)
use only primitives of this set, so the kernel, with no family loaded, can run
vmap, jvp and grad of any primitive (a test's toy primitive included). squeeze,
expand_dims and select_n are not here: no transformation needs them (the
shape and elementwise families own them).

They are registered like every primitive, by a plugin (`structural_plugin`,
added by `plugax/__init__.py` next to the custom-derivative one), which also
contributes the `plugax.lax` functions of the same names. Kernel modules call
the functions here directly, never through `plugax.lax`; families reach them
through `plugax.extend`.
"""
from __future__ import annotations

from typing import Callable

from ..loader.hookspec import hookimpl
from ..loader.ruleset import PluginInfo, RuleSet
from . import add_any as _add_any, broadcast as _broadcast, convert as _convert, \
    layout as _layout, split as _split
from .add_any import add_any, add_any_p, add_tangents
from .broadcast import (bdim_at_front, broadcast_batched, broadcast_in_dim, broadcast_in_dim_p,
                        move_batch_axis, reduce_sum, reduce_sum_p, user_reduction_axes)
from .convert import convert_element_type, convert_element_type_p, convert_value
from .layout import moveaxis, reshape, reshape_p, transpose, transpose_p
from .split import concatenate, concatenate_p, split, split_p
from .rules import (axes_removing_batching, checked_impl, linear_jvp, shape_error,
                    unary_transpose)

__all__ = ["add_any", "add_any_p", "add_tangents", "broadcast_in_dim", "broadcast_in_dim_p",
           "reduce_sum", "reduce_sum_p", "convert_element_type", "convert_element_type_p",
           "convert_value", "moveaxis", "reshape", "reshape_p", "transpose", "transpose_p",
           "concatenate", "concatenate_p", "split", "split_p", "bdim_at_front",
           "broadcast_batched", "move_batch_axis", "user_reduction_axes",
           "axes_removing_batching", "checked_impl", "linear_jvp", "shape_error", "unary_transpose",
           "structural_plugin", "LAX"]

RULES: list[RuleSet] = [*_add_any.RULES, *_layout.RULES, *_broadcast.RULES, *_convert.RULES,
                        *_split.RULES]

# add_any is no lax function in JAX either (it is `plugax.extend.add_any`)
LAX: dict[str, Callable] = {
    "broadcast_in_dim": broadcast_in_dim, "reshape": reshape,
    "transpose": transpose, "reduce_sum": reduce_sum,
    "convert_element_type": convert_element_type,
    "concatenate": concatenate, "split": split,
}


class _StructuralPlugin:
    """The structural primitives, registered through the same path as every family."""

    @hookimpl
    def plugax_plugin_info(self) -> PluginInfo:
        return PluginInfo(name="structural", description="the primitives transformations "
                          "need: add_any, broadcast_in_dim, reduce_sum, transpose, "
                          "reshape, convert_element_type, concatenate, split")

    @hookimpl
    def plugax_primitive_rules(self) -> list[RuleSet]:
        return list(RULES)

    @hookimpl
    def plugax_frontend(self) -> dict[str, dict[str, Callable]]:
        return {"lax": dict(LAX)}


structural_plugin = _StructuralPlugin()
