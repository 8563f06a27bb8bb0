"""scoped_plugin: register a plugin object for one block of test code.

Why a wrapper over `plugax.registry.scoped`: the registry only *warns* when a
plugin is rejected (a bad PluginInfo, a malformed RuleSet), which in a test
turns into a confusing MissingRuleError much later. Here rejection raises at
once, with the registry's reason.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

from ..errors import PluginError
from ..loader.registry import PluginRecord, registry

__all__ = ["scoped_plugin", "registry_restored", "skip_unless_loaded"]


@contextmanager
def scoped_plugin(plugin_obj: Any, name: str = "test") -> Iterator[PluginRecord]:
    """Register `plugin_obj` as plugin `name` for the block; the tables are restored after."""
    with registry.scoped(plugin_obj, name) as record:
        if record.status != "loaded":
            raise PluginError(f"test plugin '{name}' was not loaded: {record.reason}")
        yield record


@contextmanager
def registry_restored() -> Iterator[Any]:
    """Yield plugax.registry; afterwards restore the plugins (and statuses) it had.

    Whatever the block registered, unregistered or broke, the same plugin
    objects are registered again under their names and the tables rebuilt.
    """
    saved = dict(registry.records)
    statuses = {name: (r.status, r.reason) for name, r in saved.items()}
    try:
        yield registry
    finally:
        with registry._lock:
            for name, record in list(registry.records.items()):
                if saved.get(name) is not record and record.plugin is not None \
                        and registry.pm.is_registered(record.plugin):
                    registry.pm.unregister(record.plugin)
            for name, record in saved.items():
                record.status, record.reason = statuses[name]
                if record.status == "loaded" and record.plugin is not None \
                        and not registry.pm.is_registered(record.plugin):
                    registry.pm.register(record.plugin, name=name)
            registry.records.clear()
            registry.records.update(saved)
            registry.rebuild()


def skip_unless_loaded(items: list, folder: str, plugins: set[str]) -> None:
    """For a conftest's `pytest_collection_modifyitems`: skip every collected test under
    `folder` when one of `plugins` is not loaded, with a reason naming them. A suite
    written for the families then skips cleanly in an environment that loads fewer
    (the kernel run, a family's own tox env) instead of failing on missing functions."""
    missing = set(plugins) - set(registry.loaded_names())
    if not missing:
        return
    import pytest
    skip = pytest.mark.skip(reason=f"needs the plugins {sorted(missing)}, which are not loaded")
    for item in items:
        if folder in str(item.fspath):
            item.add_marker(skip)
