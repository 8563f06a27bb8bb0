"""Registry snapshots: the rule tables are rebuilt off to the side, then published.

Why: other threads trace, evaluate and call jitted functions while a plugin is
registered, unregistered or replaced. Clearing the live tables and refilling
them, as a first version did, let those threads see a half-built registry
("no jvp rule for sin", "plugax.numpy has no function 'sin'"). Now a rebuild
fills a fresh `Snapshot` that nobody reads, and `publish` swaps its contents
into the live tables so that each table lookup sees the old rule or the new
one: entries are added or replaced first, and only then are entries that the
new registry no longer has removed. A primitive both registries define is
never missing, not even for an instant.

The live tables stay the same dict objects (`bind` and the rule modules hold
references to them, which is what keeps a lookup a plain dict access), so
publishing is per table, not one atomic pointer swap: a thread that binds
during the publish may use an old jvp rule and a new batching rule for a
primitive whose rules changed. Anything cached across binds keys on
`registry.version`, which is bumped only after every table is published, so a
cache entry built during a publish is rebuilt on its next use.
"""
from __future__ import annotations

import threading
from typing import Any, Callable

from ..core import rules as R
from .namespaces import FrontendPlan, apply_frontend

__all__ = ["Snapshot", "publish", "publish_lock"]

# Held while a snapshot is published, and by anything else that writes the live
# tables (scoped overrides install their dispatchers under it), so writers never
# interleave.
publish_lock = threading.RLock()


class Snapshot:
    """Everything a rebuild computes, in plain dicts nobody else holds yet.

    `tables[kind]` is `{primitive: rule}` (for a per-platform kind such as lowering,
    `{platform: {primitive: rule}}`); `owner` and `origin` mirror core/rules.py's
    `rule_owner` and `rule_origin`.
    """

    def __init__(self) -> None:
        self.tables: dict[str, dict] = {name: {} for name in R.rule_kinds}
        self.owner: dict[Any, str] = {}
        self.origin: dict[tuple, str] = {}
        self.frontend = FrontendPlan()
        self.primitives_by_name: dict[str, Any] = {}
        self.transformations: dict[str, tuple] = {}

    def table(self, kind: str, platform: str | None = None) -> dict:
        """The snapshot's table for `kind` (and `platform`, for lowering)."""
        table = self.tables.setdefault(kind, {})
        return table.setdefault(platform, {}) if platform is not None else table


# Called with the snapshot just before it is published, under the registry lock:
# the scoped-override module keeps its dispatchers in the new tables this way.
before_publish: list[Callable[[Snapshot], None]] = []


def publish(snapshot: Snapshot) -> None:
    """Make the live tables, owners and front ends what `snapshot` holds."""
    with publish_lock:
        for hook in before_publish:
            hook(snapshot)
        for name, kind in list(R.rule_kinds.items()):
            new = snapshot.tables.get(name, {})
            if kind.per_platform:
                for platform in set(kind.table) | set(new):
                    _swap(kind.table.setdefault(platform, {}), new.get(platform, {}))
            else:
                _swap(kind.table, new)
        _swap(R.rule_owner, snapshot.owner)
        _swap(R.rule_origin, snapshot.origin)
        apply_frontend(snapshot.frontend)
        R.forget_abstract_evals()


def _swap(live: dict, new: dict) -> None:
    """Replace `live`'s contents by `new`'s, adding before removing (see the module
    docstring). `dict.update` from a dict runs without releasing the GIL, so a
    reader sees each entry either old or new."""
    live.update(new)
    for key in [k for k in live if k not in new]:
        live.pop(key, None)
