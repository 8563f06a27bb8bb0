"""`shard_map`: a function written per device, run on every device of a mesh.

Why a primitive whose lowering is `sdy.manual_computation`: the body sees one
device's block of each input (the global shape divided as `in_specs` says) and
may call the collectives (`psum`, `all_gather`, `ppermute`, ...) over mesh
axes. The collectives are the control_flow family's primitives, the same ones
`vmap(axis_name=...)` batches away; here they stay in the body's jaxpr (the
kernel's `named_axes` binds the mesh axis names while it is traced) and, while
the body is lowered, lowering rules of this module replace theirs (a scoped
`plugax.extend.override`) to emit StableHLO's cross-device collectives with the
replica groups of the named mesh axes, the form JAX emits.

The body is manual over every mesh axis (as JAX's default); an output whose
spec does not name an axis is taken from one device along it, so with
`check_vma=True` (the default, as JAX's) `vma.py` infers which axes each output
may vary over and refuses such specs with JAX's ValueError (`check_vma=False`
skips the check: the caller vouches that those copies are equal). jvp and vmap of a shard_map are shard_maps of the
transformed body. Reverse mode does not transpose the body (that needs JAX's
tracking of which values vary across devices): `_partial_eval` evaluates the
global function the shard_map stands for, written with vmaps over the mesh axes,
so `grad` gets that function's derivative from the ordinary rules.
"""
from __future__ import annotations

import contextvars
import math
import weakref
from typing import Any, Callable, Sequence

import numpy as np

import plugax.tree_util as tu
from plugax.extend import (Primitive, RuleSet, ShapedArray, Tracer, Zero, batch_jaxpr,
                           bdim_at_front, config, current_trace, eval_trace, flatten_fun,
                           get_primitive, jvp_jaxpr, leaf_aval, named_axes, override,
                           registry_version, trace_to_jaxpr)

from .sharding import Mesh, NamedSharding, PartitionSpec

__all__ = ["shard_map", "shard_map_p", "RULES"]

shard_map_p = Primitive("shard_map", multiple_results=True)

# the mesh whose manual computation is being lowered (for the collectives' groups)
_MANUAL: contextvars.ContextVar = contextvars.ContextVar("plugax_manual_mesh", default=None)


