"""`lax.pcast(x, axis_name, to='varying')`: JAX's cast of a value that is the same
on every member of a shard_map's mesh axes to one that may differ (JAX's `pvary`
primitive, the name kept so that jaxprs read alike).

Why it exists when plugax infers varying-ness after tracing (xla_call's vma.py):
the cast is the identity on values, but it changes the derivative. Its transpose
is a psum over the axes, so a replicated parameter cast to varying before it
meets per-device data gets the gradient summed over the devices, inside the
body, as in JAX. JAX also inserts the cast by itself where an invariant value
meets a varying one; plugax cannot while tracing (its values carry no
varying-ness), so there the cast must be written (docs/sharding.md).

The check JAX makes when the cast is bound (the value must not vary over the
axes yet) is made by vma.py's pass over the body, with JAX's error. With
check_vma=False JAX's pcast is a no-op, derivative included: shard_map traces
such a body with a jvp rule that keeps the tangent as it is (shard_map.py).
"""
from __future__ import annotations

from typing import Any

from plugax.extend import (Primitive, RuleSet, Zero, current_trace, declare_collective,
                           eval_trace, instantiate)

__all__ = ["pvary_p", "pcast", "RULES", "LAX"]

pvary_p = declare_collective(Primitive("pvary"))

_OUTSIDE = "pvary should be called under jax.shard_map."      # JAX's ValueError


def _outside(ctx, *args, **params):
    raise ValueError(_OUTSIDE)


def _abstract_eval(ctx, aval, *, axes):
    from .collectives import _check_bound
    _check_bound(axes)
    return aval


def _jvp(ctx, primals, tangents, *, axes):
    out = pvary_p.bind(primals[0], axes=axes)
    if type(tangents[0]) is Zero:
        return out, Zero.from_value(out)
    return out, pvary_p.bind(instantiate(tangents[0]), axes=axes)


def _transpose(ctx, ct, x, *, axes):
    """Each member's copy was used on its own: the input's cotangent is their sum."""
    from .collectives import psum_p
    return [psum_p.bind(instantiate(ct), axes=axes)[0]]


def _vmap(ctx, args, dims, *, axes):
    """Over another axis, per member; over its own, JAX's ValueError (a vmap axis has
    no varying-ness; shard_map's reverse mode, which runs the body as vmaps over the
    mesh axes, overrides this rule with the identity)."""
    if ctx.axis_name in axes:
        raise ValueError(_OUTSIDE)
    return pvary_p.bind(args[0], axes=axes), dims[0]


RULES = [RuleSet(pvary_p, impl=_outside, abstract_eval=_abstract_eval, jvp=_jvp,
                 transpose=_transpose, batching=_vmap,
                 lowering={"default": lambda ctx, x, *, axes: [x]})]

def pcast(x: Any, axis_name: Any, *, to: str) -> Any:
    """`x` (a pytree) cast to vary over the named shard_map axes (`to='varying'`, JAX's
    pcast): the same values, but its derivative is summed over those axes. JAX's other
    targets, 'reduced' and 'unreduced', are types plugax does not model."""
    from plugax.tree_util import tree_map
    if isinstance(axis_name, (set, frozenset)):
        raise TypeError(f"{axis_name=} must be a tuple or a str. Got {axis_name}")
    axes = axis_name if isinstance(axis_name, tuple) else (axis_name,)
    if not axis_name:
        return x
    if to not in ("varying", "reduced", "unreduced"):
        raise ValueError("Got unexpected `to` value. Allowed `to` values are: "
                         "{'varying', 'unreduced', 'reduced'}")
    if to != "varying":
        raise NotImplementedError(f"lax.pcast(..., to={to!r}): plugax does not model JAX's "
                                  f"reduced/unreduced types; only to='varying' is supported")
    if current_trace() is eval_trace:     # eagerly: in no shard_map
        raise ValueError(_OUTSIDE)
    return tree_map(lambda v: pvary_p.bind(v, axes=axes), x)


LAX = {"pcast": pcast}
