"""JAX's smaller top-level names: config context managers, cache and process queries,
closure conversion, `custom_gradient`, `fwd_and_bwd`, `ensure_compile_time_eval`.

Each is here because a ported program touches it and plugax can give it honestly;
the names plugax cannot honour are listed in `ABSENT` with the reason, which
`plugax.<name>` raises (see `plugax.__getattr__`).

Config states (`enable_x64`, `default_prng_impl`, `threefry_partitionable`) behave as
JAX's `State` objects: `plugax.enable_x64.value` reads the setting and
`with plugax.enable_x64(True):` sets it for the block, restored on exit, also after an
exception. Unlike JAX's they set plugax's (global) config, not a per-thread value:
plugax's config has no thread-local layer.
"""
from __future__ import annotations

import platform
import sys
import warnings
from contextlib import ContextDecorator, contextmanager
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from . import tree_util as tu
from .config import config

__all__ = ["State", "enable_x64", "default_prng_impl", "threefry_partitionable",
           "clear_caches", "closure_convert", "custom_gradient", "fwd_and_bwd",
           "ensure_compile_time_eval", "host_count", "host_id", "host_ids",
           "process_indices", "print_environment_info", "copy_to_host_async", "ABSENT",
           "numpy_rank_promotion", "numpy_dtype_promotion", "default_matmul_precision",
           "legacy_prng_key", "enable_custom_prng", "debug_key_reuse", "check_tracer_leaks",
           "enable_checks", "transfer_guard", "transfer_guard_host_to_device",
           "transfer_guard_device_to_host", "transfer_guard_device_to_device"]


# --- config states ---------------------------------------------------------------------
class _Setting(ContextDecorator):
    """What `State(new_value)` returns: sets the value on entry, restores the previous
    one on exit (whatever happened in the block)."""

    def __init__(self, state: "State", value: Any) -> None:
        self.state, self.value = state, state._check(value)
        self._saved: list = []

    def __enter__(self) -> None:
        self._saved.append(self.state.value)
        self.state._set(self.value)

    def __exit__(self, *exc: Any) -> None:
        self.state._set(self._saved.pop())


class State:
    """A config option as JAX exposes it at the top level: `.value`, and calling it
    with a value gives a context manager (or decorator) that sets it for a block."""

    def __init__(self, name: str, get: Callable[[], Any], set: Callable[[Any], None],
                 check: Callable[[Any], Any], doc: str) -> None:
        self.name, self._get, self._set, self._check = name, get, set, check
        self.__doc__ = doc

    @property
    def value(self) -> Any:
        return self._get()

    def __call__(self, new_val: Any) -> _Setting:
        return _Setting(self, new_val)

    def __repr__(self) -> str:
        return f"<plugax config state {self.name}={self.value!r}>"


def _x64_check(value: Any) -> bool:
    if not isinstance(value, (bool, int, np.bool_)) or value not in (0, 1):
        raise TypeError(f"plugax.enable_x64 takes True or False, got {value!r}")
    return bool(value)


enable_x64 = State("jax_enable_x64", lambda: config.enable_x64,
                   lambda v: config.update("enable_x64", v), _x64_check,
                   "64-bit types (float64, int64) as defaults; config flag enable_x64.")


def _only(name: str, allowed: Any, why: str) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if value != allowed:
            raise ValueError(f"plugax.{name} can only be {allowed!r} in plugax, got "
                             f"{value!r}: {why}")
        return value
    return check


default_prng_impl = State(
    "jax_default_prng_impl", lambda: "threefry2x32", lambda v: None,
    _only("default_prng_impl", "threefry2x32",
          "plugax.random implements the threefry2x32 generator only (JAX's default)"),
    "The PRNG implementation of new keys: threefry2x32, the only one plugax has.")
threefry_partitionable = State(
    "jax_threefry_partitionable", lambda: True, lambda v: None,
    _only("threefry_partitionable", True,
          "plugax.random generates JAX's bits for jax_threefry_partitionable=True (JAX's "
          "default) only"),
    "Whether threefry bits are generated in the partitionable way: always, in plugax.")




def _fixed(name: str, default: Any, why: str, accepted: tuple = ()) -> State:
    """A JAX option plugax honours at its default setting only: `.value` is the
    default, `with plugax.<name>(default):` works (ported code says it), and any other
    value is refused with the reason instead of being silently ignored."""
    ok = (default, *accepted)

    def check(value: Any) -> Any:
        if value not in ok:
            raise ValueError(f"plugax.{name} can only be {' or '.join(map(repr, ok))} in "
                             f"plugax, got {value!r}: {why}")
        return value
    current = [default]     # an accepted alias of the default reads back as set
    return State(f"jax_{name}", lambda: current[0], lambda v: current.__setitem__(0, v), check,
                 f"JAX's {name}, fixed at {default!r} in plugax: {why}.")


