"""Primitives, bind, and the current trace.

Design (see docs/architecture.md): instead of Autodidax's stack of MainTraces
with integer levels and a separate `dynamic_trace`, each thread has exactly one
*current trace*. `bind` hands every primitive application to it. A
transformation's trace remembers its *parent* (the trace that was current when
it started) and, while running a rule, makes that parent current, so the
rule's own binds are interpreted one level further out. A tracer that belongs to
another trace is just a constant to this one. This gives omnistaging for free
(a jaxpr trace sees every bind, not only those touching its tracers), needs no
level arithmetic, and makes `bind` one attribute read and one method call.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Iterator

import numpy as np

from .. import first_use
from ..errors import ConcretizationTypeError, PlugaxError, TracerArrayConversionError, \
    UnexpectedTracerError
from ._accel import accel
from .array import Array, canonicalize_value, host_value, typed_array
from .avals import ShapedArray, get_aval, interned_aval
from .device_types import device_array_types
from .frames import user_frame
from .memory import check_fits
from .rules import IMPL_CTX, abstract_eval, abstract_eval_cache, impl_rules, missing_rule, \
    rule_owner

__all__ = ["Primitive", "bind", "Trace", "Tracer", "EvalTrace", "eval_trace", "current_trace",
           "is_eager",
           "set_current_trace", "new_trace_context", "user_frame", "set_dispatch_key",
           "open_block", "close_block"]


class Primitive:
    """An atomic operation. Its behaviour lives in the rule tables, keyed by this object."""

    __slots__ = ("name", "multiple_results", "__weakref__")

    def __init__(self, name: str, multiple_results: bool = False):
        self.name = name
        self.multiple_results = multiple_results

    def bind(self, *args: Any, **params: Any) -> Any:
        return _state.trace.process_primitive(self, args, params)

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__


class Trace:
    """An interpreter. Subclasses say how a primitive application is processed."""

    parent: "Trace | None" = None
    dead = False

    def process_primitive(self, primitive: Primitive, args: tuple, params: dict) -> Any:
        raise NotImplementedError

    def describe(self) -> str:
        return type(self).__name__

    def invalidate(self) -> None:
        """Called when the transformation ends; its tracers must not be used again."""
        self.dead = True

    def process_custom_jvp_call(self, fun, jvp, args: list) -> list:
        """Default for traces that do not differentiate: just run the function."""
        return fun(*args)

    def process_custom_vjp_call(self, fun, fwd, bwd, args: list) -> list:
        return fun(*args)


class _TraceState(threading.local):
    """Per-thread interpreter state: which trace handles the next bind."""

    def __init__(self) -> None:
        self.trace: Trace = eval_trace


# How many blocks that make a thread's interpreter something other than `eval_trace`
# (a transformation, set_current_trace, an override block, disable_jit) are open,
# over all threads. While it is 0 no thread is tracing, so eager fast paths skip
# the thread-local lookup; otherwise they ask `_state` as before. Overcounting is
# harmless (only slower); every such block counts itself before it switches.
non_eager_blocks = [0]
_count_lock = threading.Lock()


def bind(primitive: Primitive, *args: Any, **params: Any) -> Any:
    """Apply `primitive` under the current trace. Arrays positional, metadata by keyword."""
    return _state.trace.process_primitive(primitive, args, params)


def current_trace() -> Trace:
    return _state.trace


def is_eager() -> bool:
    """Whether no transformation is running, so a bind would just run the impl rule.

    Lets a plugin's eager fast path call its NumPy function directly (the same
    one its impl rule calls) without the cost of a bind. False inside a
    `plugax.extend.override` block too (its thread's bottom interpreter is
    another EvalTrace): there the thread's rules may differ from the tables',
    so a fast path that inlines a loaded rule must bind instead.
    """
    return not non_eager_blocks[0] or _state.trace is eval_trace


@contextmanager
def set_current_trace(trace: Trace) -> Iterator[Trace]:
    """Make `trace` current for the block; always restored, also after an exception."""
    token = open_block(trace is not eval_trace)
    prev = _state.trace
    _state.trace = trace
    try:
        yield trace
    finally:
        _state.trace = prev
        close_block(token, prev)


# -- the jit dispatch key ---------------------------------------------------------------
# jaxlib's C++ jit dispatcher serves a cached call without entering Python, so it must
# miss whenever the call has to be staged (any trace but `eval_trace` is current). Its
# key includes the thread-local value of every jaxlib Config made with
# include_in_jit_key=True: the xla_call plugin gives the kernel one such Config
# (`set_dispatch_key`, on first jit), and every place that makes another trace current
# sets it, in this thread, to STAGING for the block. Its global value (the top level)
# is the plugin's (x64 flag, registry version). The mirror is conservative: a rule
# running its parent's `eval_trace` leaves STAGING set, so such calls miss and the
# Python path (which reads the trace itself) serves them. Until a plugin installs the
# Config, all of this is one list read per trace entry.
STAGING = "plugax-staging"
_NO_KEY = object()              # a block entered before the Config existed
_dispatch: list = [None, None]  # [the Config, jaxlib's `unset` marker]


def set_dispatch_key(key: Any, unset: Any) -> None:
    """Install the jaxlib Config (include_in_jit_key=True) the kernel keeps at STAGING in
    every block that makes a trace other than `eval_trace` current; `unset` is
    jaxlib's marker that clears a thread-local value. A block already open in this
    thread stages from now on."""
    _dispatch[1] = unset
    _dispatch[0] = key
    if _state.trace is not eval_trace:
        key.set_local(STAGING)


def stage_dispatch(staging: bool = True) -> Any:
    """Set this thread's dispatch key for a block (STAGING, or back to the top level's
    value when `staging` is False); returns the token `restore_dispatch` takes."""
    key = _dispatch[0]
    if key is None:
        return _NO_KEY
    return key.swap_local(STAGING if staging else _dispatch[1])


def restore_dispatch(token: Any, trace: Trace) -> None:
    """Undo `stage_dispatch` when a block ends and `trace` becomes current again. A block
    entered before the key existed restores what `trace` implies."""
    key = _dispatch[0]
    if key is not None:
        if token is _NO_KEY:
            token = _dispatch[1] if trace is eval_trace else STAGING
        key.set_local(token)


def open_block(staging: bool | None = True) -> Any:
    """Begin a block that may make this thread's trace other than `eval_trace` (a
    transformation, set_current_trace, disable_jit, an override): count it, before the
    switch, so eager fast paths ask this thread, and set this thread's dispatch key
    (`staging` True: STAGING; False: the top level's value; None: left alone).
    Returns the token `close_block` takes."""
    with _count_lock:
        non_eager_blocks[0] += 1
    if staging is None:
        return None
    return _NO_KEY if _dispatch[0] is None else stage_dispatch(staging)


def close_block(token: Any, trace: Trace) -> None:
    """End a block begun by `open_block`, `trace` being current again."""
    if token is not None and _dispatch[0] is not None:
        restore_dispatch(token, trace)
    with _count_lock:
        non_eager_blocks[0] -= 1


class new_trace_context:
    """Run a transformation: make `trace` current, then invalidate its tracers on exit.

    A class rather than a @contextmanager generator: every transformation call (each
    grad, jvp, vmap) enters one, and a generator costs several extra calls.
    """

    __slots__ = ("trace", "prev", "token")

    def __init__(self, trace: Trace):
        self.trace = trace

    def __enter__(self) -> Trace:
        if first_use._loader is not None:   # a first use: tracing needs the plugins' rules
            first_use.load()
        trace = self.trace
        self.token = open_block()
        self.prev = trace.parent = _state.trace
        _state.trace = trace
        return trace

    def __exit__(self, *exc_info: Any) -> None:
        _state.trace = self.prev
        close_block(self.token, self.prev)
        self.trace.invalidate()


class Tracer:
    """A boxed value flowing through a user's function while a trace interprets it.

    Operators and array methods are installed on this class by the plugins
    (`plugax_array_methods`), exactly as on `Array`, so the kernel names no
    primitive.
    """

    __slots__ = ("_trace", "__weakref__")
    __array_priority__ = 1000

    @property
    def aval(self) -> ShapedArray:
        raise NotImplementedError

    def to_concrete_value(self) -> Any:
        """A concrete value if this trace knows one (e.g. a JVP primal), else None."""
        return None

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)

    def _concrete(self, operation: str) -> Any:
        value = self.to_concrete_value()
        if value is None:
            raise ConcretizationTypeError(
                f"Abstract tracer value encountered where a concrete value is expected: "
                f"{operation} was called on {self!r}, at {user_frame()}.\n"
                f"The value depends on the inputs of a traced function (jit, make_jaxpr, "
                f"vmap with a batched value, ...), so Python cannot branch on it or convert "
                f"it. Use plugax.lax.cond / while_loop / numpy.where instead, or mark the "
                f"argument static (static_argnums).")
        return value

    def __bool__(self) -> bool:
        return bool(self._concrete("bool()"))

    def __int__(self) -> int:
        return int(self._concrete("int()"))

    def __float__(self) -> float:
        return float(self._concrete("float()"))

    def __index__(self) -> int:
        return int(np.asarray(self._concrete("__index__()")))

    def __complex__(self) -> complex:
        return complex(self._concrete("complex()"))

    def __array__(self, dtype=None, copy=None):
        # never the concrete value, even when the trace knows one: NumPy would drop
        # the tangent (or batch) this tracer carries, and a derivative would be wrong
        raise TracerArrayConversionError(
            f"The numpy.ndarray conversion method __array__() was called on {self!r}, "
            f"at {user_frame()}.\nNumPy cannot hold a traced value (under jit, vmap, "
            f"grad, jvp, ...): use plugax.numpy functions instead of numpy ones on "
            f"values that depend on the function's inputs.")

    def __len__(self) -> int:
        if not self.aval.shape:
            raise TypeError("len() of unsized object (a rank-0 tracer)")
        return self.aval.shape[0]

    def __iter__(self):
        if not self.aval.shape:
            raise TypeError("iteration over a rank-0 tracer")
        return (self[i] for i in range(self.aval.shape[0]))

    __hash__ = None  # type: ignore[assignment]  # tracers are not hashable, like arrays

    def __repr__(self) -> str:
        return f"Traced<{self.aval!r}>with<{self._trace.describe()}>"


_scalar_types = (bool, int, float, complex)


class EvalTrace(Trace):
    """The bottom interpreter: runs each primitive's impl rule on concrete data.

    Every bind first runs the primitive's abstract_eval on its operands' types
    (memoised, so usually one dict lookup): an eager call accepts exactly what a
    traced call accepts, rejects the rest with the same error, and its result
    has the type tracing would give it (dtype, shape, weak type), whatever
    NumPy's own promotion would have done.
    """

    def process_primitive(self, primitive: Primitive, args: tuple, params: dict) -> Any:
        # Fast path, fused for the common eager case: every operand an Array whose
        # signature (with the params) is already in the abstract_eval cache, one
        # output, and NumPy returning an ndarray of the predicted dtype. Anything
        # else takes the general path, which gives the same result. (The shape
        # is checked there, on the signature's first evaluation: a NumPy
        # function's output shape depends only on its operands' shapes.)
        # The key is the one `abstract_eval` builds, straight from the Arrays; the
        # usual one or two operands without params (most ops a jvp or transpose rule
        # binds) build it as a literal tuple, with no list and no keyword unpacking.
        # A device-backed operand has no `_value` yet: AttributeError, general path.
        if _eval_fast is not None:   # the same fast path, in C
            try:
                out = _eval_fast(primitive, args, params)
            except PlugaxError:
                raise
            except Exception as err:   # the impl rule failed
                raise _impl_failure(primitive, [x._value for x in args], params, err) from err
            if out is not _MISS:
                return out
            return self._process_general(primitive, args, params)
        n = len(args)
        try:
            if n == 2 and not params:
                x, y = args
                if type(x) is not Array or type(y) is not Array:
                    return self._process_general(primitive, args, params)
                vals = (x._value, y._value)
                key = (primitive, x._aval._sig, y._aval._sig)
            elif n == 1 and not params:
                x = args[0]
                if type(x) is not Array:
                    return self._process_general(primitive, args, params)
                vals = (x._value,)
                key = (primitive, x._aval._sig)
            else:
                vals = []
                key = [primitive]
                for x in args:
                    if type(x) is not Array:
                        return self._process_general(primitive, args, params)
                    vals.append(x._value)
                    key.append(x._aval._sig)
                if params:
                    key += params.items()
                key = tuple(key)
            aval = abstract_eval_cache[key]
        except (KeyError, TypeError, AttributeError):   # not seen yet, an unhashable
            # param value, or a device-backed operand
            return self._process_general(primitive, args, params)
        rule = impl_rules.get(primitive)
        if rule is None:
            return self._process_general(primitive, args, params)
        try:   # _run_impl, inlined: this is the hottest call in eager code and reverse mode
            out = rule(IMPL_CTX, *vals, **params) if params else rule(IMPL_CTX, *vals)
        except PlugaxError:
            raise
        except Exception as err:
            raise _impl_failure(primitive, vals, params, err) from err
        if type(out) is not np.ndarray or out.dtype is not aval.dtype:
            return _as_result(out, aval, primitive)
        result = _new_array(Array)   # typed_array, inlined
        result._value = out
        result._buf = None
        result._aval = aval
        return result

    def _process_general(self, primitive: Primitive, args: tuple, params: dict) -> Any:
        vals, avals = [], []
        for x in args:
            val, aval = _eval_operand(x, primitive)
            vals.append(val)
            avals.append(aval)
        rule = impl_rules.get(primitive)
        if rule is None:
            if first_use.load():   # a first use: the plugins (and this rule) load now
                return self.process_primitive(primitive, args, params)
            raise missing_rule(primitive, "impl", "evaluation")
        out_aval = abstract_eval(primitive, avals, params, "evaluation")
        for aval in (out_aval if primitive.multiple_results else (out_aval,)):
            if type(aval) is ShapedArray:
                check_fits(primitive.name, aval.shape, aval.dtype)
        out = _run_impl(rule, primitive, vals, params)
        if primitive.multiple_results:
            return [_as_result(o, a, primitive) for o, a in zip(out, out_aval)]
        return _as_result(out, out_aval, primitive)

    def describe(self) -> str:
        return "EvalTrace"


def _run_impl(rule: Any, primitive: Primitive, vals: list, params: dict) -> Any:
    """Call an impl rule; a NumPy failure becomes an error naming the primitive."""
    try:
        return rule(IMPL_CTX, *vals, **params)
    except PlugaxError:
        raise
    except Exception as err:
        raise _impl_failure(primitive, vals, params, err) from err


def _eval_operand(x: Any, primitive: Primitive) -> tuple[Any, ShapedArray]:
    """(NumPy value, aval) of an operand, typed as a jaxpr trace would type it."""
    if type(x) is Array:
        return host_value(x), x._aval
    if type(x) in _scalar_types:
        aval = get_aval(x)   # weak, as a Literal in a jaxpr
        return np.asarray(x, aval.dtype), aval
    if isinstance(x, Tracer):
        raise UnexpectedTracerError(
            f"Encountered an unexpected tracer: {x!r} reached primitive '{primitive}' outside "
            f"the transformation that created it. A tracer escaped its transformation, "
            f"usually by being stored in a global, a closure or an attribute during a traced "
            f"call and used after that call returned.{_creation_site(x)}")
    if isinstance(x, (np.ndarray, np.generic)):
        value = canonicalize_value(np.asarray(x))
        return value, get_aval(value)
    if isinstance(x, Array):
        return host_value(x), x.aval
    if hasattr(x, "__array__"):
        return _eval_operand(np.asarray(x), primitive)
    raise TypeError(f"primitive '{primitive}' got an argument of type {type(x).__name__} "
                    f"({x!r}); expected an Array, a NumPy array or a Python scalar")


def _creation_site(tracer: Tracer) -> str:
    site = getattr(tracer._trace, "created_at", None)
    return f"\nThe tracer was created by {tracer._trace.describe()} at {site}." if site else ""


def _as_result(out: Any, aval: ShapedArray, primitive: Primitive) -> Array:
    """An impl's output as an Array of exactly `aval`'s type.

    NumPy may compute in another dtype than JAX's rules give (int64 where x64 is
    off, a float64 scalar); the result takes the abstract dtype, so eager and
    traced code agree. A shape disagreement is a bug in the primitive's rules.
    An impl that returns an Array (a compiled call's device result) keeps it,
    so device buffers are not copied back to the host.
    """
    if type(out) is Array or type(out) in device_array_types:   # a device result: kept
        return out
    value = np.asarray(out)
    if value.dtype != aval.dtype:
        value = value.astype(aval.dtype)
    if value.shape != aval.shape:
        raise PlugaxError(
            f"primitive '{primitive}': its impl rule returned shape {value.shape} where its "
            f"abstract_eval rule says {aval.str_short()}; the two rules disagree (a bug in "
            f"the plugin that defines it: {rule_owner.get(primitive, '?')})")
    return typed_array(value, interned_aval(aval) if type(aval) is ShapedArray else aval)


def _impl_failure(primitive: Primitive, vals: list, params: dict, err: Exception):
    """A NumPy failure (abstract_eval accepted the operands) as an error naming the
    primitive, its operand types and the user's call site."""
    shown = ", ".join(get_aval(v).str_short() for v in vals)
    return PlugaxError(f"primitive '{primitive}' failed on operands ({shown}) with params "
                       f"{params}: {type(err).__name__}: {err}\n  at {user_frame()}")


_new_array = object.__new__
eval_trace = EvalTrace()
_state = _TraceState()


# --- the C accelerator (core/_eager.c, optional): configured once, here -------------
_MISS = object()   # eval_fast's "does not apply": the general path runs


def _wrap_scalar(value: Any, aval: ShapedArray) -> Array:
    """An eager op's result that is not an ndarray (a NumPy scalar, from rank 0)."""
    return Array(value, aval.weak_type)


if accel is not None:
    accel.configure(Array, ShapedArray, np.ndarray, _state, eval_trace, non_eager_blocks,
                    _wrap_scalar)
    accel.configure_eval(abstract_eval_cache, impl_rules, IMPL_CTX, _as_result, _MISS)
    _eval_fast = accel.eval_fast
else:
    _eval_fast = None

