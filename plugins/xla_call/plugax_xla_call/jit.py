"""`jit`: trace once per signature, compile once, then call the executable.

A jitted function keeps a cache from *signature* to entry. The signature is
what tracing depends on: the pytree structure of the arguments, each leaf's
shape, dtype and weak type, the static arguments' values, the plugin registry's
version and the x64 flag (one cache per x64 setting: the cached-call key is the
arguments' signature ids alone, and a function traced with x64 on may make
64-bit values from 32-bit arguments), and the thread's active rule overrides
(`plugax.extend.override`: a function jitted outside a block and called inside
is traced and compiled again with the block's rules, and the other way round). An entry holds the traced jaxpr and, once a
top-level call needs it, the compiled executable. A function's print runs
only while tracing, so it prints once per new signature.

Calls from the top level (no transformation running, no override active) take
the fast path:
device buffers in, `execute`, device buffers out, no `bind`. Calls under a
transformation bind the `pjit` primitive so the transformation sees one
equation whose rules (primitive.py) transform the whole jaxpr.
"""
from __future__ import annotations

import functools
import inspect
import threading
import weakref
from collections import OrderedDict
from typing import Any, Callable, Sequence


import plugax.tree_util as tu
from plugax.extend import (Array, ClosedJaxpr, Jaxpr, ShapeDtypeStruct, Tracer, device_array_types,
                           active_overrides, config as _config, current_trace, eval_trace,
                           flatten_fun, jit_disabled, leaf_aval, registry_version, signature_of,
                           trace_state, trace_to_jaxpr)

from .donation import donated_leaves, resolve_donation, run_donating
from .fastpath import make_dispatcher, uses_cpp_dispatch
from .primitive import executable_for, pjit_p

__all__ = ["jit", "JitFunction", "ShapeDtypeStruct"]


_CONTAINERS = (tuple, list, dict)


def _call_key(args: tuple) -> tuple[Any, tuple | None]:
    """(leaves, key) of the cached-call path (the jitted function inlines this):
    positional Arrays key on their signature ids alone, containers on `_fast_key`."""
    try:
        return args, tuple(map(signature_of, args))
    except AttributeError:
        return _fast_key(args)


def _fast_key(args: tuple) -> tuple[Any, tuple | None]:
    """(leaves, key) for the cached-call path, or key None if the arguments need
    the general path."""
    leaves: list = []
    key: list = []
    if not _fast_flatten(args, leaves, key):
        return leaves, None
    return leaves, tuple(key)


def _fast_flatten(x: Any, leaves: list, key: list) -> bool:
    """Flatten Arrays in tuples, lists and dicts, writing a signature key as we go.

    The cached-call path uses this instead of building a PyTreeDef: the key
    (container kinds, dict keys, and each Array's signature id: its shape, dtype and
    weak type as one int) determines the tree structure and the avals, so equal
    keys mean equal signatures. Leaves come out in `tree_flatten`'s order (dict
    keys sorted). Returns False for anything else (scalars, NumPy arrays,
    custom nodes), which then takes the general path.
    """
    t = type(x)
    if t is tuple or t is list:
        key.append((t, len(x)))
        children = x
    elif t is dict:
        names = sorted(x)
        key.append(tuple(names))
        children = [x[k] for k in names]
    else:
        return False
    for c in children:
        if type(c) is Array or type(c) in device_array_types:  # no recursive call
            leaves.append(c)
            key.append(signature_of(c))
        elif not _fast_flatten(c, leaves, key):
            return False
    return True


def _leaf_key(x: Any) -> tuple:
    """What tracing depends on for one argument leaf: shape, dtype, weak type."""
    if type(x) is Array or type(x) in device_array_types:
        return x.shape, x.dtype, x.weak_type
    a = leaf_aval(x)
    return a.shape, a.dtype, a.weak_type


class _Entry:
    """One traced signature: its jaxpr, output structure and (lazily) executable."""

    __slots__ = ("closed", "out_tree", "name", "const_tracers", "version", "_exe", "_build",
                 "single", "donated")

    def __init__(self, closed: ClosedJaxpr, out_tree: Any, name: str,
                 const_tracers: list = (), version: int | None = None):
        self.closed, self.out_tree, self.name = closed, out_tree, name
        self.const_tracers = list(const_tracers)
        # the registry version read *before* tracing: if plugins changed while it traced,
        # the entry is stale at once and the next call traces again with the new rules
        self.version = registry_version() if version is None else version
        self._exe = None
        self.donated: tuple = ()    # indices of donated leaves (donation.py)
        self.single = tu.treedef_is_leaf(out_tree)
        self._build = _output_builder(out_tree)

    def call(self, leaves: Sequence[Any]) -> Any:
        """Run on concrete leaves (Arrays, NumPy values, scalars); results stay on device."""
        if self._exe is None:
            self._exe = executable_for(self.closed, self.name, self.donated)
        try:
            outs = self._exe(leaves)
        except Exception as err:
            if not any(isinstance(x, Array) and x._buf is not None and x._buf.is_deleted()
                       for x in leaves):
                raise
            # a donated (deleted) Array passed again: the ValueError jaxlib's C++
            # dispatcher raises (and JAX), whichever path served the call
            raise ValueError(str(err)) from None
        return outs[0] if self.single else self._build(outs)


