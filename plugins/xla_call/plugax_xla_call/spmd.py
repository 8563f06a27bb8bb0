"""SPMD jit: one program over a mesh of devices, split by XLA's partitioner (Shardy).

Why this shape: plugax never splits a program itself. A sharded jit lowers the
same jaxpr as `jit` does, then marks the module for the partitioner: an
`sdy.mesh @mesh`, an `sdy.sharding` on each argument and result whose sharding
is known (given in `in_shardings`/`out_shardings`, or the sharding of a
committed input), `sdy.sharding_constraint` ops where the program calls
`with_sharding_constraint`, and `mhlo.num_partitions`. It compiles with SPMD
partitioning on, and then *asks the executable* which sharding it chose for each
argument and result (`get_parameter_shardings`/`get_output_shardings`): inputs
are placed that way before each call (an Array already placed so is passed as
it is), outputs come back as Arrays sharded that way. Arguments left
unannotated therefore get whatever the partitioner propagated to them, as in JAX.

Under a transformation (grad, vmap, an outer jit) a sharded jit is the ordinary
jit of `fun` with its in/out shardings applied as sharding constraints, so the
transformed program keeps the layout and every transformation composes.
"""
from __future__ import annotations

import contextvars
import functools
from typing import Any, Callable, Sequence

import numpy as np

import plugax.tree_util as tu
from plugax.extend import (Array, Primitive, RuleSet, Zero, current_trace, eval_trace,
                           instantiate, is_undefined_primal, jit_disabled,
                           lower_jaxpr_to_module, make_mlir_context, runtime)

from .sharding import Mesh, NamedSharding, PartitionSpec, Sharding, named_from_hlo

__all__ = ["ShardedJit", "with_sharding_constraint", "sharding_constraint_p", "RULES",
           "active_mesh", "annotate_module", "compile_options", "sharded_leaves"]

# the mesh of the module being lowered (None: a single-device lowering, where
# constraints are the identity)
_MESH: contextvars.ContextVar = contextvars.ContextVar("plugax_spmd_mesh", default=None)


def active_mesh() -> Mesh | None:
    return _MESH.get()


# --- with_sharding_constraint ------------------------------------------------------

sharding_constraint_p = Primitive("sharding_constraint", multiple_results=True)


def _constraint_jvp(ctx, primals, tangents, *, sharding):
    out = sharding_constraint_p.bind(*primals, sharding=sharding)
    t = [instantiate(t) for t in tangents]
    return out, sharding_constraint_p.bind(*t, sharding=sharding)


def _constraint_transpose(ctx, cts, x, *, sharding):
    ct = cts[0]
    if type(ct) is Zero:
        return [ct if is_undefined_primal(x) else None]
    return [sharding_constraint_p.bind(instantiate(ct), sharding=sharding)[0]]


def _constraint_batching(ctx, args, dims, *, sharding):
    d = dims[0]
    if d is None or not isinstance(sharding, NamedSharding):
        return sharding_constraint_p.bind(*args, sharding=sharding), list(dims)
    parts = list(sharding.spec) + [None] * (args[0].ndim - 1 - len(sharding.spec))
    parts.insert(d, None)   # the batch dimension is not split
    inner = NamedSharding(sharding.mesh, PartitionSpec(*parts))
    return sharding_constraint_p.bind(*args, sharding=inner), list(dims)


def _constraint_lowering(ctx, x, *, sharding):
    mesh = _MESH.get()
    if mesh is None or not isinstance(sharding, NamedSharding):
        return [x]     # one device: every layout is the whole array
    if sharding.mesh != mesh:
        raise ValueError(f"with_sharding_constraint: {sharding!r} is on another mesh than "
                         f"the jitted program's {mesh!r}; one program uses one mesh")
    ir = ctx.ir
    _load_sdy(ir.Context.current)
    ndim = len(ctx.avals_in[0].shape)
    op = ir.Operation.create(
        "sdy.sharding_constraint", results=[x.type], operands=[x],
        attributes={"sharding": ir.Attribute.parse("#sdy.sharding" + sharding._sdy(ndim))})
    return [op.result]


def _load_sdy(context: Any) -> None:
    from jaxlib.mlir._mlir_libs import _sdy
    _sdy.register_dialect(context)


RULES = [RuleSet(
    sharding_constraint_p,
    impl=lambda ctx, x, *, sharding: [x],
    abstract_eval=lambda ctx, aval, *, sharding: [aval],
    jvp=_constraint_jvp, transpose=_constraint_transpose, batching=_constraint_batching,
    lowering={"default": _constraint_lowering})]


