"""`plugax new-plugin` renders a package whose own tests pass.

Fast path: render into a temp dir, import it from there and register its
plugin with `scoped_plugin` (no installation), then run the rendered test
functions. Slow path (one test): really `pip install` it into a temporary
--target and run its test suite in a subprocess, where plugax must discover it
through its entry point. Slowest (one test, `make tox` only): run the rendered
package's own tox env, which must install plugax from this checkout (plugax is
on no package index) with the families the plugin's tests load.
"""
from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

import plugax
from plugax.cli import main
from plugax.scaffold import plugax_source, render_plugin, template_vars
from plugax.testing import declared_cases, scoped_plugin


@pytest.fixture
def rendered(tmp_path, monkeypatch):
    name = "t" + uuid.uuid4().hex[:8]
    folder = render_plugin(name, tmp_path)
    monkeypatch.syspath_prepend(str(folder))
    yield name, folder
    for module in [m for m in sys.modules if m.startswith(f"plugax_{name}")]:
        del sys.modules[module]


def test_rendered_files_and_entry_point(rendered):
    name, folder = rendered
    files = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    assert files == ["README.md", f"plugax_{name}/__init__.py", f"plugax_{name}/cases.py",
                     f"plugax_{name}/plugin.py", f"plugax_{name}/primitives.py",
                     "pyproject.toml", f"tests/test_{name}.py", "tox.ini"]
    pyproject = (folder / "pyproject.toml").read_text()
    assert f'{name} = "plugax_{name}.plugin"' in pyproject
    assert f'name = "plugax-{name}"' in pyproject
    assert f"[testenv:{name}]" in (folder / "tox.ini").read_text()
    assert "{{" not in "".join(p.read_text() for p in folder.rglob("*") if p.is_file())


def test_rendered_tests_pass_with_the_plugin_registered_in_process(rendered):
    name, folder = rendered
    plugin = importlib.import_module(f"plugax_{name}.plugin")
    spec = importlib.util.spec_from_file_location(f"plugax_{name}_tests",
                                                  folder / "tests" / f"test_{name}.py")
    tests = importlib.util.module_from_spec(spec)
    with scoped_plugin(plugin, name):
        spec.loader.exec_module(tests)
        ran = []
        for test_name, fn in vars(tests).items():
            if not test_name.startswith("test_"):
                continue
            if "plugax_case" in inspect.signature(fn).parameters:
                for case in declared_cases(name):
                    fn(case)
            else:
                fn()
            ran.append(test_name)
        assert len(ran) == 4
        assert len(declared_cases(name)) == 3
    assert name not in plugax.registry.records


def test_cli_refuses_bad_names_and_existing_folders(tmp_path, capsys):
    assert main(["new-plugin", "Bad-Name", "--dir", str(tmp_path)]) == 1
    assert "lowercase letters" in capsys.readouterr().err
    assert main(["new-plugin", "okname", "--dir", str(tmp_path)]) == 0
    assert "plugax-okname" in capsys.readouterr().out
    assert main(["new-plugin", "okname", "--dir", str(tmp_path)]) == 1
    assert "already exists" in capsys.readouterr().err
    with pytest.raises(ValueError):
        template_vars("1abc")


def _pip_install(folder, target) -> None:
    """pip install --target, building with the venv's setuptools if it can build wheels,
    else in pip's isolated build env (which fetches setuptools from the package index)."""
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target",
           str(target), str(folder)]
    errors = []
    for extra in (["--no-build-isolation", "--no-index"], []):
        result = subprocess.run(pip + extra, capture_output=True, text=True, timeout=120)
        if result.returncode == 0:
            return
        errors.append(result.stderr[-800:])
    if any("bdist_wheel" in e for e in errors[:1]) and "Could not find" in errors[-1]:
        pytest.skip("cannot build a wheel here: the venv's setuptools lacks bdist_wheel and "
                    "no package index is reachable")
    raise AssertionError("pip install of the rendered package failed:\n" + "\n".join(errors))


def test_installed_package_is_found_through_its_entry_point(rendered, tmp_path):
    name, folder = rendered
    target = tmp_path / "site"
    _pip_install(folder, target)
    env = {**os.environ, "PYTHONPATH": str(target), "PLUGAX_STRICT_PLUGINS": "1"}
    env.pop("PLUGAX_LOAD_PLUGINS", None)
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             str(folder / "tests")], cwd=folder, env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "6 passed" in result.stdout   # 3 declared cases + 3 tests


CHECKOUT = Path(__file__).resolve().parents[2]
NETWORK_TROUBLE = ("Failed to establish a new connection", "Temporary failure in name resolution",
                   "Network is unreachable", "ConnectTimeoutError", "ProxyError")


