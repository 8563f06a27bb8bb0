"""`plugax new-plugin NAME`: render the plugin template into a new package folder.

Why a template and not documentation alone: a third-party package needs half a
dozen files to agree (the entry point names the module that holds the hooks,
the PluginInfo name matches the entry point, tests load the cases the plugin
declares). Generated together, they start out consistent and tested.

The template lives in `plugax/templates/plugin/` (package data). File names
and contents use `{{name}}`, `{{package}}`, `{{distribution}}`, `{{prim}}`,
`{{plugax_version}}` and `{{plugax_source}}`; a path part `__package__` becomes
the import package and `__name__` the plugin name; the `.tmpl` suffix is dropped.

Two things are checked before anything is written, because both only show up
later and far away otherwise: the name must be free (a second plugin of one name
is refused at load time, see `Registry.load_entry_points`), and the generated tox
env must know where to install plugax from (plugax is not on a package index).
"""
from __future__ import annotations

import json
import re
from importlib import metadata, resources, util
from pathlib import Path
from typing import Iterator
from urllib.parse import unquote, urlparse

__all__ = ["NameTakenError", "name_taken", "plugax_source", "render_plugin", "template_vars"]

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


class NameTakenError(ValueError):
    """The plugin name (or its package, distribution or primitive name) is already in use."""


def _check_syntax(name: str) -> None:
    if not _NAME.match(name):
        raise ValueError(f"plugin name {name!r} must start with a lowercase letter and use only "
                         f"lowercase letters, digits and underscores (it becomes the entry-point "
                         f"name and part of the package name plugax_{name})")


def name_taken(name: str) -> list[str]:
    """Who already uses plugin name `name`; empty when it is free.

    Checked: entry points of group ``plugax`` (installed plugins, the built-in
    families among them), the registry's records (built-in kernel plugins and
    plugins registered in-process), an importable top-level package
    ``plugax_<name>``, an installed distribution ``plugax-<name>``, and the
    template's example primitive ``<name>_cube``. Each would make the generated
    plugin fail to load, or load someone else's code, with an error far from here.
    """
    import plugax
    holders: list[str] = []
    ep_dists = set()
    for ep in metadata.entry_points(group="plugax"):
        if ep.name == name:
            dist = getattr(ep, "dist", None)
            ep_dists.add(dist.name if dist else None)
            owner = f"{dist.name} {dist.version}" if dist else "an unknown distribution"
            holders.append(f"entry point '{name}' (group plugax) of distribution {owner} "
                           f"-> {ep.value}")
    record = plugax.registry.records.get(name)
    if record is not None and record.distribution not in ep_dists:
        kind = "a built-in plugin of the kernel" if record.version == "builtin" else \
            f"a {record.status} plugin"
        holders.append(f"{record.owner()}: {kind}")
    package = f"plugax_{name}"
    try:
        spec = util.find_spec(package)
    except (ImportError, ValueError):
        spec = None
    if spec is not None:
        where = spec.origin or ", ".join(spec.submodule_search_locations or ()) or "?"
        holders.append(f"package {package} is importable (from {where})")
    try:
        dist = metadata.distribution(f"plugax-{name}")
    except metadata.PackageNotFoundError:
        pass
    else:
        holders.append(f"distribution plugax-{name} {dist.version} is installed")
    prim = plugax.registry.primitives_by_name.get(f"{name}_cube")
    if prim is not None:
        from .core.rules import rule_owner
        holders.append(f"primitive '{name}_cube' (the template's example primitive) is "
                       f"defined by {rule_owner.get(prim, 'a loaded plugin')}")
    return holders


def plugax_source() -> str:
    """What the generated tox env installs plugax from: a folder, file or requirement.

    plugax is not published on a package index, so `plugax>=VERSION` alone cannot
    be installed. Preferred: the folder (or wheel) pip installed this plugax from,
    as recorded in the distribution's PEP 610 ``direct_url.json`` (editable or
    not; for a VCS install, that repository at the installed commit); else the source tree around this file when it is a checkout on sys.path;
    else the plain requirement (for a private index that does have plugax).
    """
    from . import __version__
    try:
        raw = metadata.distribution("plugax").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        raw = None
    if raw:
        direct = json.loads(raw)
        url = urlparse(direct.get("url", ""))
        if url.scheme == "file" and Path(unquote(url.path)).exists():
            return str(Path(unquote(url.path)))
        vcs = direct.get("vcs_info")
        if vcs and vcs.get("vcs") and vcs.get("commit_id"):   # pip install git+https://...
            return f"plugax @ {vcs['vcs']}+{direct['url']}@{vcs['commit_id']}"
    tree = Path(__file__).resolve().parents[2]
    if (tree / "pyproject.toml").is_file() and \
            re.search(r'(?m)^name\s*=\s*"plugax"', (tree / "pyproject.toml").read_text()):
        return str(tree)
    return f"plugax>={__version__}"


def template_vars(name: str, source: str | None = None) -> dict[str, str]:
    """The placeholders for plugin `name` (lowercase letters, digits, underscores).

    `source` is where the generated tox env installs plugax from (default:
    `plugax_source()`).
    """
    from . import __version__
    _check_syntax(name)
    return {"name": name, "package": f"plugax_{name}", "distribution": f"plugax-{name}",
            "prim": f"{name}_cube", "plugax_version": __version__,
            "plugax_source": source if source is not None else plugax_source()}


def _template_files(root) -> Iterator[tuple[tuple[str, ...], str]]:
    for entry in root.iterdir():
        if entry.is_dir():
            for parts, text in _template_files(entry):
                yield (entry.name, *parts), text
        elif entry.name.endswith(".tmpl"):
            yield (entry.name[:-len(".tmpl")],), entry.read_text(encoding="utf-8")


def _fill(text: str, values: dict[str, str]) -> str:
    return re.sub(r"\{\{(\w+)\}\}", lambda m: values[m.group(1)], text)


def render_plugin(name: str, directory: str | Path = ".", *, source: str | None = None,
                  check_name: bool = True) -> Path:
    """Write package `plugax-<name>` under `directory`; return its folder.

    Refuses to overwrite: an existing folder raises FileExistsError. A name that
    is already in use (see `name_taken`) raises NameTakenError naming the holder;
    `check_name=False` skips that (tests that render into a throwaway folder).
    """
    _check_syntax(name)
    if check_name:
        holders = name_taken(name)
        if holders:
            raise NameTakenError(f"plugin name '{name}' is already taken: " + "; ".join(holders)
                                 + ". Choose another name (plugins are addressed by name: "
                                 "two of one name cannot both load)")
    values = template_vars(name, source)
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
