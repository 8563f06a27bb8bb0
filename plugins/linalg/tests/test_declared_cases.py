"""The cases the linalg family declares through `plugax_test_cases`, run by the kit
(ids read `linalg:lu[3x3]`, so a failure names the declared case)."""
import pytest

import plugax
from plugax.testing import declared_cases


@pytest.mark.plugax_cases("linalg")
def test_declared_case(plugax_case):
    ran = plugax_case.check()
    assert ran[:1] == ["abstract_eval"] and "vmap" in ran
    assert ("lowering" in ran) == (plugax_case.lowering is True and hasattr(plugax, "jit"))


def test_every_primitive_has_a_declared_case():
    names = {getattr(c.prim, "name", None) for c in declared_cases("linalg")}
    assert {"cholesky", "triangular_solve", "lu", "qr", "eigh", "svd"} <= names