numpy_rank_promotion = _fixed("numpy_rank_promotion", "allow",
                              "plugax.numpy always broadcasts ranks as NumPy does")
numpy_dtype_promotion = _fixed("numpy_dtype_promotion", "standard",
                               "plugax promotes with JAX's standard lattice only (no 'strict')")
default_matmul_precision = _fixed(
    "default_matmul_precision", None, "plugax's dot computes at the operands' full precision "
    "(what these values ask for); lower-precision modes are not implemented",
    accepted=("highest", "float32", "HIGHEST"))
legacy_prng_key = _fixed("legacy_prng_key", "allow",
                         "plugax.random.PRNGKey always gives legacy uint32 keys, unchecked")
enable_custom_prng = _fixed("enable_custom_prng", False,
                            "plugax.random has one PRNG implementation (threefry2x32)")
debug_key_reuse = _fixed("debug_key_reuse", False, "plugax does not track the use of keys")
check_tracer_leaks = _fixed("check_tracer_leaks", False,
                            "plugax reports a leaked tracer when it is used (an "
                            "UnexpectedTracerError), not by scanning after each trace")
enable_checks = _fixed("enable_checks", False, "plugax has no optional internal checks "
                       "(typecheck_jaxpr checks a jaxpr on request)")
_GUARD = "plugax does not guard host-device transfers"
transfer_guard_host_to_device = _fixed("transfer_guard_host_to_device", "allow", _GUARD)
transfer_guard_device_to_host = _fixed("transfer_guard_device_to_host", "allow", _GUARD)
transfer_guard_device_to_device = _fixed("transfer_guard_device_to_device", "allow", _GUARD)


@contextmanager
def transfer_guard(new_val: str) -> Iterator[None]:
    """All three transfer guards for the block; 'allow' only (plugax does not guard)."""
    with transfer_guard_host_to_device(new_val), transfer_guard_device_to_host(new_val), \
            transfer_guard_device_to_device(new_val):
        yield


# --- caches and processes ------------------------------------------------------------------
def clear_caches() -> None:
    """Drop every compiled and traced cache, as jax.clear_caches: jitted functions
    re-trace and re-compile on their next call. plugax's jit entries are keyed by the
    plugin registry's version, so republishing the rule tables (a registry rebuild,
    which also clears the plugins' own caches) invalidates them all."""
    from .core.rules import abstract_eval_cache
    from .loader.registry import registry
    abstract_eval_cache.clear()
    registry.rebuild()


def _renamed(old: str, new: str) -> None:
    warnings.warn(f"plugax.{old} has been renamed to plugax.{new} (as in JAX); this alias "
                  f"will eventually be removed", UserWarning, stacklevel=3)


def host_count(backend: Any = None) -> int:
    """The number of processes: 1 (plugax runs in one process)."""
    _renamed("host_count", "process_count")
    return 1


def host_id(backend: Any = None) -> int:
    _renamed("host_id", "process_index")
    return 0


def host_ids(backend: Any = None) -> list[int]:
    _renamed("host_ids", "process_indices")
    return [0]


def process_indices(backend: Any = None) -> list[int]:
    """The indices of the processes: [0] (one process)."""
    return [0]


def copy_to_host_async(x: Any) -> Any:
    """Start copying each leaf's value to the host (calls its `copy_to_host_async`
    where it has one, as JAX does); returns x."""
    for leaf in tu.tree_leaves(x):
        copy = getattr(leaf, "copy_to_host_async", None)
        if callable(copy):
            copy()
    return x


def print_environment_info(return_string: bool = False) -> str | None:
    """Versions of plugax and what it runs on, and the loaded plugins (for bug reports)."""
    from .loader.namespaces import namespace_module
    from .loader.registry import registry
    __version__ = namespace_module("plugax").__version__   # (no import of the package)
    try:
        from importlib.metadata import version
        jaxlib = version("jaxlib")
    except Exception:
        jaxlib = "not installed"
    lines = [f"plugax: {__version__}", f"jaxlib: {jaxlib}", f"numpy:  {np.__version__}",
             f"python: {sys.version}", f"plugins: {', '.join(registry.loaded_names())}",
             f"platform: {platform.uname()}"]
    text = "\n".join(lines) + "\n"
    if return_string:
        return text
    print(text, end="")
    return None


