"""Every test here runs in float64 (plugax.config enable_x64), restored afterwards:
comparisons of fourth derivatives in float32 would need loose tolerances that
could hide a wrong coefficient."""
import pytest

import plugax


@pytest.fixture(autouse=True)
def x64():
    before = plugax.config.enable_x64
    plugax.config.update("enable_x64", True)
    yield
    plugax.config.update("enable_x64", before)
