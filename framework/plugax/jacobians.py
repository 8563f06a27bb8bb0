"""Jacobians: jacfwd, jacrev and hessian, as pure traced code.

A Jacobian is `vmap` of `jvp` (forward) or of a `vjp` pullback (reverse) over
the standard basis. The basis is a concrete NumPy constant, and everything
applied to the user's values is a transformation or an array method, never a
conversion to NumPy: a Jacobian therefore works under `jit`, `vmap`, `grad`, in
control-flow bodies and inside another Jacobian, and a derivative of it is a
derivative (converting a JVP tracer to NumPy would drop its tangent and give a
silently wrong number).

Pytrees follow JAX: the result is structured like the output, and each output
leaf holds a tree structured like the differentiated arguments (a tuple of
them when `argnums` is a tuple), with leaves of shape `out.shape + in.shape`.
"""
from __future__ import annotations

from functools import wraps
from typing import Any, Callable, Sequence

import numpy as np

from . import tree_util as tu
from .api import argnums_partial, as_arrays, jvp, vmap
from .autodiff import vjp
from .core.array import Array
from .core.avals import get_aval
from .interpreters import ad_util

__all__ = ["jacfwd", "jacrev", "hessian"]


def _argnums_tuple(argnums: int | Sequence[int]) -> tuple[tuple[int, ...], bool]:
    if isinstance(argnums, (int, np.integer)):
        return (int(argnums),), False
    return tuple(int(a) for a in argnums), True


def _leaf_size(x: Any) -> int:
    return int(np.prod(get_aval(x).shape, dtype=np.int64))


def _std_basis(leaves: list) -> tuple[list, int]:
    """One concrete basis array per leaf: row k of the stacked basis is the k-th unit
    vector of all the leaves raveled together; each leaf gets its block of columns,
    shaped `(total,) + leaf.shape`, in the leaf's own dtype."""
    sizes = [_leaf_size(x) for x in leaves]
    total = sum(sizes)
    offsets = np.cumsum([0] + sizes)
    basis = []
    for x, lo, hi in zip(leaves, offsets[:-1], offsets[1:]):
        aval = get_aval(x)
        eye = np.eye(total, dtype=ad_util.tangent_aval(aval).dtype)[:, lo:hi]
        basis.append(Array(eye.reshape((total,) + aval.shape)))
    return basis, total


def _split_axis(jac: Any, axis: int, leaves: list) -> list:
    """Cut `jac`'s `axis` (the raveled leaves) into one piece per leaf, each reshaped so
    that the axis becomes the leaf's shape."""
    if axis < 0:
        axis += jac.ndim
    shape = tuple(jac.shape)
    parts, start = [], 0
    for x in leaves:
        n = _leaf_size(x)
        if len(leaves) == 1:
            part = jac
        else:
            index = (slice(None),) * axis + (slice(start, start + n),)
            part = jac[index]
        start += n
        new_shape = shape[:axis] + tuple(get_aval(x).shape) + shape[axis + 1:]
        parts.append(part if tuple(part.shape) == new_shape else part.reshape(new_shape))
    return parts


def _check_float_inputs(leaves: list, name: str) -> None:
    for x in leaves:
        dtype = get_aval(x).dtype
        if not ad_util.is_differentiable(dtype):
            raise TypeError(f"{name} requires real- or complex-valued inputs (input dtype "
                            f"that is a sub-dtype of np.inexact), but got {dtype.name}. If "
                            f"you want to use Boolean- or integer-valued inputs, use vjp "
                            f"or jvp instead.")


def _differentiated_args(f: Callable, nums: tuple, args: tuple, name: str) -> tuple:
    """`f` as a function of the arguments at `nums` only, those arguments (as Arrays
    or tracers: never converted to NumPy), their flat leaves and tree."""
    f_partial, dyn = argnums_partial(f, nums, args)
    leaves, in_tree = tu.tree_flatten(dyn)
    leaves = as_arrays(leaves)
    _check_float_inputs(leaves, name)
    return f_partial, tu.tree_unflatten(in_tree, leaves), leaves, in_tree


def jacfwd(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False) -> Callable:
    """The Jacobian of `f` by forward mode: one jvp per input basis vector, batched."""
    nums, multiple = _argnums_tuple(argnums)

    @wraps(f)
    def jac_f(*args: Any) -> Any:
        f_partial, dyn, leaves, in_tree = _differentiated_args(f, nums, args, "jacfwd")
        basis, _ = _std_basis(leaves)

        def pushfwd(tangent_leaves: list) -> tuple:
            tangents = tu.tree_unflatten(in_tree, tangent_leaves)
            if has_aux:
                y, y_dot, aux = jvp(f_partial, dyn, tangents, has_aux=True)
                return y, y_dot, aux
            y, y_dot = jvp(f_partial, dyn, tangents)
            return y, y_dot

        out_axes = (None, -1, None) if has_aux else (None, -1)
        outs = vmap(pushfwd, out_axes=out_axes)(basis)
        y, jac = outs[0], outs[1]
        y_leaves, y_tree = tu.tree_flatten(y)
        jac_leaves = tu.tree_leaves(jac)
        result = tu.tree_unflatten(y_tree, [
            _input_tree(_split_axis(j, -1, leaves), in_tree, multiple)
            for j in jac_leaves])
        return (result, outs[2]) if has_aux else result

    return jac_f


def jacrev(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False) -> Callable:
    """The Jacobian of `f` by reverse mode: one vjp per output basis vector, batched."""
    nums, multiple = _argnums_tuple(argnums)

    @wraps(f)
    def jac_f(*args: Any) -> Any:
        f_partial, dyn, leaves, in_tree = _differentiated_args(f, nums, args, "jacrev")
        if has_aux:
            y, pullback, aux = vjp(f_partial, *dyn, has_aux=True)
        else:
            y, pullback = vjp(f_partial, *dyn)
        y_leaves, y_tree = tu.tree_flatten(y)
        basis, _ = _std_basis(y_leaves)
        cts = vmap(lambda *b: pullback(tu.tree_unflatten(y_tree, list(b))))(*basis)
        ct_leaves = tu.tree_leaves(cts)      # per input leaf: (total_out,) + in.shape
        per_input = [_split_axis(c, 0, y_leaves) for c in ct_leaves]
        result = tu.tree_unflatten(y_tree, [
            _input_tree([parts[j] for parts in per_input], in_tree, multiple)
            for j in range(len(y_leaves))])
        return (result, aux) if has_aux else result

    return jac_f


def _input_tree(leaves: list, in_tree: tu.PyTreeDef, multiple: bool) -> Any:
    """Leaves in the differentiated arguments' structure: the tuple of them for a tuple
    `argnums`, else the one argument."""
    tree = tu.tree_unflatten(in_tree, leaves)
    return tree if multiple else tree[0]


def hessian(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False) -> Callable:
    """Second derivatives: forward-over-reverse, `jacfwd(jacrev(f))`."""
    return jacfwd(jacrev(f, argnums, has_aux=has_aux), argnums, has_aux=has_aux)
