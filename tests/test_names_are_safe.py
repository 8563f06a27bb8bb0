"""Names are safe (issue 13, item 5): plugin names are unique, new plugins get free
names, and a folder named `plugax` that shadows the package is reported as such.

Plugins are addressed by name everywhere (PLUGAX_LOAD_PLUGINS, PluginInfo.requires,
`plugax plugins`), so a second entry point of a taken name, or a new plugin given a
taken name, must fail loudly and name who has it. The fake distributions come from
the `dists` fixture (tests/conftest.py).
"""
from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import plugax
from plugax._shadow import shadowing_problem
from plugax.cli import main
from plugax.extend import PluginInfo, Primitive, RuleSet, ShapedArray, hookimpl
from plugax.loader.registry import PluginWarning, Registry
from plugax.scaffold import NameTakenError, name_taken, render_plugin


# --- duplicate entry-point names -------------------------------------------------------

def _two_dists_one_name(dists):
    """Two distributions whose entry points are both called `<tag>_same`."""
    prims = dists.primitives("one_p", "two_p")
    dists.good("first", "one_p", prims, offset=1)
    dists.good("second", "two_p", prims, offset=2)
    # both entry points are named `same`; sorting is stable, so sys.path order decides
    # which comes first: both dist-infos live in one folder, listed alphabetically
    dist_a = dists.dist("a_dist", "1.0", {"same": dists.name("first")})
    dist_b = dists.dist("b_dist", "2.0", {"same": dists.name("second")})
    return prims, dist_a, dist_b


def _ep_order(dists) -> list[str]:
    from importlib import metadata
    return [ep.dist.name for ep in metadata.entry_points(group="plugax")
            if ep.name == dists.name("same")]


def test_duplicate_entry_point_name_fails_the_later_one_naming_both(dists):
    prims, dist_a, dist_b = _two_dists_one_name(dists)
    dists.allow("same")
    first, later = _ep_order(dists)
    reg, warned = dists.load_quietly()
    name = dists.name("same")
    kept = reg.records[name]
    assert (kept.status, kept.distribution) == ("loaded", first)
    dup = reg.records[f"{name} ({later})"]
    assert (dup.name, dup.status, dup.distribution) == (name, "failed", later)
    for text in (dup.reason, *warned):
        assert first in text and later in text and f"'{name}'" in text
    assert len(warned) == 1 and "was not loaded" in warned[0]
    # the later one's module was never imported; the first one is the registered plugin
    module_of = {dist_a: dists.name("first"), dist_b: dists.name("second")}
    assert module_of[later] not in sys.modules
    assert reg.pm.get_plugin(name) is kept.plugin is sys.modules[module_of[first]]


def test_duplicate_entry_point_name_strict_raises(dists):
    _two_dists_one_name(dists)
    dists.allow("same")
    dists.strict(True)
    first, later = _ep_order(dists)
    with pytest.raises(plugax.PluginError) as info:
        dists.load()
    message = str(info.value)
    assert f"distribution {later} " in message and first in message
    assert "already taken" in message


def test_duplicate_shows_as_failed_in_plugins_command(dists, monkeypatch, capsys):
    _two_dists_one_name(dists)
    dists.allow("same")
    first, later = _ep_order(dists)
    reg, _ = dists.load_quietly()
    monkeypatch.setattr(plugax, "registry", reg)
    assert main(["plugins", "--json"]) == 0
    rows = [p for p in json.loads(capsys.readouterr().out)["plugins"]
            if p["name"] == dists.name("same")]
    assert sorted((r["distribution"], r["status"]) for r in rows) == \
        sorted([(first, "loaded"), (later, "failed")])


def test_disabled_duplicate_is_recorded_without_a_warning(dists):
    _two_dists_one_name(dists)
    dists.allow("nothing_else")
    dists.strict(True)                       # would raise if it were treated as a failure
    reg, warned = dists.load_quietly()
    name = dists.name("same")
    first, later = _ep_order(dists)
    assert warned == []
    assert reg.records[name].status == "disabled"
    dup = reg.records[f"{name} ({later})"]
    assert dup.status == "disabled" and "duplicate name" in dup.reason and first in dup.reason


