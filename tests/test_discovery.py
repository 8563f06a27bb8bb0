"""Entry-point discovery without importlib.metadata (loader/discovery.py) finds what
importlib.metadata finds: the same entry points, the first distribution of a name on
sys.path hiding later ones, egg-info directories, comments; it defers to
importlib.metadata where the path holds a zip; and `import plugax` no longer imports
importlib.metadata (or email, zipfile), which was ~10 % of its import time."""
from __future__ import annotations

import importlib
import os
import subprocess
import sys
from importlib import metadata

from plugax.loader.discovery import find_entry_points


def _both(group: str) -> tuple[list, list]:
    importlib.invalidate_caches()
    light = find_entry_points(group)
    assert light is not None
    return (sorted((e.name, e.value) for e in light),
            sorted((e.name, e.value) for e in metadata.entry_points(group=group)))


def test_the_installed_plugins_are_found_as_importlib_finds_them():
    light, reference = _both("plugax")
    assert light == reference and len(light) >= 10


def test_shadowing_egg_info_comments_and_metadata(tmp_path, monkeypatch):
    first, second = tmp_path / "a", tmp_path / "b"
    for root, value in ((first, "mod_first:plugin"), (second, "mod_second:plugin")):
        info = root / "Shadowed_Dist-1.0.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: Shadowed-Dist\n"
                                       "Version: 1.0\n\nName: not a header\n")
        (info / "entry_points.txt").write_text(
            f"# a comment\n[other]\nx = nope:y\n\n[pxdisc_group]\nshadow = {value}\n")
    egg = second / "eggy-2.5.egg-info"
    egg.mkdir()
    (egg / "PKG-INFO").write_text("Metadata-Version: 1.0\nName: eggy\nVersion: 2.5\n")
    (egg / "entry_points.txt").write_text("[pxdisc_group]\negg_ep = json:dumps [extra]\n")
    monkeypatch.syspath_prepend(str(second))
    monkeypatch.syspath_prepend(str(first))
    light, reference = _both("pxdisc_group")
    assert light == reference == [("egg_ep", "json:dumps [extra]"), ("shadow", "mod_first:plugin")]
    eps = {e.name: e for e in find_entry_points("pxdisc_group")}
    assert eps["shadow"].dist_name_version() == ("Shadowed-Dist", "1.0")
    assert eps["egg_ep"].dist_name_version() == ("eggy", "2.5")
    import json
    assert eps["egg_ep"].load() is json.dumps


def test_a_zip_on_the_path_defers_to_importlib(tmp_path, monkeypatch):
    archive = tmp_path / "lib.zip"
    archive.write_bytes(b"PK\x05\x06" + b"\0" * 18)   # an empty zip archive
    monkeypatch.syspath_prepend(str(archive))
    assert find_entry_points("plugax") is None


def test_import_plugax_does_not_import_importlib_metadata():
    code = ("import sys, plugax, plugax.numpy; "
            "print(sorted(m for m in ('importlib.metadata', 'email', 'zipfile') "
            "if m in sys.modules))")
    env = {k: v for k, v in os.environ.items()   # every installed plugin loads
           if k not in ("PLUGAX_LOAD_PLUGINS", "PLUGAX_DISABLE_PLUGINS")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=env).stdout.strip()
    assert out == "[]"