def _resolve(sharding: Any) -> Any:
    if isinstance(sharding, PartitionSpec):
        mesh = Mesh.current()
        if mesh is None:
            raise ValueError(f"with_sharding_constraint: a bare {sharding!r} needs a mesh: "
                             f"pass NamedSharding(mesh, spec) or call it inside `with mesh:`")
        return NamedSharding(mesh, sharding)
    if sharding is not None and not isinstance(sharding, Sharding):
        raise TypeError(f"with_sharding_constraint: expected a Sharding or PartitionSpec, "
                        f"got {type(sharding).__name__}: {sharding!r}")
    return sharding


def with_sharding_constraint(x: Any, shardings: Any) -> Any:
    """`x` (a pytree) unchanged in value, laid out as `shardings` says at this point of
    a sharded program (a hint to XLA's partitioner; the identity on one device)."""
    leaves, tree = tu.tree_flatten(x)
    specs = _broadcast(shardings, tree, len(leaves), "with_sharding_constraint")
    out = []
    for leaf, s in zip(leaves, specs):
        s = _resolve(s)
        if s is None:
            out.append(leaf)
            continue
        if isinstance(s, NamedSharding):
            s.check_shape(np.shape(leaf), "with_sharding_constraint's operand")
        out.append(sharding_constraint_p.bind(leaf, sharding=s)[0])
    return tu.tree_unflatten(tree, out)


def _is_spec_leaf(x: Any) -> bool:
    return x is None or isinstance(x, (Sharding, PartitionSpec))


def _broadcast(shardings: Any, tree: Any, n: int, what: str) -> list:
    """One sharding per leaf of `tree`: `shardings` is a pytree prefix of it (a single
    sharding for everything, one per top-level entry, ... down to one per leaf)."""
    def expand(prefix: Any, sub: Any) -> list:
        if _is_spec_leaf(prefix):
            return [prefix] * sub.num_leaves
        children = tu.treedef_children(sub)
        if isinstance(prefix, dict):
            items = [prefix[k] for k in sorted(prefix)]
        elif isinstance(prefix, (tuple, list)):
            items = list(prefix)
        else:
            raise TypeError(f"{what}: expected shardings (or None) in a tuple, list or dict "
                            f"matching the values, got {type(prefix).__name__}: {prefix!r}")
        if len(items) != len(children) or tu.treedef_is_leaf(sub):
            raise ValueError(f"{what}: the shardings {shardings!r} do not match the "
                             f"structure of the values {tree}")
        return [s for item, child in zip(items, children) for s in expand(item, child)]
    out = expand(shardings, tree)
    assert len(out) == n
    return out


# --- the sharded program -----------------------------------------------------------

def sharded_leaves(leaves: Sequence[Any]) -> bool:
    """Whether any leaf is an Array spread over several devices."""
    sharded = None
    for x in leaves:
        buf = getattr(x, "_buf", None) if type(x) is Array else None
        if buf is not None:
            if sharded is None:
                sharded = runtime().sharded
            if sharded.is_sharded(buf):
                return True
    return False


def compile_options(num_partitions: int, device_ids: Sequence[int]) -> Any:
    """Compile options for one program split `num_partitions` ways by Shardy."""
    from jaxlib import xla_client as xc
    opts = xc.CompileOptions()
    opts.num_replicas = 1
    opts.num_partitions = num_partitions
    opts.device_assignment = xc.DeviceAssignment.create(
        np.asarray(device_ids).reshape(1, num_partitions))
    opts.executable_build_options.use_spmd_partitioning = True
    opts.executable_build_options.use_shardy_partitioner = True
    return opts


def annotate_module(text: str, mesh: Mesh, in_shardings: Sequence[Any],
                    out_shardings: Sequence[Any], in_avals: Sequence[Any],
                    out_avals: Sequence[Any]) -> str:
    """The module text with the Shardy mesh, argument/result shardings and partition
    count added (the form JAX 0.10 emits)."""
    from jaxlib.mlir import ir
    context = _parsing_context()
    with context, ir.Location.unknown(context):
        # the mesh goes in before parsing: the verifier checks that constraints name it
        head, rest = text.split("\n", 1)
        module = ir.Module.parse(f"{head}\n  sdy.mesh @mesh = {mesh.sdy_mesh()}\n{rest}")
        i32 = ir.IntegerType.get_signless(32)
        module.operation.attributes["mhlo.num_partitions"] = ir.IntegerAttr.get(i32, mesh.size)
        module.operation.attributes["mhlo.num_replicas"] = ir.IntegerAttr.get(i32, 1)
        main = next(op for op in module.body.operations if op.operation.name == "func.func" and
                    ir.StringAttr(op.attributes["sym_name"]).value == "main")

        def attrs(shardings, avals):
            out = []
            for s, a in zip(shardings, avals):
                d = {}
                if isinstance(s, NamedSharding):
                    d["sdy.sharding"] = ir.Attribute.parse("#sdy.sharding" +
                                                           s._sdy(len(a.shape)))
                out.append(ir.DictAttr.get(d))
            return ir.ArrayAttr.get(out)

        main.attributes["arg_attrs"] = attrs(in_shardings, in_avals)
        main.attributes["res_attrs"] = attrs(out_shardings, out_avals)
        return module.operation.get_asm(enable_debug_info=False)