def _output_builder(tree: Any) -> Callable[[list], Any]:
    """How to rebuild the output pytree from its leaves, decided once per entry:
    a flat tuple, list or dict of leaves is rebuilt directly, anything deeper by
    `tree_unflatten`."""
    node = tree.node
    if node is not None and all(tu.treedef_is_leaf(c) for c in tree.subtrees):
        if node.name == "tuple":
            return tuple
        if node.name == "list":
            return list
        if node.name == "dict":
            names = tree.meta
            return lambda leaves: dict(zip(names, leaves))
    return lambda leaves: tu.tree_unflatten(tree, leaves)


class JitFunction:
    """A jitted function's state: its cache, static arguments, tracing, lowering.

    `jit` returns `as_function()`, a closure over this object with the cached
    call inlined; `lower`, `trace` and `cache_size` are attributes of it.
    """

    def __init__(self, fun: Callable, static_argnums: Sequence[int], static_argnames:
                 Sequence[str], donate_argnums: Sequence[int],
                 donate_argnames: Sequence[str] = ()):
        self.fun = fun
        self.static_argnums = tuple(static_argnums)
        self.static_argnames = tuple(static_argnames)
        self.donate_argnums, self.donate_argnames = resolve_donation(
            fun, tuple(donate_argnums), tuple(donate_argnames))
        self.name = getattr(fun, "__name__", type(fun).__name__)
        _check_static_argnums(fun, self.name, self.static_argnums, self.static_argnames,
                              self.donate_argnums)
        self._caches = _shared_cache(fun)   # (x64 off, x64 on)
        self._lock = threading.Lock()
        self._simple = (not self.static_argnums and not self.static_argnames
                        and not self.donate_argnums and not self.donate_argnames)

    # -- calling -------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._call(args, kwargs)

    def as_function(self) -> Callable:
        """The function `jit` returns: jaxlib's C++ dispatcher for this function
        (fastpath.py), or, when that is off or unavailable, the cached top-level call,
        inlined in Python.

        Everything in `call` runs on every call of a jitted function, so it is a
        plain closure (cheaper to call than an object's `__call__`) that reads the
        thread's current trace and the registry version directly. The rest of the
        JitFunction is reachable through its attributes (`lower`, `trace`, ...).
        """
        caches, slow, simple = self._caches, self._call, self._simple

        def call(*args: Any, **kwargs: Any) -> Any:
            if simple and not kwargs and trace_state.trace is eval_trace:
                if args and type(args[0]) in _CONTAINERS:   # no exception to pay for
                    leaves, key = _fast_key(args)
                else:
                    try:  # `_call_key`, inlined: only Arrays have a signature
                        leaves, key = args, tuple(map(signature_of, args))
                    except AttributeError:  # a scalar or NumPy array further on
                        leaves, key = _fast_key(args)
                entry = caches[1 if _config.enable_x64 else 0].get(key)
                if entry is not None and entry.version == registry_version():
                    return entry.call(leaves)
            return slow(args, kwargs)

        cpp_call = make_dispatcher(self)   # jaxlib's C++ dispatcher (fastpath.py)
        return self._attach(call if cpp_call is None else cpp_call)

    def _attach(self, call: Callable) -> Callable:
        functools.update_wrapper(call, self.fun)
        call.lower, call.trace, call.cache_size = self.lower, self.trace, self.cache_size
        call.jit_function = self
        call.uses_cpp_dispatch = functools.partial(uses_cpp_dispatch, call)
        return call

    def _call(self, args: tuple, kwargs: dict) -> Any:
        if jit_disabled():
            return self.fun(*args, **kwargs)
        if current_trace() is eval_trace and _sharded_args(args, kwargs):
            return self._spmd()(*args, **kwargs)   # committed sharded inputs (spmd.py)
        entry, leaves = self._entry(args, kwargs)
        if current_trace() is eval_trace and not entry.const_tracers:
            return run_donating(entry, leaves)
        outs = pjit_p.bind(*entry.const_tracers, *leaves, jaxpr=entry.closed, name=self.name)
        return tu.tree_unflatten(entry.out_tree, outs)

    def _spmd(self) -> Any:
        """The SPMD form of this function, for calls on Arrays sharded over devices."""
        sj = self.__dict__.get("_sharded")
        if sj is None:
            from .spmd import ShardedJit
            sj = self._sharded = ShardedJit(self)
        return sj

    def _entry(self, args: tuple, kwargs: dict) -> tuple["_Entry", list]:
        """The cache entry for these arguments (tracing on a miss), and their leaves."""
        dyn_args, dyn_kwargs, statics = self._split_static(args, kwargs)
        leaves, in_tree = tu.tree_flatten((dyn_args, dyn_kwargs))
        fast_key = _call_key(args)[1] if self._simple and not kwargs else None
        if fast_key is not None:
            key = fast_key  # the cached-call path's key (see __call__)
        else:
            key = (in_tree, *[v for x in leaves for v in _leaf_key(x)], statics,
                   _config.enable_x64)
        overrides = active_overrides()
        if overrides:   # traced and compiled with other rules: never the fast path's key
            key = (overrides, key)
        entry = self._cache.get(key)
        if entry is not None and entry.version == registry_version():
            self._cache.move_to_end(key)
            return entry, leaves
        entry = self._trace(args, kwargs, in_tree, [leaf_aval(x) for x in leaves])
        if not entry.const_tracers:  # a closure over another trace's tracers is one-off
            with self._lock:
                self._cache[key] = entry
                while len(self._cache) > max(1, _config.jit_cache_size):
                    self._cache.popitem(last=False)
        return entry, leaves

    def _trace(self, args: tuple, kwargs: dict, in_tree: Any, avals: list) -> "_Entry":
        positions = self._static_positions(len(args))
        static_vals = {i: args[i] for i in positions}
        static_kw = {k: kwargs[k] for k in self.static_argnames if k in kwargs}

        def fun(dyn_args: tuple, dyn_kwargs: dict) -> Any:
            return self.fun(*_merge(dyn_args, static_vals), **dyn_kwargs, **static_kw)

        version = registry_version()
        flat, out_tree = flatten_fun(fun, in_tree)
        closed = trace_to_jaxpr(flat, avals)
        closed, const_tracers = _hoist_tracer_consts(closed)
        entry = _Entry(closed, out_tree(), self.name, const_tracers, version)
        if self.donate_argnums or self.donate_argnames:
            entry.donated = donated_leaves(self, args, kwargs, len(avals))
        return entry

    def _split_static(self, args: tuple, kwargs: dict) -> tuple:
        positions = self._static_positions(len(args))
        statics = tuple((i, _hashable_static(args[i], i)) for i in positions)
        statics += tuple((k, _hashable_static(kwargs[k], k)) for k in self.static_argnames
                         if k in kwargs)
        dyn_args = tuple(a for i, a in enumerate(args) if i not in positions)
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        return dyn_args, dyn_kwargs, statics

    def _static_positions(self, n: int) -> set:
        return {i % n for i in self.static_argnums if -n <= i < n} if n else set()

    # -- ahead of time -------------------------------------------------------------
    def trace(self, *args: Any, **kwargs: Any) -> ClosedJaxpr:
        """The jaxpr this function stages for these arguments (what `make_jaxpr` shows)."""
        return self._entry(args, kwargs)[0].closed

    def lower(self, *args: Any, lowering_platforms: Any = None, **kwargs: Any) -> "Any":
        """The function lowered for these arguments (a `Lowered`). `lowering_platforms`
        (JAX's `Traced.lower` keyword, so not passed to the function) lowers for
        another platform than this process's, e.g. ("cuda",) on a CPU-only machine:
        its module can be read (`as_text`), not compiled here."""
        from .aot import Lowered
        entry, leaves = self._entry(args, kwargs)
        return Lowered(entry, [leaf_aval(x) for x in leaves], self, lowering_platforms)

    @property
    def _cache(self) -> OrderedDict:
        """The cache of the current x64 setting."""
        return self._caches[1 if _config.enable_x64 else 0]

    def cache_size(self) -> int:
        return len(self._cache)

    def __repr__(self) -> str:
        return f"<jit-compiled function {self.name}>"


