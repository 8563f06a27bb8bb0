"""plugax-special depends only on plugax's public plugin API, and is found by entry point.

A third-party package that imports a private kernel module (`plugax.core`,
`plugax.interpreters`, ...) or another plugin's package breaks whenever the
kernel is refactored; this test fails the moment such an import appears.
"""
import ast
import pathlib
from importlib import metadata

import plugax

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "plugax_special"
PUBLIC = {"plugax.extend", "plugax.lax", "plugax.numpy", "plugax.dtypes", "plugax.config",
          "plugax.scipy.special"}
TEST_ONLY = {"plugax.testing"}     # allowed in cases.py, the test-only module
THIRD_PARTY = {"numpy", "scipy", "scipy.special", "math", "typing", "__future__"}


def imports_of(path: pathlib.Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            found.append((node.lineno, node.module))
            if node.module == "plugax":   # `from plugax import core` is a module import too
                found += [(node.lineno, f"plugax.{a.name}") for a in node.names]
    return found


def forbidden(path: pathlib.Path) -> list[str]:
    allowed = PUBLIC | THIRD_PARTY | (TEST_ONLY if path.name == "cases.py" else set())
    return [f"{path.name}:{line}: import of {name}" for line, name in imports_of(path)
            if name != "plugax" and name not in allowed]


def test_sources_import_only_the_public_plugin_api():
    sources = sorted(PACKAGE.glob("*.py"))
    assert len(sources) >= 4
    problems = [p for path in sources for p in forbidden(path)]
    assert problems == [], "private or undeclared imports:\n" + "\n".join(problems)


def test_the_check_catches_a_private_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from plugax.core.trace import bind\nfrom plugax import interpreters\n"
                   "import plugax.testing\n")
    assert forbidden(bad) == ["bad.py:1: import of plugax.core.trace",
                              "bad.py:2: import of plugax.interpreters",
                              "bad.py:3: import of plugax.testing"]


def test_found_through_its_entry_point():
    [ep] = [e for e in metadata.entry_points(group="plugax") if e.name == "special"]
    assert ep.value == "plugax_special.plugin" and ep.dist.name == "plugax-special"
    record = plugax.registry.records["special"]
    assert (record.status, record.distribution) == ("loaded", "plugax-special")
    assert [p.name for p in record.primitives] == ["erf", "erfc", "erf_inv", "lgamma", "digamma",
                                                   "polygamma"]
