"""inf and nan are computed silently, as in JAX: NumPy's RuntimeWarnings from inside
plugax's rules are filtered, while the user's own NumPy code still warns."""
import subprocess
import sys

SCRIPT = """
import numpy as np
import plugax.numpy as pnp
assert np.isinf(pnp.exp(np.float32(100.))) and np.isnan(pnp.log(np.float32(-1.)))
assert np.isnan(pnp.sum(pnp.array([np.inf, -np.inf])))
try:
    np.exp(np.float32(100.))
except RuntimeWarning:
    print("user code still warns")
"""


def test_rules_do_not_leak_numpy_runtime_warnings():
    run = subprocess.run([sys.executable, "-W", "error", "-c", SCRIPT], capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "user code still warns"