def _parsing_context() -> Any:
    """An MLIR context that can read lowered modules plus Shardy's dialect."""
    context = make_mlir_context()
    _load_sdy(context)
    return context


class SpmdExecutable:
    """A partitioned executable: places inputs as it was compiled to take them and
    returns sharded Arrays."""

    partitioned = True        # jit's C++ fast path declines these (fastpath.py)
    host_callbacks = ()
    float0_outs = ()

    def __init__(self, text: str, mesh: Mesh, in_avals: list, out_avals: list,
                 out_user: Sequence[Any]):
        from jaxlib import xla_client as xc
        rt = runtime()
        self.text, self.mesh = text, mesh
        self.in_avals, self.out_avals = in_avals, out_avals
        devices = mesh.devices_flat
        client = rt.backend().client
        self.loaded = client.compile_and_load(
            text, xc.DeviceList(tuple(devices)),
            compile_options(mesh.size, [d.id for d in devices]))
        sharded = rt.sharded
        # None on a one-device mesh: everything is whole there
        params = [xc.HloSharding.from_proto(p) for p in self.loaded.get_parameter_shardings()
                  or [xc.HloSharding.replicate().to_proto()] * len(in_avals)]
        outs = [xc.HloSharding.from_proto(p) for p in self.loaded.get_output_shardings()
                or [xc.HloSharding.replicate().to_proto()] * len(out_avals)]
        self.in_targets = [sharded.make(devices, h, _user(mesh, h, a, None))
                           for h, a in zip(params, in_avals)]
        self.out_shardings = [sharded.make(devices, h, _user(mesh, h, a, u))
                              for h, a, u in zip(outs, out_avals, out_user)]
        self.handlers = [sharded.result_handler(a, s)
                         for a, s in zip(out_avals, self.out_shardings)]

    def _arg(self, x: Any, i: int) -> Any:
        target, aval = self.in_targets[i], self.in_avals[i]
        buf = getattr(x, "_buf", None) if type(x) is Array else None
        if buf is not None:
            s = buf._sharding
            if (getattr(s, "_hlo_sharding", None) == target._hlo_sharding and
                    list(s._internal_device_list) == list(target._internal_device_list)):
                return buf
        value = np.asarray(x, dtype=aval.dtype)
        return runtime().sharded.put(value, aval, target)

    def __call__(self, leaves: Sequence[Any]) -> list:
        bufs = [self._arg(x, i) for i, x in enumerate(leaves)]
        outs = self.loaded.execute_sharded(bufs).consume_with_handlers(self.handlers)
        return [Array.from_buffer(o, a) for o, a in zip(outs, self.out_avals)]

    def cost_analysis(self) -> dict:
        return dict(self.loaded.cost_analysis())

    def memory_analysis(self) -> Any:
        return self.loaded.get_compiled_memory_stats()

    def hlo_text(self) -> str:
        return self.loaded.get_hlo_text()


def program_mesh(jaxpr: Any) -> Mesh | None:
    """The mesh a plain jit's program must be partitioned over: that of a shard_map or
    a NamedSharding constraint among its equations (None: a one-device program)."""
    return _eqn_mesh(jaxpr)


def partitioned_executable(closed: Any, name: str, mesh: Mesh) -> SpmdExecutable:
    """A plain jit's program holding a shard_map or constraint, compiled over `mesh`
    with every argument and result sharding left to the partitioner."""
    token = _MESH.set(mesh)
    try:
        lowered = lower_jaxpr_to_module(closed, name, runtime().backend().platform)
    finally:
        _MESH.reset(token)
    n_in, n_out = len(closed.in_avals), len(closed.out_avals)
    text = annotate_module(lowered.text, mesh, [None] * n_in, [None] * n_out,
                           closed.in_avals, closed.out_avals)
    return SpmdExecutable(text, mesh, list(closed.in_avals), list(closed.out_avals),
                          [None] * n_out)


