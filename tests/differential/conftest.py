"""The differential tests need the built-in families; their helper modules (diff_*.py)
are plain modules next to the tests, importable by name (no package: `record_jax.py`
runs them under JAX too)."""
import sys
from pathlib import Path

import pytest

import plugax
from plugax.testing import skip_unless_loaded

sys.path.insert(0, str(Path(__file__).parent))

FAMILIES = {"elementwise", "reductions", "shape", "dot", "control_flow", "xla_call"}


def pytest_collection_modifyitems(config, items):
    skip_unless_loaded(items, "differential", FAMILIES)
