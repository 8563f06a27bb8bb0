"""Which imports a plugin may make: the public plugin surface, checked from source.

Why: a plugin that imports `plugax.dtypes`, `plugax.core...` or another family's
package (`plugax_elementwise.promote`) breaks whenever the kernel or that family is
refactored, and the kernel cannot tell which of its modules are a promise. So the
promise is written down (docs/plugin-api.md, "Only ... are public to plugins") and
checked here, for every package under plugins/ -- the built-in families and the
separate distributions plugax-special and plugax-jet alike -- and for a third
party's own package. A plugin may import:

- `plugax.extend`: the kernel toolkit (rules, errors, dtypes, config, constants,
  promotion, operand formatting);
- the front-end namespaces families fill: `plugax.lax`, `plugax.numpy`,
  `plugax.scipy.*`, `plugax.experimental.*`, and `plugax.tree_util` (user-level, as
  `jax.tree_util`);
- plain `import plugax` for the user-level API (`plugax.jit`, `plugax.jvp`, ...): every
  `plugax.<name>` attribute chain must name one of USER_API;
- `plugax.testing` only in test-support code: a `cases.py` module, or imported inside a
  function (the check a transformation gives the kit), never at module level elsewhere;
- the plugin's own package (`plugax_<own>`), relative imports and non-plugax modules.

The scan is of source text (nothing is imported), imports inside functions included.
A plugin's tests are not scanned: they test the package's internals. tests/
test_plugin_imports.py runs it over every package under plugins/; a distribution's
own tests call `check_public_imports(<its package folder>)`.
"""
from __future__ import annotations

import ast
from pathlib import Path

__all__ = ["MODULES", "USER_API", "import_problems", "check_public_imports", "scan"]

MODULES = {"plugax.extend", "plugax.lax", "plugax.numpy", "plugax.tree_util", "plugax.tree",
           "plugax.test_util", "plugax.scipy", "plugax.random", "plugax.nn", "plugax.ops",
           "plugax.experimental", "plugax.debug", "plugax.flatten_util"}
# `plugax.<name>` reached from `import plugax`: the user-level API, as `jax.<name>`
USER_API = {"jit", "jvp", "vjp", "grad", "value_and_grad", "vmap", "make_jaxpr", "linearize",
            "linear_transpose", "jacfwd", "jacrev", "hessian", "custom_jvp", "custom_vjp",
            "block_until_ready", "Array", "extend", "lax", "numpy", "tree_util", "tree",
            "test_util", "scipy", "jacobian", "ShapeDtypeStruct", "eval_shape", "typeof",
            "checkpoint", "remat", "checkpoint_policies", "disable_jit", "named_call",
            "named_scope", "float0", "device_put", "device_get", "devices", "random", "nn",
            "ops", "pure_callback", "debug", "flatten_util",
            "experimental"}
TEST_ONLY = "plugax.testing"

INSTEAD = {
    "plugax.dtypes": "plugax.extend (dtype constants, predicates and constructors: bool_, "
                     "float32, is_float, default_float_dtype, result_type, ...)",
    "plugax.config": "plugax.extend.config (read it; users set it)",
    "plugax.errors": "plugax.extend (ShapeError, PlugaxError, MissingRuleError, ...)",
    "plugax.lowering": "plugax.extend (LoweringRuleContext, LoweringRuleError, ...)",
    "plugax.registry": "plugax.extend.registry_version() / plugax.extend.get_primitive(name)",
    "plugax.testing": "import it in cases.py, or inside the check function that uses it",
}


def _allowed_module(name: str) -> bool:
    return name == "plugax" or any(name == m or name.startswith(m + ".") for m in MODULES)


def _instead(name: str) -> str:
    if name.startswith("plugax_"):
        return ("that family's front end (plugax.lax / plugax.numpy / ...) or, for a kernel "
                "helper, plugax.extend")
    for prefix, advice in INSTEAD.items():
        if name == prefix or name.startswith(prefix + "."):
            return advice
    return "plugax.extend (the kernel toolkit) or a front-end namespace"


class _Scanner(ast.NodeVisitor):
    """Collects (line, what, instead) for every import and `plugax.<name>` chain that
    leaves the public surface; tracks the names `import plugax` binds."""

    def __init__(self, own: str, test_support: bool) -> None:
        self.own, self.test_support = own, test_support
        self.depth = 0                     # > 0 inside a function body
        self.plugax_names = {"plugax"}     # names bound to the bare plugax package
        self.found: list[tuple[int, str, str]] = []

    def _check_module(self, line: int, name: str, shown: str) -> None:
        top = name.split(".")[0]
        if top.startswith("plugax_"):
            if top != self.own:
                self.found.append((line, shown, _instead(name)))
            return
        if top != "plugax" or _allowed_module(name):
            return
        if name == TEST_ONLY or name.startswith(TEST_ONLY + "."):
            if self.test_support or self.depth:
                return
        self.found.append((line, shown, _instead(name)))

    def _function(self, node: ast.AST) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            self._check_module(node.lineno, a.name, f"import {a.name}"
                               + (f" as {a.asname}" if a.asname else ""))
            if a.name == "plugax" and a.asname:
                self.plugax_names.add(a.asname)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:          # relative: the plugin's own package
            return
        module = node.module or ""
        shown = f"from {module} import {', '.join(a.name for a in node.names)}"
        if module == "plugax":  # `from plugax import x`: x is a module or a user-level name
            for a in node.names:
                if a.name not in USER_API:
                    self._check_module(node.lineno, f"plugax.{a.name}",
                                       f"from plugax import {a.name}")
        else:
            self._check_module(node.lineno, module, shown)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.value, ast.Name) and node.value.id in self.plugax_names and \
                node.attr not in USER_API:
            self._check_module(node.lineno, f"plugax.{node.attr}",
                               f"{node.value.id}.{node.attr}")
        self.generic_visit(node)


def scan(path: Path, own: str, shown_as: str | None = None) -> list[str]:
    """'file:line: what -- use instead' for each import in the file at `path` (a module
    of the package `own`) that leaves the public surface; `shown_as` names the file."""
    scanner = _Scanner(own, test_support=path.name == "cases.py")
    scanner.visit(ast.parse(path.read_text(), str(path)))
    return [f"{shown_as or path.name}:{line}: {what} -- use {instead}"
            for line, what, instead in scanner.found]


def import_problems(package: str | Path) -> list[str]:
    """Every import of the plugin package at `package` (a folder `plugax_<name>/`, all
    its modules, imports inside functions too) that leaves the public plugin surface,
    as 'path:line: import -- use instead'; empty when it keeps to it."""
    package = Path(package)
    return [p for path in sorted(package.rglob("*.py"))
            for p in scan(path, package.name, path.relative_to(package.parent).as_posix())]


def check_public_imports(package: str | Path) -> None:
    """Raise AssertionError listing `import_problems(package)`, if any: a plugin's own
    tests call this so that it keeps to the surface docs/plugin-api.md promises."""
    problems = import_problems(package)
    if problems:
        raise AssertionError(f"{Path(package).name} reaches past the public plugin surface "
                             f"(docs/plugin-api.md, 'Only ... are public to plugins'):\n  "
                             + "\n  ".join(problems))