def _split(shape: Sequence[int], spec: PartitionSpec, mesh: Mesh, what: str) -> tuple:
    out = []
    for i, n in enumerate(shape):
        k = math.prod(mesh.shape[a] for a in spec.axes(i))
        if n % k:
            raise ValueError(f"shard_map: {what} has shape {tuple(shape)}, whose dimension {i} "
                             f"({n}) is not divisible by {k}, the number of devices "
                             f"{spec!r} splits it over")
        out.append(n // k)
    return tuple(out)


def _join(shape: Sequence[int], spec: PartitionSpec, mesh: Mesh) -> tuple:
    return tuple(n * math.prod(mesh.shape[a] for a in spec.axes(i)) for i, n in enumerate(shape))


def _abstract_eval(ctx, *avals, jaxpr, mesh, in_specs, out_specs):
    return [ShapedArray(_join(a.shape, s, mesh), a.dtype, a.weak_type)
            for a, s in zip(jaxpr.out_avals, out_specs)]


_runners: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()


def _impl(ctx, *args, jaxpr, mesh, in_specs, out_specs):
    """Run eagerly: a sharded jit of the one equation, made once per body jaxpr (the
    front end keeps one jaxpr per argument types, so a loop compiles once)."""
    key = (mesh, in_specs, out_specs)
    runners = _runners.setdefault(jaxpr, {})
    sj = runners.get(key)
    if sj is None:
        from .jit import JitFunction
        from .spmd import ShardedJit

        def run(*xs):
            return shard_map_p.bind(*xs, jaxpr=jaxpr, mesh=mesh, in_specs=in_specs,
                                    out_specs=out_specs)
        sj = runners[key] = ShardedJit(JitFunction(run, (), (), ()),
                                       tuple(NamedSharding(mesh, s) for s in in_specs),
                                       list(NamedSharding(mesh, s) for s in out_specs))
    return list(sj(*args))


def _sdy_list(specs: Sequence[PartitionSpec], mesh: Mesh, avals: Sequence[Any]) -> str:
    return "[" + ", ".join(NamedSharding(mesh, s)._sdy(len(a.shape))
                           for s, a in zip(specs, avals)) + "]"


def _lowering(ctx, *args, jaxpr, mesh, in_specs, out_specs):
    from .spmd import active_mesh, _load_sdy
    if active_mesh() != mesh:
        raise ValueError(f"shard_map over {mesh!r} inside a program partitioned over "
                         f"{active_mesh()!r}: one program uses one mesh")
    ir = ctx.ir
    _load_sdy(ir.Context.current)
    in_local = list(jaxpr.in_avals)
    attrs = {
        "in_shardings": ir.Attribute.parse(
            "#sdy.sharding_per_value<" + _sdy_list(in_specs, mesh, ctx.avals_in) + ">"),
        "out_shardings": ir.Attribute.parse(
            "#sdy.sharding_per_value<" + _sdy_list(out_specs, mesh, ctx.avals_out) + ">"),
        "manual_axes": ir.Attribute.parse(
            "#sdy<manual_axes{" + ", ".join(f'"{a}"' for a in mesh.axis_names) + "}>"),
    }
    out_types = [ctx.module.ir_type(a) for a in ctx.avals_out]
    op = ir.Operation.create("sdy.manual_computation", results=out_types, operands=list(args),
                             attributes=attrs, regions=1)
    block = op.regions[0].blocks.append(*[ctx.module.ir_type(a) for a in in_local])
    token = _MANUAL.set(mesh)
    try:
        with ir.InsertionPoint(block), override(*_collective_rules()):
            outs = ctx.module.lower_jaxpr(jaxpr, list(block.arguments))
            ir.Operation.create("sdy.return", results=[], operands=list(outs))
    finally:
        _MANUAL.reset(token)
    return list(op.results)


def _jvp(ctx, primals, tangents, *, jaxpr, mesh, in_specs, out_specs):
    """The jvp of the body, run as one shard_map; tangents split like their primals."""
    nonzeros = tuple(type(t) is not Zero for t in tangents)
    with named_axes(list(mesh.shape.items())):
        jvp_closed, out_nz = jvp_jaxpr(jaxpr, nonzeros)
    ins = in_specs + tuple(s for s, nz in zip(in_specs, nonzeros) if nz)
    outs_spec = out_specs + tuple(s for s, nz in zip(out_specs, out_nz) if nz)
    outs = shard_map_p.bind(*primals, *[t for t in tangents if type(t) is not Zero],
                            jaxpr=jvp_closed, mesh=mesh, in_specs=ins, out_specs=outs_spec)
    n = len(out_specs)
    primals_out, nz_out = outs[:n], iter(outs[n:])
    return primals_out, [next(nz_out) if nz else Zero.from_value(p)
                         for p, nz in zip(primals_out, out_nz)]


def _vmap(ctx, args, dims, *, jaxpr, mesh, in_specs, out_specs):
    """The batched body as one shard_map; the batch axis (in front) is not split."""
    batched = tuple(d is not None for d in dims)
    args = [bdim_at_front(x, d, ctx.axis_size) if d is not None else x
            for x, d in zip(args, dims)]
    with named_axes(list(mesh.shape.items())):
        closed, out_batched = batch_jaxpr(jaxpr, ctx.axis_size, batched)
    front = lambda s, b: PartitionSpec(None, *s) if b else s
    outs = shard_map_p.bind(*args, jaxpr=closed, mesh=mesh,
                            in_specs=tuple(map(front, in_specs, batched)),
                            out_specs=tuple(map(front, out_specs, out_batched)))
    return outs, [0 if b else None for b in out_batched]


def _partial_eval(ctx, trace, *args, jaxpr, mesh, in_specs, out_specs):
    """Reverse mode: the shard_map as the global program it stands for (each device's
    block a member of nested vmaps named by the mesh axes, the collectives batched by
    their vmap rules), evaluated on the partial-eval trace. Its known half runs now;
    the linear half is staged as ordinary primitives, whose transposes exist, so
    `grad` of a shard_map is the gradient of the function it computes. (The staged
    backward pass is one global program; inside a sharded jit XLA partitions it.)"""
    if _uses_groups(jaxpr):
        raise NotImplementedError(
            "grad of a shard_map whose body uses collectives with axis_index_groups is not "
            "supported by plugax: its reverse mode runs the body as vmaps over the mesh "
            "axes, and grouped collectives have no vmap rule (nor in JAX). Take the "
            "gradient inside the body instead (their transposes are there)")
    with override(*_pvary_rules(batching=lambda ctx, args, dims, *, axes: (
            args[0] if ctx.axis_name in axes else _pvary().bind(args[0], axes=axes),
            dims[0]))):
        return global_equivalent(list(args), jaxpr, mesh, in_specs, out_specs)


def _pvary() -> Any:
    return get_primitive("pvary")


def _pvary_rules(**rules: Any) -> list:
    """Rules of lax.pcast's primitive for a scope: in the body run as vmaps over the
    mesh axes (a vmap member is a device; the cast is the identity on it), and in a
    body traced with check_vma=False (JAX's pcast is a no-op there, derivative
    included). None where the control_flow family is not loaded."""
    try:
        return [RuleSet(_pvary(), **rules)]
    except LookupError:
        return []


def _uses_groups(jaxpr: Any) -> bool:
    from .vma import _sub_jaxprs
    jx = getattr(jaxpr, "jaxpr", jaxpr)
    return any(eqn.params.get("axis_index_groups") is not None
               or any(_uses_groups(j) for j in _sub_jaxprs(eqn.params)) for eqn in jx.eqns)


def global_equivalent(args: list, jaxpr: Any, mesh: Mesh, in_specs: Sequence[PartitionSpec],
                      out_specs: Sequence[PartitionSpec]) -> list:
    """What the shard_map computes, written with vmap over the mesh axes."""
    import plugax
    from plugax.extend import eval_jaxpr, get_aval, reshape, split, transpose
    names, sizes = list(mesh.axis_names), dict(mesh.shape)
    blocks, present = [], []
    for x, spec in zip(args, in_specs):
        shape, dims, axis_pos = [], [], {}
        for i, n in enumerate(get_aval(x).shape):
            axes = spec.axes(i)
            for a in axes:
                axis_pos[a] = len(shape)
                shape.append(sizes[a])
            dims.append(len(shape))
            shape.append(n // math.prod(sizes[a] for a in axes))
        x = reshape(x, shape)
        have = [a for a in names if a in axis_pos]
        x = transpose(x, [axis_pos[a] for a in have] + dims)
        blocks.append(x)
        present.append(set(have))

    def level(k: int) -> Any:
        if k == len(names):
            return lambda *xs: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *xs)
        a = names[k]
        return plugax.vmap(level(k + 1), in_axes=[0 if a in p else None for p in present],
                           out_axes=0, axis_name=a, axis_size=sizes[a])
    outs = level(0)(*blocks)          # each: [mesh axes..., *local shape]
    results = []
    for y, spec in zip(outs, out_specs):
        k = len(names)
        local = tuple(get_aval(y).shape[k:])
        keep = [spec.axes(i) for i in range(len(local))]
        named = {a for axes in keep for a in axes}
        for axis in reversed(range(k)):      # unnamed axes: one copy (they are equal)
            a = names[axis]
            if a not in named and sizes[a] > 1:
                y = split(y, [1, sizes[a] - 1], axis)[0]
        left = [a for a in names if a in named]
        y = reshape(y, [sizes[a] for a in left] + list(local))
        order = []
        for i, axes in enumerate(keep):
            order += [left.index(a) for a in axes] + [len(left) + i]
        y = transpose(y, order)
        results.append(reshape(y, _join(local, spec, mesh)))
    return results


RULES = [RuleSet(shard_map_p, impl=_impl, abstract_eval=_abstract_eval, jvp=_jvp,
                 batching=_vmap, partial_eval=_partial_eval,
                 lowering={"default": _lowering})]


# --- the collectives, lowered over mesh axes ---------------------------------------

def _groups(axes: Sequence[str], axis_index_groups: Any = None) -> np.ndarray:
    """Device positions (partition ids) grouped by the named mesh axes: one row per
    combination of the other axes' coordinates, members in the named axes' order;
    with `axis_index_groups` (indices along the named axes), each row split into
    those groups, as JAX's replica groups (uneven ones padded with -1)."""
    mesh = _MANUAL.get()
    names = list(mesh.axis_names)
    for a in axes:
        if a not in names:
            raise NameError(f"unbound axis name: {a}. The mesh of the enclosing shard_map "
                            f"has axes {tuple(names)}")
    ids = np.arange(mesh.size).reshape(mesh.axis_sizes)
    rest = [a for a in names if a not in axes]
    perm = [names.index(a) for a in rest] + [names.index(a) for a in axes]
    k = math.prod(mesh.shape[a] for a in axes)
    rows = ids.transpose(perm).reshape(-1, k)
    if axis_index_groups is None:
        return rows
    width = max(map(len, axis_index_groups))
    return np.array([[row[i] for i in g] + [-1] * (width - len(g))
                     for row in rows for g in axis_index_groups], np.int64)


def _group_size(axes: Sequence[str], axis_index_groups: Any) -> int:
    if axis_index_groups is not None:
        return len(axis_index_groups[0])
    return math.prod(_MANUAL.get().shape[a] for a in axes)


def _common(ctx, axes, axis_index_groups=None) -> dict:
    ir = ctx.ir
    return {"replica_groups": ir.DenseIntElementsAttr.get(
        np.ascontiguousarray(_groups(axes, axis_index_groups), np.int64)),
            "channel_handle": ir.Attribute.parse(
                "#stablehlo.channel_handle<handle = 1, type = 1>")}


def _with_reducer(ctx, name, x, out_type, attrs, combine):
    ir, hlo = ctx.ir, ctx.hlo
    op = ir.Operation.create(name, results=[out_type], operands=[x], attributes=attrs,
                             regions=1)
    scalar = ir.RankedTensorType.get([], ir.RankedTensorType(x.type).element_type)
    block = op.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        hlo.ReturnOp([combine(*block.arguments)])
    return op.result


def _reduce_rule(combine_name: str) -> Callable:
    def rule(ctx, *xs, axes, axis_index_groups=None):
        ir = ctx.ir
        combine = getattr(ctx.hlo, combine_name)
        outs = []
        for x in xs:
            attrs = dict(_common(ctx, axes, axis_index_groups),
                         use_global_device_ids=ir.UnitAttr.get())
            if ir.RankedTensorType(x.type).element_type == ir.IntegerType.get_signless(1) \
                    and combine_name == "AddOp":
                combine = ctx.hlo.OrOp
            outs.append(_with_reducer(ctx, "stablehlo.all_reduce", x, x.type, attrs,
                                      lambda a, b: combine(a, b).result))
        return outs
    return rule


def _reshape(ctx, x, shape):
    ir = ctx.ir
    t = ir.RankedTensorType.get(list(shape), ir.RankedTensorType(x.type).element_type)
    return ctx.hlo.ReshapeOp(t, x).result


def _all_gather(ctx, x, *, axes, axis, tiled, to="varying", axis_index_groups=None):
    ir = ctx.ir
    shape = list(ctx.avals_in[0].shape)
    if not tiled:
        shape.insert(axis, 1)
        x = _reshape(ctx, x, shape)
    gathered = list(shape)
    gathered[axis] *= _group_size(axes, axis_index_groups)
    t = ir.RankedTensorType.get(gathered, ir.RankedTensorType(x.type).element_type)
    attrs = dict(_common(ctx, axes, axis_index_groups), all_gather_dim=ir.IntegerAttr.get(
        ir.IntegerType.get_signless(64), axis), use_global_device_ids=ir.UnitAttr.get())
    return [ir.Operation.create("stablehlo.all_gather", results=[t], operands=[x],
                                attributes=attrs).result]


def _reduce_scatter(ctx, x, *, axes, scatter_dimension, tiled, axis_index_groups=None):
    ir = ctx.ir
    shape = list(ctx.avals_in[0].shape)
    out = list(shape)
    out[scatter_dimension] //= _group_size(axes, axis_index_groups)
    t = ir.RankedTensorType.get(out, ir.RankedTensorType(x.type).element_type)
    attrs = dict(_common(ctx, axes, axis_index_groups), scatter_dimension=ir.IntegerAttr.get(
        ir.IntegerType.get_signless(64), scatter_dimension),
        use_global_device_ids=ir.UnitAttr.get())
    r = _with_reducer(ctx, "stablehlo.reduce_scatter", x, t, attrs,
                      lambda a, b: ctx.hlo.AddOp(a, b).result)
    return [r if tiled else _reshape(ctx, r, ctx.avals_out[0].shape)]


def _all_to_all(ctx, x, *, axes, split_axis, concat_axis, tiled, axis_index_groups=None):
    """Tiled: StableHLO's all_to_all. Untiled (the split dimension has one entry per
    member, and the members' pieces form a new dimension at `concat_axis`): the tiled
    exchange along the split dimension itself, then that dimension moved there."""
    ir = ctx.ir
    k = _group_size(axes, axis_index_groups)
    i64 = ir.IntegerType.get_signless(64)
    concat = concat_axis if tiled else split_axis
    attrs = dict(_common(ctx, axes, axis_index_groups), split_dimension=ir.IntegerAttr.get(i64, split_axis),
                 concat_dimension=ir.IntegerAttr.get(i64, concat),
                 split_count=ir.IntegerAttr.get(i64, k))
    t = ctx.module.ir_type(ctx.avals_out[0]) if tiled else x.type
    y = ir.Operation.create("stablehlo.all_to_all", results=[t], operands=[x],
                            attributes=attrs).result
    if tiled or split_axis == concat_axis:
        return [y]
    perm = [d for d in range(len(ctx.avals_in[0].shape)) if d != split_axis]
    perm.insert(concat_axis, split_axis)
    return [ctx.hlo.TransposeOp(y, ir.DenseI64ArrayAttr.get(perm)).result]


def _ppermute(ctx, x, *, axes, perm):
    ir = ctx.ir
    pairs = [(int(g[s]), int(g[d])) for g in _groups(axes) for s, d in perm]
    attrs = {"source_target_pairs": ir.DenseIntElementsAttr.get(
                 np.array(pairs, np.int64).reshape(-1, 2)),
             "channel_handle": _common(ctx, axes)["channel_handle"]}
    return [ir.Operation.create("stablehlo.collective_permute", results=[x.type],
                                operands=[x], attributes=attrs).result]


def _axis_index(ctx, *, axis_name):
    ir, hlo = ctx.ir, ctx.hlo
    mesh = _MANUAL.get()
    if axis_name not in mesh.shape:
        _groups((axis_name,))     # the NameError
    names = list(mesh.axis_names)
    stride = math.prod(mesh.axis_sizes[names.index(axis_name) + 1:])
    i32 = ir.IntegerType.get_signless(32)
    scalar = ir.RankedTensorType.get([], i32)
    pid = hlo.ConvertOp(scalar, hlo.PartitionIdOp().result).result

    def const(v):
        return hlo.ConstantOp(ir.DenseElementsAttr.get(np.array(v, np.int32))).result
    q = hlo.DivOp(pid, const(stride)).result
    return [hlo.RemOp(q, const(mesh.shape[axis_name])).result]


def _pbroadcast(ctx, x, *, axes, source):
    """Member `source`'s value on every member: the untiled all_gather over the axes,
    then its `source` row (exact for every dtype; CPU has no collective_broadcast)."""
    ir, hlo = ctx.ir, ctx.hlo
    (g,) = _all_gather(ctx, x, axes=axes, axis=0, tiled=False)
    shape = list(ctx.avals_in[0].shape)
    i64 = lambda v: ir.DenseI64ArrayAttr.get(v)
    row = hlo.SliceOp(g, i64([source] + [0] * len(shape)), i64([source + 1] + shape),
                      i64([1] * (len(shape) + 1))).result
    return [_reshape(ctx, row, shape)]


def _collective_rules() -> list:
    table = {"pbroadcast": _pbroadcast, "psum": _reduce_rule("AddOp"), "pmax": _reduce_rule("MaxOp"),
             "pmin": _reduce_rule("MinOp"), "all_gather": _all_gather,
             "reduce_scatter": _reduce_scatter, "all_to_all": _all_to_all,
             "ppermute": _ppermute, "axis_index": _axis_index}
    out = []
    for name, rule in table.items():
        try:
            prim = get_primitive(name)
        except LookupError:   # the control_flow family is not loaded
            continue
        out.append(RuleSet(prim, lowering={"default": rule}))
    return out


# --- the front end -----------------------------------------------------------------

def _specs(specs: Any, n: int, tree: Any, what: str) -> list:
    from .spmd import _broadcast
    flat = _broadcast(specs, tree, n, f"shard_map: {what}")
    out = []
    for s in flat:
        if s is None:
            s = PartitionSpec()
        if not isinstance(s, PartitionSpec):
            raise TypeError(f"shard_map: {what} entries are PartitionSpecs, got {s!r}")
        out.append(s)
    return out


def shard_map(f: Callable | None = None, /, *, out_specs: Any, in_specs: Any = None,
              mesh: Mesh | None = None, axis_names: Any = None,
              check_vma: bool = True) -> Callable:
    """`f` run on every device of `mesh`, each call seeing its device's block of each
    argument (split as `in_specs` says); the results are put together as `out_specs`
    says. Inside `f` the collectives over mesh axes communicate between devices.
    `check_vma` (default True, as JAX): a ValueError at trace time when an output may
    vary over a mesh axis its out_specs entry leaves out (that entry would keep one
    device's copy); False trusts the specs."""
    if f is None:
        return lambda g: shard_map(g, out_specs=out_specs, in_specs=in_specs, mesh=mesh,
                                   axis_names=axis_names, check_vma=check_vma)
    if mesh is None:
        mesh = Mesh.current()
        if mesh is None:
            raise ValueError("shard_map needs a mesh: pass mesh=..., or call it inside "
                             "`with mesh:`")

    traced: dict = {}    # (argument structure, avals, x64) -> (params, output tree)

    def wrapped(*args: Any) -> Any:
        leaves, in_tree = tu.tree_flatten(args)
        avals = [leaf_aval(x) for x in leaves]
        key = (in_tree, tuple((a.shape, a.dtype, a.weak_type) for a in avals),
               config.enable_x64, registry_version())
        hit = traced.get(key)
        if hit is None:
            hit = traced[key] = _trace(args, leaves, in_tree, avals)
        params, tree = hit
        if current_trace() is eval_trace:
            outs = _impl(None, *leaves, **params)
        else:
            outs = shard_map_p.bind(*leaves, **params)
        return tu.tree_unflatten(tree, outs)

    def _trace(args: tuple, leaves: list, in_tree: Any, avals: list) -> tuple:
        ins = _specs(in_specs, len(leaves), in_tree, "in_specs")
        for spec in ins:
            NamedSharding(mesh, spec)      # unknown or repeated axes: the ValueError
        local = [ShapedArray(_split(a.shape, s, mesh, f"argument {i}"), a.dtype, a.weak_type)
                 for i, (a, s) in enumerate(zip(avals, ins))]

        def body(*xs):
            return f(*xs)
        flat, out_tree = flatten_fun(lambda a, k: body(*a), tu.tree_structure((args, {})))
        unchecked = [] if check_vma else _pvary_rules(
            jvp=lambda ctx, p, t, *, axes: (_pvary().bind(p[0], axes=axes), t[0]))
        with named_axes(list(mesh.shape.items())), override(*unchecked):
            closed = trace_to_jaxpr(flat, local)
        tree = out_tree()
        outs_spec = _specs(out_specs, len(closed.out_avals), tree, "out_specs")
        for spec, a in zip(outs_spec, closed.out_avals):
            if len(spec) > len(a.shape):
                raise ValueError(f"shard_map: out_specs entry {spec!r} is longer than the "
                                 f"rank of the output {a.shape}")
            NamedSharding(mesh, spec)
        if check_vma:
            from .vma import check_out_specs, infer_vma, spec_vma
            vmas = infer_vma(closed, [spec_vma(s) for s in ins], mesh.axis_names)
            check_out_specs(f, mesh, tree, out_specs, outs_spec, vmas)
        if closed.consts and any(isinstance(c, Tracer) for c in closed.consts):
            raise NotImplementedError("shard_map: a body closing over values of an enclosing "
                                      "transformation (grad, vmap) is not supported yet; "
                                      "pass them as arguments")
        return (dict(jaxpr=closed, mesh=mesh, in_specs=tuple(ins),
                     out_specs=tuple(outs_spec)), tree)

    wrapped.__name__ = getattr(f, "__name__", "shard_map")
    return wrapped
