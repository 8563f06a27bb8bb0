"""plugax-special depends only on plugax's public plugin API, and is found by entry point.

A third-party package that imports a private kernel module (`plugax.dtypes`,
`plugax.core`, `plugax.interpreters`, ...) or another plugin's package breaks whenever
the kernel is refactored; this test fails the moment such an import appears. The scan
is plugax.testing's (`plugax.testing.imports`), the one tests/test_plugin_imports.py
runs over every plugin: what is allowed is written there and in docs/plugin-api.md.
"""
import pathlib
from importlib import metadata

import pytest

import plugax
from plugax.testing.imports import check_public_imports, import_problems

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "plugax_special"


def test_sources_import_only_the_public_plugin_api():
    assert len(sorted(PACKAGE.glob("*.py"))) >= 4
    check_public_imports(PACKAGE)


def test_the_check_catches_a_private_import(tmp_path):
    bad = tmp_path / "plugax_special"
    bad.mkdir()
    (bad / "bad.py").write_text("from plugax.core.trace import bind\nfrom plugax import dtypes\n"
                                "import plugax.testing\n")
    assert [p.split(" -- ")[0] for p in import_problems(bad)] == [
        "plugax_special/bad.py:1: from plugax.core.trace import bind",
        "plugax_special/bad.py:2: from plugax import dtypes",
        "plugax_special/bad.py:3: import plugax.testing"]
    with pytest.raises(AssertionError, match="plugax_special reaches past"):
        check_public_imports(bad)


def test_found_through_its_entry_point():
    [ep] = [e for e in metadata.entry_points(group="plugax") if e.name == "special"]
    assert ep.value == "plugax_special.plugin" and ep.dist.name == "plugax-special"
    record = plugax.registry.records["special"]
    assert (record.status, record.distribution) == ("loaded", "plugax-special")
    assert record.primitives == []    # it defines none: it overrides the built-in family's


def test_it_overrides_only_the_impls_of_the_builtin_primitives():
    """`plugax plugins` shows the override: the impl column says "from special", every
    other rule stays the special_functions family's own."""
    from plugax.cli import collect
    rows = {r["primitive"]: r for r in collect()["coverage"]}
    for name in ("erf", "erfc", "erf_inv", "lgamma", "digamma", "polygamma"):
        row = rows[name]
        assert row["plugin"] == "special_functions"
        assert row["impl"] == "from special"
        assert row["abstract_eval"] == row["jvp"] == row["lowering"] == "own"
    assert rows["igamma"]["impl"] == "own"     # what it does not override stays built in
