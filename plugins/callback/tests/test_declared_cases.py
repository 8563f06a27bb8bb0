"""The cases the callback family declares through `plugax_test_cases`, run by the kit:
abstract_eval, vmap vs a Python loop for every batch-axis placement, jit vs eager and
the lowering against the impl."""
import pytest

import plugax
from plugax.testing import declared_cases


@pytest.mark.plugax_cases("callback")
def test_declared_case(plugax_case):
    ran = plugax_case.check()
    assert ran[:1] == ["abstract_eval"] and "vmap" in ran
    assert ("lowering" in ran) == hasattr(plugax, "jit")


def test_every_primitive_has_declared_cases():
    assert {c.prim.name for c in declared_cases("callback")} == {"pure_callback",
                                                                 "debug_callback",
                                                                 "debug_print",
                                                                 "io_callback"}
