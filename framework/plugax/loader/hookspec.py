"""The plugin contract: every hook a plugax plugin may implement.

A plugin is any module or object with functions marked `@hookimpl` whose names
match the specs below. Built-in families and third-party packages are loaded the
same way: through the entry-point group ``plugax``.

None of these hooks is `firstresult`: every plugin's answer counts. The kernel
calls each hook once per registry build (never per operation) and turns the
answers into plain dict tables.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping

import pluggy

from .ruleset import PluginInfo, RuleSet, Transformation

__all__ = ["hookspec", "hookimpl", "PROJECT"]

PROJECT = "plugax"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def plugax_plugin_info() -> PluginInfo:
    """Describe this plugin: name, supported plugin-API range, required plugins.

    Required of every plugin. The kernel checks `api_versions` against
    `plugax.plugin_api_version` before reading any other hook.
    """


@hookspec
def plugax_primitive_rules() -> Iterable[RuleSet]:
    """Return one `RuleSet` per primitive this plugin defines.

    A primitive defined by two plugins is an error naming both distributions,
    unless exactly one of the RuleSets sets ``overrides=True``.
    """


@hookspec
def plugax_transformations() -> Iterable[Transformation]:
    """Return the `Transformation`s this plugin contributes.

    A transformation owns a rule kind (define it with
    `plugax.extend.define_rule_kind` before returning the record) and says how
    its rules derive from decompositions and how the kit checks them. The
    kernel's own transformations come through this hook too. Two plugins
    contributing a transformation of the same name: the later one is refused,
    naming both.
    """


@hookspec
def plugax_frontend() -> Mapping[str, Mapping[str, Callable]]:
    """Return user-facing functions by namespace, e.g. ``{"numpy": {...}, "lax": {...}}``.

    Namespace ``"numpy"`` fills ``plugax.numpy``, ``"lax"`` fills ``plugax.lax``;
    any other dotted name (``"scipy.special"``) becomes ``plugax.scipy.special``.
    """


@hookspec
def plugax_array_methods() -> Mapping[str, Callable]:
    """Return methods and operators for `plugax.Array` and every Tracer.

    Keys are attribute names (``"__add__"``, ``"sum"``, ``"T"``); a value that is
    a `property` is installed as one.
    """


@hookspec
def plugax_rules_published() -> None:
    """Called after every rebuild, once the new rule tables are live.

    For a plugin that caches something derived from the tables (a fast path that
    inlines its own impl rule while the table still holds it): refresh it here.
    The other hooks run while the new tables are still being built, off to the
    side, so they would see the old ones. An exception is contained: a warning
    names the plugin (PLUGAX_STRICT_PLUGINS raises it).
    """


@hookspec
def plugax_test_cases() -> Iterable[Any]:
    """Return `plugax.testing.Case` objects the conformance kit runs for this plugin."""
