"""The plugin registry: discovers plugins, validates them, builds the rule tables.

Flow: `load_entry_points()` imports each entry point of group ``plugax`` inside
its own try/except (one broken plugin never hides the others), registers it
with pluggy, and `rebuild()` turns the hooks' answers into the plain dict
tables of core/rules.py plus the front-end namespaces and Array methods.
Every rebuild bumps `version`, which caches (jit) key on.
"""
from __future__ import annotations

import os
import threading
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator

import pluggy

from ..core import rules as R
from ..errors import PluginConflictError, PluginError
from . import hookspec
from .derive import derive_missing_rules
from .namespaces import install_array_methods, install_frontend, clear_frontend
from .ruleset import PluginInfo, RuleSet

__all__ = ["Registry", "PluginRecord", "PluginWarning", "registry", "plugin_api_version"]

plugin_api_version = 1


class PluginWarning(UserWarning):
    """A plugin was skipped; with PLUGAX_STRICT_PLUGINS=1 this is an error instead."""


@dataclass
class PluginRecord:
    """One plugin as the registry sees it (what `plugax plugins` prints)."""

    name: str
    distribution: str = "<unregistered>"
    version: str = "?"
    status: str = "loaded"          # loaded | failed | disabled
    reason: str = ""
    plugin: Any = None
    info: PluginInfo | None = None
    primitives: list = field(default_factory=list)

    def owner(self) -> str:
        return f"plugin '{self.name}' (distribution {self.distribution} {self.version})"


def _env_list(name: str) -> list[str] | None:
    raw = os.environ.get(name)
    if raw is None:
        return None
    return [part.strip() for part in raw.split(",") if part.strip()]


