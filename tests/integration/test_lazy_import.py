"""`import plugax, plugax.numpy` discovers the plugins and loads them on first use (issue 18).

Each test runs a fresh interpreter, since only a fresh one has not loaded them yet:
the import leaves every plugin module, pluggy, the kernel's heavier modules and
jaxlib out of sys.modules; then one first use of each kind (a namespace attribute,
an import of a namespace plugins make, an Array operator or method, a bind, a
transformation, a registry query, dir(), the CLI) loads every plugin the parent
process has loaded and gives the right answer, without jaxlib. Two threads first-using
at once both see the complete registry. The broken-plugin cases (error at first use)
are kernel tests: tests/test_first_use_errors.py.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from types import ModuleType

import pytest

import plugax

# What `import plugax, plugax.numpy` must not import: the families, the plugin system's
# pluggy, the kernel's heavier modules, jaxlib and (through the dtype tables) ml_dtypes.
PRELUDE = """
import json, sys
import numpy as np
import plugax, plugax.numpy
heavy = [m for m in sys.modules if m.startswith(("plugax_", "pluggy", "jaxlib", "ml_dtypes",
                                                "plugax.api", "plugax.autodiff",
                                                "plugax.interpreters", "plugax.tree_util",
                                                "plugax.toplevel", "plugax.core",
                                                "plugax.loader.registry", "plugax.jaxpr"))]
