"""Front-end namespaces (`plugax.numpy`, `plugax.lax`, ...) and Array methods.

The kernel defines no user-facing math: plugins contribute it. This module
installs their functions as attributes of namespace modules and their methods
on `Array` and `Tracer`, and removes them again on a rebuild.
"""
from __future__ import annotations

import importlib
import sys
import types
from typing import Callable, Mapping

from ..core.array import Array
from ..core.trace import Tracer

__all__ = ["install_frontend", "install_array_methods", "clear_frontend", "namespace_module",
           "overrides_name"]


class overrides_name:  # noqa: N801 - used like a function: overrides_name(fn)
    """Declares that a front-end function or Array method replaces a name that already
    exists (a kernel name like `plugax.grad`, or one given by another plugin).

    Without it a plugin cannot replace a name: one plugin silently hijacking
    `plugax.numpy.sum` for everyone, with the winner decided by load order, is the
    failure this prevents. The declared override wins whichever plugin loads first,
    with a PluginWarning naming both.
    """

    def __init__(self, fn: Callable) -> None:
        self.fn = fn


# (qualified name) -> owner description, for names installed by the current rebuild
_owners: dict[str, tuple[str, bool]] = {}

_installed_functions: list[tuple[types.ModuleType, str]] = []
# (module, name) -> what the module held before a plugin first set the name, so that a
# rebuild (unregistering a plugin that re-exports `plugax.vmap`) puts it back.
_original_functions: dict[tuple, object] = {}
_installed_methods: list[str] = []
_MISSING = object()
_original_methods: dict[tuple, object] = {}
_CLASSES = (Array, Tracer)


def namespace_module(name: str) -> types.ModuleType:
    """The module for namespace `name` ("numpy", "scipy.special"), created if needed;
    "plugax" is the top-level package itself (where `jit` goes)."""
    if name == "plugax":
        return sys.modules["plugax"]
    full = f"plugax.{name}"
    module = sys.modules.get(full)
    if module is None:
        try:
            module = importlib.import_module(full)
        except ImportError:
            module = types.ModuleType(full, f"Functions contributed by plugins to {full}.")
            sys.modules[full] = module
            parent_name, _, child = full.rpartition(".")
            setattr(namespace_module(parent_name[len("plugax."):]) if "." in name
                    else sys.modules["plugax"], child, module)
    return module


def _claim(qualname: str, current: object, fn: object, owner: str) -> tuple[object, str]:
    """(function to install or _MISSING to keep the current one, message or "")."""
    declared = isinstance(fn, overrides_name)
    fn = fn.fn if declared else fn
    if current is _MISSING or current is fn:        # new name, or a plain re-export
        _owners.setdefault(qualname, (owner, declared))
        return fn, ""
    holder, held_by_override = _owners.get(qualname, ("the plugax kernel", False))
    if declared and not held_by_override:
        _owners[qualname] = (owner, True)
        return fn, f"{owner} overrides {qualname} (given by {holder}), as it declares"
    why = ("both declare overrides_name; the first loaded keeps it" if declared else
           "wrap the function in plugax.extend.overrides_name(fn) to replace it")
    return _MISSING, (f"{owner} may not replace {qualname}, given by {holder}; kept "
                      f"{holder}'s ({why})")


def install_frontend(namespaces: Mapping[str, Mapping[str, Callable]],
                     owner: str = "a plugin") -> list[str]:
    """Install a plugin's functions; returns the messages for names it overrode or was
    refused (the registry turns them into PluginWarnings naming both plugins)."""
    messages = []
    for ns_name, functions in namespaces.items():
        module = namespace_module(ns_name)
        for fname, fn in functions.items():
            current = module.__dict__.get(fname, _MISSING)
            fn, message = _claim(f"{module.__name__}.{fname}", current, fn, owner)
            messages += [message] if message else []
            if fn is _MISSING:
                continue
            _original_functions.setdefault((module.__name__, fname), current)
            setattr(module, fname, fn)
            _installed_functions.append((module, fname))
    return messages


def install_array_methods(methods: Mapping[str, Callable], owner: str = "a plugin") -> list[str]:
    messages = []
    for name, fn in methods.items():
        fn, message = _claim(f"Array.{name}", Array.__dict__.get(name, _MISSING), fn, owner)
        messages += [message] if message else []
        if fn is _MISSING:
            continue
        for cls in _CLASSES:
            _original_methods.setdefault((cls, name), cls.__dict__.get(name, _MISSING))
            setattr(cls, name, fn)
        _installed_methods.append(name)
    return messages


def clear_frontend() -> None:
    """Put back what every installed name held before (kernel names re-exported or
    overridden by a plugin included), so unregistering a plugin restores exactly."""
    _owners.clear()
    for module, fname in _installed_functions:
        key = (module.__name__, fname)
        if key not in _original_functions:
            continue            # a name set by two plugins: already restored
        original = _original_functions.pop(key)
        if original is _MISSING:
            module.__dict__.pop(fname, None)
        else:
            setattr(module, fname, original)
    _installed_functions.clear()
    for name in _installed_methods:
        for cls in _CLASSES:
            original = _original_methods.pop((cls, name), _MISSING)
            if original is not _MISSING:
                setattr(cls, name, original)
            elif name in cls.__dict__:
                delattr(cls, name)
    _installed_methods.clear()


def install_primitive_handles(primitives: Mapping[str, object]) -> None:
    """`plugax.lax.<name>_p` for every loaded primitive (JAX's handles), so a plugin
    overriding or extending a built-in primitive needs no private import. A '-' in a
    name becomes '_', as in JAX's handles (`scatter-add` is `scatter_add_p`)."""
    module = namespace_module("lax")
    for name, prim in primitives.items():
        handle = f"{name.replace('-', '_')}_p"
        if handle.isidentifier() and handle not in module.__dict__:
            _original_functions.setdefault((module.__name__, handle), _MISSING)
            setattr(module, handle, prim)
            _installed_functions.append((module, handle))
