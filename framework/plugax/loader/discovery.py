"""Entry-point discovery without importing `importlib.metadata`.

`import plugax` discovers its plugins through the `plugax` entry-point group.
`importlib.metadata` would do it, but importing it pulls in `email` (and
through it `socket`, `base64`, ...), `zipfile`, `shutil`, `lzma`, `csv`: about
10-15 ms, a tenth of `import plugax`, before a single plugin is looked at
(measured with `python -X importtime`, issue 18). The layout it reads is simple
and specified (the PyPA "Recording installed projects" and "Entry points"
specifications): each directory on `sys.path` holds `<name>-<version>.dist-info`
(or `.egg-info`) directories, whose `entry_points.txt` is an INI file of
`[group]` sections of `name = module:attr` lines and whose `METADATA` (or
`PKG-INFO`) starts with `Name:` and `Version:` headers.

`find_entry_points` reads exactly that, with importlib.metadata's rules: the
first distribution of a (normalised) name on `sys.path` hides later ones,
`.dist-info` before `.egg-info` within a directory, comments and blank lines
skipped. Where the layout is anything else (a zip file or an egg on `sys.path`)
it returns None and the caller uses importlib.metadata, so discovery never
finds less than importlib.metadata would.
"""
from __future__ import annotations

import importlib
import os
import re
import sys
from typing import Any

__all__ = ["find_entry_points", "LightEntryPoint", "Discovery", "discover", "env_list",
           "dist_name_version"]

_NORMALIZE = re.compile(r"[-_.]+")
_METADATA_DIRS = re.compile(r"^.+\.(dist-info|egg-info|egg)$", re.IGNORECASE | re.MULTILINE)


class LightEntryPoint:
    """The parts of `importlib.metadata.EntryPoint` the registry uses."""

    __slots__ = ("name", "value", "group", "_info")

    def __init__(self, name: str, value: str, group: str, info: str):
        self.name, self.value, self.group, self._info = name, value, group, info

    def load(self) -> Any:
        """Import the module and follow the attribute path, as EntryPoint.load does."""
        spec = self.value.split("[", 1)[0].strip()   # drop an `[extras]` suffix
        module, _, attrs = spec.partition(":")
        obj = importlib.import_module(module.strip())
        for attr in filter(None, attrs.strip().split(".")):
            obj = getattr(obj, attr)
        return obj

    def dist_name_version(self) -> tuple[str, str]:
        """(Name, Version) from the distribution's METADATA (or PKG-INFO) headers."""
        name = version = None
        for fname in ("METADATA", "PKG-INFO"):
            path = os.path.join(self._info, fname)
            try:
                with open(path, encoding="utf-8") as fh:
                    for line in fh:
                        if not line.strip():
                            break   # the headers end at the first blank line
                        key, _, val = line.partition(":")
                        if key == "Name" and name is None:
                            name = val.strip()
                        elif key == "Version" and version is None:
                            version = val.strip()
                break
            except OSError:
                continue
        stem = os.path.basename(self._info).rsplit(".", 1)[0]
        return name or stem.split("-")[0], version or (stem.split("-") + ["?"])[1]

    def __repr__(self) -> str:
        return f"LightEntryPoint(name={self.name!r}, value={self.value!r}, group={self.group!r})"


def _entries(text: str, group: str) -> list[tuple[str, str]]:
    out, section = [], None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
            continue
        if section == group:
            name, sep, value = line.partition("=")
            if sep:
                out.append((name.strip(), value.strip()))
    return out


def find_entry_points(group: str) -> list[LightEntryPoint] | None:
    """Every entry point of `group` on sys.path, or None where the layout needs
    importlib.metadata (a zip or egg file on the path)."""
    seen: set[str] = set()
    found: list[LightEntryPoint] = []
    for root in sys.path:
        root = root or "."
        if not os.path.isdir(root):
            if os.path.exists(root):   # a zip file (or something else) importlib reads
                return None
            continue
        try:
            children = os.listdir(root)
        except OSError:
            continue
        infos, eggs = [], []
        # one regex pass over the listing: the stdlib's folder holds hundreds of names,
        # and a Python-level test of each was most of the time discovery took
        for match in _METADATA_DIRS.finditer("\n".join(children)):
            kind = match.group(1).lower()
            if kind == "egg":
                return None
            (infos if kind == "dist-info" else eggs).append(match.group(0))
        for child in infos + eggs:
            stem = child.rsplit(".", 1)[0]
            key = _NORMALIZE.sub("_", stem.split("-")[0]).lower()
            if key in seen:
                continue
            seen.add(key)
            info = os.path.join(root, child)
            path = os.path.join(info, "entry_points.txt")
            if not os.path.isfile(path):   # most have none: a stat is cheaper than a
                continue                   # failing open (and its exception)
            try:
                with open(path, encoding="utf-8") as fh:
                    text = fh.read()
            except OSError:
                continue
            if group in text:   # most distributions have no section of this group
                found.extend(LightEntryPoint(n, v, group, info) for n, v in _entries(text, group))
    return found


def env_list(name: str) -> list[str] | None:
    """A comma-separated PLUGAX_* list (PLUGAX_LOAD_PLUGINS); None when unset."""
    raw = os.environ.get(name)
    if raw is None:
        return None
    return [part.strip() for part in raw.split(",") if part.strip()]


class Discovery:
    """What `import plugax` learns about the plugins without importing any: the entry
    points of the group (None where a zip or egg on sys.path needs importlib.metadata,
    which the registry then asks when it loads) and the allow and deny lists
    (PLUGAX_LOAD_PLUGINS, PLUGAX_DISABLE_PLUGINS) as they were at import."""

    __slots__ = ("group", "entry_points", "allow", "deny")

    def __init__(self, group: str, entry_points: list | None, allow: list[str] | None,
                 deny: set[str]):
        self.group, self.entry_points, self.allow, self.deny = group, entry_points, allow, deny


def discover(group: str) -> Discovery:
    """The plugins of `group` and the environment's lists, read now."""
    return Discovery(group, find_entry_points(group), env_list("PLUGAX_LOAD_PLUGINS"),
                     set(env_list("PLUGAX_DISABLE_PLUGINS") or ()))


def dist_name_version(dist: Any, seen: dict) -> tuple[str, str]:
    """(name, version) of an entry point's distribution. Reading either parses the
    distribution's METADATA file (about 0.35 ms); one distribution gives many entry
    points (plugax gives fifteen), so each is parsed once per load."""
    if dist is None:
        return "<unknown>", "?"
    if type(dist) is LightEntryPoint:   # this module's: its METADATA headers
        key = dist._info
        if key not in seen:
            seen[key] = dist.dist_name_version()
        return seen[key]
    key = str(getattr(dist, "_path", id(dist)))
    if key not in seen:
        meta = dist.metadata
        seen[key] = (meta["Name"], meta["Version"])
    return seen[key]