# --- closures, custom gradients ----------------------------------------------------------
def _is_tracer(x: Any) -> bool:
    from .core.trace import Tracer
    return isinstance(x, Tracer)


def _perturbable(x: Any) -> bool:
    """Whether a closed-over value may carry a tangent: a tracer of an inexact dtype
    (JAX's heuristic: concrete values cannot, integer ones have float0 tangents)."""
    return _is_tracer(x) and np.issubdtype(np.dtype(x.aval.dtype), np.inexact)


def _convert(fun: Callable, example_args: tuple,
             hoist: Callable[[Any], bool]) -> tuple[Callable, list]:
    from .api import flatten_fun
    from .interpreters.staging import trace_to_jaxpr
    from .jaxpr import eval_jaxpr
    from .shapes import leaf_aval as _aval_of
    leaves, in_tree = tu.tree_flatten(example_args)
    flat, store = flatten_fun(fun, in_tree)
    closed = trace_to_jaxpr(flat, [_aval_of(x) for x in leaves])
    out_tree = store.value
    which = [bool(hoist(c)) for c in closed.consts]
    kept = [c for c, h in zip(closed.consts, which) if not h]
    hoisted = [c for c, h in zip(closed.consts, which) if h]
    n = len(hoisted)

    def converted_fun(*args_hconsts: Any) -> Any:
        args, hconsts = args_hconsts[:len(args_hconsts) - n], args_hconsts[len(args_hconsts) - n:]
        all_args, in_tree2 = tu.tree_flatten(tuple(args))
        if in_tree2 != in_tree:
            raise TypeError("The inputs to the closure produced by closure_convert must have "
                            "the same Pytree structure as the example arguments passed when "
                            f"closure_convert was called. Expected {in_tree}, but got "
                            f"{in_tree2}")
        h, k = iter(hconsts), iter(kept)
        consts = [next(h) if w else next(k) for w in which]
        return tu.tree_unflatten(out_tree, eval_jaxpr(closed.jaxpr, consts, *all_args))
    return converted_fun, hoisted


def closure_convert(fun: Callable, *example_args: Any) -> tuple[Callable, list]:
    """(converted_fun, consts): `fun` with the values it closes over that may carry a
    derivative (tracers of float dtype) made explicit, as jax.closure_convert:
    converted_fun(*args, *consts) == fun(*args). For custom_vjp functions whose
    rules must not close over traced values."""
    return _convert(fun, example_args, _perturbable)


class _Residuals:
    """custom_gradient's residuals: the vjp rule as a jaxpr (static) and the traced
    values it closes over (the pytree's leaves, so transformations see them)."""

    def __init__(self, rule: Callable, consts: list) -> None:
        self.rule, self.consts = rule, consts


tu.register_pytree_node(_Residuals, lambda r: (r.consts, r.rule),
                        lambda rule, consts: _Residuals(rule, list(consts)))


def custom_gradient(fun: Callable) -> Callable:
    """`fun(*args) -> (out, vjp)` turned into a function of out whose reverse-mode
    derivative is `vjp(ct)` (a tuple over the positional arguments, or one value for
    a single argument), as jax.custom_gradient."""
    from .custom_derivatives import custom_vjp

    @custom_vjp
    def wrapped(*args: Any) -> Any:
        return fun(*args)[0]

    def fwd(*args: Any) -> tuple:
        ans, rule = fun(*args)
        converted, consts = _convert(rule, (ans,), _is_tracer)
        return ans, _Residuals(converted, consts)

    def bwd(res: _Residuals, ct: Any) -> tuple:
        cts = res.rule(ct, *res.consts)
        return cts if isinstance(cts, tuple) else (cts,)

    wrapped.defvjp(fwd, bwd)
    return wrapped


