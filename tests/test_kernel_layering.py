"""No two kernel modules import each other, directly or around a loop (issue 13, item 3).

An import cycle makes a module's meaning depend on which side was imported
first, invites half-initialised modules, and says that code lives in the wrong
place. Hiding one edge of the loop inside a function keeps the loop (the
dependency is still there, only later), so this test reads every import the
kernel (`framework/plugax/**`) makes, at module level *and* inside functions,
from the source (AST), with relative imports resolved, and requires the graph
of kernel modules to have no cycle. A failure prints each cycle with the file,
line and import statement of every edge, so the code to move is named.

What counts as an edge from module M:

* ``import a.b.c`` or ``from a.b import c`` where ``a.b.c`` is a kernel module
  (or package): an edge to ``a.b.c``. Python also runs the ``__init__`` of
  ``a`` and ``a.b`` first, but those parents are not edges: ``plugax/__init__``
  imports the whole kernel on purpose (it is the public face), so counting it
  would tie every module into one loop and the test could say nothing.
* ``from a.b import name`` where ``name`` is not a submodule: an edge to the
  package ``a.b`` itself (its ``__init__``), since that is where the name comes
  from. So **a submodule must not take names from its own package's
  ``__init__`` (or an ancestor's) when that ``__init__`` imports it**: the
  graph then has the loop ``pkg -> pkg.sub -> pkg``, and this test fails.
  Take the name from the submodule that defines it.
* ``import plugax`` (the top package): an edge to ``plugax/__init__``, which
  imports nearly everything; only front-end modules that nothing imports
  (the CLI) may do it.

Imports made by ``importlib`` (the ``plugax.lax``/``plugax.numpy`` namespaces
loading families) name no kernel module and are not read. The template files
under ``templates/`` are rendered into new projects, not imported, so they are
no modules here. This is a kernel test: it reads files and needs no family.
"""
from __future__ import annotations

import ast
import pathlib
from dataclasses import dataclass

ROOT = pathlib.Path(__file__).resolve().parents[1]
FRAMEWORK = ROOT / "framework"
KERNEL = FRAMEWORK / "plugax"


@dataclass(frozen=True)
class Edge:
    target: str
    path: pathlib.Path
    line: int
    statement: str
    in_function: bool

    def describe(self, source: str) -> str:
        where = "inside a function" if self.in_function else "at module level"
        shown = self.path.relative_to(ROOT) if self.path.is_relative_to(ROOT) else self.path
        return f"  {source} -> {self.target}   ({shown}:{self.line}, {where}: {self.statement})"