assert not heavy, heavy
assert plugax.first_use.pending()
"""
# After the first use: every plugin the parent loaded is loaded, and jaxlib is not imported.
EPILOGUE = """
assert not plugax.first_use.pending()
assert "jaxlib" not in sys.modules, "a first use imported jaxlib"
print(json.dumps(sorted(plugax.registry.loaded_names())))
"""

FIRST_USES = {
    "numpy attribute": "assert float(plugax.numpy.sin(0.0)) == 0.0",
    "from-import": "from plugax.numpy import cos\nassert float(cos(0.0)) == 1.0",
    "lax attribute": "assert float(plugax.lax.max(1.0, 2.0)) == 2.0",
    "import a plugin namespace": "import plugax.scipy.special as s\n"
                                 "assert abs(float(s.erf(10.0)) - 1) < 1e-6",
    "import a nested namespace": "import plugax.numpy.linalg as la\n"
                                 "assert float(la.norm(np.ones(4, np.float32))) == 2.0",
    "namespace attribute of plugax": "assert float(plugax.nn.relu(-1.0)) == 0.0",
    "top-level name of a plugin": "assert callable(plugax.jit)",
    "errors namespace": "assert issubclass(plugax.errors.NonConcreteBooleanIndexError, "
                        "IndexError)",
    "operator": "x = plugax.Array(np.arange(3, dtype=np.float32))\n"
                "assert (x + 1).tolist() == [1, 2, 3]",
    "reflected operator": "x = plugax.Array(np.arange(3, dtype=np.float32))\n"
                          "assert (2 * x).tolist() == [0, 2, 4]",
    "unary operator": "x = plugax.Array(np.arange(3, dtype=np.float32))\n"
                      "assert (-x).tolist() == [0, -1, -2]",
    "indexing": "x = plugax.Array(np.arange(3, dtype=np.float32))\nassert float(x[2]) == 2.0",
    "method": "x = plugax.Array(np.arange(3, dtype=np.float32))\nassert float(x.sum()) == 3.0",
    "property": "x = plugax.Array(np.ones((2, 3), np.float32))\nassert x.T.shape == (3, 2)",
    "bind of a family's primitive": "from plugax_elementwise.transcendental import sin_p\n"
                                    "assert float(sin_p.bind(plugax.Array(np.float32(0)))) == 0",
    "bind of a kernel primitive": "from plugax.extend import add_any_p\n"
                                  "x = plugax.Array(np.ones(2, np.float32))\n"
                                  "assert add_any_p.bind(x, x).tolist() == [2, 2]",
    "make_jaxpr of plugax.numpy": "jaxpr = plugax.make_jaxpr(lambda v: plugax.numpy.sin(v) * 2)"
                                  "(1.0)\nassert 'sin' in str(jaxpr) and 'mul' in str(jaxpr)",
    "grad of plugax.numpy": "g = plugax.grad(lambda v: plugax.numpy.sin(v).sum())"
                            "(np.zeros(3, np.float32))\nassert g.tolist() == [1, 1, 1]",
    "grad of operators only": "assert float(plugax.grad(lambda v: v * v)(3.0)) == 6.0",
    "vmap": "assert plugax.vmap(lambda v: v + 1)(np.arange(3.0)).tolist() == [1, 2, 3]",
    "registry query": "assert 'elementwise' in plugax.registry.loaded_names()",
    "get_primitive": "from plugax.extend import get_primitive\n"
                     "assert get_primitive('sin').name == 'sin'",
    "dir": "assert 'sin' in dir(plugax.numpy) and 'jit' in dir(plugax)",
}


def _env() -> dict:
    env = dict(os.environ)
    env.pop("PLUGAX_DISABLE_PLUGINS", None)
    env.pop("PLUGAX_LOAD_PLUGINS", None)
    return env


def run_fresh(code: str, tmp_path, timeout: int = 180) -> str:
    """stdout of `code` run by a fresh interpreter (outside the repository, so nothing
    there can shadow a package); fails with its stderr if it fails."""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=_env(), cwd=tmp_path, timeout=timeout)
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout


def all_installed() -> list[str]:
    """The plugins loaded with every installed one enabled (as the fresh processes run)."""
    return sorted(r.name for r in plugax.registry.records.values()
                  if r.status == "loaded" or r.reason.startswith(("not in PLUGAX_LOAD",
                                                                  "listed in PLUGAX_DISABLE")))


def test_import_loads_no_plugin_and_no_heavy_module(tmp_path):
    out = run_fresh(PRELUDE + "print(len(plugax.loader.lazy._discovered.entry_points))",
                    tmp_path)
    assert int(out) >= len({"elementwise", "shape", "reductions", "dot"})   # discovered


@pytest.mark.parametrize("kind", sorted(FIRST_USES))
def test_first_use_loads_every_plugin(kind, tmp_path):
    out = run_fresh(PRELUDE + FIRST_USES[kind] + EPILOGUE, tmp_path)
    assert json.loads(out.splitlines()[-1]) == all_installed()


def test_what_is_not_a_first_use(tmp_path):
    """Making an Array, printing it, handing it to NumPy, reading NumPy's dtypes or the
    kernel's functions, probing modules and Arrays for private names the way tools do:
    nothing loads."""
    code = PRELUDE + """
x = plugax.Array(np.arange(3, dtype=np.float32))
assert repr(x).startswith("Array(") and np.asarray(x).tolist() == [0, 1, 2]
assert np.sin(x).tolist() == np.sin(np.arange(3, dtype=np.float32)).tolist()
assert plugax.numpy.float32 is np.float32 and plugax.numpy.ndarray is plugax.Array
assert callable(plugax.grad) and callable(plugax.vmap) and plugax.jacobian is plugax.jacrev
for module in (plugax, plugax.numpy, plugax.lax, plugax.errors):
    assert not hasattr(module, "__wrapped__") and not hasattr(module, "_repr_html_")