def fwd_and_bwd(fun: Callable, argnums: int | Sequence[int], has_aux: bool = False,
                jitted: bool = True) -> tuple[Callable, Callable]:
    """(fwd, bwd) as jax.fwd_and_bwd: fwd(*primals) -> (out, residuals[, aux]) and
    bwd(residuals, ct) -> the cotangents of the `argnums` arguments (a tuple for a
    sequence, one value for an int). Residuals are a pytree of arrays, so both jit
    once and bwd is reused across iterations."""
    from .autodiff import vjp
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)

    def fwd(*primals: Any) -> tuple:
        def partial(*diff: Any) -> Any:
            args = list(primals)
            for i, v in zip(nums, diff):
                args[i] = v
            return fun(*args)
        diff = [primals[i] for i in nums]
        if has_aux:
            out, f_vjp, aux = vjp(partial, *diff, has_aux=True)
        else:
            out, f_vjp = vjp(partial, *diff)
        converted, consts = _convert(f_vjp, (out,), _is_tracer_or_array)
        res = _Residuals(converted, consts)
        return (out, res, aux) if has_aux else (out, res)

    def bwd(residuals: _Residuals, cotangent: Any) -> Any:
        cts = residuals.rule(cotangent, *residuals.consts)
        return cts[0] if single else tuple(cts)

    if jitted:
        from .loader.namespaces import namespace_module
        jit = namespace_module("plugax").jit   # the xla_call plugin's, at the top level
        return jit(fwd), jit(bwd)
    return fwd, bwd


def _is_tracer_or_array(x: Any) -> bool:
    """Residuals leave fwd as outputs: every closed-over array becomes one (under jit,
    a compiled output) rather than a constant baked into bwd."""
    from .core.array import Array
    return _is_tracer(x) or isinstance(x, (Array, np.ndarray))


# --- compile-time evaluation -----------------------------------------------------------------
@contextmanager
def ensure_compile_time_eval() -> Iterator[None]:
    """Inside the block, operations on concrete values run eagerly even under `jit`
    (their results are concrete arrays, usable as static Python values); operations
    on traced values are staged as usual, as jax.ensure_compile_time_eval."""
    from .core.trace import EvalTrace, _state, set_current_trace

    outer = _state.trace

    class _CompileTimeEval(EvalTrace):
        def process_primitive(self, primitive: Any, args: tuple, params: dict) -> Any:
            if any(_is_tracer(x) for x in args):
                with set_current_trace(outer):
                    return outer.process_primitive(primitive, args, params)
            return EvalTrace.process_primitive(self, primitive, args, params)

        def describe(self) -> str:
            return "EvalTrace (inside plugax.ensure_compile_time_eval)"

    with set_current_trace(_CompileTimeEval()):
        yield


# --- deliberately absent ---------------------------------------------------------------------
_NO_JIT_HOOK = ("plugax's jit has no hook to check or report on every compiled call "
                "(the cached call path runs in C++)")
ABSENT = {
    "debug_nans": "checking every result for NaNs and re-running the culprit eagerly needs a "
                  "check after each jitted call, and " + _NO_JIT_HOOK,
    "debug_infs": "as debug_nans: " + _NO_JIT_HOOK,
    "log_compiles": _NO_JIT_HOOK,
    "explain_cache_misses": _NO_JIT_HOOK,
    "no_tracing": _NO_JIT_HOOK, "no_execution": _NO_JIT_HOOK,
    "checking_leaks": "it turns check_tracer_leaks on, and plugax reports a leaked tracer "
                      "when it is used (an UnexpectedTracerError), not by scanning",
    "default_device": "plugax places computations on its default device only",
    "live_arrays": "plugax does not keep a registry of the arrays alive",
    "make_user_context": "plugax's jit cache key has no slot for user context values",
    "softmax_custom_jvp": "plugax.nn.softmax has one differentiation rule; there is no "
                          "switch between JAX's two",
    "allow_f16_reductions": "a JAX-internal flag with no plugax counterpart",
    "array_garbage_collection_guard": "plugax does not track array garbage collection",
    "thread_guard": "plugax has no multi-controller thread checks",
    "jax2tf_associative_scan_reductions": "plugax has no jax2tf",
    "auto_pcast": "plugax has no varying-manual-axes types (shard_map internals)",
    "remove_size_one_mesh_axis_from_type": "plugax has no mesh axis types",
    "memory": "plugax has one memory space per device (no memory kinds)",
    "ad": "JAX's internal ad module is not public API in plugax",
    "pmap": "plugax has no pmap; use jit with shardings or shard_map (docs/sharding.md), "
            "which JAX also recommends over pmap",
    "reshard": "plugax's meshes have no Explicit axes: shardings are hints to XLA's "
               "partitioner (use device_put or lax.with_sharding_constraint)",
    "smap": "it is JAX's experimental one-axis shard_map over Explicit mesh axes; use "
            "shard_map",
    **{name: "plugax arrays are immutable and its jaxprs have no mutable references "
             "(JAX's experimental Ref); use functional updates (x.at[i].set)"
       for name in ("Ref", "new_ref", "empty_ref", "free_ref", "freeze")},
    "ds": "it indexes mutable Refs (JAX's Ref slicing helper), which plugax does not have",
}
