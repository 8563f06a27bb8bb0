"""`import plugax` discovers the plugins; their first use loads them.

`discover()` runs at `import plugax`: it reads the entry points of group
``plugax`` and the allow and deny lists (PLUGAX_LOAD_PLUGINS,
PLUGAX_DISABLE_PLUGINS) without importing any plugin, pluggy or the kernel's
heavier modules, and hands `_load` to `plugax.first_use`. The first use (see
first_use.py for what counts) runs `_load`: the kernel's built-in plugins and
every discovered entry point are registered with the global registry and the
tables are built, exactly as `import plugax` used to do, with the same warnings
and, in strict mode, the same errors, raised at that first use instead.

`import plugax.nn` (or `plugax.scipy.special`, `plugax.numpy.linalg`) names a
namespace that plugins create when they load, so no file provides it:
`NamespaceFinder`, last on `sys.meta_path`, is asked only for such a name while the
plugins are not loaded; its loader loads them and hands over the namespace they made
(or raises ModuleNotFoundError, as the import would have, if none did).
"""
from __future__ import annotations

import sys
from importlib.machinery import ModuleSpec
from typing import Any

from .. import first_use
from .discovery import Discovery, discover

__all__ = ["discover_plugins", "NamespaceFinder"]

_discovered: Discovery | None = None


def discover_plugins(group: str = "plugax") -> None:
    """Find the plugins of `group` now and defer loading them to their first use."""
    global _discovered
    _discovered = discover(group)
    if NamespaceFinder not in sys.meta_path:
        sys.meta_path.append(NamespaceFinder)
    first_use.defer(_load)


def _load() -> None:
    """The first use: what `import plugax` did before it was lazy."""
    from ..core.array import Array
    from ..custom_derivatives import kernel_plugin
    from ..interpreters.builtin import transformations_plugin
    from ..structural import structural_plugin
    from .registry import registry
    for bind_names in first_use.before_load:
        bind_names()
    registry.load_discovered(_discovered, ((transformations_plugin, "transformations"),
                                           (structural_plugin, "structural"),
                                           (kernel_plugin, "kernel")))
    first_use.remove_trampolines(Array)


class NamespaceFinder:
    """Finds `plugax.<namespace>` while the plugins are not loaded; its loader loads them.

    The loading happens in `create_module`, not here: Python asks finders while holding
    its global import lock, so waiting here for another thread's load (which imports
    modules) would stop both. `create_module` runs holding only the lock of this one
    name, which the loading thread never takes (namespace_module makes namespaces
    without the import system)."""

    @classmethod
    def find_spec(cls, fullname: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        if not fullname.startswith("plugax.") or fullname.rpartition(".")[2][:1] == "_" \
                or not first_use.pending():
            return None
        return ModuleSpec(fullname, _AfterLoad)


class _AfterLoad:
    """Loads the plugins, then hands over the namespace one of them made, if any."""

    @staticmethod
    def create_module(spec: ModuleSpec) -> Any:
        first_use.load()
        module = sys.modules.get(spec.name)
        if module is None:
            raise ModuleNotFoundError(f"No module named {spec.name!r}", name=spec.name)
        return module

    @staticmethod
    def exec_module(module: Any) -> None:
        pass
