"""Jacobians: jacfwd, jacrev and hessian, as pure traced code.

A Jacobian is `vmap` of `jvp` (forward) or of a `vjp` pullback (reverse) over
the standard basis. The basis is a concrete NumPy constant, and everything
applied to the user's values is a transformation or a kernel primitive
(`reshape`), never a conversion to NumPy nor a family's function: a Jacobian
therefore works under `jit`, `vmap`, `grad`, in
control-flow bodies and inside another Jacobian, and a derivative of it is a
derivative (converting a JVP tracer to NumPy would drop its tangent and give a
silently wrong number).

Pytrees follow JAX: the result is structured like the output, and each output
leaf holds a tree structured like the differentiated arguments (a tuple of
them when `argnums` is a tuple), with leaves of shape `out.shape + in.shape`.

With several input leaves (jacfwd) or output leaves (jacrev), as in JAX, one
basis is stacked for all of them (a concrete constant: leaf i's rows are its
unit vectors, the other leaves' tangents zero there), so one `vmap` evaluates
the function once, and the result is cut into one block per leaf with the
kernel's `split`.
"""
from __future__ import annotations

from functools import wraps
from typing import Any, Callable, Sequence

import numpy as np

from . import dtypes
from . import tree_util as tu
from .api import argnums_partial, as_arrays, check_callable, jvp, vmap
from .autodiff import vjp
from .core.array import Array
from .core.avals import get_aval
from .interpreters import ad_util
from .structural import reshape, split

__all__ = ["jacfwd", "jacrev", "hessian"]


def _argnums_tuple(argnums: int | Sequence[int]) -> tuple[tuple[int, ...], bool]:
    if isinstance(argnums, (int, np.integer)):
        return (int(argnums),), False
    return tuple(int(a) for a in argnums), True


def _leaf_size(x: Any) -> int:
    return int(np.prod(get_aval(x).shape, dtype=np.int64))


def _stacked_basis(leaves: list) -> list[Array]:
    """The standard basis of the leaves' joint tangent space, one array per leaf:
    leaf i's is `(N,) + leaf.shape` for N the total size, its rows at leaf i's
    offset the unit vectors and zero elsewhere, in the tangent dtype."""
    sizes = [_leaf_size(x) for x in leaves]
    total, start, basis = sum(sizes), 0, []
    for x, n in zip(leaves, sizes):
        aval = get_aval(x)
        rows = np.zeros((total, n), ad_util.tangent_aval(aval).dtype)
        rows[start:start + n] = np.eye(n, dtype=rows.dtype)
        basis.append(Array(rows.reshape((total,) + aval.shape)))
        start += n
    return basis


def _blocks(jac: Any, axis: int, sizes: list[int]) -> list:
    """`jac` cut along `axis` into pieces of `sizes` (itself when there is one)."""
    if len(sizes) == 1:
        return [jac]
    return split(jac, sizes, axis % get_aval(jac).ndim)


def _unravel(jac: Any, axis: int, leaf: Any) -> Any:
    """`jac` with its (raveled) `axis`, 0 or -1, reshaped into `leaf`'s shape."""
    shape = tuple(get_aval(jac).shape)
    leaf_shape = tuple(get_aval(leaf).shape)
    new = leaf_shape + shape[1:] if axis == 0 else shape[:-1] + leaf_shape
    return jac if new == shape else reshape(jac, new)


def _check_float_inputs(leaves: list, name: str) -> None:
    """An integer input has no derivative: its Jacobian would be a meaningless zero
    (it came out as a void-dtype array), so it is refused, naming the dtype."""
    for x in leaves:
        dtype = get_aval(x).dtype
        if not ad_util.is_differentiable(dtype):
            hint = ", or set allow_int to True" if name == "jacrev" else ""
            raise TypeError(f"{name} requires real- or complex-valued inputs (input dtype "
                            f"that is a sub-dtype of np.inexact), but got {dtype.name}. If "
                            f"you want to use Boolean- or integer-valued inputs, use vjp "
                            f"or jvp instead{hint}.")


def _check_complex(leaves: list, name: str, what: str) -> None:
    """holomorphic=True promises complex inputs and outputs; JAX refuses anything else."""
    for x in leaves:
        dtype = get_aval(x).dtype
        if dtype.kind != "c":
            raise TypeError(f"{name} with holomorphic=True requires {what} with complex "
                            f"dtype, but got {dtype.name}.")


def _check_real_inputs(leaves: list) -> None:
    """Forward mode pushes a real basis: a complex input's Jacobian would be only its
    real direction, so JAX asks for holomorphic=True (or jvp) instead."""
    for x in leaves:
        dtype = get_aval(x).dtype
        if dtype.kind == "c":
            raise TypeError(f"jacfwd requires real-valued inputs (input dtype that is a "
                            f"sub-dtype of np.floating), but got {dtype.name}. For "
                            f"holomorphic differentiation, pass holomorphic=True. For "
                            f"differentiation of non-holomorphic functions involving "
                            f"complex inputs or integer inputs, use plugax.jvp directly.")


