"""Plugins load on first use: the one switch every first use goes through.

`import plugax` only discovers the plugins (`loader/lazy.py` reads the entry
points); importing their modules and building the rule tables waits until
something needs them. Why: that work was most of `import plugax` (issue 18,
docs/architecture.md "Import time"), and a program pays it only once it uses
plugax. A first use is any of: a name plugins provide (a namespace's
`__getattr__` or `__dir__`), an `Array` operator or method, a transformation
starting, an eager bind that finds no impl rule, a registry query. Each calls
`load()`.

Why a module of its own that imports nothing of plugax: the first uses happen
in the kernel's lowest layers (errors, core.array, core.trace) and in its
namespaces, while loading is the loader's job, which imports all of them. The
loader hands its function over (`defer`) when `import plugax` discovers the
plugins, and `load()` runs it, once, under a lock: a thread that first-uses
while another loads waits, then sees the complete registry. The loading thread
itself (the plugins' imports and hooks) sees the registry as it is being built,
as plugins did during `import plugax` before. A load that raises (strict mode
refusing a plugin) leaves the plugins unloaded, so the next use tries again and
reports the same error, as a failed `import plugax` did when imported again.
"""
from __future__ import annotations

import _thread
from typing import Any, Callable

__all__ = ["defer", "pending", "load", "before_load", "lookup_after_load", "names_after_load",
           "install_trampolines", "remove_trampolines", "is_trampoline"]

_loader: Callable[[], None] | None = None
_lock = _thread.RLock()
_loading_thread: int | None = None
# Run by the loader before the plugins' front ends are planned: kernel namespaces bind
# the names they import lazily, so a plugin's name is checked against the kernel's.
before_load: list[Callable[[], None]] = []


def defer(loader: Callable[[], None]) -> None:
    """Make `loader` the function the first use runs (the loader calls this at import)."""
    global _loader
    _loader = loader


def pending() -> bool:
    """Whether the plugins are discovered but not loaded yet."""
    return _loader is not None


def load() -> bool:
    """Load the plugins if they are not loaded. True when they were loaded by this call,
    or by another thread while this one waited: a caller that missed a name looks
    again. False when nothing was pending, and on the loading thread itself."""
    global _loader, _loading_thread
    if _loader is None or _loading_thread == _thread.get_ident():
        return False
    with _lock:
        loader = _loader
        if loader is None:   # another thread loaded them while this one waited
            return True
        _loading_thread = _thread.get_ident()
        try:
            loader()
        finally:
            _loading_thread = None
        _loader = None
    return True


def lookup_after_load(namespace: dict, name: str, missing: Any) -> Any:
    """For a namespace's `__getattr__`: `namespace[name]` once the plugins are loaded,
    or `missing`. A private name loads nothing: plugins give public names, and tools
    probe modules for private ones (`__path__`, `__wrapped__`, `_repr_html_`)."""
    if name[:1] == "_":
        return missing
    load()
    return namespace.get(name, missing)


def names_after_load(namespace: dict, extra: tuple = ()) -> list[str]:
    """For a namespace's `__dir__`: its names once the plugins have added theirs."""
    load()
    return sorted(set(namespace) | set(extra))


# --- Array's operators before the plugins load -----------------------------------------
# Python looks an operator up on the type, never through __getattr__, so each operator a
# plugin may install is a trampoline on the class until then: it loads the plugins and
# calls what they installed. Other names go through __getattr__ (below).
_BINARY = ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "divmod", "pow",
           "lshift", "rshift", "and", "xor", "or")
BINARY_OPERATORS = (*(f"__{p}{op}__" for op in _BINARY for p in ("", "r")),
                    "__lt__", "__le__", "__eq__", "__ne__", "__gt__", "__ge__")
# What Python says when a type lacks one of these (after the load, if no plugin gave it).
# (math.floor and friends are left out: without them Python uses Array's __float__.)
_MISSING_MESSAGES = {"__neg__": "bad operand type for unary -: '{}'",
                     "__pos__": "bad operand type for unary +: '{}'",
                     "__invert__": "bad operand type for unary ~: '{}'",
                     "__abs__": "bad operand type for abs(): '{}'",
                     "__round__": "type {} doesn't define __round__ method",
                     "__getitem__": "'{}' object is not subscriptable",
                     "__setitem__": "'{}' object does not support item assignment"}
OTHER_OPERATORS = tuple(_MISSING_MESSAGES)
# What NumPy, copy and pickle probe an object for: a miss is the answer, not a first use
_PROBES = frozenset({"__array_struct__", "__array_interface__", "__array_wrap__",
                     "__array_priority__", "__array_ufunc__", "__array_function__",
                     "__array_finalize__", "__array_prepare__", "__setstate__",
                     "__getstate__", "__copy__", "__deepcopy__", "__length_hint__"})


def is_trampoline(value: Any) -> bool:
    return getattr(value, "_plugax_trampoline", False) is True


def _trampoline(name: str, binary: bool) -> Callable:
    def trampoline(self: Any, *args: Any) -> Any:
        load()
        method = getattr(type(self), name, None)
        if method is not None and not is_trampoline(method):
            return method(self, *args)
        if binary:   # no plugin gives it: Python tries the other operand, then says why
            return NotImplemented
        raise TypeError(_MISSING_MESSAGES[name].format(type(self).__name__))
    trampoline.__name__ = trampoline.__qualname__ = name
    trampoline._plugax_trampoline = True
    return trampoline


def _no_attribute(self: Any, name: str) -> Any:
    raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")


def _first_use_getattr(original: Callable | None) -> Callable:
    def __getattr__(self: Any, name: str) -> Any:
        try:
            return (original or _no_attribute)(self, name)
        except AttributeError:
            if name in _PROBES or (name[:1] == "_" and name[:2] != "__") or not load():
                raise
        return getattr(self, name)   # a method or property a plugin installed
    __getattr__._plugax_trampoline = True
    __getattr__.original = original
    return __getattr__


def install_trampolines(cls: type) -> None:
    """Give `cls` (Array) its first-use operators and `__getattr__` while plugins are
    pending; core/array.py calls this when it defines the class."""
    if not pending():
        return
    for name in BINARY_OPERATORS + OTHER_OPERATORS:
        if name not in cls.__dict__:
            setattr(cls, name, _trampoline(name, name in BINARY_OPERATORS))
    # also on a class without `__getattr__` (Array has none: it would slow every
    # attribute load); removed again once the plugins are loaded
    getattr_ = cls.__dict__.get("__getattr__")
    if not is_trampoline(getattr_):
        cls.__getattr__ = _first_use_getattr(getattr_)


def remove_trampolines(cls: type) -> None:
    """Once the plugins are loaded: `cls` as it would be without first-use machinery."""
    for name, value in list(cls.__dict__.items()):
        if is_trampoline(value):
            if name == "__getattr__" and value.original is not None:
                cls.__getattr__ = value.original
            else:
                delattr(cls, name)