def _eqn_mesh(jaxpr: Any) -> Mesh | None:
    """The mesh of the first shard_map or sharding constraint among `jaxpr`'s equations."""
    for eqn in jaxpr.eqns:
        mesh = eqn.params.get("mesh")
        if isinstance(mesh, Mesh):
            return mesh
        s = eqn.params.get("sharding")
        if isinstance(s, NamedSharding):
            return s.mesh
    return None


def _user(mesh: Mesh, hlo: Any, aval: Any, given: Any) -> Any:
    if given is not None:
        return given
    return named_from_hlo(mesh, hlo, len(aval.shape))


class ShardedJit:
    """`jit(fun, in_shardings=..., out_shardings=...)`, and plain `jit` called on
    sharded Arrays (which then keeps their shardings)."""

    def __init__(self, jf: Any, in_shardings: Any = None, out_shardings: Any = None):
        self.jf = jf              # the plain JitFunction: tracing, its cache of jaxprs
        self.in_shardings, self.out_shardings = in_shardings, out_shardings
        self._compiled: dict = {}
        self.name = jf.name

    # -- shardings per leaf ---------------------------------------------------------
    def _leaf_shardings(self, args: tuple, kwargs: dict, leaves: list) -> list:
        if self.in_shardings is None:
            given = [None] * len(leaves)
        else:
            dyn_args, dyn_kwargs, _ = self.jf._split_static(args, kwargs)
            given = []
            shs = self.in_shardings
            if not isinstance(shs, (tuple, list)):
                shs = (shs,) * len(dyn_args)
            if len(shs) != len(dyn_args):
                raise ValueError(f"jit {self.name!r}: in_shardings has {len(shs)} entries but "
                                 f"the function was called with {len(dyn_args)} positional "
                                 f"arguments")
            for a, s in zip(dyn_args, shs):
                la, ta = tu.tree_flatten(a)
                given += _broadcast(s, ta, len(la), f"jit {self.name!r}: in_shardings")
            given += [None] * (len(leaves) - len(given))   # keyword arguments
        out = []
        for x, s in zip(leaves, given):
            s = _resolve(s)
            if s is None and type(x) is Array and x._buf is not None:
                from .sharding import sharding_of
                if runtime().sharded.is_sharded(x._buf):
                    s = sharding_of(x)       # a committed input keeps its sharding
            if isinstance(s, NamedSharding):
                s.check_shape(np.shape(x), f"jit {self.name!r}: an argument")
            out.append(s)
        return out

    def _out_shardings(self, out_tree: Any, n: int, out_avals: Sequence[Any]) -> list:
        if self.out_shardings is None:
            return [None] * n
        specs = [_resolve(s) for s in _broadcast(self.out_shardings, out_tree, n,
                                                 f"jit {self.name!r}: out_shardings")]
        for s, a in zip(specs, out_avals):
            if isinstance(s, NamedSharding):
                s.check_shape(a.shape, f"jit {self.name!r}: an output")
        return specs

    def _mesh(self, shardings: Sequence[Any]) -> Mesh | None:
        meshes = {s.mesh for s in shardings if isinstance(s, NamedSharding)}
        if len(meshes) > 1:
            raise ValueError(f"jit {self.name!r}: the shardings use {len(meshes)} different "
                             f"meshes; one program runs on one mesh")
        return meshes.pop() if meshes else Mesh.current()

    # -- calling ----------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if jit_disabled():
            return self.jf.fun(*args, **kwargs)
        if current_trace() is not eval_trace:
            return self._staged(args, kwargs)
        comp, leaves, out_tree = self._compile(args, kwargs)
        if comp is None:   # no mesh anywhere: the single-device jit
            return self.jf._call(args, kwargs)
        return tu.tree_unflatten(out_tree, comp(leaves))

    def _plan(self, args: tuple, kwargs: dict) -> tuple:
        """(cache entry, leaves, input and output shardings per leaf, mesh or None)."""
        entry, leaves = self.jf._entry(args, kwargs)
        in_sh = self._leaf_shardings(args, kwargs, leaves)
        out_avals = list(entry.closed.out_avals)
        out_sh = self._out_shardings(entry.out_tree, len(out_avals), out_avals)
        mesh = self._mesh(in_sh + out_sh) or _eqn_mesh(entry.closed.jaxpr)
        return entry, leaves, in_sh, out_sh, mesh

    def _compile(self, args: tuple, kwargs: dict) -> tuple:
        entry, leaves, in_sh, out_sh, mesh = self._plan(args, kwargs)
        if mesh is None:
            return None, leaves, entry.out_tree
        key = (id(entry.closed), tuple(in_sh), tuple(out_sh), mesh)
        hit = self._compiled.get(key)
        if hit is None or hit[0] is not entry.closed:
            comp = self._build(entry, mesh, in_sh, out_sh)
            hit = self._compiled[key] = (entry.closed, comp)
        return hit[1], leaves, entry.out_tree

    def _build(self, entry: Any, mesh: Mesh, in_sh: list, out_sh: list) -> SpmdExecutable:
        text = self.lower_text(entry, mesh, in_sh, out_sh)
        return SpmdExecutable(text, mesh, list(entry.closed.in_avals),
                              list(entry.closed.out_avals), out_sh)

    def lower_text(self, entry: Any, mesh: Mesh, in_sh: list, out_sh: list) -> str:
        token = _MESH.set(mesh)
        try:
            lowered = lower_jaxpr_to_module(entry.closed, self.name,
                                            runtime().backend().platform)
        finally:
            _MESH.reset(token)
        if lowered.host_callbacks:
            raise NotImplementedError(f"jit {self.name!r}: host callbacks (pure_callback, "
                                      f"debug.print) in a program sharded over devices are "
                                      f"not supported yet")
        return annotate_module(lowered.text, mesh, in_sh, out_sh, entry.closed.in_avals,
                               entry.closed.out_avals)

    def _staged(self, args: tuple, kwargs: dict) -> Any:
        """Under a transformation: the plain jit with the shardings as constraints."""
        ins, outs, jf = self.in_shardings, self.out_shardings, self.jf

        def constrained(*a: Any, **k: Any) -> Any:
            if ins is not None:
                shs = ins if isinstance(ins, (tuple, list)) else (ins,) * len(a)
                a = tuple(with_sharding_constraint(x, s) if s is not None else x
                          for x, s in zip(a, shs))
            out = jf.fun(*a, **k)
            return out if outs is None else with_sharding_constraint(out, outs)

        # a plain jit of the constrained function: built from jf's own class, so this
        # module stays below jit.py (which builds ShardedJit)
        inner = type(jf)(constrained, jf.static_argnums, jf.static_argnames, ())
        return inner.as_function()(*args, **kwargs)

    def lower(self, *args: Any, **kwargs: Any) -> "LoweredSharded":
        entry, _, in_sh, out_sh, mesh = self._plan(args, kwargs)
        if mesh is None:
            return self.jf.lower(*args, **kwargs)
        return LoweredSharded(self, entry, mesh, in_sh, out_sh)


