"""Collectives over a named vmap axis: psum, pmean, pmax, pmin, all_gather,
axis_index, axis_size, ppermute, pshuffle, all_to_all, psum_scatter, pswapaxes and
pbroadcast, with JAX's semantics under `vmap(f, axis_name=...)`.

Why in the control-flow family: like cond and scan they act across what a
transformation separates (here the members of a vmapped batch), and their rules call
the same batching machinery. plugax runs on one device and has no pmap/shard_map, so a
named axis is always a vmap axis: each primitive's batching rule does the collective
over the batch dimension of the vmap that bears its name (the kernel runs that rule even
for unbatched operands: a psum of a constant is the constant times the axis size), and
passes the other names on to the enclosing vmaps. Outside any vmap of that name the
name is unbound: a NameError, as in JAX.

Derivatives are JAX's: psum, all_gather, ppermute, all_to_all, psum_scatter and
pbroadcast are linear, and each transposes to its adjoint collective (psum to psum,
all_gather to psum_scatter, a permutation to its inverse, ...); pmax/pmin have none.

`axis_index_groups` (psum, pmean, pmax, pmin, all_gather, psum_scatter, all_to_all,
pswapaxes: JAX's list) splits the members of the axis into groups that each do the
collective on their own; the parameter is carried only when given, so ungrouped
equations are unchanged. As in JAX 0.10.2 the groups work in shard_map (replica
groups, shard_map.py) and not over a vmap axis, where the batching rules raise
JAX's NotImplementedErrors; a psum (pmean) of values known at trace time is the
value times the group size, as JAX computes it without a collective.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from plugax.extend import (Primitive, RuleSet, ShapedArray, Tracer, Zero, bdim_at_front,
                           declare_collective, get_aval, instantiate, is_undefined_primal,
                           named_axis_size)

__all__ = ["RULES", "LAX"]


def _axes(axis_name: Any) -> tuple:
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _check_bound(axes: tuple) -> None:
    for name in axes:
        named_axis_size(name)     # NameError when no vmap of that name is running


def _canonical_groups(axis_index_groups: Any, even: bool = False) -> tuple | None:
    """JAX's form (a tuple of tuples), checked as JAX checks it: every index of
    0..n-1 in exactly one group (and, for the collectives whose result's shape is
    the group size, groups of one size)."""
    if axis_index_groups is None:
        return None
    groups = tuple(tuple(int(i) for i in g) for g in axis_index_groups)
    if {i for g in groups for i in g} != set(range(sum(map(len, groups)))):
        raise ValueError("axis_index_groups must cover all indices exactly once")
    if even and len({len(g) for g in groups}) > 1:
        raise ValueError(f"axis_index_groups must all be the same size, got {groups}")
    return groups


def _gp(groups: tuple | None) -> dict:
    """The groups as a primitive parameter: present only when given."""
    return {} if groups is None else {"axis_index_groups": groups}


def _group_size(axes: tuple, groups: tuple | None) -> int:
    """How many members do each collective: the axes' size, or one group's."""
    n = 1
    for name in axes:
        n *= named_axis_size(name)
    if groups is None:
        return n
    if sum(map(len, groups)) != n:
        raise ValueError(f"axis_index_groups {list(map(list, groups))} must cover the {n} "
                         f"indices of axis {axes if len(axes) > 1 else axes[0]!r} exactly once")
    return len(groups[0])


# JAX 0.10.2's refusals of groups over a vmap axis (its batching rules)
_VMAP_REDUCTION = "axis_index_groups not supported in vmap collectives. Please open a " \
                  "feature request!"
_VMAP_GATHER = "axis_index_groups not supported in vmap"
_VMAP_ALL_TO_ALL = "Please open a feature request!"


def _unbound(prim: Primitive) -> Callable:
    """impl and lowering: reached only when no vmap handled the name."""
    def rule(ctx, *args, **params):
        names = params.get("axes") or (params.get("axis_name"),)
        _check_bound(tuple(names))
        raise NameError(f"lax.{prim.name} over {names} reached the compiler outside the "
                        f"vmap that names it (a jit inside the vmap with no batched "
                        f"operand): pass a batched value in, or move the jit outside")
    return rule


def _rest(axes: tuple, name: Any) -> tuple:
    return tuple(a for a in axes if a != name)


# --- psum, pmax, pmin ----------------------------------------------------------------------
psum_p = Primitive("psum", multiple_results=True)
pmax_p = Primitive("pmax", multiple_results=True)
pmin_p = Primitive("pmin", multiple_results=True)


def _reduction_vmap(prim: Primitive, reduce: Callable, unbatched: Callable) -> Callable:
    def vmap(ctx, args, dims, *, axes, axis_index_groups=None):
        if ctx.axis_name not in axes:     # another vmap's name: member by member
            return prim.bind(*args, axes=axes, **_gp(axis_index_groups)), list(dims)
        if axis_index_groups is not None:
            raise NotImplementedError(_VMAP_REDUCTION)
        outs = [unbatched(x, ctx.axis_size) if d is None else reduce(x, d)
                for x, d in zip(args, dims)]
        rest = _rest(axes, ctx.axis_name)
        if rest:
            outs = prim.bind(*outs, axes=rest)
        return list(outs), [None] * len(outs)
    return vmap


def _sum(x, d):
    import plugax.lax as lax
    return lax.reduce_sum(x, (d,))


def _times_size(x, n):
    import plugax.lax as lax
    return lax.mul(x, np.asarray(n, get_aval(x).dtype))


def _reduce(name: str) -> Callable:
    def reduce(x, d):
        import plugax.lax as lax
        return getattr(lax, name)(x, (d,))
    return reduce


def _same_avals(ctx, *avals, axes, axis_index_groups=None):
    _check_bound(axes)
    _group_size(axes, axis_index_groups)
    return list(avals)


def _psum_jvp(ctx, primals, tangents, *, axes, axis_index_groups=None):
    g = _gp(axis_index_groups)
    return psum_p.bind(*primals, axes=axes, **g), psum_p.bind(*map(instantiate, tangents),
                                                               axes=axes, **g)


def _psum_transpose(ctx, cts, *args, axes, axis_index_groups=None):
    """Every member's output is the sum of its group's inputs: each input's cotangent is
    the sum of its group's output cotangents."""
    outs = psum_p.bind(*[instantiate(ct) for ct in cts], axes=axes, **_gp(axis_index_groups))
    return [o if is_undefined_primal(x) else None for x, o in zip(args, outs)]


