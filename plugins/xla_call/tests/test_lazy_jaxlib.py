"""jaxlib is imported lazily: `import plugax` (with every plugin, xla_call included),
eager evaluation, grad, vmap and make_jaxpr never load it. `jit(f)` does (it returns
jaxlib's C++ dispatcher, as jax.jit does) unless the C++ path is off
(PLUGAX_JIT_CPP_DISPATCH=0): then the first jit call does."""
import os
import subprocess
import sys

SCRIPT = """
import sys
import numpy as np
import plugax as px, plugax.numpy as pnp
f = lambda x: pnp.sum(pnp.sin(x) ** 2)
px.grad(f)(np.ones(3, np.float32)); px.vmap(f)(np.ones((2, 3), np.float32))
px.make_jaxpr(f)(np.ones(3, np.float32))
before = sorted(m for m in sys.modules if m.startswith(("jaxlib", "jax.", "jax")))
jitted = px.jit(f)
made = any(m.startswith("jaxlib") for m in sys.modules)
jitted(np.ones(3, np.float32))
after = [m for m in sys.modules if m.startswith("jaxlib")]
print(len(before), made, bool(after), "jax" in sys.modules)
"""


def test_jaxlib_is_imported_only_by_jit():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["0", "True", "True", "False"]


def test_python_path_imports_jaxlib_only_on_the_first_call():
    env = dict(os.environ, PLUGAX_JIT_CPP_DISPATCH="0")
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         check=True, env=env).stdout.split()
    assert out == ["0", "False", "True", "False"]