class LoweredSharded:
    """`.lower()` of a sharded jit: the annotated module; `.compile()` partitions it."""

    def __init__(self, sj: ShardedJit, entry: Any, mesh: Mesh, in_sh: list, out_sh: list):
        self._sj, self._entry, self.mesh = sj, entry, mesh
        self._in, self._out = in_sh, out_sh
        self._text = sj.lower_text(entry, mesh, in_sh, out_sh)

    def as_text(self, dialect: str | None = None) -> str:
        return self._text

    def compile(self) -> "CompiledSharded":
        exe = SpmdExecutable(self._text, self.mesh, list(self._entry.closed.in_avals),
                             list(self._entry.closed.out_avals), self._out)
        return CompiledSharded(exe, self._entry.out_tree)


class CompiledSharded:
    def __init__(self, exe: SpmdExecutable, out_tree: Any):
        self._exe, self._out_tree = exe, out_tree

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        leaves = tu.tree_leaves((args, kwargs))
        return tu.tree_unflatten(self._out_tree, self._exe(leaves))

    def cost_analysis(self) -> dict:
        return self._exe.cost_analysis()

    def memory_analysis(self) -> Any:
        return self._exe.memory_analysis()

    def as_text(self) -> str:
        return self._exe.hlo_text()

    @property
    def input_shardings(self) -> list:
        return [s.user for s in self._exe.in_targets]

    @property
    def output_shardings(self) -> list:
        return [s.user for s in self._exe.out_shardings]


def sharded_jit(jf: Any, in_shardings: Any, out_shardings: Any) -> Callable:
    """The function `jit(..., in_shardings=, out_shardings=)` returns."""
    sj = ShardedJit(jf, in_shardings, out_shardings)

    @functools.wraps(jf.fun)
    def call(*args: Any, **kwargs: Any) -> Any:
        return sj(*args, **kwargs)

    call.lower, call.trace, call.cache_size = sj.lower, jf.trace, jf.cache_size
    call.jit_function = jf
    call.sharded = sj
    return call