def test_loading_entry_points_twice_is_not_a_duplicate(dists):
    prims = dists.primitives("once_p")
    dists.good("once", "once_p", prims, offset=3)
    dists.dist("oncedist", "1.0", {"once": dists.name("once")})
    dists.allow("once")
    dists.strict(True)
    reg = dists.load()
    reg.load_entry_points()                  # the same distribution again: nothing to say
    mine = [(key, r.status) for key, r in reg.records.items() if r.status != "disabled"]
    assert mine == [(dists.name("once"), "loaded")]
    once_p = sys.modules[prims].once_p
    np.testing.assert_array_equal(np.asarray(once_p.bind(np.float32(1.0))), 4.0)


def test_entry_point_named_like_a_builtin_plugin_fails(dists):
    """`kernel` is registered by plugax itself before any entry point loads."""
    prims = dists.primitives("k_p")
    module = dists.good("kernelish", "k_p", prims)
    info = dists.root / f"{dists.name('kdist')}-0.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dists.name('kdist')}\n"
                                   f"Version: 0.3\n")
    (info / "entry_points.txt").write_text(f"[plugax]\nkernel = {module}\n")
    dists.mp.setenv("PLUGAX_LOAD_PLUGINS", "kernel")
    importlib.invalidate_caches()
    reg = Registry()
    reg.add_builtin(plugax.kernel_plugin, "kernel")
    with pytest.warns(PluginWarning, match=r"distribution plugax builtin") as caught:
        reg.load_entry_points()
    [message] = [str(w.message) for w in caught if "kernel" in str(w.message)]
    assert dists.name("kdist") in message
    assert reg.records["kernel"].distribution == "plugax"
    assert reg.records[f"kernel ({dists.name('kdist')})"].status == "failed"
    assert module not in sys.modules


# --- plugax new-plugin with a taken name -----------------------------------------------