def test_rendered_tox_ini_installs_plugax_from_this_checkout(rendered):
    name, folder = rendered
    tox_ini = (folder / "tox.ini").read_text()
    assert plugax_source() == str(CHECKOUT)          # the editable install points here
    assert f"{{env:PLUGAX_SOURCE:{CHECKOUT}}}" in tox_ini
    assert f"PLUGAX_LOAD_PLUGINS = {name},elementwise,shape,reductions,xla_call" in tox_ini
    assert str(CHECKOUT) in (folder / "README.md").read_text()


def test_every_package_of_the_checkout_is_in_the_distribution():
    """An editable install finds any package folder; a real install (the generated
    plugin's tox env, a user's `pip install`) ships only those pyproject lists."""
    tomllib = pytest.importorskip("tomllib")
    config = tomllib.loads((CHECKOUT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    found = set()
    for name, folder in config["package-dir"].items():
        root = CHECKOUT / folder
        found.update(".".join((name, *init.parent.relative_to(root).parts))
                     for init in root.rglob("__init__.py") if "__pycache__" not in init.parts)
    assert sorted(found - listed) == [], "add these to [tool.setuptools] packages"


class _FakeDist:
    def __init__(self, direct_url: dict) -> None:
        self.text = json.dumps(direct_url)

    def read_text(self, name: str) -> str | None:
        return self.text if name == "direct_url.json" else None


@pytest.mark.parametrize("direct_url, expected", [
    ({"url": "file:///{tmp}/my%20plugax", "dir_info": {"editable": True}}, "{tmp}/my plugax"),
    ({"url": "https://example.org/plugax.git",
      "vcs_info": {"vcs": "git", "commit_id": "abc123"}},
     "plugax @ git+https://example.org/plugax.git@abc123"),
])
def test_plugax_source_follows_where_pip_installed_plugax_from(direct_url, expected, tmp_path,
                                                                monkeypatch):
    import plugax.scaffold as scaffold
    (tmp_path / "my plugax").mkdir()
    direct_url = {**direct_url, "url": direct_url["url"].replace("/{tmp}", str(tmp_path))}
    monkeypatch.setattr(scaffold.metadata, "distribution", lambda name: _FakeDist(direct_url))
    assert plugax_source() == expected.replace("{tmp}", str(tmp_path))


@pytest.mark.skipif(os.environ.get("PLUGAX_TOX_TESTS") != "1",
                    reason="builds a tox env (~30 s, uses the package index); "
                           "`make tox` runs it with PLUGAX_TOX_TESTS=1")
def test_rendered_tox_env_passes_from_a_fresh_env(tmp_path):
    """`tox` in a freshly generated package: plugax comes from this checkout, not an index."""
    name = "t" + uuid.uuid4().hex[:8]
    folder = render_plugin(name, tmp_path / "src")
    work = tmp_path / "tox"
    # setuptools builds in the checkout and does not clear build/lib: a module deleted
    # since the last build would still be shipped (and could hide a missing one)
    for stale in [CHECKOUT / "build" / "lib", *(CHECKOUT / "build").glob("bdist.*")]:
        shutil.rmtree(stale, ignore_errors=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PLUGAX_", "TOX_", "PYTHON", "PIP_NO_INDEX")) and
           k != "VIRTUAL_ENV"}
    result = subprocess.run([sys.executable, "-m", "tox", "-e", name, "--workdir", str(work),
                             "--", "-p", "no:cacheprovider"], cwd=folder, env=env,
                            capture_output=True, text=True, timeout=540)
    output = result.stdout + result.stderr
    if result.returncode != 0 and any(t in output for t in NETWORK_TROUBLE):
        pytest.skip("tox could not reach the package index for plugax's dependencies")
    assert result.returncode == 0, output[-4000:]
    assert "6 passed" in result.stdout            # 3 declared cases + 3 tests, jit included
    python = work / name / "bin" / "python"
    probe = subprocess.run(
        [str(python), "-c", "import json, importlib.metadata as m, plugax; "
         "print(json.dumps([m.distribution('plugax').read_text('direct_url.json'), "
         "plugax.__file__, sorted(e.name for e in m.entry_points(group='plugax'))]))"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert probe.returncode == 0, probe.stderr
    direct_url, plugax_file, entry_points = json.loads(probe.stdout)
    # installed from this checkout as a copy (not the dev venv's editable plugax)
    assert json.loads(direct_url)["url"] == CHECKOUT.as_uri()
    assert str(work / name) in plugax_file
    assert {name, "elementwise", "shape", "reductions", "xla_call"} <= set(entry_points)
