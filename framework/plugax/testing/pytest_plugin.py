"""pytest fixtures for plugax and its plugins (entry point ``pytest11: plugax``).

Installed with plugax, so any test suite gets them without a conftest.py:

- ``plugax_registry``: the plugin registry, restored after the test to the
  plugins (and statuses) it had before, whatever the test registered,
  unregistered or broke.
- ``plugax_x64``: runs the test with ``enable_x64`` on, restored after.

plugax is imported lazily, inside the fixtures, so merely having plugax
installed adds no import cost (and no plugin discovery) to unrelated suites.
"""
from __future__ import annotations

from typing import Any, Iterator

import pytest


@pytest.fixture
def plugax_registry() -> Iterator[Any]:
    """plugax.registry, with its plugins restored after the test."""
    from plugax.testing.plugins import registry_restored
    with registry_restored() as registry:
        yield registry


@pytest.fixture
def plugax_x64() -> Iterator[None]:
    """Run the test with 64-bit dtypes enabled."""
    from plugax.testing.values import x64
    with x64():
        yield
