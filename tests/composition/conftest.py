"""The composition matrix runs with every built-in family loaded, in float64. Its helper
modules (programs.py, harness.py, known_failures.py) are plain modules next to the tests,
importable by name."""
import sys
from pathlib import Path

import pytest

import plugax
from plugax.testing import skip_unless_loaded
import plugax.core.trace as trace_state
from plugax.testing import x64

sys.path.insert(0, str(Path(__file__).parent))

FAMILIES = {"elementwise", "reductions", "shape", "dot", "control_flow", "xla_call"}


def pytest_collection_modifyitems(config, items):
    skip_unless_loaded(items, "composition", FAMILIES)


@pytest.fixture(scope="module", autouse=True)
def _float64():
    """Finite differences need float64: x64 on for the whole module (one switch, so the
    jit and partial-eval caches survive from test to test)."""
    with x64():
        yield


@pytest.fixture(autouse=True)
def _clean_trace_after():
    """Every case, passing or failing, must leave the eval trace current. A stale trace is
    reported as an error of the case that left it, then reset so later cases still run."""
    yield
    stale = trace_state.current_trace()
    if stale is not trace_state.eval_trace:
        trace_state._state.trace = trace_state.eval_trace
        pytest.fail(f"the case left {stale!r} as the current trace")
