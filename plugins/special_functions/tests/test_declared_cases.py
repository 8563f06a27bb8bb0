"""Every case the special_functions family declares through `plugax_test_cases`, run by
plugax.testing: abstract_eval vs impl, jvp (and second order) vs finite differences,
vmap vs a loop over every batch placement (None and size 0 included), the dtype
matrix, and jit vs eager for each primitive."""
import pytest

import plugax
from plugax.testing import declared_cases


@pytest.mark.plugax_cases("special_functions")
def test_declared_case(plugax_case):
    ran = plugax_case.check()
    assert ran[0] == "abstract_eval"
    assert ("lowering" in ran) == bool(plugax_case.lowering and hasattr(plugax, "jit"))


def test_every_primitive_has_a_case():
    names = {c.prim.name for c in declared_cases("special_functions")}
    assert names == {"erf", "erfc", "erf_inv", "lgamma", "digamma", "polygamma", "zeta",
                     "bessel_i0e", "bessel_i1e", "igamma", "igammac", "igamma_grad_a",
                     "regularized_incomplete_beta"}