def _extremum_jvp(prim: Primitive) -> Callable:
    def jvp(ctx, primals, tangents, *, axes, axis_index_groups=None):
        outs = prim.bind(*primals, axes=axes, **_gp(axis_index_groups))
        if any(type(t) is not Zero for t in tangents):
            raise NotImplementedError(f"Differentiation rule for '{prim.name}' not "
                                      f"implemented (as in JAX)")
        return outs, [Zero.from_value(o) for o in outs]
    return jvp


# --- all_gather ------------------------------------------------------------------------------
all_gather_p = Primitive("all_gather")


def _all_gather_abstract_eval(ctx, aval, *, axes, axis, tiled, to="varying",
                              axis_index_groups=None):
    (name,) = axes
    n = _group_size(axes, axis_index_groups)
    shape = list(aval.shape)
    if tiled:
        shape[axis] *= n
    else:
        shape.insert(axis, n)
    return ShapedArray(tuple(shape), aval.dtype, aval.weak_type)


def _all_gather_vmap(ctx, args, dims, *, axes, axis, tiled, to="varying",
                     axis_index_groups=None):
    import plugax.lax as lax
    import plugax.numpy as jnp
    (x,), (d,) = args, dims
    if ctx.axis_name not in axes:
        return all_gather_p.bind(x, axes=axes, axis=axis, tiled=tiled, to=to,
                                 **_gp(axis_index_groups)), d
    if axis_index_groups is not None:
        raise NotImplementedError(_VMAP_GATHER)
    x = bdim_at_front(x, d, ctx.axis_size)                    # (n, *member)
    out = jnp.moveaxis(x, 0, axis)
    if tiled:
        shape = get_aval(out).shape
        out = lax.reshape(out, shape[:axis] + (shape[axis] * shape[axis + 1],)
                          + shape[axis + 2:])
    return out, None


