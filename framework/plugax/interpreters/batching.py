"""Vectorising map: tracers carry a batched value and the axis it is batched along.

A batch dimension of None means "not batched"; such values are never boxed.
Moving and materialising batch axes uses the kernel's structural primitives
(`transpose`, `broadcast_in_dim`, and `reduce_sum` for cotangents of unbatched
inputs), so vmap works with no family loaded.
"""
from __future__ import annotations

import contextlib
import threading
import weakref
from typing import Any, Callable, Iterator, Sequence

from ..core import trace as core
from ..core.avals import ShapedArray, get_aval
from ..core.rules import RuleContext, missing_rule, batching_rules
from ..structural import (bdim_at_front, broadcast_batched, broadcast_in_dim,
                          move_batch_axis, moveaxis, reduce_sum)
from .ad_util import instantiate

__all__ = ["BatchTrace", "BatchTracer", "vmap_flat", "not_mapped", "move_batch_axis",
           "moveaxis", "broadcast_batched", "bdim_at_front", "all_front",
           "named_axis_size", "rule_axis_name", "declare_collective", "named_axes"]

not_mapped = None


# --- named axes: vmap(axis_name=...) and the collectives that name it ------------------
class _AxisEnv(threading.local):
    def __init__(self) -> None:
        self.names: list = []        # (name, size) of the vmaps running, innermost last
        self.rule_name: Any = None   # the axis name of the vmap whose rule is running


_axis_env = _AxisEnv()


def named_axis_size(name: Any) -> int:
    """The size of the running vmap named `name` (innermost first); a NameError, as JAX
    raises, when no vmap of that name is running."""
    for bound, size in reversed(_axis_env.names):
        if bound == name:
            return size
    raise NameError(f"unbound axis name: {name}. The following axis names (e.g. defined "
                    f"by vmap(axis_name=...)) are available to collective operations: "
                    f"{[n for n, _ in _axis_env.names if n is not None]}")


@contextlib.contextmanager
def named_axes(pairs: Sequence[tuple]) -> Iterator[None]:
    """Bind axis names with their sizes while tracing a function whose collectives name
    them without a vmap: shard_map's body, where each name is a mesh axis and the
    collectives stay in the jaxpr, to be lowered as cross-device collectives."""
    n = len(_axis_env.names)
    _axis_env.names.extend(pairs)
    try:
        yield
    finally:
        del _axis_env.names[n:]


def rule_axis_name() -> Any:
    """The axis name of the vmap whose batching rule is running: batch_jaxpr gives the
    bodies it batches (scan, cond, while, jit) that same name, so collectives inside
    them see it."""
    return _axis_env.rule_name


_collectives: "weakref.WeakSet[core.Primitive]" = weakref.WeakSet()


def _jaxprs_name_axis(values: Any, name: Any) -> bool:
    """Whether any (closed) jaxpr among `values` (params, or tuples of them) has an
    equation of a collective naming `name`, at any depth."""
    from ..jaxpr.ir import ClosedJaxpr, Jaxpr
    for value in values:
        if isinstance(value, (tuple, list)):
            if _jaxprs_name_axis(value, name):
                return True
            continue
        jaxpr = value.jaxpr if isinstance(value, ClosedJaxpr) else value
        if not isinstance(jaxpr, Jaxpr):
            continue
        for eqn in jaxpr.eqns:
            if eqn.primitive in _collectives and _params_name(eqn.params, name):
                return True
            if _jaxprs_name_axis(eqn.params.values(), name):
                return True
    return False


def declare_collective(primitive: core.Primitive) -> core.Primitive:
    """Mark `primitive` as a collective: its params name vmap axes (`axes=(name, ...)`,
    as JAX's psum, or `axis_name=name`), and under the vmap of such a name its batching
    rule runs even when no operand is batched (a psum of a constant still sums over the
    axis). Returns the primitive."""
    _collectives.add(primitive)
    return primitive


