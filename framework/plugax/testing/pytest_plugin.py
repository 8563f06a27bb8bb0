"""pytest fixtures for plugax and its plugins (entry point ``pytest11: plugax``).

Installed with plugax, so any test suite gets them without a conftest.py:

- ``plugax_registry``: the plugin registry, restored after the test to the
  plugins (and statuses) it had before, whatever the test registered,
  unregistered or broke.
- ``plugax_x64``: runs the test with ``enable_x64`` on, restored after.
- ``plugax_case``: a test taking this argument runs once per `Case` that
  plugins declare through the ``plugax_test_cases`` hook; mark it
  ``@pytest.mark.plugax_cases("name", ...)`` to take only those plugins'
  cases (unmarked: every loaded plugin's)::

      @pytest.mark.plugax_cases("special")
      def test_declared(plugax_case):
          plugax_case.check()

plugax is imported lazily, inside the fixtures and hooks, so merely having
plugax installed adds no import cost (and no plugin discovery) to unrelated
suites.
"""
from __future__ import annotations

from typing import Any, Iterator

import pytest


def pytest_configure(config: Any) -> None:
    config.addinivalue_line(
        "markers", "plugax_cases(*plugins): parametrize the `plugax_case` argument with the "
                   "test cases these plugins declare (hook plugax_test_cases)")


def pytest_generate_tests(metafunc: Any) -> None:
    """Parametrize `plugax_case` with the declared cases (ids `plugin:case`)."""
    if "plugax_case" not in metafunc.fixturenames:
        return
    from plugax.testing.cases import plugin_cases
    marker = metafunc.definition.get_closest_marker("plugax_cases")
    names = tuple(marker.args) if marker else ()
    metafunc.parametrize("plugax_case", plugin_cases(*names))


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