def _sharded_args(args: tuple, kwargs: dict) -> bool:
    from .spmd import sharded_leaves
    return sharded_leaves(tu.tree_leaves((args, kwargs)))


def _hoist_tracer_consts(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list]:
    """Closed-over tracers of enclosing transformations become leading arguments.

    They must be visible to those transformations (a closed-over jvp tracer
    carries a tangent), so the pjit equation takes them as inputs, as JAX does;
    concrete closed-over arrays stay constants of the jaxpr.
    """
    jaxpr = closed.jaxpr
    is_tracer = [isinstance(c, Tracer) for c in closed.consts]
    if not any(is_tracer):
        return closed, []
    hoisted = [v for v, t in zip(jaxpr.constvars, is_tracer) if t]
    kept = [v for v, t in zip(jaxpr.constvars, is_tracer) if not t]
    new = Jaxpr(kept, [*hoisted, *jaxpr.invars], jaxpr.eqns, jaxpr.outvars)
    return (ClosedJaxpr(new, [c for c, t in zip(closed.consts, is_tracer) if not t]),
            [c for c, t in zip(closed.consts, is_tracer) if t])


def _merge(dyn: tuple, statics: dict) -> list:
    out, dyn_iter = [], iter(dyn)
    for i in range(len(dyn) + len(statics)):
        out.append(statics[i] if i in statics else next(dyn_iter))
    return out


