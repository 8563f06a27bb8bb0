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

__all__ = ["install_frontend", "install_array_methods", "clear_frontend", "namespace_module"]

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


def install_frontend(namespaces: Mapping[str, Mapping[str, Callable]]) -> None:
    for ns_name, functions in namespaces.items():
        module = namespace_module(ns_name)
        for fname, fn in functions.items():
            _original_functions.setdefault((module.__name__, fname),
                                           module.__dict__.get(fname, _MISSING))
            setattr(module, fname, fn)
            _installed_functions.append((module, fname))


def install_array_methods(methods: Mapping[str, Callable]) -> None:
    for name, fn in methods.items():
        for cls in _CLASSES:
            _original_methods.setdefault((cls, name), cls.__dict__.get(name, _MISSING))
            setattr(cls, name, fn)
        _installed_methods.append(name)


def clear_frontend() -> None:
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
