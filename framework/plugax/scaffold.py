"""`plugax new-plugin NAME`: render the plugin template into a new package folder.

Why a template and not documentation alone: a third-party package needs half a
dozen files to agree (the entry point names the module that holds the hooks,
the PluginInfo name matches the entry point, tests load the cases the plugin
declares). Generated together, they start out consistent and tested.

The template lives in `plugax/templates/plugin/` (package data). File names
and contents use `{{name}}`, `{{package}}`, `{{distribution}}`, `{{prim}}` and
`{{plugax_version}}`; a path part `__package__` becomes the import package and
`__name__` the plugin name; the `.tmpl` suffix is dropped.
"""
from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import Iterator

__all__ = ["render_plugin", "template_vars"]

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def template_vars(name: str) -> dict[str, str]:
    """The placeholders for plugin `name` (lowercase letters, digits, underscores)."""
    from . import __version__
    if not _NAME.match(name):
        raise ValueError(f"plugin name {name!r} must start with a lowercase letter and use only "
                         f"lowercase letters, digits and underscores (it becomes the entry-point "
                         f"name and part of the package name plugax_{name})")
    return {"name": name, "package": f"plugax_{name}", "distribution": f"plugax-{name}",
            "prim": f"{name}_cube", "plugax_version": __version__}


def _template_files(root) -> Iterator[tuple[tuple[str, ...], str]]:
    for entry in root.iterdir():
        if entry.is_dir():
            for parts, text in _template_files(entry):
                yield (entry.name, *parts), text
        elif entry.name.endswith(".tmpl"):
            yield (entry.name[:-len(".tmpl")],), entry.read_text(encoding="utf-8")


def _fill(text: str, values: dict[str, str]) -> str:
    return re.sub(r"\{\{(\w+)\}\}", lambda m: values[m.group(1)], text)


def render_plugin(name: str, directory: str | Path = ".") -> Path:
    """Write package `plugax-<name>` under `directory`; return its folder.

    Refuses to overwrite: an existing folder raises FileExistsError.
    """
    values = template_vars(name)
    target = Path(directory) / values["distribution"]
    if target.exists():
        raise FileExistsError(f"{target} already exists; choose another --dir or name")
    root = resources.files("plugax") / "templates" / "plugin"
    for parts, text in sorted(_template_files(root)):
        path = target.joinpath(*(p.replace("__package__", values["package"])
                                 .replace("__name__", name) for p in parts))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_fill(text, values), encoding="utf-8")
    return target
