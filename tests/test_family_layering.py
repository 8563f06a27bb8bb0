"""The layering, enforced: kernel -> structural primitives -> families -> front ends.

(a) No kernel module (framework/plugax) imports a family package (`plugax_*`)
    or reaches `plugax.lax` / `plugax.numpy` (the namespaces families fill): the
    kernel calls its own structural primitives, so it works with no family
    loaded. Imports inside functions count.
(b) The families' declared `requires` form a DAG, and every reference a family
    makes to another -- importing `plugax_<other>`, or using a `plugax.lax` /
    `plugax.numpy` name (or a `lax.<name>_p` handle) that another family
    provides -- is covered by its `requires`: the declared direction is the
    real one.

This file runs with the kernel tests (no family loaded), so it reads each
family's hooks straight from its entry point instead of from the registry.
"""
from __future__ import annotations

import ast
from functools import lru_cache
from importlib import metadata
from pathlib import Path

import pytest

KERNEL = Path(__file__).resolve().parents[1] / "framework" / "plugax"
NAMESPACES = {"plugax.lax": "lax", "plugax.numpy": "numpy"}

# Kernel modules allowed to name the namespaces, and why.
ALLOWED = {
    "lax.py": "it is the plugax.lax namespace module",
    "numpy.py": "it is the plugax.numpy namespace module",
    "__init__.py": "it exposes the namespace modules as attributes of the package",
    "demo.py": "a user program (`python -m plugax demo`) written with the front ends",
    "testing/imports.py": "the plugin import scan lists the namespaces plugins may import "
                          "(as strings; it imports neither)",
}


def _namespace_refs(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) for each import of a family or of plugax.lax / plugax.numpy, each
    `plugax.lax.x` / `plugax.numpy.x` attribute and each `"plugax.lax"` string lookup."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("plugax_") or a.name in NAMESPACES:
                    found.append((node.lineno, f"import {a.name}"))
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            names = {a.name for a in node.names}
            if module.startswith("plugax_") or module in NAMESPACES or \
                    module in ("lax", "numpy") and node.level == 1 or \
                    module == "plugax" and names & {"lax", "numpy"} or \
                    not module and node.level in (1, 2) and names & {"lax", "numpy"}:
                found.append((node.lineno, f"from {'.' * node.level}{module} import "
                                           f"{', '.join(sorted(names))}"))
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) and \
                isinstance(node.value.value, ast.Name) and node.value.value.id == "plugax" and \
                node.value.attr in ("lax", "numpy"):
            found.append((node.lineno, f"plugax.{node.value.attr}.{node.attr}"))
        elif isinstance(node, ast.Constant) and node.value in NAMESPACES:
            found.append((node.lineno, f"the string {node.value!r}"))
    return found


def test_no_kernel_module_reaches_a_family():
    offenders = []
    for path in sorted(KERNEL.rglob("*.py")):
        rel = path.relative_to(KERNEL).as_posix()
        if rel in ALLOWED:
            continue
        for line, what in _namespace_refs(ast.parse(path.read_text(), str(path))):
            offenders.append(f"framework/plugax/{rel}:{line}: {what}")
    assert not offenders, ("kernel modules must call the kernel (plugax.structural), not the "
                           "families or their namespaces:\n  " + "\n  ".join(offenders))


def test_the_scan_sees_every_form_of_reaching_a_family():
    """The scanner itself: each way of reaching a family is reported, inside functions too."""
    source = ("import plugax_shape\nfrom plugax_dot.x import y\nimport plugax.lax as lax\n"
              "from plugax import numpy as pnp\nfrom .. import lax\n"
              "def f():\n    import plugax\n    return plugax.numpy.sin, sys.modules['plugax.lax']\n"
              "from ..structural import reshape\n")
    whats = sorted(what for _, what in _namespace_refs(ast.parse(source)))
    assert whats == sorted(["import plugax_shape", "from plugax_dot.x import y",
                            "import plugax.lax", "from plugax import numpy", "from .. import lax",
                            "plugax.numpy.sin", "the string 'plugax.lax'"])


# --- (b) the families ---------------------------------------------------------------------
class Family:
    def __init__(self, ep: metadata.EntryPoint):
        plugin = ep.load()
        self.name = ep.name
        self.package = ep.value.split(".")[0]
        self.dir = Path(__import__(self.package).__file__).parent
        self.requires = set(plugin.plugax_plugin_info().requires)
        hook = getattr(plugin, "plugax_frontend", None)
        self.frontend = hook() if hook else {}
        rules = getattr(plugin, "plugax_primitive_rules", None)
        self.primitives = {rs.primitive.name for rs in (rules() if rules else ())
                           if rs.defines}


