"""A plugin module imported before plugax (a fresh interpreter, `from plugax_shape.structural
import ...` as the first line) must still leave every plugin loaded.

Importing the submodule imports plugax, which only discovers the plugins; they load on
the first use (here `pnp.ones`), after the submodule's import has finished, which then
imports the rest of the plugin's modules around the one already imported.
"""
import subprocess
import sys

import pytest

SCRIPT = """
import warnings
warnings.simplefilter("error")
import {module}
import numpy as np
import plugax
import plugax.numpy as pnp
assert not [r for r in plugax.registry.records.values() if r.status != "loaded"], \\
    [(r.name, r.reason) for r in plugax.registry.records.values()]
x = pnp.ones((2, 3))
print(float(plugax.grad(lambda x: (pnp.sin(x) @ pnp.ones(3)).sum())(x).sum()))
"""

MODULES = ["plugax_shape.structural", "plugax_elementwise.arithmetic", "plugax_dot.dot_general",
           "plugax_reductions.reduce", "plugax_control_flow.frontend",
           "plugax_xla_call.jit", "plugax_special.primitives"]


@pytest.mark.parametrize("module", MODULES)
def test_plugin_module_imported_first(module):
    pytest.importorskip(module.split(".")[0])
    run = subprocess.run([sys.executable, "-c", SCRIPT.format(module=module)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert abs(float(run.stdout.strip()) - 6 * float(__import__("numpy").cos(1.0))) < 1e-5
