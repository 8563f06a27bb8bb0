"""The plugin registry: discovers plugins, validates them, builds the rule tables.

Flow: `load_entry_points()` imports each entry point of group ``plugax`` inside
its own try/except (one broken plugin never hides the others), registers it
with pluggy, and `rebuild()` turns the hooks' answers into the plain dict
tables of core/rules.py plus the front-end namespaces and Array methods.
Every rebuild bumps `version`, which caches (jit) key on.

The global `registry` is lazy: `import plugax` only discovers its entry points
(loader/lazy.py), and they are loaded on first use (plugax/first_use.py). Its
queries (`records`, `primitives_by_name`, `transformations`, `loaded_names`,
`lookup_primitive`) and changes (`register`, `unregister`, `rebuild`) are first
uses: each loads the plugins before answering. A `Registry()` made by hand (tests)
loads when told to, as before.
"""
from __future__ import annotations

import threading
import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator

import pluggy

from .. import first_use
from ..core import rules as R
from ..config import _env_flag
from ..errors import PluginConflictError, PluginError
from . import hookspec
from .derive import derive_missing_rules
from .discovery import Discovery, LightEntryPoint, discover, dist_name_version
from .signatures import signature_problems
from .snapshot import Snapshot, publish
from .ruleset import VERSION_1_NAMES, PluginInfo, RuleSet, Transformation

__all__ = ["Registry", "PluginRecord", "PluginWarning", "registry", "plugin_api_version"]

plugin_api_version = 2


class PluginWarning(UserWarning):
    """A plugin was skipped; with PLUGAX_STRICT_PLUGINS=1 this is an error instead."""


class PluginConfigWarning(UserWarning):
    """PLUGAX_LOAD_PLUGINS/PLUGAX_DISABLE_PLUGINS name a plugin that is not installed.
    Not a PluginWarning: no plugin failed, so strict mode does not turn it into an error."""


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
    transformations: list = field(default_factory=list)
    load_seconds: float | None = None   # time to import the entry point (None: not imported)

    def owner(self) -> str:
        return f"plugin '{self.name}' (distribution {self.distribution} {self.version})"


# What a plugin may raise without stopping the load: every Exception, and
# SystemExit (a plugin calling sys.exit() at import is a plugin bug, not the user's
# wish to quit). KeyboardInterrupt and GeneratorExit still propagate: they are the
# user (Ctrl-C) or the interpreter asking to stop, which no plugin failure may swallow.
CONTAINED = (Exception, SystemExit)
# An entry point whose import takes longer than this (seconds) is named in a
# PluginWarning: the first use imports every plugin, so one slow plugin slows all users.
SLOW_IMPORT_SECONDS = 1.0


def _hook_of(err: BaseException) -> str:
    return getattr(err, "plugax_hook", "a front-end hook")


