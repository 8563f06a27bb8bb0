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

__all__ = ["find_entry_points", "LightEntryPoint"]

_NORMALIZE = re.compile(r"[-_.]+")


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
        for child in children:
            low = child.lower()
            if low.endswith(".dist-info"):
                infos.append(child)
            elif low.endswith(".egg-info"):
                eggs.append(child)
            elif low.endswith(".egg"):
                return None
        for child in infos + eggs:
            stem = child.rsplit(".", 1)[0]
            key = _NORMALIZE.sub("_", stem.split("-")[0]).lower()
            if key in seen:
                continue
            seen.add(key)
            info = os.path.join(root, child)
            try:
                with open(os.path.join(info, "entry_points.txt"), encoding="utf-8") as fh:
                    text = fh.read()
            except OSError:   # no entry points (or an egg-info file)
                continue
            found.extend(LightEntryPoint(n, v, group, info) for n, v in _entries(text, group))
    return found
