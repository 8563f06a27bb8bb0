"""The cases the sort family declares through `plugax_test_cases`, run by the kit:
abstract_eval, jvp vs finite differences, vmap vs a Python loop for every batch-axis
placement, grad, vmap of jvp/grad, jit vs eager and the lowering against the impl."""
import pytest

import plugax
from plugax.testing import declared_cases


@pytest.mark.plugax_cases("sort")
def test_declared_case(plugax_case):
    ran = plugax_case.check()
    assert ran[:1] == ["abstract_eval"] and "vmap" in ran and "jvp" in ran
    assert ("lowering" in ran) == hasattr(plugax, "jit")


def test_every_primitive_has_declared_cases():
    assert {getattr(c.prim, "name", None) for c in declared_cases("sort")} == {"sort", "top_k"}
