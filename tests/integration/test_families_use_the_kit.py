"""Every primitive family tests its rules with plugax.testing, not with a private copy.

A family that re-implements finite differences or a vmap-vs-loop comparison
drifts from the kit (different tolerances, no size-0 batches, no message
naming the inputs) and misses every check added to the kit later. This test
parses each family's tests: they must import plugax.testing, and must not
define their own checking helpers (nor copies of its random values, central
differences or dtype lists) or drive the kernel's traces directly.
"""
from __future__ import annotations

import ast
import pathlib
import re

import pytest

from plugax import testing

ROOT = pathlib.Path(__file__).resolve().parents[2]
FAMILIES = sorted(p.parent for p in (ROOT / "plugins").glob("*/tests") if p.is_dir())
PRIVATE_CHECK = re.compile(r"(^|_)(check_(jvp|vmap|transpose|abstract_eval|primitive)|"
                           r"finite_diff\w*|numerical_(jvp|grad|derivative)|central_diff\w*|"
                           r"numeric_(grad|jacobian)|fd_jacobian|rand|"
                           r"vmap_vs_loop|loop_vmap)$")
# the kit's dtype lists: a family's tests import them instead of spelling them out again
KIT_DTYPE_LISTS = {tuple(getattr(testing, n)): n for n in
                   ("ALL_DTYPES", "FLOATS", "SIGNED", "UNSIGNED", "INTS", "NUMERIC")}
KIT_INTERNALS = {"BatchTrace", "JVPTrace", "new_trace_context"}


def _problems(path: pathlib.Path) -> tuple[bool, list[str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    uses_kit, problems = False, []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            uses_kit |= node.module.startswith("plugax.testing")
            problems += [f"{path.name}:{node.lineno}: imports {a.name} from {node.module}"
                         for a in node.names if a.name in KIT_INTERNALS]
        elif isinstance(node, ast.Import):
            uses_kit |= any(a.name.startswith("plugax.testing") for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                and not node.name.startswith("test") and PRIVATE_CHECK.search(node.name):
            problems.append(f"{path.name}:{node.lineno}: defines {node.name}(), a private copy "
                            f"of a plugax.testing check or helper")
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Tuple):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                continue
            if isinstance(value, tuple) and all(isinstance(v, str) for v in value) \
                    and value in KIT_DTYPE_LISTS:
                problems.append(f"{path.name}:{node.lineno}: spells out plugax.testing."
                                f"{KIT_DTYPE_LISTS[value]}; import it")
    return uses_kit, problems


@pytest.mark.parametrize("family", FAMILIES, ids=lambda p: p.name)
def test_family_tests_use_the_kit_and_keep_no_private_copy(family):
    results = [_problems(p) for p in sorted((family / "tests").glob("test_*.py"))]
    assert results, f"{family.name} has no tests"
    assert any(uses for uses, _ in results), f"{family.name}'s tests never import plugax.testing"
    problems = [p for _, found in results for p in found]
    assert problems == [], "\n".join(problems)


def test_the_scan_finds_the_built_in_families_and_catches_a_copy(tmp_path):
    assert {"elementwise", "reductions", "shape", "dot", "plugax-special"} <= \
        {f.name for f in FAMILIES}
    copy = tmp_path / "test_copy.py"
    copy.write_text("from plugax.interpreters.batching import BatchTrace\n"
                    "def _check_vmap(prim, x):\n    pass\n"
                    "def rand(shape):\n    pass\n"
                    "FLOATS = ('float16', 'bfloat16', 'float32', 'float64')\n")
    uses_kit, problems = _problems(copy)
    assert not uses_kit and len(problems) == 4
    assert "spells out plugax.testing.FLOATS" in problems[-1]


@pytest.mark.parametrize("folder", ["integration", "composition"])
def test_integration_tests_keep_no_copy_of_the_kit_helpers(folder):
    """The shared helpers (random values, central differences, dtype lists) live once,
    in plugax.testing; the cross-family suites import them too."""
    files = sorted((ROOT / "tests" / folder).glob("test_*.py"))
    problems = [p for f in files for p in _problems(f)[1]]
    assert problems == [], "\n".join(problems)