class Registry:
    """Holds the pluggy manager, the plugin records, and rebuilds the rule tables."""

    def __init__(self, lazy: bool = False) -> None:
        self.pm = pluggy.PluginManager(hookspec.PROJECT)
        self.pm.add_hookspecs(hookspec)
        self._records: dict[str, PluginRecord] = {}
        self.version = 0
        self._transformations: dict[str, tuple] = {}
        self._primitives_by_name: dict[str, Any] = {}
        self._lazy = lazy   # the global registry: plugins load on first use
        self._lookup_misses: list | None = None
        self._building: dict | None = None   # the snapshot's primitives, while it is built
        self._builder: int | None = None     # the thread building it
        self._lock = threading.RLock()

    @property
    def strict(self) -> bool:
        return _env_flag("PLUGAX_STRICT_PLUGINS")

    # --- first use: the global registry loads its plugins before answering -----
    def _ensure_loaded(self) -> bool:
        """Load the discovered plugins if this is the lazy registry and they are not
        loaded yet; True when that happened now (the tables were just built)."""
        return self._lazy and first_use.load()

    @property
    def records(self) -> dict[str, PluginRecord]:
        """Plugin name -> PluginRecord, every plugin discovered (loaded, failed, disabled)."""
        self._ensure_loaded()
        return self._records

    @property
    def primitives_by_name(self) -> dict[str, Any]:
        self._ensure_loaded()
        return self._primitives_by_name

    @property
    def transformations(self) -> dict[str, tuple]:
        """Transformation name -> (Transformation, PluginRecord)."""
        self._ensure_loaded()
        return self._transformations

    # --- discovery -----------------------------------------------------------
    def load_entry_points(self, group: str = "plugax") -> None:
        """Import every entry point of `group`, honouring the allow and deny lists."""
        self.load_discovered(discover(group))

    def load_discovered(self, found: Discovery, builtins: tuple = ()) -> None:
        """Register `builtins` ((plugin, name) pairs: the kernel's own plugins), import
        the discovered entry points, and build the tables. For the lazy registry this is
        its first use (loader/lazy.py); if it raises (strict mode), the registry is left
        as it was before, so the next use tries again."""
        try:
            for plugin, name in builtins:
                self.add_builtin(plugin, name)
            self._import_entry_points(found)
            self.pm.check_pending()
            self._rebuild()
        except BaseException:
            if self._lazy:
                self._forget_plugins()
            raise

    def _forget_plugins(self) -> None:
        """Unregister every plugin: a first use that failed leaves nothing half-loaded."""
        for record in self._records.values():
            if record.plugin is not None and self.pm.is_registered(record.plugin):
                self.pm.unregister(record.plugin)
        self._records.clear()

    def _import_entry_points(self, found: Discovery) -> None:
        allow, deny = found.allow, found.deny
        entries = found.entry_points
        if entries is None:   # a zip or egg on sys.path: importlib.metadata reads those
            from importlib import metadata   # (~10 ms to import: only then)
            entries = metadata.entry_points(group=found.group)
        entry_points = sorted(entries, key=lambda e: e.name)
        self._warn_unknown_names(allow, deny, {ep.name for ep in entry_points})
        dists: dict = {}
        for ep in entry_points:
            dist = ep if type(ep) is LightEntryPoint else getattr(ep, "dist", None)
            record = PluginRecord(ep.name, *dist_name_version(dist, dists))
            disabled = (allow is not None and ep.name not in allow) or ep.name in deny
            if ep.name in self._records:
                self._duplicate_entry_point(record, self._records[ep.name], disabled)
                continue
            if disabled:
                why = "not in PLUGAX_LOAD_PLUGINS" if ep.name not in deny else \
                    "listed in PLUGAX_DISABLE_PLUGINS"
                record.status, record.reason = "disabled", why
                self._records[ep.name] = record
                continue
            start = time.perf_counter()
            try:
                plugin = ep.load()
            except CONTAINED as err:  # a broken plugin must not take the others down
                record.load_seconds = time.perf_counter() - start
                self._fail(record, f"import failed: {type(err).__name__}: {err}")
                continue
            record.load_seconds = took = time.perf_counter() - start
            if took > SLOW_IMPORT_SECONDS:
                warnings.warn(f"{record.owner()} took {took:.2f} s to import (more than "
                              f"{SLOW_IMPORT_SECONDS:g} s); every program using plugax pays "
                              f"this. PLUGAX_DISABLE_PLUGINS={record.name} skips it",
                              PluginWarning, stacklevel=4)
            self._register(plugin, record)

    def _warn_unknown_names(self, allow: list[str] | None, deny: set[str],
                            found: set[str]) -> None:
        """A name in PLUGAX_LOAD_PLUGINS/PLUGAX_DISABLE_PLUGINS that matches no plugin
        is most likely a typo, which would otherwise silently load (or skip) the wrong
        set of plugins; warn, listing the names that do exist."""
        known = found | set(self._records)
        for var, names in (("PLUGAX_LOAD_PLUGINS", allow or ()),
                           ("PLUGAX_DISABLE_PLUGINS", sorted(deny))):
            for name in names:
                if name not in known:
                    warnings.warn(f"{var} names '{name}', which matches no installed plugin "
                                  f"(entry-point group plugax); installed: "
                                  f"{', '.join(sorted(known)) or 'none'}",
                                  PluginConfigWarning, stacklevel=5)

    def _duplicate_entry_point(self, record: PluginRecord, first: PluginRecord,
                               disabled: bool) -> None:
        """A second entry point (or a built-in plugin) already has `record.name`.

        Plugins are addressed by name everywhere (PLUGAX_LOAD_PLUGINS, `requires`,
        `plugax plugins`), so two of one name would make every one of those ambiguous;
        which one loaded would depend on sys.path order. The first keeps the name; the
        later one becomes a `failed` record (under its own key, so the first stays
        visible) with a PluginWarning, or a PluginError in strict mode. The same
        distribution seen again (a second `load_entry_points()`) is not a conflict.
        """
        if (first.distribution, first.version) == (record.distribution, record.version):
            return
        reason = (f"its entry-point name '{record.name}' (group plugax) is already taken by "
                  f"{first.owner()}; plugins are addressed by name, so rename one entry "
                  f"point or uninstall one of the distributions "
                  f"({first.distribution}, {record.distribution})")
        key = f"{record.name} ({record.distribution})"
        if disabled:   # neither loads: nothing is ambiguous, but the record says why
            record.status, record.reason = "disabled", f"duplicate name: {reason}"
            self._records[key] = record
            return
        record.status, record.reason = "failed", reason
        self._records[key] = record
        message = f"{record.owner()} was not loaded: {reason}"
        if self.strict:
            raise PluginError(message)
        warnings.warn(message, PluginWarning, stacklevel=3)

    def register(self, plugin: Any, name: str, distribution: str = "<in-process>",
                 version: str = "0") -> PluginRecord:
        """Register a plugin object directly (tests, notebooks) and rebuild."""
        self._ensure_loaded()
        with self._lock:
            record = PluginRecord(name, distribution, version)
            self._register(plugin, record)
            self.pm.check_pending()
            self._rebuild()
            return record

    def add_builtin(self, plugin: Any, name: str) -> None:
        """Register one of the kernel's own plugins (tables are built by the next rebuild)."""
        self._register(plugin, PluginRecord(name, "plugax", "builtin"))

    def unregister(self, name: str) -> None:
        self._ensure_loaded()
        with self._lock:
            record = self._records.pop(name, None)
            if record is not None and record.plugin is not None and \
                    self.pm.is_registered(record.plugin):
                self.pm.unregister(record.plugin)
            self._rebuild()

    @contextmanager
    def scoped(self, plugin: Any, name: str = "scoped", **kw: str) -> Iterator[PluginRecord]:
        """Register `plugin` for the duration of the block, then restore the tables."""
        record = self.register(plugin, name, **kw)
        try:
            yield record
        finally:
            self.unregister(name)

    def _register(self, plugin: Any, record: PluginRecord) -> None:
        if record.name in self._records and self._records[record.name].status == "loaded":
            self._fail(record, f"a plugin named '{record.name}' is already registered")
            return
        try:
            self.pm.register(plugin, name=record.name)
        except Exception as err:
            self._fail(record, f"pluggy rejected it: {err}")
            return
        record.plugin = plugin
        self._records[record.name] = record

    def _fail(self, record: PluginRecord, reason: str) -> None:
        record.status, record.reason = "failed", reason
        self._records[record.name] = record
        if record.plugin is not None and self.pm.is_registered(record.plugin):
            self.pm.unregister(record.plugin)
        message = f"{record.owner()} was not loaded: {reason}"
        if self.strict:
            raise PluginError(message)
        warnings.warn(message, PluginWarning, stacklevel=3)

    # --- building the tables ---------------------------------------------------
    def _answers(self, hook_name: str, record: PluginRecord) -> list:
        hook = getattr(self.pm.hook, hook_name)
        try:
            return [impl.function() for impl in hook.get_hookimpls()
                    if impl.plugin is record.plugin]
        except CONTAINED as err:
            err.plugax_hook = hook_name   # so the failure names the hook that raised
            raise

    def rebuild(self) -> None:
        """Recompute every table from the loaded plugins into a fresh Snapshot, then
        publish it (loader/snapshot.py says why: threads reading the tables meanwhile
        see old rules or new ones, never a half-built registry). Callers keep their
        references to the live tables: publishing changes their contents."""
        if not self._ensure_loaded():   # (a first load has just built them)
            self._rebuild()

    def _rebuild(self) -> None:
        with self._lock:
            try:
                snapshot = self._build()
            finally:
                self._building = self._builder = None
            publish(snapshot)
            self._primitives_by_name = snapshot.primitives_by_name
            self._transformations = snapshot.transformations
            self.version += 1
            self._announce_published()

    def _announce_published(self) -> None:
        """Run every loaded plugin's plugax_rules_published hook (see hookspec.py)."""
        for record in [r for r in self._records.values() if r.status == "loaded"]:
            try:
                self._answers("plugax_rules_published", record)
            except CONTAINED as err:
                message = (f"{record.owner()}: plugax_rules_published raised "
                           f"{type(err).__name__}: {err}")
                if self.strict:
                    raise PluginError(message) from err
                warnings.warn(message, PluginWarning, stacklevel=4)

    def _build(self) -> Snapshot:
        snapshot = Snapshot()
        # primitives defined so far, for lookup_primitive in this thread
        self._building = snapshot.primitives_by_name
        self._builder = threading.get_ident()
        loaded = [r for r in self._records.values() if r.status == "loaded"]
        accepted = [r for r in loaded if self._accept(r)]
        transformations = snapshot.transformations = self._collect_transformations(accepted)
        accepted = [r for r in accepted if r.status == "loaded"]
        installed = self._collect_rulesets(accepted)
        for record, rs in installed:
            self._install(snapshot, record, rs)
        derive_missing_rules(snapshot, [rs for _, rs in installed if rs.defines],
                             [t for t, _ in transformations.values()])
        for record in accepted:
            if record.status == "loaded":
                self._check_requires(record)
            if record.status == "loaded":
                self._plan_frontend(snapshot, record)
        snapshot.frontend.add_primitive_handles(snapshot.primitives_by_name)
        return snapshot

    def _plan_frontend(self, snapshot: Snapshot, record: PluginRecord) -> None:
        """Ask `record` for its front-end functions and Array methods before planning
        any, so that a hook raising leaves nothing of that plugin half-installed."""
        try:
            frontend = self._answers("plugax_frontend", record)
            methods = self._answers("plugax_array_methods", record)
        except CONTAINED as err:
            self._fail(record, f"{_hook_of(err)} raised {type(err).__name__}: {err}")
            return
        messages = []
        for answer in frontend:
            messages += snapshot.frontend.add_functions(answer or {}, record.owner())
        for answer in methods:
            messages += snapshot.frontend.add_methods(answer or {}, record.owner())
        for message in messages:   # a refusal or override is a warning, never order-silent
            if self.strict and "may not replace" in message:
                raise PluginError(message)
            warnings.warn(message, PluginWarning, stacklevel=4)

    def _accept(self, record: PluginRecord) -> bool:
        try:
            infos = self._answers("plugax_plugin_info", record)
        except CONTAINED as err:
            self._fail(record, f"plugax_plugin_info raised {type(err).__name__}: {err}")
            return False
        if not infos or not isinstance(infos[0], PluginInfo):
            self._fail(record, "it has no plugax_plugin_info hook returning a PluginInfo")
            return False
        info = record.info = infos[0]
        low, high = info.api_versions
        if not low <= plugin_api_version <= high:
            self._fail(record, f"it supports plugin API versions {low}..{high}, "
                               f"but this plugax provides version {plugin_api_version}"
                               f"{_version_changes(high)}")
            return False
        return True

    def _collect_transformations(self, records: list[PluginRecord]) -> dict:
        """name -> (Transformation, record); a name taken twice refuses the later plugin."""
        found: dict[str, tuple[Transformation, PluginRecord]] = {}
        for record in records:
            try:
                answers = [t for group in self._answers("plugax_transformations", record)
                           for t in (group or ())]
            except CONTAINED as err:
                self._fail(record, f"plugax_transformations raised {type(err).__name__}: {err}")
                continue
            problem = next((_transformation_problem(t) for t in answers
                            if _transformation_problem(t)), None)
            taken = next((t for t in answers if t.name in found), None) if not problem else None
            if taken is not None:
                problem = (f"transformation '{taken.name}' is already contributed by "
                           f"{found[taken.name][1].owner()}")
            if problem:
                self._fail(record, problem)
                continue
            record.transformations = [t.name for t in answers]
            for t in answers:
                found[t.name] = (t, record)
        return found

    def _collect_rulesets(self, records: list[PluginRecord]) -> list[tuple]:
        """The RuleSets to install, in order: definitions first, then additions and
        overrides. A primitive is identified by its name; a second definition of a
        taken name, or a second rule of one kind for one primitive, refuses the later
        plugin (with PLUGAX_STRICT_PLUGINS, import stops), naming both distributions."""
        # Definitions are published as plugins answer, so that a plugin adding rules to
        # another's primitive (plugax-jet) finds it with get_primitive at hook time; a
        # plugin that looked up a name defined by a plugin answering later is asked again
        # once every plugin has answered. Answers keep the plugins' order.
        building = self._building
        answered: dict[int, list | None] = {}
        missed = []
        for record in records:
            self._lookup_misses = []
            answered[id(record)] = answers = self._ruleset_answers(record)
            for rs in answers or ():
                if rs.defines:
                    building.setdefault(rs.primitive.name, rs.primitive)
            if self._lookup_misses:
                missed.append(record)
        self._lookup_misses = None
        for record in missed:   # every plugin has answered now
            answered[id(record)] = self._ruleset_answers(record)
        answers_by_record = [(r, answered[id(r)]) for r in records
                             if answered.get(id(r)) is not None]
        building.clear()
        self._definers = {}
        for record, _ in answers_by_record:
            record.primitives = []
        owners: dict[tuple, PluginRecord] = {}     # (name, kind) -> record giving it
        installed = []
        for stage in ("define", "add", "override"):
            for record, answers in answers_by_record:
                if record.status != "loaded":
                    continue
                mine = [rs for rs in answers if _stage(rs) == stage]
                conflict = self._conflict(record, mine, owners, stage)
                if conflict:
                    self._refuse(record, conflict)
                    continue
                for rs in mine:
                    if stage == "define":
                        building[rs.primitive.name] = rs.primitive
                        self._definers[rs.primitive.name] = record
                        record.primitives.append(rs.primitive)
                    for kind in rs.kinds():
                        owners[(rs.primitive.name, kind)] = record
                    installed.append((record, rs))
        loaded = {id(r) for r, _ in answers_by_record if r.status == "loaded"}
        return [(r, rs) for r, rs in installed if id(r) in loaded]

    def _ruleset_answers(self, record: PluginRecord) -> list | None:
        """The RuleSets `record` gives, or None (and the plugin failed) if malformed."""
        try:
            answers = [rs for group in self._answers("plugax_primitive_rules", record)
                       for rs in (group or ())]
        except CONTAINED as err:
            self._fail(record, f"plugax_primitive_rules raised {type(err).__name__}: {err}")
            return None
        problems = [f"{getattr(rs, 'primitive', rs)}: {p}" for rs in answers
                    for p in (rs.problems() if isinstance(rs, RuleSet)
                              else [f"expected a RuleSet, got {type(rs).__name__}"])]
        problems += signature_problems(answers) if not problems else []
        if problems:
            self._fail(record, "malformed RuleSet(s): " + "; ".join(problems))
            return None
        return answers

    def lookup_primitive(self, name: str) -> Any:
        """The primitive named `name` (None if no plugin defines it); while the tables
        are rebuilt, a miss is remembered so the asking plugin is asked again."""
        building = self._builder is not None and self._builder == threading.get_ident()
        if not building:
            self._ensure_loaded()
        prim = (self._building if building else self._primitives_by_name).get(name)
        if prim is None and building and self._lookup_misses is not None:
            self._lookup_misses.append(name)
        return prim

    def _conflict(self, record: PluginRecord, rulesets: list, owners: dict,
                  stage: str) -> str | None:
        """Why `record`'s RuleSets of this stage cannot be installed (None: they can)."""
        seen: set = set()
        for rs in rulesets:
            name = rs.primitive.name
            existing = self._building.get(name)
            if stage == "define":
                if name in seen:
                    return f"it defines primitive '{name}' twice"
                seen.add(name)
                if existing is not None:
                    return (f"primitive '{name}' is already defined by "
                            f"{self._definers[name].owner()}; "
                            f"a RuleSet that replaces another's rules must say overrides=True "
                            f"(and use the same primitive: plugax.extend.get_primitive('{name}'))")
                continue
            if existing is None:
                return (f"it gives rules for primitive '{name}', which no loaded plugin "
                        f"defines (a RuleSet defines its primitive when it has an "
                        f"abstract_eval rule or an expand)")
            if existing is not rs.primitive:
                return (f"its RuleSet for '{name}' uses a different Primitive object than "
                        f"the one {self._definers[name].owner()} "
                        f"defines; use plugax.extend.get_primitive('{name}') (or "
                        f"plugax.lax.{name}_p)")
            if stage == "add":
                taken = [k for k in rs.kinds() if (name, k) in owners]
                if taken:
                    return (f"it gives a {taken[0]} rule for primitive '{name}', which "
                            f"{owners[(name, taken[0])].owner()} already gives; set "
                            f"overrides=True to replace it")
        return None

    def _refuse(self, record: PluginRecord, reason: str) -> None:
        """A conflict: strict mode stops the import, otherwise the plugin is skipped."""
        if self.strict:
            record.status, record.reason = "failed", reason
            if record.plugin is not None and self.pm.is_registered(record.plugin):
                self.pm.unregister(record.plugin)   # so the name can be registered again
            raise PluginConflictError(f"{record.owner()} was not loaded: {reason}")
        self._fail(record, reason)

    def _install(self, snapshot: Snapshot, record: PluginRecord, rs: RuleSet) -> None:
        prim = rs.primitive
        if rs.defines:
            snapshot.owner[prim] = record.owner()
        origin = "own" if rs.defines else f"from {record.name}"
        for kind, rule in rs.rules.items():
            snapshot.table(kind)[prim] = rule
            snapshot.origin[(prim, kind)] = origin
        for platform, rule in rs.lowering.items():
            snapshot.table("lowering", platform)[prim] = rule
            snapshot.origin[(prim, f"lowering:{platform}")] = origin

    def _check_requires(self, record: PluginRecord) -> None:
        missing = [name for name in record.info.requires
                   if self._records.get(name) is None or self._records[name].status != "loaded"]
        if missing:
            message = (f"{record.owner()} requires plugin(s) {', '.join(missing)}, which are "
                       f"not loaded; its operations that use them will fail")
            if self.strict:
                raise PluginError(message)
            warnings.warn(message, PluginWarning, stacklevel=4)

    def loaded_names(self) -> list[str]:
        return [r.name for r in self.records.values() if r.status == "loaded"]


registry = Registry(lazy=True)


def _stage(rs: RuleSet) -> str:
    return "override" if rs.overrides else "define" if rs.defines else "add"


def _transformation_problem(t: Any) -> str | None:
    if not isinstance(t, Transformation):
        return f"plugax_transformations must return Transformation records, got {t!r}"
    if t.rule_kind not in R.rule_kinds:
        return (f"transformation '{t.name}' reads rule kind '{t.rule_kind}', which is not "
                f"defined (call plugax.extend.define_rule_kind first)")
    return None


def _version_changes(high: int) -> str:
    """What changed since the version a refused plugin was written for."""
    if high >= plugin_api_version:
        return ""
    changes = "; ".join(f"'{name}' {what}" for name, what in VERSION_1_NAMES.items())
    return (f". Version 2 changed: {changes}; weak_type and partial_eval rules take the "
            f"context first; 'expand' is expand(ctx, *args, **params) (see 'Changes in "
            f"version 2' in docs/plugin-api.md)")
