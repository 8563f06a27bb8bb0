"""Front-end namespaces (`plugax.numpy`, `plugax.lax`, ...) and Array methods.

The kernel defines no user-facing math: plugins contribute it. This module
installs their functions as attributes of namespace modules and their methods
on `Array` and `Tracer`: a rebuild plans the whole set (`FrontendPlan`), then
`apply_frontend` changes only the names that differ.
"""
from __future__ import annotations

import importlib
import sys
import types
from importlib.machinery import PathFinder
from typing import Callable, Mapping

from ..core.array import Array
from ..core.trace import Tracer
from ..core.device_arrays import del_device_method, on_register, set_device_method
from ..first_use import is_trampoline

__all__ = ["FrontendPlan", "apply_frontend", "namespace_module", "overrides_name"]


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


_MISSING = object()
_CLASSES = (Array, Tracer)
_DEVICE_CLASSES: list = []   # device array types (core/device_arrays.py), once registered

# What is installed now, as the last applied FrontendPlan left it:
# (module name, attribute) -> value, and Array/Tracer method name -> value
_installed_functions: dict[tuple[str, str], object] = {}
_installed_methods: dict[str, object] = {}
# (module name, attribute) / (class, method) -> what was there before any plugin set it,
# so that a rebuild without the plugin (unregistering one that re-exports `plugax.vmap`)
# puts it back
_original_functions: dict[tuple[str, str], object] = {}
_original_methods: dict[tuple, object] = {}


def namespace_module(name: str) -> types.ModuleType:
    """The module for namespace `name` ("numpy", "scipy.special"), created if needed;
    "plugax" is the top-level package itself (where `jit` goes).

    A kernel module of that name (`plugax.numpy`) is imported; any other namespace is
    made here without the import system: another thread may be importing it (`import
    plugax.nn`, which waits for this load while holding the import system's lock on
    the name), so importing it from the loading thread would wait for that thread."""
    if name == "plugax":
        return sys.modules["plugax"]
    full = f"plugax.{name}"
    module = sys.modules.get(full)
    if module is not None:
        return module
    parent_name, _, child = name.rpartition(".")
    parent = namespace_module(parent_name) if parent_name else sys.modules["plugax"]
    search = getattr(parent, "__path__", None)
    if search and PathFinder.find_spec(full, list(search)) is not None:
        return importlib.import_module(full)
    module = types.ModuleType(full, f"Functions contributed by plugins to {full}.")
    module.__getattr__ = _missing_name(module)
    sys.modules[full] = module
    setattr(parent, child, module)
    return module


def _missing_name(module: types.ModuleType) -> Callable[[str], object]:
    """The `__getattr__` of a namespace made for plugins: a name JAX has that the owning
    plugin leaves out on purpose (its front end's `"__absent__": {name: reason}`) says
    why; any other missing name says which plugins are loaded."""
    def __getattr__(name: str) -> object:
        if name.startswith("__"):
            raise AttributeError(name)
        reason = module.__dict__.get("__absent__", {}).get(name)
        if reason is not None:
            raise AttributeError(f"{module.__name__} has no {name!r}; JAX's {name} is not "
                                 f"supported because {reason}")
        raise AttributeError(f"{module.__name__} has no {name!r}: no loaded plugin provides "
                             f"it (`plugax plugins` lists the loaded plugins and their names)")
    return __getattr__


def _base_function(key: tuple[str, str]) -> object:
    """What (module, attribute) holds when no plugin is loaded."""
    if key in _original_functions:
        return _original_functions[key]
    return sys.modules[key[0]].__dict__.get(key[1], _MISSING)


def _own(cls: type, name: str) -> object:
    """What `cls` itself holds for `name`; a first-use trampoline counts as nothing
    (plugax/first_use.py: it stands in for the plugins' method until they load)."""
    value = cls.__dict__.get(name, _MISSING)
    return _MISSING if is_trampoline(value) else value


def _base_method(name: str) -> object:
    return _original_methods.get((Array, name), _own(Array, name))


