"""jaxlib is imported lazily: `import plugax` (with every plugin, xla_call included),
eager evaluation, grad and vmap never load it; the first jit call does."""
import subprocess
import sys

SCRIPT = """
import sys
import numpy as np
import plugax as px, plugax.numpy as pnp
f = lambda x: pnp.sum(pnp.sin(x) ** 2)
px.grad(f)(np.ones(3, np.float32)); px.vmap(f)(np.ones((2, 3), np.float32))
px.make_jaxpr(px.jit(f))(np.ones(3, np.float32))
jitted = px.jit(f)
before = sorted(m for m in sys.modules if m.startswith(("jaxlib", "jax.", "jax")))
jitted(np.ones(3, np.float32))
after = [m for m in sys.modules if m.startswith("jaxlib")]
print(len(before), bool(after), "jax" in sys.modules)
"""


def test_jaxlib_is_imported_only_by_the_first_jit_call():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["0", "True", "False"]