assert not hasattr(x, "__array_interface__") and not hasattr(x, "_repr_html_")
assert plugax.first_use.pending()
print("ok")
"""
    assert run_fresh(code, tmp_path).strip() == "ok"


def test_dir_is_complete_before_any_load(tmp_path):
    code = PRELUDE + "print(json.dumps([dir(plugax.numpy), dir(plugax.lax), dir(plugax)]))"
    numpy_names, lax_names, top_names = json.loads(run_fresh(code, tmp_path))
    # the reference: this process, whose plugins are loaded (the same installed set);
    # pytest's assertion rewriting may have added names such as '@py_builtins' here
    assert set(numpy_names) >= public(dir(plugax.numpy)) and "sin" in numpy_names
    assert set(lax_names) >= public(dir(plugax.lax)) and "scan" in lax_names
    # (the kernel's submodules are attributes once something imported them: not compared)
    names = {n for n in public(dir(plugax)) if not isinstance(getattr(plugax, n), ModuleType)}
    assert set(top_names) >= names | set(plugax.__all__) | {"jit", "nn", "random"}


def public(names: list[str]) -> set[str]:
    return {n for n in names if n.isidentifier()}


def test_operator_no_plugin_gives_still_raises_typeerror(tmp_path):
    """A first-use trampoline for an operator no plugin installs answers as the missing
    operator did (Python's TypeError), before and after the load, and is gone after."""
    code = PRELUDE + """
x = plugax.Array(np.arange(3, dtype=np.int32))
for attempt in range(2):
    try:
        x << 1
    except TypeError as err:
        assert "<<" in str(err), err
    else:
        raise AssertionError("x << 1 worked")
assert "__lshift__" not in vars(plugax.Array) and "__add__" in vars(plugax.Array)
# the first-use __getattr__ is gone, and Array has none of its own (it would defeat
# CPython's attribute specialisation on the eager hot path)
assert not hasattr(plugax.Array, "__getattr__")
""" + EPILOGUE
    assert json.loads(run_fresh(code, tmp_path).splitlines()[-1]) == all_installed()


def test_cli_lists_the_plugins(tmp_path):
    run = subprocess.run([sys.executable, "-m", "plugax", "plugins", "--json"],
                         capture_output=True, text=True, env=_env(), cwd=tmp_path, timeout=180)
    assert run.returncode == 0, run.stderr[-3000:]
    data = json.loads(run.stdout)
    loaded = sorted(p["name"] for p in data["plugins"] if p["status"] == "loaded")
    assert set(all_installed()) <= set(loaded)


THREADS = PRELUDE + """
import threading, time
from plugax import first_use

real_loader = first_use._loader
def slow_loader():          # every thread starts its first use while the load runs
    time.sleep(0.3)
    real_loader()
first_use.defer(slow_loader)

x = plugax.Array(np.arange(3, dtype=np.float32))
USES = {
    "numpy": lambda: plugax.numpy.sin(x * 0).tolist(),
    "operator": lambda: (x + x).tolist(),
    "method": lambda: float(x.sum()),
    "grad": lambda: float(plugax.grad(lambda v: v * v)(3.0)),
    "import": lambda: __import__("plugax.scipy.special").scipy.special.erf(0.0).tolist(),
    "registry": lambda: len(plugax.registry.records),
}
barrier = threading.Barrier(len(USES))
seen = {}

def first_use_in_thread(name):
    barrier.wait()
    try:
        value = USES[name]()
        # what this thread sees right after its first use, read without another first use
        seen[name] = [value, first_use.pending(), len(vars(plugax.numpy)),
                      len(plugax.loader.namespaces._installed_methods)]
    except BaseException as err:
        seen[name] = repr(err)

threads = [threading.Thread(target=first_use_in_thread, args=(n,)) for n in USES]
for t in threads:
    t.start()
for t in threads:
    t.join()
final = [len(vars(plugax.numpy)), len(plugax.loader.namespaces._installed_methods)]
print(json.dumps({"seen": seen, "final": final}))
"""


def test_threads_first_using_at_once_see_a_complete_registry(tmp_path):
    result = json.loads(run_fresh(THREADS, tmp_path).splitlines()[-1])
    seen, final = result["seen"], result["final"]
    assert all(isinstance(v, list) for v in seen.values()), seen   # no thread raised
    assert seen["numpy"][0] == [0, 0, 0] and seen["operator"][0] == [0, 2, 4]
    assert seen["method"][0] == 3.0 and seen["grad"][0] == 6.0 and seen["import"][0] == 0
    for name, (_, pending, numpy_names, methods) in seen.items():
        assert not pending and [numpy_names, methods] == final, name
