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
from ..plugins.registry import PluginRecord, registry

__all__ = ["scoped_plugin"]


@contextmanager
def scoped_plugin(plugin_obj: Any, name: str = "test") -> Iterator[PluginRecord]:
    """Register `plugin_obj` as plugin `name` for the block; the tables are restored after."""
    with registry.scoped(plugin_obj, name) as record:
        if record.status != "loaded":
            raise PluginError(f"test plugin '{name}' was not loaded: {record.reason}")
        yield record
