"""Fixtures shared by the control-flow tests."""
import pytest

import plugax as px


def _typecheck_deep(closed) -> None:
    """typecheck_jaxpr on a jaxpr and on every sub-jaxpr in its eqns' params."""
    px.typecheck_jaxpr(closed)
    jaxpr = getattr(closed, "jaxpr", closed)
    for eqn in jaxpr.eqns:
        for value in eqn.params.values():
            for sub in (value if isinstance(value, tuple) else (value,)):
                if isinstance(sub, (px.Jaxpr, px.ClosedJaxpr)):
                    _typecheck_deep(sub)


@pytest.fixture
def typecheck_deep():
    return _typecheck_deep
