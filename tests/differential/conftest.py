"""The differential tests need the built-in families; their helper modules (diff_*.py)
are plain modules next to the tests, importable by name (no package: `record_jax.py`
runs them under JAX too)."""
import sys
from pathlib import Path

import pytest

import plugax

sys.path.insert(0, str(Path(__file__).parent))

FAMILIES = {"elementwise", "reductions", "shape", "dot", "control_flow", "xla_call"}


def pytest_collection_modifyitems(config, items):
    missing = FAMILIES - set(plugax.registry.loaded_names())
    if not missing:
        return
    skip = pytest.mark.skip(reason=f"needs the built-in families; not loaded: {sorted(missing)}")
    for item in items:
        if "differential" in str(item.fspath):
            item.add_marker(skip)