def kernel_modules(framework: pathlib.Path = FRAMEWORK) -> dict[str, tuple[pathlib.Path, bool]]:
    """Dotted module name -> (file, is a package's __init__), for the package `plugax`
    under `framework`."""
    modules = {}
    kernel = framework / "plugax"
    for path in kernel.rglob("*.py"):
        if "templates" in path.relative_to(kernel).parts:
            continue
        parts = list(path.relative_to(framework).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        modules[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return modules


def _base_of(module: str, is_package: bool, level: int) -> list[str]:
    """The package a relative import of `level` dots in `module` starts from."""
    parts = module.split(".")
    if not is_package:
        parts = parts[:-1]
    return parts[:len(parts) - (level - 1)] if level > 1 else parts


def _in_function(tree: ast.AST) -> set[int]:
    """ids of the import nodes that sit inside a function or method body."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            inside.update(id(n) for n in ast.walk(node)
                          if isinstance(n, (ast.Import, ast.ImportFrom)))
    return inside


def import_graph(framework: pathlib.Path = FRAMEWORK) -> dict[str, list[Edge]]:
    """Kernel module -> its edges to other kernel modules (see the module docstring)."""
    modules = kernel_modules(framework)

    def known(name: str) -> str | None:
        """`name`, or the nearest enclosing kernel module/package, when it is one."""
        while name not in modules and "." in name:
            name = name.rsplit(".", 1)[0]
        return name if name in modules else None

    graph: dict[str, list[Edge]] = {}
    for module, (path, is_package) in modules.items():
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source, str(path))
        nested = _in_function(tree)
        edges = graph[module] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [known(alias.name) for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                origin = ".".join(_base_of(module, is_package, node.level)
                                  + ([node.module] if node.module else [])) \
                    if node.level else node.module
                targets = [f"{origin}.{a.name}" if f"{origin}.{a.name}" in modules
                           else known(origin) for a in node.names]
            else:
                continue
            statement = ast.get_source_segment(source, node) or ""
            for target in dict.fromkeys(t for t in targets if t and t != module):
                edges.append(Edge(target, path, node.lineno, " ".join(statement.split()),
                                  id(node) in nested))
    return graph


def cycles(graph: dict[str, list[Edge]]) -> list[list[tuple[str, Edge]]]:
    """One cycle per strongly connected component with more than one module (Tarjan),
    as the list of (module, edge leaving it) around the loop."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for edge in graph[v]:
            w = edge.target
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(component)

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return [_loop_in(graph, c) for c in components]


def _loop_in(graph: dict[str, list[Edge]], component: set[str]) -> list[tuple[str, Edge]]:
    """A shortest loop through the component's first module (breadth-first)."""
    start = min(component)
    previous: dict[str, tuple[str, Edge]] = {}
    frontier = [start]
    while frontier:
        following = []
        for v in frontier:
            for edge in graph[v]:
                if edge.target == start:
                    loop = [(v, edge)]
                    while v != start:
                        v, e = previous[v]
                        loop.append((v, e))
                    return loop[::-1]
                if edge.target in component and edge.target not in previous:
                    previous[edge.target] = (v, edge)
                    following.append(edge.target)
        frontier = following
    raise AssertionError(f"no loop through {start} in {sorted(component)}")


def test_the_graph_sees_the_kernel():
    """Guards the reader, so a vacuous graph cannot pass: the kernel's known imports,
    module-level, in-function and package-__init__ edges alike, are all found."""
    graph = import_graph()
    targets = {m: {e.target for e in edges} for m, edges in graph.items()}
    assert "plugax.core.trace" in targets["plugax.interpreters.staging"]      # from ..core import trace
    assert "plugax.jaxpr.ir" in targets["plugax.lowering.lower"]              # from ..jaxpr.ir import
    assert "plugax.lowering" in targets["plugax.extend"]                     # a name from a package
    assert "plugax.jaxpr.ir" in targets["plugax.jaxpr"]                      # __init__ re-exports
    assert any(e.in_function for edges in graph.values() for e in edges)
    assert len(graph) > 40


def test_no_import_cycle_between_kernel_modules():
    found = cycles(import_graph())
    report = "\n\n".join(
        f"cycle {i}: {' -> '.join([m for m, _ in loop] + [loop[0][0]])}\n"
        + "\n".join(edge.describe(m) for m, edge in loop)
        for i, loop in enumerate(found, 1))
    assert not found, (
        f"{len(found)} import cycle(s) between kernel modules; move the shared code to the "
        f"module where it belongs (an import moved into a function is still an edge):\n\n"
        f"{report}")


def test_the_cycle_finder_reports_a_planted_loop():
    """The finder itself: a loop a -> b -> c -> a is reported with its edges in order,
    and a graph without loops reports none."""
    def edge(target: str) -> Edge:
        return Edge(target, KERNEL / "x.py", 1, f"import {target}", False)

    graph = {"a": [edge("b")], "b": [edge("c"), edge("d")], "c": [edge("a")], "d": []}
    (loop,) = cycles(graph)
    assert [(m, e.target) for m, e in loop] == [("a", "b"), ("b", "c"), ("c", "a")]
    assert cycles({"a": [edge("b")], "b": [edge("c")], "c": []}) == []


def test_a_submodule_taking_a_name_from_its_own_package_init_is_a_cycle(tmp_path):
    """The rule for package __init__ files, on a planted tree: `pkg/__init__` imports
    `pkg.sub`, and `pkg.sub` takes a name from `pkg` (inside a function, relatively):
    a loop. Once the name comes from the module defining it, there is none, although
    `pkg.other` imports `plugax.pkg.sub` by its full name and `pkg/__init__` imports
    `pkg.other`: the parents' __init__ files that Python runs first are no edges."""
    def write(rel: str, text: str) -> None:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)

    write("plugax/__init__.py", "from .pkg import helper, user\n")
    write("plugax/pkg/__init__.py", "from .sub import helper\nfrom .other import user\n"
                                    "from .constants import CONSTANT\n")
    write("plugax/pkg/constants.py", "CONSTANT = 1\n")
    write("plugax/pkg/other.py", "import plugax.pkg.sub\n\ndef user():\n"
                                 "    return plugax.pkg.sub.helper()\n")
    write("plugax/pkg/sub.py", "def helper():\n    from . import CONSTANT\n    return CONSTANT\n")
    graph = import_graph(tmp_path)
    assert [e.target for e in graph["plugax.pkg.sub"]] == ["plugax.pkg"]
    assert [e.target for e in graph["plugax.pkg.other"]] == ["plugax.pkg.sub"]
    (loop,) = cycles(graph)
    assert [(m, e.target, e.in_function) for m, e in loop] == [
        ("plugax.pkg", "plugax.pkg.sub", False), ("plugax.pkg.sub", "plugax.pkg", True)]

    write("plugax/pkg/sub.py", "def helper():\n    from .constants import CONSTANT\n"
                               "    return CONSTANT\n")
    assert [e.target for e in import_graph(tmp_path)["plugax.pkg.sub"]] == \
        ["plugax.pkg.constants"]
    assert cycles(import_graph(tmp_path)) == []
