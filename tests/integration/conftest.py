"""Integration tests need the built-in families; skip cleanly when they are not loaded."""
import pytest

import plugax
from plugax.testing import skip_unless_loaded

FAMILIES = {"elementwise", "reductions", "shape", "dot"}


def pytest_collection_modifyitems(config, items):
    skip_unless_loaded(items, "integration", FAMILIES)
