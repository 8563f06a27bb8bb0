"""Plugins reach the kernel only through `plugax.extend`, and each other only through
their front ends (issue 13, item 8): every package under plugins/ -- the built-in
families and the separate distributions plugax-special and plugax-jet alike -- is
scanned with `plugax.testing.imports` (the rules are in its docstring and in
docs/plugin-api.md). A kernel test: it reads source files, no family is loaded.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from plugax.testing.imports import check_public_imports, import_problems, scan

PLUGINS = Path(__file__).resolve().parents[1] / "plugins"


def packages() -> list[Path]:
    """Every plugin package: plugins/<dist>/plugax_<name>/ (families, plugax-special,
    plugax-jet and any distribution added later)."""
    return sorted(p for p in PLUGINS.glob("*/plugax_*") if (p / "__init__.py").exists())


def test_every_distribution_is_scanned():
    names = {p.name for p in packages()}
    assert {"plugax_elementwise", "plugax_reductions", "plugax_shape", "plugax_dot",
            "plugax_control_flow", "plugax_xla_call", "plugax_special", "plugax_jet"} <= names


@pytest.mark.parametrize("package", packages(), ids=lambda p: p.name)
def test_plugins_import_only_the_public_surface(package: Path):
    assert list(package.rglob("*.py"))
    check_public_imports(package)


def test_the_scanner_flags_every_kind_of_bad_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import plugax\nimport plugax as px\nfrom plugax import dtypes, jit\n"
        "from plugax.config import config\nimport plugax_shape._common\n"
        "from plugax.testing import Case\nfrom plugax.extend import Array\n"
        "import plugax.numpy as pnp\nfrom plugax_mine.x import y\nfrom . import z\n"
        "def f():\n    from plugax.core.trace import bind\n"
        "    from plugax.testing import SkipCheck\n"
        "    return plugax.jvp, px.registry, plugax.dtypes.bool_, plugax.lax.sin\n")
    found = scan(bad, "plugax_mine")
    assert [line.split(" -- ")[0] for line in found] == [
        "bad.py:3: from plugax import dtypes",
        "bad.py:4: from plugax.config import config",
        "bad.py:5: import plugax_shape._common",
        "bad.py:6: from plugax.testing import Case",
        "bad.py:12: from plugax.core.trace import bind",
        "bad.py:14: px.registry",
        "bad.py:14: plugax.dtypes",
    ]
    assert "use plugax.extend (dtype constants" in found[0]
    assert "use plugax.extend.config" in found[1]
    assert "that family's front end" in found[2]
    assert "inside the check function" in found[3]
    # the same test-only import is fine in cases.py
    (tmp_path / "cases.py").write_text("from plugax.testing import Case\n")
    assert scan(tmp_path / "cases.py", "plugax_mine") == []


def test_a_package_is_scanned_whole_and_named_in_the_failure(tmp_path):
    pkg = tmp_path / "plugax_mine"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("import plugax\nfrom . import sub\n")
    (pkg / "sub" / "rules.py").write_text("def f():\n    from plugax import config\n")
    assert import_problems(pkg) == [
        "plugax_mine/sub/rules.py:2: from plugax import config -- use plugax.extend.config "
        "(read it; users set it)"]
    with pytest.raises(AssertionError, match=r"plugax_mine reaches past .*\n  plugax_mine/sub"):
        check_public_imports(pkg)
