"""Every case plugax-special declares through `plugax_test_cases`, run by plugax.testing:
abstract_eval vs impl, jvp (and second order) vs finite differences, vmap vs a loop over
every batch placement (None and size 0 included), and the dtype matrix."""
import pytest

import plugax
from plugax.testing import TRACED_RULES, declared_cases


@pytest.mark.plugax_cases("special")
def test_declared_case(plugax_case):
    ran = plugax_case.check()
    assert ran[0] == "abstract_eval"
    if "jvp" in ran:   # traced use: jit ones run when the xla_call plugin is loaded
        assert set(TRACED_RULES) <= set(ran) | set(ran.skipped)
        assert ("jit_grad" in ran) == hasattr(plugax, "jit")
    assert ("lowering" in ran) == bool(plugax_case.lowering)   # jit vs eager where declared


def test_every_primitive_has_a_case():
    names = {c.prim.name for c in declared_cases("special")}
    assert names == {"erf", "erfc", "erf_inv", "lgamma", "digamma", "polygamma"}