@lru_cache(maxsize=1)
def families() -> dict[str, Family]:
    import plugax  # noqa: F401  (the kernel first: families import plugax.extend)
    return {ep.name: Family(ep) for ep in metadata.entry_points(group="plugax")}


def _providers() -> dict[tuple[str, str], str]:
    """(namespace, name) -> the family providing it; `lax.<prim>_p` handles included."""
    out = {}
    for fam in families().values():
        for ns, fns in fam.frontend.items():
            for fname in fns:
                out[(ns, fname)] = fam.name
        for prim in fam.primitives:
            out[("lax", f"{prim}_p")] = fam.name
    return out


def _references(tree: ast.AST, packages: dict[str, str]) -> list[tuple[int, str, str]]:
    """(line, what, family) for each reference to a family: imports of its package, and
    names read from plugax.lax / plugax.numpy (through any alias) that it provides."""
    providers, aliases, refs = _providers(), {}, []

    def name_use(line: int, ns: str, name: str) -> None:
        fam = providers.get((ns, name))
        if fam is not None:
            refs.append((line, f"{ns}.{name}", fam))

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name in NAMESPACES and a.asname:
                    aliases[a.asname] = NAMESPACES[a.name]
                top = a.name.split(".")[0]
                if top in packages:
                    refs.append((node.lineno, f"import {a.name}", packages[top]))
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            module = node.module or ""
            top = module.split(".")[0]
            if top in packages:
                refs.append((node.lineno, f"from {module} import ...", packages[top]))
            for a in node.names:
                if module == "plugax" and a.name in ("lax", "numpy"):
                    aliases[a.asname or a.name] = a.name
                elif module in NAMESPACES:
                    name_use(node.lineno, NAMESPACES[module], a.name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                node.value.id in aliases:
            name_use(node.lineno, aliases[node.value.id], node.attr)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) and \
                isinstance(node.value.value, ast.Name) and node.value.value.id == "plugax" and \
                node.value.attr in ("lax", "numpy"):
            name_use(node.lineno, node.value.attr, node.attr)
    return refs


def test_declared_requires_form_a_dag():
    graph = {name: fam.requires for name, fam in families().items()}
    state: dict[str, str] = {}

    def visit(node: str, path: list[str]) -> None:
        if state.get(node) == "done":
            return
        if state.get(node) == "open":
            cycle = path[path.index(node):] + [node]
            pytest.fail(f"families require each other in a cycle: {' -> '.join(cycle)}")
        state[node] = "open"
        for dep in sorted(graph.get(node, ())):
            visit(dep, path + [node])
        state[node] = "done"

    for name in sorted(graph):
        visit(name, [])


def test_the_lowest_family_needs_the_kernel_only():
    assert families()["elementwise"].requires == set()


def test_every_reference_to_another_family_is_declared():
    fams = families()
    packages = {fam.package: name for name, fam in fams.items()}
    missing = []
    for name, fam in sorted(fams.items()):
        for path in sorted(fam.dir.glob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            for line, what, other in _references(tree, packages):
                if other != name and other not in fam.requires:
                    missing.append(f"{fam.package}/{path.name}:{line}: {what} (from family "
                                   f"'{other}') but '{name}' requires only "
                                   f"{sorted(fam.requires) or 'the kernel'}")
    assert not missing, ("a family uses another it does not declare in PluginInfo.requires "
                         "(declare it, or use the kernel's function from plugax.extend):\n  "
                         + "\n  ".join(missing))


def test_the_reference_scan_attributes_names_to_their_family():
    source = ("import plugax.lax as lax\nimport plugax.numpy as np_\nfrom plugax import lax as L\n"
              "def f(x):\n    return lax.select_n, np_.sum, L.reshape, lax.sin_p, "
              "lax.broadcast_in_dim\nimport plugax_shape.slicing\n")
    refs = {(what, fam) for _, what, fam in _references(
        ast.parse(source), {fam.package: n for n, fam in families().items()})}
    assert refs == {("lax.select_n", "elementwise"), ("numpy.sum", "reductions"),
                    ("lax.sin_p", "elementwise"), ("import plugax_shape.slicing", "shape")}
    # lax.reshape and lax.broadcast_in_dim are the kernel's: no family is referenced