def _hashable_static(value: Any, where: Any) -> Any:
    try:
        hash(value)
    except TypeError as err:
        # jaxlib's C++ dispatcher's wording (and JAX's), so both paths raise alike
        raise ValueError(f"Non-hashable static arguments are not supported. An error "
                         f"occurred while trying to hash an object of type {type(value)}, "
                         f"{value!r}. The error was:\n{type(err).__name__}: {err}\n") from None
    return value


_caches: "weakref.WeakKeyDictionary[Any, tuple]" = weakref.WeakKeyDictionary()


def _shared_cache(fun: Callable) -> tuple[OrderedDict, OrderedDict]:
    """One pair of caches (x64 off, on) per Python function, held weakly: `jit(f)`
    twice shares them, and they go away with `f`."""
    try:
        caches = _caches.get(fun)
        if caches is None:
            caches = _caches[fun] = (OrderedDict(), OrderedDict())
        return caches
    except TypeError:  # not weak-referenceable (a builtin): caches per jit object
        return OrderedDict(), OrderedDict()


def _check_static_argnums(fun: Callable, name: str, static_argnums: tuple,
                          static_argnames: tuple = (), donate_argnums: tuple = ()) -> None:
    """A static_argnums entry beyond the function's positional parameters, or a
    static_argnames entry naming no parameter, can never apply: a mistake (usually a
    typo), refused when jit is applied (as JAX does), not ignored."""
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return
    kinds = {p.kind for p in params}
    named = {p.name for p in params if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                   inspect.Parameter.KEYWORD_ONLY)}
    unknown = sorted(set(static_argnames) - named)
    if unknown and inspect.Parameter.VAR_KEYWORD not in kinds:
        raise ValueError(f"jitted function {name!r} has invalid argnames {unknown} in "
                         f"static_argnames: it has no parameter of that name (its parameters: "
                         f"{', '.join(p.name for p in params) or 'none'})")
    if inspect.Parameter.VAR_POSITIONAL in kinds:
        return
    n = sum(p.kind in (inspect.Parameter.POSITIONAL_ONLY,
                       inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in params)
    for what, nums in (("static_argnums", static_argnums), ("donate_argnums", donate_argnums)):
        if any(not -n <= i < n for i in nums):
            raise ValueError(f"jitted function {name!r} has {what}={nums}, but only "
                             f"accepts {n} positional argument{'s' if n != 1 else ''}")


def jit(fun: Callable | None = None, *, in_shardings: Any = None, out_shardings: Any = None,
        static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = (), donate_argnums: int | Sequence[int] = (),
        donate_argnames: str | Sequence[str] = ()) -> Any:
    """Compile `fun` with XLA: trace on the first call per signature, then reuse.

    Arguments in `donate_argnums`/`donate_argnames` give their device buffers to
    the computation (XLA may write results into them); the donated Arrays are
    deleted by the call, and using one afterwards raises an error."""
    if fun is None:
        return functools.partial(jit, in_shardings=in_shardings, out_shardings=out_shardings,
                                 static_argnums=static_argnums,
                                 static_argnames=static_argnames, donate_argnums=donate_argnums,
                                 donate_argnames=donate_argnames)
    if not callable(fun):
        raise TypeError(f"jit expects a callable, got {type(fun).__name__}: {fun!r}")
    as_tuple = lambda v: (v,) if isinstance(v, (int, str)) else tuple(v)
    if in_shardings is not None or out_shardings is not None:   # SPMD over a mesh (spmd.py)
        if as_tuple(donate_argnums) or as_tuple(donate_argnames):
            raise NotImplementedError("jit: donate_argnums/donate_argnames together with "
                                      "in_shardings/out_shardings are not supported yet; "
                                      "drop the donation (the sharded buffers are kept)")
        from .spmd import sharded_jit
        return sharded_jit(JitFunction(fun, as_tuple(static_argnums), as_tuple(static_argnames),
                                       ()), in_shardings, out_shardings)
    return JitFunction(fun, as_tuple(static_argnums), as_tuple(static_argnames),
                       as_tuple(donate_argnums), as_tuple(donate_argnames)).as_function()
