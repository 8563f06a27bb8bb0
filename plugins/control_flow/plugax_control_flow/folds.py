"""lax functions that fold a user's function: reduce (a computation over axes) and
scatter_apply (a function applied at scattered positions).

Why in the control-flow family: beyond the cases that are one reduction primitive, each
loops (`scan`, `fori_loop`) over the user's function, and the loops are this family's;
the reductions and shape families, which these also use, sit below it.

- `reduce(operands, init_values, computation, dimensions)` does what JAX does: when the
  computation traces to one add/mul/max/min/and/or/xor and the init value is that
  monoid's identity, it is that reduction primitive (keeping its derivative and
  lowering); otherwise it folds `computation` over the reduced elements, in order, with
  `lax.scan` (differentiable, batchable and jittable like any scan; XLA's reduce may
  associate differently, which matters only for a non-associative computation, whose
  result XLA leaves unspecified).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from plugax.extend import get_aval, user_reduction_axes

__all__ = ["LAX"]


def lowest(dtype: np.dtype) -> Any:
    """The identity of max: -inf, or the smallest integer (False for bool)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return False
    return np.iinfo(dtype).min if dtype.kind in "iu" else -np.inf


def highest(dtype: np.dtype) -> Any:
    """The identity of min: inf, or the largest integer (True for bool)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return True
    return np.iinfo(dtype).max if dtype.kind in "iu" else np.inf


# monoid primitive name -> (lax reduction name, identity(dtype) or None when none fits)
_MONOIDS: dict[str, tuple[str, Callable]] = {
    "add": ("reduce_sum", lambda d: 0),
    "mul": ("reduce_prod", lambda d: 1),
    "max": ("reduce_max", lowest),
    "min": ("reduce_min", highest),
    "and": ("reduce_and", lambda d: True if d == np.bool_ else -1 if d.kind == "i"
            else np.iinfo(d).max),
    "or": ("reduce_or", lambda d: 0),
    "xor": ("reduce_xor", lambda d: 0),
}


def _concrete(x: Any) -> np.ndarray | None:
    from plugax.extend import Tracer
    if isinstance(x, Tracer):
        return None
    return np.asarray(x)


def _monoid(computation: Callable, operand: Any, init: Any) -> str | None:
    """The lax reduction `computation` is with `init` as its identity, or None."""
    import plugax
    aval = get_aval(operand)
    scalar = np.zeros((), aval.dtype)
    try:
        closed = plugax.make_jaxpr(computation)(scalar, scalar)
    except Exception:   # not traceable on scalars as a binary function: fold it
        return None
    jaxpr = closed.jaxpr
    if len(jaxpr.eqns) != 1 or len(jaxpr.outvars) != 1 or closed.consts:
        return None
    eqn = jaxpr.eqns[0]
    name = eqn.primitive.name
    if name not in _MONOIDS or list(eqn.invars) != list(jaxpr.invars) \
            or eqn.outvars[0] is not jaxpr.outvars[0]:
        return None
    reduction, identity = _MONOIDS[name]
    if name in ("and", "or", "xor") and aval.dtype.kind not in "biu":
        return None
    value = _concrete(init)
    if value is None or value.shape != ():
        return None
    if value.astype(aval.dtype) != np.asarray(identity(aval.dtype)).astype(aval.dtype):
        return None
    return reduction


def reduce(operands: Any, init_values: Any, computation: Callable[[Any, Any], Any],
           dimensions: Sequence[int]) -> Any:
    """Reduce `operands` (an array or a pytree of arrays of one shape) over `dimensions`
    with `computation(accumulated, element)`, starting from `init_values` (the same
    pytree of scalars)."""
    import plugax.lax as lax
    import plugax.numpy as jnp
    from plugax.tree_util import tree_flatten, tree_unflatten
    flat_ops, tree = tree_flatten(operands)
    flat_init, init_tree = tree_flatten(init_values)
    if init_tree != tree:
        raise TypeError(f"lax.reduce: operands and init_values must have the same tree "
                        f"structure, got {tree} and {init_tree}")
    if not flat_ops:
        raise TypeError("lax.reduce needs at least one operand")
    shapes = {get_aval(x).shape for x in flat_ops}
    if len(shapes) > 1:
        raise TypeError(f"lax.reduce: the operands must have one shape, got "
                        f"{sorted(shapes)}")
    shape = shapes.pop()
    dims = user_reduction_axes("lax.reduce", get_aval(flat_ops[0]), dimensions)
    for x, init in zip(flat_ops, flat_init):
        if np.shape(init) != () and get_aval(init).shape != ():
            raise TypeError(f"lax.reduce: init values must be scalars, got one of shape "
                            f"{get_aval(init).shape}")
    inits = [lax.convert_element_type(i, get_aval(x).dtype) for x, i in zip(flat_ops, flat_init)]
    if len(flat_ops) == 1:
        name = _monoid(computation, flat_ops[0], flat_init[0])
        if name is not None:
            out = getattr(lax, name)(flat_ops[0], dims)
            return tree_unflatten(tree, [out])
    kept = tuple(i for i in range(len(shape)) if i not in dims)
    rest = tuple(shape[i] for i in kept)
    n = int(np.prod([shape[i] for i in dims], dtype=np.int64))
    xs = [jnp.reshape(jnp.transpose(x, dims + kept), (n,) + rest) for x in flat_ops]
    carry0 = [lax.broadcast_in_dim(i, rest, ()) for i in inits]

    def body(carry, x):
        out = computation(tree_unflatten(tree, carry), tree_unflatten(tree, x))
        flat_out, out_tree = tree_flatten(out)
        if out_tree != tree:
            raise TypeError(f"lax.reduce: the computation must return the operands' "
                            f"structure {tree}, got {out_tree}")
        return [lax.convert_element_type(o, get_aval(c).dtype) for o, c in
                zip(flat_out, carry)], None
    if n == 0:
        return tree_unflatten(tree, carry0)
    final, _ = lax.scan(body, carry0, xs)
    return tree_unflatten(tree, final)


def scatter_apply(operand: Any, scatter_indices: Any, func: Callable[[Any], Any],
                  dimension_numbers: Any, *, update_shape: Sequence[int] = (),
                  indices_are_sorted: bool = False, unique_indices: bool = False,
                  mode: Any = None) -> Any:
    """`func` applied to the elements of operand that the scatter addresses, once per
    time each is addressed (XLA applies the update computation per index, so an element
    hit twice gets func(func(x))).

    Done as: count the hits per element with scatter_add of ones, then apply the
    (elementwise) func that many times where the count allows (a fori_loop up to the
    largest count)."""
    import plugax.lax as lax
    aval = get_aval(operand)
    ones = lax.full(tuple(update_shape), 1, np.int32)
    hits = lax.scatter_add(lax.full(aval.shape, 0, np.int32), scatter_indices, ones,
                           dimension_numbers, indices_are_sorted=indices_are_sorted,
                           unique_indices=unique_indices, mode=mode)

    def body(i, x):
        return lax.select(lax.gt(hits, i), func(x), x)
    if unique_indices:
        return body(np.int32(0), operand)
    return lax.fori_loop(np.int32(0), lax.reduce_max(hits, tuple(range(aval.ndim))),
                         body, operand)


LAX: dict[str, Any] = {"reduce": reduce, "scatter_apply": scatter_apply}
