"""User-facing transformations: jvp, vmap, make_jaxpr (grad, jacobians and jit elsewhere).

Each one flattens pytrees, runs a flat interpreter from `interpreters/`, and
unflattens the result; nothing here knows any primitive.
"""
from __future__ import annotations

from functools import wraps
from typing import Any, Callable, Sequence

import numpy as np

from . import tree_util as tu
from .core.array import Array, as_array
from .core.avals import get_aval
from .core.trace import Tracer
from .interpreters import ad_util
from .interpreters.batching import vmap_flat
from .interpreters.jvp import jvp_flat
from .interpreters.staging import trace_to_jaxpr
from .jaxpr.ir import ClosedJaxpr

__all__ = ["jvp", "vmap", "make_jaxpr", "flatten_fun", "flatten_fun_aux", "argnums_partial",
           "block_until_ready", "check_callable"]


class _Store:
    """A write-once cell: the output tree is known only after the function runs."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = None

    def __call__(self) -> Any:
        return self.value


def flatten_fun(f: Callable, in_tree: tu.PyTreeDef) -> tuple[Callable, _Store]:
    """Wrap `f` to take and return flat lists; the output structure lands in the store."""
    store = _Store()

    def flat_fun(*args_flat: Any) -> list:
        args = tu.tree_unflatten(in_tree, args_flat)
        out_flat, store.value = tu.tree_flatten(f(*args))
        return out_flat

    return flat_fun, store


class AuxOutputs:
    """Where a `has_aux` function's output structure lands once it has run: the main
    output's tree, the auxiliary data's tree, and how many flat leaves are main."""

    __slots__ = ("out_tree", "aux_tree", "n_main")

    def __init__(self) -> None:
        self.out_tree = self.aux_tree = None
        self.n_main = 0

    def split(self, leaves: Sequence[Any]) -> tuple[Any, Any]:
        """(main output, aux) rebuilt from the flat outputs."""
        return (tu.tree_unflatten(self.out_tree, leaves[:self.n_main]),
                tu.tree_unflatten(self.aux_tree, leaves[self.n_main:]))


def flatten_fun_aux(f: Callable, in_tree: tu.PyTreeDef) -> tuple[Callable, AuxOutputs]:
    """Like `flatten_fun` for a function returning `(out, aux)`: the flat function
    returns the leaves of both, main first. Auxiliary data thus leaves a transformation
    the way its outputs do (unboxed from the transformation's tracers), so it never
    escapes as a dead tracer (e.g. `jit(grad(f, has_aux=True))`)."""
    store = AuxOutputs()

    def flat_fun(*args_flat: Any) -> list:
        out = f(*tu.tree_unflatten(in_tree, args_flat))
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            got = (f"one array, {get_aval(out).str_short()}" if isinstance(out, (Array, Tracer))
                   else f"a {type(out).__name__}" + (f" of length {len(out)}"
                                                     if isinstance(out, (tuple, list)) else ""))
            raise TypeError("has_aux=True requires the function to return a pair (out, aux), "
                            f"got {got}")
        main, store.out_tree = tu.tree_flatten(out[0])
        aux, store.aux_tree = tu.tree_flatten(out[1])
        store.n_main = len(main)
        return [*main, *aux]

    return flat_fun, store


def _check_tangents(primals: list, tangents: list) -> None:
    for p, t in zip(primals, tangents):
        p_aval, t_aval = get_aval(p), get_aval(t)
        expected = ad_util.tangent_aval(p_aval)
        if t_aval.shape != p_aval.shape:
            raise ValueError(f"jvp: primal and tangent shapes must match; got primal "
                             f"{p_aval.str_short()} and tangent {t_aval.str_short()}")
        # a weakly typed Python float may stand for a float tangent; a Python int may
        # not (the tangent would come out an integer, as JAX refuses)
        if t_aval.dtype != expected.dtype and not (
                t_aval.weak_type and ad_util.is_differentiable(expected.dtype)
                and ad_util.is_differentiable(t_aval.dtype)):
            raise TypeError(f"jvp: the tangent of a {p_aval.str_short()} primal must have "
                            f"dtype {expected.dtype.name}, got {t_aval.dtype.name}")


def jvp(f: Callable, primals: Sequence[Any], tangents: Sequence[Any],
        has_aux: bool = False) -> tuple:
    """Evaluate `f` and its directional derivative at `primals` along `tangents`.

    With `has_aux`, `f` returns `(out, aux)` and the result is `(out, out_dot, aux)`;
    aux is not differentiated."""
    check_callable(f, "jvp")
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp: primals and tangents must be tuples or lists of arguments, "
                        f"got {type(primals).__name__} and {type(tangents).__name__}")
    primals_flat, in_tree = tu.tree_flatten(tuple(primals))
    tangents_flat, in_tree2 = tu.tree_flatten(tuple(tangents))
    if in_tree != in_tree2:
        raise TypeError(f"jvp: primal and tangent arguments must have the same tree "
                        f"structure; got {in_tree} and {in_tree2}")
    _check_tangents(primals_flat, tangents_flat)
    if has_aux:
        flat_fun, store = flatten_fun_aux(f, in_tree)
        p_out, t_out = jvp_flat(flat_fun, primals_flat, tangents_flat)
        n, out_tree = store.n_main, store.out_tree
        t_out = [ad_util.instantiate(t) for t in t_out[:n]]
        out, aux = store.split(as_arrays(p_out))
        return out, tu.tree_unflatten(out_tree, as_arrays(t_out)), aux
    flat_fun, out_tree = flatten_fun(f, in_tree)
    p_out, t_out = jvp_flat(flat_fun, primals_flat, tangents_flat)
    t_out = [ad_util.instantiate(t) for t in t_out]
    return (tu.tree_unflatten(out_tree(), as_arrays(p_out)),
            tu.tree_unflatten(out_tree(), as_arrays(t_out)))


def check_callable(f: Any, name: str) -> None:
    """A transformation of a non-callable is refused when it is applied, naming what it
    got (not at the first call, as "'int' object is not callable")."""
    if not callable(f):
        raise TypeError(f"{name} expects a callable, got {type(f).__name__}: {f!r:.60}")


def as_arrays(xs: Sequence[Any]) -> list:
    """Results of transformations are Arrays (or tracers), never bare Python scalars."""
    return [x if isinstance(x, (Array, Tracer)) else as_array(x) for x in xs]


def _normalize_axis(axis: int | None, ndim: int, what: str) -> int | None:
    if axis is None:
        return None
    if not isinstance(axis, (int, np.integer)):
        raise TypeError(f"vmap {what} must be an int or None, got {axis!r}")
    if not -ndim <= axis < max(ndim, 1) or (ndim == 0 and what == "in_axes"):
        raise ValueError(f"vmap got {what}={axis} for an array of rank {ndim}")
    return int(axis) % ndim if ndim else 0


def vmap(f: Callable, in_axes: Any = 0, out_axes: Any = 0, axis_name: Any = None,
         axis_size: int | None = None) -> Callable:
    """Vectorise `f` over the `in_axes` of its arguments (pytree prefixes allowed).
    `axis_name` (any hashable) names the mapped axis for collectives inside `f`
    (lax.psum(x, axis_name), lax.axis_index(axis_name), ...), as in JAX."""
    check_callable(f, "vmap")
    if axis_name is not None:
        try:
            hash(axis_name)
        except TypeError:
            raise TypeError(f"vmap axis_name must be hashable, got {axis_name!r}") from None
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)

    @wraps(f)
    def batched_f(*args: Any) -> Any:
        args_flat, in_tree = tu.tree_flatten(args)
        prefix = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(f"vmap in_axes has {len(in_axes)} entries but the function "
                             f"was called with {len(args)} positional arguments")
        axes = tu.flatten_prefix(prefix, in_tree, "vmap in_axes")
        dims = [_normalize_axis(a, get_aval(x).ndim, "in_axes") for x, a in zip(args_flat, axes)]
        size = _axis_size(args_flat, dims, axis_size)
        flat_fun, out_tree = flatten_fun(f, in_tree)
        out_dims = _LazyOutDims(out_axes, out_tree)
        outs = vmap_flat(flat_fun, size, dims, args_flat, out_dims, axis_name=axis_name)
        return tu.tree_unflatten(out_tree(), as_arrays(outs))

    return batched_f


class _LazyOutDims:
    """Output batch axes, resolved against the output tree once the function has run."""

    def __init__(self, out_axes: Any, out_tree: _Store):
        self.out_axes, self.out_tree = out_axes, out_tree

    def __iter__(self):
        tree = self.out_tree()
        prefix = self.out_axes
        if isinstance(prefix, list):
            prefix = tuple(prefix)
        axes = tu.flatten_prefix(prefix, tree, "vmap out_axes")
        for a in axes:
            if a is not None and (not isinstance(a, (int, np.integer)) or isinstance(a, bool)):
                raise TypeError(f"vmap out_axes must be an int or None (or a tree of them), "
                                f"got {a!r}")
        return iter(axes)


def _axis_size(args: list, dims: list, axis_size: int | None) -> int:
    sizes = {get_aval(x).shape[d] for x, d in zip(args, dims) if d is not None}
    if axis_size is not None:
        sizes.add(axis_size)
    if not sizes:
        raise ValueError("vmap must have at least one non-None value in in_axes "
                         "(or pass axis_size)")
    if len(sizes) > 1:
        shown = ", ".join(f"axis {d} of an argument of shape {get_aval(x).shape}"
                          for x, d in zip(args, dims) if d is not None)
        raise ValueError(f"vmap got inconsistent sizes for the array axes to be mapped: "
                         f"{shown}" + (f", axis_size={axis_size}" if axis_size else ""))
    return sizes.pop()


def argnums_partial(f: Callable, argnums: tuple[int, ...], args: tuple) -> tuple[Callable, tuple]:
    """`f` as a function of only the arguments at `argnums` (the others fixed)."""
    in_range = [i % len(args) for i in argnums if -len(args) <= i < len(args)]
    if len(set(in_range)) < len(in_range):
        # the gradient of a repeated argument came out as 0 for all but one copy
        raise TypeError(f"argnums={argnums} names an argument more than once; each "
                        f"argument can be differentiated once")
    for i in argnums:
        if i >= len(args):   # the caller passed too few arguments (JAX: TypeError)
            raise TypeError(f"differentiating with respect to argnums={i} requires at least "
                            f"{i + 1} positional arguments to be passed by the caller, but "
                            f"got only {len(args)}")
        if i < -len(args):
            raise ValueError(f"argnums={i} is out of range for {len(args)} positional "
                             f"arguments: it must be >= -{len(args)} and < {len(args)}")
    argnums = tuple(i % len(args) for i in argnums)

    def f_partial(*dyn: Any) -> Any:
        full = list(args)
        for i, x in zip(argnums, dyn):
            full[i] = x
        return f(*full)

    return f_partial, tuple(args[i] for i in argnums)


def make_jaxpr(f: Callable, static_argnums: int | Sequence[int] = ()) -> Callable:
    """A function that traces `f` on its arguments' types and returns the ClosedJaxpr."""
    check_callable(f, "make_jaxpr")
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    @wraps(f)
    def make(*args: Any) -> ClosedJaxpr:
        if any(not -len(args) <= i < len(args) for i in static):
            # such an entry made nothing static: the argument was traced instead
            raise ValueError(f"make_jaxpr: static_argnums={static}, but the function was "
                             f"called with {len(args)} positional argument"
                             f"{'s' if len(args) != 1 else ''}")
        if static:
            f_dyn, dyn = argnums_partial(f, tuple(i for i in range(len(args))
                                                  if i not in static and i - len(args) not in static),
                                         args)
        else:
            f_dyn, dyn = f, args
        leaves, in_tree = tu.tree_flatten(dyn)
        flat_fun, _ = flatten_fun(f_dyn, in_tree)
        return trace_to_jaxpr(flat_fun, [get_aval(x) for x in leaves])

    return make


def block_until_ready(x: Any) -> Any:
    """Wait until every Array leaf of the pytree `x` is computed, then return `x`.

    Jitted calls return as soon as the computation is enqueued, so a benchmark
    or a hand-off to another process waits here. As in JAX, any other leaf with
    a `block_until_ready` method is waited on too, and the rest (scalars,
    NumPy arrays, tracers, None) pass through untouched.
    """
    for leaf in tu.tree_leaves(x):
        if type(leaf) is Array:
            leaf.block_until_ready()
            continue
        wait = getattr(leaf, "block_until_ready", None)
        if callable(wait) and not isinstance(leaf, Tracer):
            wait()
    return x