def _check_float_outputs(leaves: list, name: str, holomorphic: bool = False) -> None:
    """Reverse mode pulls back a basis of the outputs: an integer output has none (it
    failed deep inside, building a float0 basis), as JAX refuses."""
    if holomorphic:
        return _check_complex(leaves, name, "outputs")
    for y in leaves:
        dtype = get_aval(y).dtype
        if dtype.kind == "c":
            raise TypeError(f"{name} requires real-valued outputs (output dtype that is a "
                            f"sub-dtype of np.floating), but got {dtype.name}. For "
                            f"holomorphic differentiation, pass holomorphic=True. For "
                            f"differentiation of non-holomorphic functions involving "
                            f"complex outputs, use plugax.vjp directly.")
        if not dtypes.is_float(dtype):
            raise TypeError(f"{name} requires real-valued outputs (output dtype that is a "
                            f"sub-dtype of np.floating), but got {dtype.name}. For "
                            f"holomorphic or integer outputs, use vjp directly.")


def _differentiated_args(f: Callable, nums: tuple, args: tuple, name: str,
                         allow_int: bool = False, holomorphic: bool = False) -> tuple:
    """`f` as a function of the arguments at `nums` only, those arguments (as Arrays
    or tracers: never converted to NumPy), their flat leaves and tree."""
    f_partial, dyn = argnums_partial(f, nums, args)
    leaves, in_tree = tu.tree_flatten(dyn)
    leaves = as_arrays(leaves)
    if holomorphic:
        _check_complex(leaves, name, "inputs")
    if not allow_int:
        _check_float_inputs(leaves, name)
    if name == "jacfwd" and not holomorphic:
        _check_real_inputs(leaves)
    return f_partial, tu.tree_unflatten(in_tree, leaves), leaves, in_tree


def jacfwd(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False) -> Callable:
    """The Jacobian of `f` by forward mode: one jvp per input basis vector, batched.
    Inputs must be real unless `holomorphic=True` promises a complex-differentiable f
    (then inputs and outputs are complex and the Jacobian holds f'(z))."""
    check_callable(f, "jacfwd")
    nums, multiple = _argnums_tuple(argnums)

    @wraps(f)
    def jac_f(*args: Any) -> Any:
        f_partial, dyn, leaves, in_tree = _differentiated_args(f, nums, args, "jacfwd",
                                                               holomorphic=holomorphic)

        def pushfwd(*tangent_leaves: Any) -> tuple:
            tangents = tu.tree_unflatten(in_tree, list(tangent_leaves))
            if has_aux:
                y, y_dot, aux = jvp(f_partial, dyn, tangents, has_aux=True)
                return y, y_dot, aux
            y, y_dot = jvp(f_partial, dyn, tangents)
            return y, y_dot

        out_axes = (None, -1, None) if has_aux else (None, -1)
        outs = vmap(pushfwd, out_axes=out_axes)(*_stacked_basis(leaves))
        if holomorphic:
            _check_complex(tu.tree_leaves(outs[0]), "jacfwd", "outputs")
        y_tree = tu.tree_structure(outs[0])
        sizes = [_leaf_size(x) for x in leaves]
        result = tu.tree_unflatten(y_tree, [
            _input_tree([_unravel(b, -1, x) for b, x in zip(_blocks(jac, -1, sizes), leaves)],
                        in_tree, multiple)
            for jac in tu.tree_leaves(outs[1])])
        return (result, outs[2]) if has_aux else result

    return jac_f


def jacrev(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False, allow_int: bool = False) -> Callable:
    """The Jacobian of `f` by reverse mode: one vjp per output basis vector, batched.
    With `allow_int`, integer inputs are allowed and their blocks are float0 zeros."""
    check_callable(f, "jacrev")
    nums, multiple = _argnums_tuple(argnums)

    @wraps(f)
    def jac_f(*args: Any) -> Any:
        f_partial, dyn, leaves, in_tree = _differentiated_args(f, nums, args, "jacrev",
                                                               allow_int, holomorphic)
        if has_aux:
            y, pullback, aux = vjp(f_partial, *dyn, has_aux=True)
        else:
            y, pullback = vjp(f_partial, *dyn)
        y_leaves, y_tree = tu.tree_flatten(y)
        _check_float_outputs(y_leaves, "jacrev", holomorphic)
        pull = lambda *cts: pullback(tu.tree_unflatten(y_tree, list(cts)))
        # per input leaf: (N,) + in.shape, N the outputs' total size
        cts_in = tu.tree_leaves(vmap(pull)(*_stacked_basis(y_leaves)))
        sizes = [_leaf_size(o) for o in y_leaves]
        per_input = [_blocks(c, 0, sizes) for c in cts_in]
        result = tu.tree_unflatten(y_tree, [
            _input_tree([_unravel(blocks[j], 0, out) for blocks in per_input], in_tree,
                        multiple)
            for j, out in enumerate(y_leaves)])
        return (result, aux) if has_aux else result

    return jac_f


def _input_tree(leaves: list, in_tree: tu.PyTreeDef, multiple: bool) -> Any:
    """Leaves in the differentiated arguments' structure: the tuple of them for a tuple
    `argnums`, else the one argument."""
    tree = tu.tree_unflatten(in_tree, leaves)
    return tree if multiple else tree[0]


def hessian(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
            holomorphic: bool = False) -> Callable:
    """Second derivatives: forward-over-reverse, `jacfwd(jacrev(f))`."""
    check_callable(f, "hessian")
    return jacfwd(jacrev(f, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums,
                  has_aux=has_aux, holomorphic=holomorphic)
