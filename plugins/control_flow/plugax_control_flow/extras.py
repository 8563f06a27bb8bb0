"""JAX's smaller control-flow names: associative_scan, optimization_barrier,
platform_dependent, composite, tokens (create_token, after_all), stage, dce_sink and
shape_as_value.

- `associative_scan` is JAX's parallel-prefix recursion over pytrees (combine adjacent
  pairs, scan those, fill in the rest): O(n log n) work in O(log n) steps of whole-array
  ops, differentiable, batchable and jittable because it is made of slices, pads and
  the user's combine.
- `optimization_barrier` is a primitive (identity values) so that it survives into the
  compiled program as `stablehlo.optimization_barrier`, as in JAX.
- plugax runs on the CPU, so `platform_dependent` picks the `cpu` branch (else
  `default`) when it is called; JAX stages every branch and chooses at lowering, which
  gives the same result on one platform.
- plugax has no effect system to sequence, so a token is an empty array (bool[0]):
  `create_token`/`after_all` exist and flow through jit and vmap like JAX's, but carry
  no ordering (see docs/faq.md).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from plugax.extend import (Array, Primitive, RuleSet, ShapedArray, Zero, get_aval,
                           instantiate, is_undefined_primal)

__all__ = ["optimization_barrier_p", "RULES", "LAX"]


# --- associative_scan -------------------------------------------------------------------------
def _slice(x: Any, axis: int, start: int, stop: int | None, stride: int = 1) -> Any:
    import plugax.lax as lax
    return lax.slice_in_dim(x, start, stop, stride, axis)


def _interleave(a: Any, b: Any, axis: int) -> Any:
    """a[0], b[0], a[1], b[1], ... along `axis` (a has as many or one more elements)."""
    import plugax.lax as lax
    n_a, n_b = get_aval(a).shape[axis], get_aval(b).shape[axis]
    pad_a = [(0, 0, 0)] * get_aval(a).ndim
    pad_b = [(0, 0, 0)] * get_aval(b).ndim
    pad_a[axis] = (0, 1 if n_a == n_b else 0, 1)
    pad_b[axis] = (1, 0 if n_a == n_b else 1, 1)
    zero = np.zeros((), get_aval(a).dtype)
    op = lax.bitwise_or if get_aval(a).dtype == np.bool_ else lax.add
    return op(lax.pad(a, zero, pad_a), lax.pad(b, zero, pad_b))


def associative_scan(fn: Callable, elems: Any, reverse: bool = False, axis: int = 0) -> Any:
    """The inclusive scan of `elems` (a pytree of arrays sharing the size of `axis`) with
    the associative `fn(a, b)` (applied to whole slices, so it must be vectorised)."""
    import plugax.lax as lax
    from plugax.tree_util import tree_flatten, tree_unflatten
    flat, tree = tree_flatten(elems)
    if not flat:
        return elems
    ndim = get_aval(flat[0]).ndim
    if not -ndim <= axis < ndim:
        raise ValueError(f"associative_scan: axis {axis} is out of bounds for elems of rank "
                         f"{ndim}")
    axis %= ndim
    sizes = {get_aval(x).shape[axis] for x in flat}
    if len(sizes) != 1:
        raise ValueError(f"Array inputs to associative_scan must have the same first "
                         f"dimension. (saw: {[get_aval(x).shape for x in flat]})")

    def combine(a_flat, b_flat):
        c = fn(tree_unflatten(tree, a_flat), tree_unflatten(tree, b_flat))
        c_flat, c_tree = tree_flatten(c)
        if c_tree != tree:
            raise ValueError(f"associative_scan: fn must return the structure of elems "
                             f"({tree}), got {c_tree}")
        return c_flat

    def scan(xs):
        n = get_aval(xs[0]).shape[axis]
        if n < 2:
            return xs
        reduced = combine([_slice(x, axis, 0, -1, 2) for x in xs],
                          [_slice(x, axis, 1, None, 2) for x in xs])
        odd = scan(reduced)
        if n % 2 == 0:
            even = combine([_slice(o, axis, 0, -1) for o in odd],
                           [_slice(x, axis, 2, None, 2) for x in xs])
        else:
            even = combine(odd, [_slice(x, axis, 2, None, 2) for x in xs])
        even = [lax.concatenate([_slice(x, axis, 0, 1), e], axis) for x, e in zip(xs, even)]
        return [_interleave(e, o, axis) for e, o in zip(even, odd)]

    if reverse:
        flat = [lax.rev(x, (axis,)) for x in flat]
    out = scan(flat)
    if reverse:
        out = [lax.rev(x, (axis,)) for x in out]
    return tree_unflatten(tree, out)


# --- optimization_barrier -----------------------------------------------------------------------
optimization_barrier_p = Primitive("optimization_barrier", multiple_results=True)


def _barrier_jvp(ctx, primals, tangents):
    out = optimization_barrier_p.bind(*primals)
    return out, optimization_barrier_p.bind(*map(instantiate, tangents))


def _barrier_transpose(ctx, cts, *args):
    """Linear (the identity): each operand's cotangent is its output's, through a
    barrier too, as JAX does."""
    cts = [instantiate(ct) if type(ct) is not Zero else ct for ct in cts]
    live = [ct for ct in cts if type(ct) is not Zero]
    through = iter(optimization_barrier_p.bind(*live)) if live else iter(())
    return [(next(through) if type(ct) is not Zero else ct) if is_undefined_primal(x) else None
            for x, ct in zip(args, cts)]


def _lower_barrier(ctx, *args):
    return list(ctx.hlo.OptimizationBarrierOp(list(args)).results)


RULES = [RuleSet(
    optimization_barrier_p,
    impl=lambda ctx, *args: list(args),
    abstract_eval=lambda ctx, *avals: list(avals),
    jvp=_barrier_jvp, transpose=_barrier_transpose,
    batching=lambda ctx, args, dims: (optimization_barrier_p.bind(*args), list(dims)),
    lowering={"default": _lower_barrier})]


def optimization_barrier(operand: Any) -> Any:
    """`operand` (a pytree) unchanged; the compiler may not move computations across the
    barrier (nor fold two identical computations on either side)."""
    from plugax.tree_util import tree_flatten, tree_unflatten
    flat, tree = tree_flatten(operand)
    return tree_unflatten(tree, optimization_barrier_p.bind(*flat)) if flat else operand


# --- platform_dependent, composite ---------------------------------------------------------
def platform_dependent(*args: Any, default: Callable | None = None,
                       **per_platform: Callable) -> Any:
    """The branch for this platform (plugax computes on the CPU: `cpu`), else `default`,
    applied to `args`."""
    for name in per_platform:
        if name not in ("cpu", "cuda", "rocm", "gpu", "tpu", "METAL"):
            raise ValueError(f"Unsupported platform: {name}")
    branch = per_platform.get("cpu", default)
    if branch is None:
        raise NotImplementedError(f"platform_dependent: no branch for the cpu platform (given "
                                  f"{sorted(per_platform)}) and no default")
    return branch(*args)


def composite(decomposition: Callable, name: str, version: int = 0) -> Callable:
    """`decomposition` marked as the composite `name` (a hint for compilers that know it);
    plugax runs the decomposition, which is what a compiler that does not recognise the
    composite does."""
    import functools
    if not isinstance(name, str) or not name:
        raise ValueError("composite: name must be a non-empty string")

    @functools.wraps(decomposition)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        return decomposition(*args, **kwargs)
    wrapped.composite_name, wrapped.composite_version = name, version
    return wrapped


# --- tokens and the small identities ----------------------------------------------------------
def create_token(_: Any = None) -> Any:
    """A token to thread through sequenced computations: an empty bool array (plugax has
    no effects to order, so it carries nothing)."""
    return Array(np.zeros((0,), np.bool_))


def after_all(*operands: Any) -> Any:
    """A token that comes after all `operands` (tokens)."""
    for x in operands:
        aval = get_aval(x)
        if aval.shape != (0,) or aval.dtype != np.bool_:
            raise TypeError(f"after_all: operands must be tokens (from lax.create_token), "
                            f"got {aval.str_short()}")
    return create_token()


def stage(x: Any) -> Any:
    """`x` lifted into the active trace (an Array outside any): the identity."""
    import plugax.numpy as jnp
    return jnp.asarray(x)


def dce_sink(val: Any, *, prevent_mlir_dce: bool = False) -> None:
    """Keeps `val` alive for JAX's dead-code elimination; plugax's jit computes every
    value it is asked for, so this does nothing."""
    del val, prevent_mlir_dce


def shape_as_value(shape: Any) -> Any:
    """A (static) shape as an int array of its sizes."""
    import plugax.numpy as jnp
    return jnp.asarray(np.array(tuple(int(d) for d in shape), np.int64), dtype=int)


LAX: dict[str, Any] = {f.__name__: f for f in (
    associative_scan, optimization_barrier, platform_dependent, composite, create_token,
    after_all, stage, dce_sink, shape_as_value)}
# with_sharding_constraint is the xla_call family's (it lowers to Shardy annotations)
