"""The cases the elementwise family declares through `plugax_test_cases`, run by the kit.

The `plugax_case` argument is parametrized by plugax's pytest plugin; the ids
read `elementwise:sin[2x3]`, so a failure names the declared case.
"""
import pytest

import plugax
from plugax.testing import TRACED_RULES, declared_cases


@pytest.mark.plugax_cases("elementwise")
def test_declared_case(plugax_case):
    ran = plugax_case.check()
    assert ran[:2] == ["abstract_eval", "jvp"] or ran[:2] == ["abstract_eval", "vmap"]
    if "jvp" in ran:   # traced use: jit ones run when the xla_call plugin is loaded
        assert set(TRACED_RULES) <= set(ran) | set(ran.skipped)
        assert ("jit_grad" in ran) == hasattr(plugax, "jit")


def test_the_family_declares_smooth_and_dtype_cases():
    cases = declared_cases("elementwise")
    assert len(cases) >= 10
    assert any("second_order" in c.rules for c in cases)
    assert any(c.dtypes for c in cases) and any("transpose" in c.rules for c in cases)