class FrontendPlan:
    """Every front-end name and Array method the loaded plugins give, decided before
    any is installed.

    Why a plan: a rebuild runs while other threads call `plugax.numpy.sin`. Working
    out the whole new set first and then changing only the names that differ
    (`apply`) means a name both the old and the new set hold is never missing, not
    even for an instant; clearing everything and reinstalling it, as a naive
    rebuild would, breaks every thread that looks a name up in between.
    """

    def __init__(self) -> None:
        self.functions: dict[tuple[str, str], object] = {}
        self.methods: dict[str, object] = {}
        self.owners: dict[str, tuple[str, bool]] = {}   # qualified name -> (owner, declared)

    def add_functions(self, namespaces: Mapping[str, Mapping[str, Callable]],
                      owner: str = "a plugin") -> list[str]:
        """Plan a plugin's functions; returns the messages for names it overrode or was
        refused (the registry turns them into PluginWarnings naming both plugins)."""
        messages = []
        for ns_name, functions in namespaces.items():
            module = namespace_module(ns_name)
            for fname, fn in functions.items():
                key = (module.__name__, fname)
                current = self.functions.get(key, _MISSING)
                if current is _MISSING:
                    current = _base_function(key)
                fn = self._claim(f"{module.__name__}.{fname}", current, fn, owner, messages)
                if fn is not _MISSING:
                    self.functions[key] = fn
        return messages

    def add_methods(self, methods: Mapping[str, Callable], owner: str = "a plugin") -> list[str]:
        messages = []
        for name, fn in methods.items():
            current = self.methods.get(name, _MISSING)
            if current is _MISSING:
                current = _base_method(name)
            fn = self._claim(f"Array.{name}", current, fn, owner, messages)
            if fn is not _MISSING:
                self.methods[name] = fn
        return messages

    def add_primitive_handles(self, primitives: Mapping[str, object]) -> None:
        """`plugax.lax.<name>_p` for every loaded primitive (JAX's handles), so a plugin
        overriding or extending a built-in primitive needs no private import. A '-' in
        a name becomes '_', as in JAX's handles (`scatter-add` is `scatter_add_p`)."""
        module = namespace_module("lax")
        for name, prim in primitives.items():
            key = (module.__name__, f"{name.replace('-', '_')}_p")
            if key[1].isidentifier() and key not in self.functions \
                    and _base_function(key) is _MISSING:
                self.functions[key] = prim

    def _claim(self, qualname: str, current: object, fn: object, owner: str,
               messages: list[str]) -> object:
        """The function to plan for `qualname`, or _MISSING to keep `current`."""
        declared = isinstance(fn, overrides_name)
        fn = fn.fn if declared else fn
        if current is _MISSING or current is fn:        # new name, or a plain re-export
            self.owners.setdefault(qualname, (owner, declared))
            return fn
        holder, held_by_override = self.owners.get(qualname, ("the plugax kernel", False))
        if declared and not held_by_override:
            self.owners[qualname] = (owner, True)
            messages.append(f"{owner} overrides {qualname} (given by {holder}), as it declares")
            return fn
        why = ("both declare overrides_name; the first loaded keeps it" if declared else
               "wrap the function in plugax.extend.overrides_name(fn) to replace it")
        messages.append(f"{owner} may not replace {qualname}, given by {holder}; kept "
                        f"{holder}'s ({why})")
        return _MISSING


def add_method_class(cls: type) -> None:
    """Give `cls` (a device array type, core/device_arrays.py) the operators and methods
    the plugins install on Array, now and after every rebuild."""
    if cls not in _DEVICE_CLASSES:
        _DEVICE_CLASSES.append(cls)
        for name, fn in _installed_methods.items():
            set_device_method(cls, name, fn)


def apply_frontend(plan: FrontendPlan) -> None:
    """Make the namespaces and Array methods what `plan` says, changing only what
    differs: new and changed names are set first, then names the plan no longer
    holds get back what they held before any plugin (see FrontendPlan)."""
    for key, fn in plan.functions.items():
        module = sys.modules[key[0]]
        if key not in _installed_functions:
            _original_functions.setdefault(key, module.__dict__.get(key[1], _MISSING))
        if module.__dict__.get(key[1], _MISSING) is not fn:
            setattr(module, key[1], fn)
    for key in [k for k in _installed_functions if k not in plan.functions]:
        module, original = sys.modules[key[0]], _original_functions.pop(key, _MISSING)
        if original is _MISSING:
            module.__dict__.pop(key[1], None)
        else:
            setattr(module, key[1], original)
    _installed_functions.clear()
    _installed_functions.update(plan.functions)
    for name, fn in plan.methods.items():
        for cls in _DEVICE_CLASSES:
            set_device_method(cls, name, fn)
        for cls in _CLASSES:
            if name not in _installed_methods:
                _original_methods.setdefault((cls, name), _own(cls, name))
            if cls.__dict__.get(name, _MISSING) is not fn:
                setattr(cls, name, fn)
    for name in [n for n in _installed_methods if n not in plan.methods]:
        for cls in _DEVICE_CLASSES:
            del_device_method(cls, name)
        for cls in _CLASSES:
            original = _original_methods.pop((cls, name), _MISSING)
            if original is not _MISSING:
                setattr(cls, name, original)
            elif name in cls.__dict__:
                delattr(cls, name)
    _installed_methods.clear()
    _installed_methods.update(plan.methods)


on_register(add_method_class)