class Registry:
    """Holds the pluggy manager, the plugin records, and rebuilds the rule tables."""

    def __init__(self) -> None:
        self.pm = pluggy.PluginManager(hookspec.PROJECT)
        self.pm.add_hookspecs(hookspec)
        self.records: dict[str, PluginRecord] = {}
        self.version = 0
        self._lock = threading.RLock()

    @property
    def strict(self) -> bool:
        return os.environ.get("PLUGAX_STRICT_PLUGINS", "").strip() in ("1", "true", "yes")

    # --- discovery -----------------------------------------------------------
    def load_entry_points(self, group: str = "plugax") -> None:
        """Import every entry point of `group`, honouring the allow and deny lists."""
        from importlib import metadata
        allow = _env_list("PLUGAX_LOAD_PLUGINS")
        deny = set(_env_list("PLUGAX_DISABLE_PLUGINS") or ())
        for ep in sorted(metadata.entry_points(group=group), key=lambda e: e.name):
            dist = getattr(ep, "dist", None)
            record = PluginRecord(ep.name, dist.name if dist else "<unknown>",
                                  dist.version if dist else "?")
            if ep.name in self.records:
                continue
            if (allow is not None and ep.name not in allow) or ep.name in deny:
                why = "not in PLUGAX_LOAD_PLUGINS" if ep.name not in deny else \
                    "listed in PLUGAX_DISABLE_PLUGINS"
                record.status, record.reason = "disabled", why
                self.records[ep.name] = record
                continue
            try:
                plugin = ep.load()
            except Exception as err:  # a broken plugin must not take the others down
                self._fail(record, f"import failed: {type(err).__name__}: {err}")
                continue
            self._register(plugin, record)
        self.pm.check_pending()
        self.rebuild()

    def register(self, plugin: Any, name: str, distribution: str = "<in-process>",
                 version: str = "0") -> PluginRecord:
        """Register a plugin object directly (tests, notebooks) and rebuild."""
        with self._lock:
            record = PluginRecord(name, distribution, version)
            self._register(plugin, record)
            self.pm.check_pending()
            self.rebuild()
            return record

    def add_builtin(self, plugin: Any, name: str) -> None:
        """Register one of the kernel's own plugins (tables are built by the next rebuild)."""
        self._register(plugin, PluginRecord(name, "plugax", "builtin"))

    def unregister(self, name: str) -> None:
        with self._lock:
            record = self.records.pop(name, None)
            if record is not None and record.plugin is not None and \
                    self.pm.is_registered(record.plugin):
                self.pm.unregister(record.plugin)
            self.rebuild()

    @contextmanager
    def scoped(self, plugin: Any, name: str = "scoped", **kw: str) -> Iterator[PluginRecord]:
        """Register `plugin` for the duration of the block, then restore the tables."""
        record = self.register(plugin, name, **kw)
        try:
            yield record
        finally:
            self.unregister(name)

    def _register(self, plugin: Any, record: PluginRecord) -> None:
        if record.name in self.records and self.records[record.name].status == "loaded":
            self._fail(record, f"a plugin named '{record.name}' is already registered")
            return
        try:
            self.pm.register(plugin, name=record.name)
        except Exception as err:
            self._fail(record, f"pluggy rejected it: {err}")
            return
        record.plugin = plugin
        self.records[record.name] = record

    def _fail(self, record: PluginRecord, reason: str) -> None:
        record.status, record.reason = "failed", reason
        self.records[record.name] = record
        if record.plugin is not None and self.pm.is_registered(record.plugin):
            self.pm.unregister(record.plugin)
        message = f"{record.owner()} was not loaded: {reason}"
        if self.strict:
            raise PluginError(message)
        warnings.warn(message, PluginWarning, stacklevel=3)

    # --- building the tables ---------------------------------------------------
    def _answers(self, hook_name: str, record: PluginRecord) -> list:
        hook = getattr(self.pm.hook, hook_name)
        return [impl.function() for impl in hook.get_hookimpls() if impl.plugin is record.plugin]

    def rebuild(self) -> None:
        """Recompute every table from the loaded plugins (in place: callers keep references)."""
        with self._lock:
            for table in R.all_tables().values():
                table.clear()
            R.lowering_rules.clear()
            R.rule_owner.clear()
            R.rule_origin.clear()
            R.forget_abstract_evals()
            clear_frontend()
            loaded = [r for r in self.records.values() if r.status == "loaded"]
            accepted = [r for r in loaded if self._accept(r)]
            rulesets = self._collect_rulesets(accepted)
            for record, ruleset in rulesets:
                self._install(record, ruleset)
            derive_missing_rules([rs for _, rs in rulesets])
            for record in accepted:
                if record.status == "loaded":
                    self._check_requires(record)
                    for answer in self._answers("plugax_frontend", record):
                        install_frontend(answer or {})
                    for answer in self._answers("plugax_array_methods", record):
                        install_array_methods(answer or {})
            self.version += 1

    def _accept(self, record: PluginRecord) -> bool:
        infos = self._answers("plugax_plugin_info", record)
        if not infos or not isinstance(infos[0], PluginInfo):
            self._fail(record, "it has no plugax_plugin_info hook returning a PluginInfo")
            return False
        info = record.info = infos[0]
        low, high = info.api_versions
        if not low <= plugin_api_version <= high:
            self._fail(record, f"it supports plugin API versions {low}..{high}, "
                               f"but this plugax provides version {plugin_api_version}")
            return False
        return True

    def _collect_rulesets(self, records: list[PluginRecord]) -> list[tuple]:
        by_primitive: dict[Any, tuple[PluginRecord, RuleSet]] = {}
        for record in records:
            try:
                answers = [rs for group in self._answers("plugax_primitive_rules", record)
                           for rs in (group or ())]
            except Exception as err:
                self._fail(record, f"plugax_primitive_rules raised {type(err).__name__}: {err}")
                continue
            problems = [f"{getattr(rs, 'primitive', rs)}: {p}" for rs in answers
                        for p in (rs.problems() if isinstance(rs, RuleSet)
                                  else [f"expected a RuleSet, got {type(rs).__name__}"])]
            if problems:
                self._fail(record, "malformed RuleSet(s): " + "; ".join(problems))
                continue
            record.primitives = [rs.primitive for rs in answers]
            for rs in answers:
                self._add_ruleset(by_primitive, record, rs)
        return list(by_primitive.values())

    def _add_ruleset(self, by_primitive: dict, record: PluginRecord, rs: RuleSet) -> None:
        previous = by_primitive.get(rs.primitive)
        if previous is None or (rs.overrides and not previous[1].overrides):
            by_primitive[rs.primitive] = (record, rs)
            return
        if previous[1].overrides and not rs.overrides:
            return
        message = (f"primitive '{rs.primitive}' is defined by both {previous[0].owner()} "
                   f"and {record.owner()}; uninstall or disable one "
                   f"(PLUGAX_DISABLE_PLUGINS), or set overrides=True in exactly one RuleSet")
        if self.strict:
            raise PluginConflictError(message)
        warnings.warn(message, PluginWarning, stacklevel=4)

    def _install(self, record: PluginRecord, rs: RuleSet) -> None:
        prim = rs.primitive
        R.rule_owner[prim] = record.owner()
        for kind, table in R.all_tables().items():
            rule = getattr(rs, kind)
            if rule is not None:
                table[prim] = rule
                R.rule_origin[(prim, kind)] = "own"
        for platform, rule in rs.lowering.items():
            R.lowering_rules.setdefault(platform, {})[prim] = rule
            R.rule_origin[(prim, f"lowering:{platform}")] = "own"

    def _check_requires(self, record: PluginRecord) -> None:
        missing = [name for name in record.info.requires
                   if self.records.get(name) is None or self.records[name].status != "loaded"]
        if missing:
            message = (f"{record.owner()} requires plugin(s) {', '.join(missing)}, which are "
                       f"not loaded; its operations that use them will fail")
            if self.strict:
                raise PluginError(message)
            warnings.warn(message, PluginWarning, stacklevel=4)

    def loaded_names(self) -> list[str]:
        return [r.name for r in self.records.values() if r.status == "loaded"]


registry = Registry()