@pytest.mark.parametrize("name, holder", [
    ("elementwise", "distribution plugax "),      # a built-in family's entry point
    ("kernel", "built-in plugin of the kernel"),  # registered by plugax, no entry point
])
def test_new_plugin_refuses_builtin_names(name, holder, tmp_path, capsys):
    assert main(["new-plugin", name, "--dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert f"plugin name '{name}' is already taken" in err and holder in err
    assert list(tmp_path.iterdir()) == []


def test_new_plugin_refuses_an_installed_entry_point(dists, tmp_path):
    prims = dists.primitives("x_p")
    dists.good("taken", "x_p", prims)
    dist = dists.dist("owner", "4.2", {"taken": dists.name("taken")})
    with pytest.raises(NameTakenError, match=rf"distribution {dist} 4\.2"):
        render_plugin(dists.name("taken"), tmp_path)
    assert not (tmp_path / f"plugax-{dists.name('taken')}").exists()


def test_new_plugin_refuses_an_importable_package(tmp_path, monkeypatch):
    name = "zz" + os.urandom(4).hex()
    package = tmp_path / "site" / f"plugax_{name}"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    importlib.invalidate_caches()
    [holder] = name_taken(name)
    assert f"package plugax_{name} is importable" in holder and str(package) in holder
    with pytest.raises(NameTakenError):
        render_plugin(name, tmp_path)


def test_new_plugin_refuses_a_loaded_family_and_its_primitive(tmp_path):
    """A plugin registered in-process (no entry point): only the registry knows it."""
    family = "fam" + os.urandom(4).hex()
    cube_p = Primitive(f"{family}x_cube")   # the primitive a plugin `<family>x` would get

    class Family:
        @hookimpl
        def plugax_plugin_info(self):
            return PluginInfo(name=family)

        @hookimpl
        def plugax_primitive_rules(self):
            return [RuleSet(cube_p, abstract_eval=lambda ctx, x: ShapedArray(x.shape, x.dtype),
                            impl=lambda ctx, x: x)]

    with plugax.registry.scoped(Family(), family, distribution="fam-dist", version="7"):
        [holder] = name_taken(family)
        assert "fam-dist 7" in holder and "loaded plugin" in holder
        [holder] = name_taken(f"{family}x")
        assert f"primitive '{family}x_cube'" in holder and "fam-dist" in holder
        with pytest.raises(NameTakenError, match="fam-dist"):
            render_plugin(family, tmp_path)
    assert name_taken(family) == name_taken(f"{family}x") == []


def test_new_plugin_with_a_free_name_still_works(tmp_path, capsys):
    name = "free" + os.urandom(4).hex()
    assert name_taken(name) == []
    assert main(["new-plugin", name, "--dir", str(tmp_path)]) == 0
    assert (tmp_path / f"plugax-{name}" / "pyproject.toml").is_file()
    assert "tox" in capsys.readouterr().out


# --- a folder named plugax that shadows the package -------------------------------------

def test_shadowing_problem_in_process(monkeypatch, tmp_path):
    assert shadowing_problem() is None
    impostor = types.ModuleType("plugax")
    impostor.__path__ = [str(tmp_path / "plugax")]       # what a namespace package has
    monkeypatch.setitem(sys.modules, "plugax", impostor)
    problem = shadowing_problem()
    assert str(tmp_path / "plugax") in problem and "namespace package" in problem
    assert "shadows" in problem and "docs/faq.md" in problem


def _lenient_editable() -> bool:
    """plugax installed by setuptools' default editable mode (a finder after PathFinder)."""
    for finder in sys.meta_path:
        mapping = getattr(sys.modules.get(getattr(finder, "__module__", ""), None),
                          "MAPPING", None)
        if isinstance(mapping, dict) and "plugax" in mapping:
            return True
    return False


def _run(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **env}
    full_env.pop("PYTHONSAFEPATH", None)
    return subprocess.run(args, cwd=cwd, env=full_env, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture(params=["empty folder", "package", "module"])
def shadow(request, tmp_path) -> tuple[str, Path]:
    """A working directory (tmp_path) holding something named plugax: (kind, its path)."""
    if request.param == "module":
        (tmp_path / "plugax.py").write_text("")
        return request.param, tmp_path / "plugax.py"
    (tmp_path / "plugax").mkdir()
    if request.param == "package":
        (tmp_path / "plugax" / "__init__.py").write_text("")
        return request.param, tmp_path / "plugax" / "__init__.py"
    return request.param, tmp_path / "plugax"


def test_a_family_import_names_the_shadowing_folder(shadow, tmp_path):
    kind, where = shadow
    result = _run([sys.executable, "-c", "import plugax_elementwise"], tmp_path)
    if kind == "empty folder" and not _lenient_editable():
        # a regular package later on sys.path beats a namespace portion: no shadow
        assert result.returncode == 0, result.stderr
        return
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: plugax_elementwise: 'import plugax' found ")
    assert str(where) in last and "shadows the installed plugax package" in last


def test_python_m_plugax_names_the_shadowing_folder(shadow, tmp_path):
    kind, where = shadow
    if kind == "module":
        pytest.skip("`python -m plugax` runs the user's plugax.py: no plugax code runs")
    result = _run([sys.executable, "-m", "plugax", "plugins"], tmp_path)
    if not _lenient_editable():
        if kind == "empty folder":   # a regular package beats a namespace portion
            assert result.returncode == 0, result.stderr
        else:   # plugax.__main__ is not in the impostor: Python says so itself
            assert result.returncode != 0 and "plugax.__main__" in result.stderr
        return
    assert result.returncode == 1
    assert result.stderr.startswith("plugax: 'import plugax' found ")
    assert str(where) in result.stderr
    assert "shadows it" in result.stderr and "Traceback" not in result.stderr


def test_console_script_names_a_shadowing_folder_on_pythonpath(tmp_path):
    script = shutil.which("plugax", path=str(Path(sys.executable).parent))
    if script is None or not _lenient_editable():
        pytest.skip("needs the `plugax` console script of an editable install")
    (tmp_path / "plugax").mkdir()
    result = _run([script, "plugins"], Path.cwd(), PYTHONPATH=str(tmp_path))
    assert result.returncode == 1
    assert str(tmp_path / "plugax") in result.stderr and "shadows it" in result.stderr


def test_no_false_alarm_without_a_shadow(tmp_path):
    result = _run([sys.executable, "-m", "plugax", "plugins", "--json"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["plugin_api_version"] == plugax.plugin_api_version
