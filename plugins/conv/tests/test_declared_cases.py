"""The cases the conv family declares through `plugax_test_cases`, run by the kit
(ids read `conv:conv_general_dilated[...]`, so a failure names the declared case)."""
import pytest

import plugax
from plugax.testing import declared_cases


@pytest.mark.plugax_cases("conv")
def test_declared_case(plugax_case):
    ran = plugax_case.check()
    assert ran[:1] == ["abstract_eval"] and "vmap" in ran
    assert ("lowering" in ran) == (plugax_case.lowering is True and hasattr(plugax, "jit"))


def test_every_primitive_has_a_declared_case():
    names = {getattr(c.prim, "name", None) for c in declared_cases("conv")}
    assert {"conv_general_dilated", "reduce_window_sum", "reduce_window_max",
            "reduce_window_min", "select_and_gather_add", "select_and_scatter_add"} <= names
