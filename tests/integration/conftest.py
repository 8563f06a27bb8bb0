"""Integration tests need the built-in families; skip cleanly when they are not loaded."""
import pytest

import plugax

FAMILIES = {"elementwise", "reductions", "shape", "dot"}


def pytest_collection_modifyitems(config, items):
    missing = FAMILIES - set(plugax.registry.loaded_names())
    if not missing:
        return
    skip = pytest.mark.skip(reason=f"needs the built-in families; not loaded: {sorted(missing)}")
    for item in items:
        if "integration" in str(item.fspath):
            item.add_marker(skip)