def _all_gather_transpose(ctx, ct, x, *, axes, axis, tiled, to="varying",
                          axis_index_groups=None):
    """'varying': each member's result is its own value, so member i's input gets the
    sum of every member's cotangent chunk i (psum_scatter). 'invarying' (shard_map's
    invariant result, counted once): member i takes its chunk of the one cotangent."""
    if to == "invarying":
        import plugax.lax as lax
        (name,) = axes
        i = axis_index_p.bind(axis_name=name)
        ct = instantiate(ct)
        if tiled:
            k = get_aval(x).shape[axis]
            return [lax.dynamic_slice_in_dim(ct, i * np.int32(k), k, axis)]
        return [lax.dynamic_index_in_dim(ct, i, axis, keepdims=False)]
    return [reduce_scatter_p.bind(instantiate(ct), axes=axes, scatter_dimension=axis,
                                  tiled=tiled, **_gp(axis_index_groups))]


# --- psum_scatter (JAX's reduce_scatter primitive) ------------------------------------------
reduce_scatter_p = Primitive("reduce_scatter")


def _reduce_scatter_abstract_eval(ctx, aval, *, axes, scatter_dimension, tiled,
                                  axis_index_groups=None):
    (name,) = axes
    n = _group_size(axes, axis_index_groups)
    shape = list(aval.shape)
    size = shape[scatter_dimension]
    if tiled:
        if size % n:
            raise ValueError(f"psum_scatter: the scatter dimension's size {size} must be "
                             f"divisible by the axis size {n}")
        shape[scatter_dimension] = size // n
    else:
        if size != n:
            raise ValueError(f"psum_scatter: the scatter dimension's size {size} must equal "
                             f"the axis size {n} (or pass tiled=True)")
        del shape[scatter_dimension]
    return ShapedArray(tuple(shape), aval.dtype, aval.weak_type)