def _names_axis(primitive: core.Primitive, params: dict, name: Any) -> bool:
    """Whether `primitive` is a collective whose params name the axis `name`, or a
    higher-order primitive (cond, scan, jit, ...) whose jaxprs hold one: its rule must
    run, so that the collective inside sees the axis."""
    if name is None:
        return False
    if primitive not in _collectives:
        return _jaxprs_name_axis(params.values(), name)
    return _params_name(params, name)


def _params_name(params: dict, name: Any) -> bool:
    for key in ("axes", "axis_name"):
        named = params.get(key)
        if named is not None and (named == name or (isinstance(named, tuple)
                                                    and name in named)):
            return True
    return False


class BatchTracer(core.Tracer):
    __slots__ = ("val", "batch_dim")

    def __init__(self, trace: "BatchTrace", val: Any, batch_dim: int):
        self._trace = trace
        self.val = val
        self.batch_dim = batch_dim

    @property
    def aval(self) -> ShapedArray:
        aval = get_aval(self.val)
        shape = aval.shape[:self.batch_dim] + aval.shape[self.batch_dim + 1:]
        return ShapedArray(shape, aval.dtype, aval.weak_type)


class BatchTrace(core.Trace):
    def __init__(self, axis_size: int, axis_name: Any = None):
        self.axis_size = axis_size
        self.axis_name = axis_name
        self.ctx = RuleContext("vmap", axis_size, axis_name)
        self.created_at = core.user_frame()

    def to_val_dim(self, x: Any) -> tuple[Any, int | None]:
        if isinstance(x, BatchTracer) and x._trace is self:
            return x.val, x.batch_dim
        return x, not_mapped

    def process_primitive(self, primitive: core.Primitive, args: tuple, params: dict) -> Any:
        vals, dims = zip(*map(self.to_val_dim, args)) if args else ((), ())
        state = core._state
        state.trace = self.parent
        outer_name = _axis_env.rule_name
        try:
            if all(d is None for d in dims) and not _names_axis(primitive, params,
                                                                 self.axis_name):
                return primitive.bind(*vals, **params)
            rule = batching_rules.get(primitive)
            if rule is None:
                raise missing_rule(primitive, "vmap", "vmap (batching)")
            _axis_env.rule_name = self.axis_name
            out, out_dim = rule(self.ctx, list(vals), list(dims), **params)
        finally:
            _axis_env.rule_name = outer_name
            state.trace = self
        if primitive.multiple_results:
            return [self.box(v, d) for v, d in zip(out, out_dim)]
        return self.box(out, out_dim)

    def box(self, val: Any, dim: int | None) -> Any:
        return val if dim is None else BatchTracer(self, val, dim)

    def _batched_call(self, args: list, process, make_funs) -> list:
        """Re-issue a custom-derivative call one level out with batched callables."""
        vals, dims = zip(*map(self.to_val_dim, args)) if args else ((), ())
        vals, dims = list(vals), list(dims)
        state = core._state
        state.trace = self.parent
        try:
            if all(d is None for d in dims):
                return process(self.parent, *make_funs(None), vals)
            outs = process(self.parent, *make_funs(dims), vals)
        finally:
            state.trace = self
        return [self.box(o, 0) for o in outs]

    def _vmapped(self, fn, dims):
        return lambda *xs: vmap_flat(fn, self.axis_size, dims, xs, all_front(),
                                     axis_name=self.axis_name)

    def process_custom_jvp_call(self, fun, jvp, args: list) -> list:
        def make(dims):
            if dims is None:
                return fun, jvp
            n = len(dims)
            def jvp_flat(*pt):
                p_out, t_out = jvp(list(pt[:n]), list(pt[n:]))
                return [*p_out, *t_out]
            both = self._vmapped(jvp_flat, dims + dims)
            def jvp_b(primals, tangents):
                outs = both(*primals, *[instantiate(t) for t in tangents])
                return outs[:len(outs) // 2], outs[len(outs) // 2:]
            return self._vmapped(fun, dims), jvp_b
        return self._batched_call(
            args, lambda t, f, j, v: t.process_custom_jvp_call(f, j, v), make)

    def process_custom_vjp_call(self, fun, fwd, bwd, args: list) -> list:
        def make(dims):
            if dims is None:
                return fun, fwd, bwd
            split = {}
            def fwd_flat(*xs):
                outs, res = fwd(*xs)
                split["n"] = len(outs)
                return [*outs, *res]
            fwd_all = self._vmapped(fwd_flat, dims)
            def fwd_b(*xs):
                both = fwd_all(*xs)
                return both[:split["n"]], both[split["n"]:]
            def bwd_b(res, cts):
                # residuals and output cotangents carry their batch axis in front (fwd_b
                # put it there); each input cotangent must come back in its input's
                # layout: at that input's batch axis, or summed over the batch when the
                # input was not batched (it was shared by every example)
                nr = len(res)
                trace = BatchTrace(self.axis_size, self.axis_name)
                with core.new_trace_context(trace):
                    ins = [trace.box(x, 0) for x in [*res, *[instantiate(c) for c in cts]]]
                    outs = bwd(ins[:nr], ins[nr:])
                    vals_dims = [trace.to_val_dim(o) for o in outs]
                return [_ct_in_layout(v, d, dst, self.axis_size)
                        for (v, d), dst in zip(vals_dims, dims)]
            return self._vmapped(fun, dims), fwd_b, bwd_b
        return self._batched_call(args, lambda t, f, fw, bw, v: t.process_custom_vjp_call(
            f, fw, bw, v), make)

    def describe(self) -> str:
        name = f", axis_name={self.axis_name!r}" if self.axis_name is not None else ""
        return f"BatchTrace(axis_size={self.axis_size}{name})"


class all_front:
    """`out_dims` for vmap_flat: every output, however many, gets its batch axis first."""

    def __iter__(self):
        while True:
            yield 0


def _ct_in_layout(ct: Any, src: int | None, dst: int | None, axis_size: int) -> Any:
    """A cotangent batched at `src` (None: the same for every example), laid out like
    its primal input: batched at `dst`, or, for an unbatched input, summed over the
    batch. Symbolic zeros stay symbolic."""
    from .ad_util import Zero
    if type(ct) is Zero:
        if dst is None:
            return ct
        shape = list(ct.aval.shape)
        shape.insert(dst % (len(shape) + 1), axis_size)
        return Zero(ct.aval.update(shape=tuple(shape)))
    if dst is None:
        return ct if src is None else reduce_sum(ct, (src,))
    return move_batch_axis(axis_size, src, dst, ct)


def vmap_flat(fun: Callable[..., Sequence[Any]], axis_size: int, in_dims: Sequence[Any],
              args: Sequence[Any], out_dims: Sequence[int | None], *,
              axis_name: Any = None) -> list:
    """Run `fun` batched; outputs get their batch axis at `out_dims` (None: unbatched).
    `axis_name` names the batch axis for collectives (lax.psum(x, axis_name), ...)."""
    trace = BatchTrace(axis_size, axis_name)
    _axis_env.names.append((axis_name, axis_size))
    try:
        with core.new_trace_context(trace):
            ins = [trace.box(x, d) for x, d in zip(args, in_dims)]
            outs = fun(*ins)
            vals_dims = [trace.to_val_dim(o) for o in outs]
    finally:
        _axis_env.names.pop()
    results = []
    for (val, dim), out_dim in zip(vals_dims, out_dims):
        if out_dim is None:
            if dim is not None:
                raise ValueError("vmap has out_axes=None for an output that is batched")
            results.append(val)
        else:
            _check_out_axis(out_dim, get_aval(val).ndim + (dim is None))
            results.append(move_batch_axis(axis_size, dim, out_dim, val))
    return results


def _check_out_axis(out_dim: int, ndim: int) -> None:
    """`out_axes` must name an axis of the batched result (of rank `ndim`): NumPy-style
    wrapping would silently put the batch axis somewhere else."""
    if not -ndim <= out_dim < ndim:
        raise ValueError(f"vmap out_axes: axis {out_dim} is out of bounds for array of "
                         f"dimension {ndim}")