def _reduce_scatter_vmap(ctx, args, dims, *, axes, scatter_dimension, tiled,
                         axis_index_groups=None):
    import plugax.lax as lax
    import plugax.numpy as jnp
    (x,), (d,) = args, dims
    if ctx.axis_name not in axes:
        return reduce_scatter_p.bind(x, axes=axes, scatter_dimension=scatter_dimension,
                                     tiled=tiled, **_gp(axis_index_groups)), d
    if axis_index_groups is not None:
        raise NotImplementedError(_VMAP_GATHER)
    n = ctx.axis_size
    total = _times_size(x, n) if d is None else lax.reduce_sum(x, (d,))
    if tiled:
        shape = get_aval(total).shape
        total = lax.reshape(total, shape[:scatter_dimension] + (n, shape[scatter_dimension] // n)
                            + shape[scatter_dimension + 1:])
    return jnp.moveaxis(total, scatter_dimension, 0), 0


def _reduce_scatter_transpose(ctx, ct, x, *, axes, scatter_dimension, tiled,
                              axis_index_groups=None):
    return [all_gather_p.bind(instantiate(ct), axes=axes, axis=scatter_dimension,
                              tiled=tiled, **_gp(axis_index_groups))]


# --- axis_index --------------------------------------------------------------------------------
axis_index_p = Primitive("axis_index")


def _axis_index_abstract_eval(ctx, *, axis_name):
    named_axis_size(axis_name)
    return ShapedArray((), np.dtype(np.int32))


def _axis_index_vmap(ctx, args, dims, *, axis_name):
    import plugax.lax as lax
    if ctx.axis_name != axis_name:
        return axis_index_p.bind(axis_name=axis_name), None
    return lax.iota(np.int32, ctx.axis_size), 0


# --- ppermute ------------------------------------------------------------------------------------
ppermute_p = Primitive("ppermute")


def _ppermute_vmap(ctx, args, dims, *, axes, perm):
    import plugax.numpy as jnp
    (x,), (d,) = args, dims
    if ctx.axis_name not in axes:
        return ppermute_p.bind(x, axes=axes, perm=perm), d
    n = ctx.axis_size
    if len(perm) != n or sorted(s for s, _ in perm) != list(range(n)) \
            or sorted(t for _, t in perm) != list(range(n)):
        raise ValueError(f"ppermute under vmap needs a permutation of all {n} members "
                         f"(as JAX's), got {list(perm)}")
    x = bdim_at_front(x, d, n)
    source = [0] * n
    for s, t in perm:
        source[t] = s
    return jnp.take(x, np.asarray(source, np.int32), axis=0), 0


def _ppermute_transpose(ctx, ct, x, *, axes, perm):
    inverse = tuple((t, s) for s, t in perm)
    return [ppermute_p.bind(instantiate(ct), axes=axes, perm=inverse)]


# --- all_to_all -------------------------------------------------------------------------------------
all_to_all_p = Primitive("all_to_all")


def _all_to_all_abstract_eval(ctx, aval, *, axes, split_axis, concat_axis, tiled,
                              axis_index_groups=None):
    (name,) = axes
    n = _group_size(axes, axis_index_groups)
    shape = list(aval.shape)
    if tiled:
        if shape[split_axis] % n:
            raise ValueError(f"all_to_all: the split axis's size {shape[split_axis]} must be "
                             f"divisible by the axis size {n}")
        shape[split_axis] //= n
        shape[concat_axis] *= n
    else:
        if shape[split_axis] != n:
            raise ValueError(f"all_to_all: the split axis's size {shape[split_axis]} must "
                             f"equal the axis size {n} (or pass tiled=True)")
        del shape[split_axis]
        shape.insert(concat_axis, n)
    return ShapedArray(tuple(shape), aval.dtype, aval.weak_type)


def _all_to_all_vmap(ctx, args, dims, *, axes, split_axis, concat_axis, tiled,
                     axis_index_groups=None):
    """Member i's chunk j goes to member j, where the chunks from 0, 1, ... are put along
    concat_axis: the batch axis and the (chunked) split axis trade places. (With groups
    JAX refuses any vmap, even over another axis.)"""
    import plugax.lax as lax
    import plugax.numpy as jnp
    if axis_index_groups is not None:
        raise NotImplementedError(_VMAP_ALL_TO_ALL)
    (x,), (d,) = args, dims
    params = dict(axes=axes, split_axis=split_axis, concat_axis=concat_axis, tiled=tiled)
    if ctx.axis_name not in axes:
        return all_to_all_p.bind(x, **params), d
    n = ctx.axis_size
    x = bdim_at_front(x, d, n)                              # (i, *member)
    if tiled:
        shape = get_aval(x).shape
        s = split_axis + 1
        x = lax.reshape(x, shape[:s] + (n, shape[s] // n) + shape[s + 1:])
        x = jnp.moveaxis(x, s, 0)                           # (j, i, *member split in chunk)
        x = jnp.moveaxis(x, 1, 1 + concat_axis)             # i just before the concat axis
        shape = get_aval(x).shape
        c = 1 + concat_axis
        return lax.reshape(x, shape[:c] + (shape[c] * shape[c + 1],) + shape[c + 2:]), 0
    x = jnp.moveaxis(x, split_axis + 1, 0)                   # (j, i, *member without split)
    return jnp.moveaxis(x, 1, 1 + concat_axis), 0


def _all_to_all_transpose(ctx, ct, x, *, axes, split_axis, concat_axis, tiled,
                          axis_index_groups=None):
    return [all_to_all_p.bind(instantiate(ct), axes=axes, split_axis=concat_axis,
                              concat_axis=split_axis, tiled=tiled, **_gp(axis_index_groups))]


# --- pbroadcast -------------------------------------------------------------------------------------
pbroadcast_p = Primitive("pbroadcast")


def _pbroadcast_vmap(ctx, args, dims, *, axes, source):
    import plugax.lax as lax
    (x,), (d,) = args, dims
    if ctx.axis_name not in axes:
        return pbroadcast_p.bind(x, axes=axes, source=source), d
    if d is None:
        return x, None
    return lax.index_in_dim(x, source, d, keepdims=False), None


def _pbroadcast_transpose(ctx, ct, x, *, axes, source):
    """Only the source member's input reaches the outputs: it gets the sum of their
    cotangents, the others zero."""
    import plugax.lax as lax
    (total,) = psum_p.bind(instantiate(ct), axes=axes)
    (name,) = axes
    is_source = lax.eq(axis_index_p.bind(axis_name=name), np.int32(source))
    zeros = lax.full_like(total, 0)
    return [lax.select(lax.broadcast_in_dim(is_source, get_aval(total).shape, ()), total, zeros)]


# --- the rule sets ------------------------------------------------------------------------------------
def _linear_jvp(prim: Primitive) -> Callable:
    def jvp(ctx, primals, tangents, **params):
        out = prim.bind(*primals, **params)
        if type(tangents[0]) is Zero:
            return out, Zero.from_value(out)
        return out, prim.bind(instantiate(tangents[0]), **params)
    return jvp


def _single(abstract_eval: Callable | None = None) -> Callable:
    def rule(ctx, aval, **params):
        _check_bound(params["axes"])
        return aval if abstract_eval is None else abstract_eval(ctx, aval, **params)
    return rule


for _p in (psum_p, pmax_p, pmin_p, all_gather_p, reduce_scatter_p, axis_index_p, ppermute_p,
           all_to_all_p, pbroadcast_p):
    declare_collective(_p)

RULES = [
    RuleSet(psum_p, impl=_unbound(psum_p), abstract_eval=_same_avals, jvp=_psum_jvp,
            transpose=_psum_transpose, batching=_reduction_vmap(psum_p, _sum, _times_size),
            lowering={"default": _unbound(psum_p)}),
    RuleSet(pmax_p, impl=_unbound(pmax_p), abstract_eval=_same_avals,
            jvp=_extremum_jvp(pmax_p),
            batching=_reduction_vmap(pmax_p, _reduce("reduce_max"), lambda x, n: x),
            lowering={"default": _unbound(pmax_p)}),
    RuleSet(pmin_p, impl=_unbound(pmin_p), abstract_eval=_same_avals,
            jvp=_extremum_jvp(pmin_p),
            batching=_reduction_vmap(pmin_p, _reduce("reduce_min"), lambda x, n: x),
            lowering={"default": _unbound(pmin_p)}),
    RuleSet(all_gather_p, impl=_unbound(all_gather_p),
            abstract_eval=_single(_all_gather_abstract_eval), jvp=_linear_jvp(all_gather_p),
            transpose=_all_gather_transpose, batching=_all_gather_vmap,
            lowering={"default": _unbound(all_gather_p)}),
    RuleSet(reduce_scatter_p, impl=_unbound(reduce_scatter_p),
            abstract_eval=_single(_reduce_scatter_abstract_eval),
            jvp=_linear_jvp(reduce_scatter_p), transpose=_reduce_scatter_transpose,
            batching=_reduce_scatter_vmap, lowering={"default": _unbound(reduce_scatter_p)}),
    RuleSet(axis_index_p, impl=_unbound(axis_index_p), abstract_eval=_axis_index_abstract_eval,
            jvp=lambda ctx, p, t, **k: (axis_index_p.bind(**k), Zero(ShapedArray(
                (), np.dtype(np.int32)))),
            batching=_axis_index_vmap, lowering={"default": _unbound(axis_index_p)}),
    RuleSet(ppermute_p, impl=_unbound(ppermute_p), abstract_eval=_single(),
            jvp=_linear_jvp(ppermute_p), transpose=_ppermute_transpose,
            batching=_ppermute_vmap, lowering={"default": _unbound(ppermute_p)}),
    RuleSet(all_to_all_p, impl=_unbound(all_to_all_p),
            abstract_eval=_single(_all_to_all_abstract_eval), jvp=_linear_jvp(all_to_all_p),
            transpose=_all_to_all_transpose, batching=_all_to_all_vmap,
            lowering={"default": _unbound(all_to_all_p)}),
    RuleSet(pbroadcast_p, impl=_unbound(pbroadcast_p), abstract_eval=_single(),
            jvp=_linear_jvp(pbroadcast_p), transpose=_pbroadcast_transpose,
            batching=_pbroadcast_vmap, lowering={"default": _unbound(pbroadcast_p)}),
]


# --- the lax functions ---------------------------------------------------------------------------------
def _tree_map(fn: Callable, x: Any) -> Any:
    from plugax.tree_util import tree_map
    return tree_map(fn, x)


def _multi(prim: Primitive, x: Any, axis_name: Any, groups: tuple | None = None) -> Any:
    from plugax.tree_util import tree_flatten, tree_unflatten
    leaves, tree = tree_flatten(x)
    if not leaves:
        return x
    return tree_unflatten(tree, prim.bind(*leaves, axes=_axes(axis_name), **_gp(groups)))


def psum(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The sum of `x` (a pytree) over the members of the named axis (or axes), the same
    for every member; with `axis_index_groups`, over the members of each one's group."""
    groups = _canonical_groups(axis_index_groups)
    if groups is not None:
        from plugax.tree_util import tree_leaves
        if not any(isinstance(v, Tracer) for v in tree_leaves(x)):
            # known now: JAX multiplies by the group size, with no collective
            _check_bound(_axes(axis_name))
            return _tree_map(lambda v: _times_size(
                v.astype(np.int32) if get_aval(v).dtype == np.bool_ else v, len(groups[0])),
                _tree_map(np.asarray, x))
    return _multi(psum_p, x, axis_name, groups)


def pmean(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The mean of `x` over the named axis (or axes, or each member's group); integers
    give floats, as in JAX."""
    import plugax.lax as lax
    import plugax.numpy as jnp
    groups = _canonical_groups(axis_index_groups)
    n = len(groups[0]) if groups is not None else axis_size(axis_name)
    return _tree_map(lambda s: lax.div(jnp.asarray(s, jnp.result_type(s, 1.0)) if
                                       get_aval(s).dtype.kind in "biu" else s,
                                       np.asarray(n, jnp.result_type(s, 1.0))),
                     psum(x, axis_name, axis_index_groups=groups))


def pmax(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The maximum of `x` over the named axis (or axes, or each member's group)."""
    return _multi(pmax_p, x, axis_name, _canonical_groups(axis_index_groups))


def pmin(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The minimum of `x` over the named axis (or axes, or each member's group)."""
    return _multi(pmin_p, x, axis_name, _canonical_groups(axis_index_groups))


def all_gather(x: Any, axis_name: Any, *, axis_index_groups: Any = None, axis: int = 0,
               tiled: bool = False, to: str = "varying") -> Any:
    """Every member's `x` stacked along a new `axis` (concatenated along it when tiled).
    `to` is the result's type in shard_map (JAX's): 'varying' (each member's result is
    its own, so an out_specs entry must name the axis), or 'invarying' (the one value
    every member holds, so it may be returned with the axis left out of out_specs; its
    transpose slices instead of summing). On a vmap axis both compute the same. With
    `axis_index_groups` each member gathers its group's values (in the group's order)."""
    if to not in ("varying", "invarying"):
        if to == "reduced":
            raise NotImplementedError("lax.all_gather: to='reduced' (JAX's unreduced "
                                      "types) is not supported by plugax")
        raise ValueError(f"Got unexpected `to` value for `jax.lax.all_gather`. Allowed "
                         f"`to` values are: {{'invarying', 'varying', 'reduced'}}")
    groups = _canonical_groups(axis_index_groups, even=True)
    if groups is not None and to == "invarying":
        raise NotImplementedError("lax.all_gather: axis_index_groups with to='invarying' "
                                  "is not supported (nor in JAX)")

    def one(v):
        ndim = get_aval(v).ndim
        a = axis % (ndim if tiled else ndim + 1) if ndim or not tiled else axis
        return all_gather_p.bind(v, axes=_axes(axis_name), axis=int(a), tiled=bool(tiled),
                                 to=to, **_gp(groups))
    return _tree_map(one, x)


def psum_scatter(x: Any, axis_name: Any, *, scatter_dimension: int = 0,
                 axis_index_groups: Any = None, tiled: bool = False) -> Any:
    """psum, then member j keeps the j-th slice (chunk, when tiled) of
    `scatter_dimension` (with `axis_index_groups`: its j-th in its group)."""
    groups = _canonical_groups(axis_index_groups, even=True)
    return _tree_map(lambda v: reduce_scatter_p.bind(
        v, axes=_axes(axis_name), scatter_dimension=int(scatter_dimension) % get_aval(v).ndim,
        tiled=bool(tiled), **_gp(groups)), x)


def axis_index(axis_name: Any) -> Any:
    """This member's index (int32) along the named vmap axis."""
    return axis_index_p.bind(axis_name=axis_name)


def axis_size(axis_name: Any) -> int:
    """The size of the named vmap axis (or the product over several), a Python int."""
    n = 1
    for name in _axes(axis_name):
        n *= named_axis_size(name)
    return n


def ppermute(x: Any, axis_name: Any, perm: Sequence[tuple[int, int]]) -> Any:
    """Member `src` sends `x` to member `dst` for each (src, dst) in `perm` (under vmap a
    permutation of all members, as JAX's)."""
    perm = tuple((int(s), int(t)) for s, t in perm)
    return _tree_map(lambda v: ppermute_p.bind(v, axes=_axes(axis_name), perm=perm), x)


def pshuffle(x: Any, axis_name: Any, perm: Sequence[int]) -> Any:
    """Member i receives member perm[i]'s `x`."""
    return ppermute(x, axis_name, list(zip(perm, range(len(perm)))))


def all_to_all(x: Any, axis_name: Any, split_axis: int, concat_axis: int, *,
               axis_index_groups: Any = None, tiled: bool = False) -> Any:
    """Member i's `split_axis` chunk j goes to member j, which puts the chunks it receives
    along `concat_axis` (a new axis unless tiled); with `axis_index_groups`, j counts the
    members of i's group."""
    groups = _canonical_groups(axis_index_groups, even=True)

    def one(v):
        ndim = get_aval(v).ndim
        return all_to_all_p.bind(v, axes=_axes(axis_name), split_axis=int(split_axis) % ndim,
                                 concat_axis=int(concat_axis) % ndim, tiled=bool(tiled),
                                 **_gp(groups))
    return _tree_map(one, x)


def pswapaxes(x: Any, axis_name: Any, axis: int, *, axis_index_groups: Any = None) -> Any:
    """The named axis and positional `axis` trade places (all_to_all with one axis)."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


def pbroadcast(x: Any, axis_name: Any, source: int) -> Any:
    """Every member receives member `source`'s `x`."""
    return _tree_map(lambda v: pbroadcast_p.bind(v, axes=_axes(axis_name),
                                                 source=int(source)), x)


LAX: dict[str, Any] = {f.__name__: f for f in (
    psum, pmean, pmax, pmin, all_gather, psum_scatter, axis_index, axis_size, ppermute,
    pshuffle, all_to_all, pswapaxes, pbroadcast)}
