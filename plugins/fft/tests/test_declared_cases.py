"""The cases the fft family declares through `plugax_test_cases`, run by the kit:
abstract_eval, jvp vs finite differences (complex directions), the transpose by the
dot-product test (pairing Re(sum(a * b))), vmap vs a Python loop for every batch-axis
placement, grad, vmap of jvp/grad, jit vs eager and the lowering against numpy.fft."""
import pytest

import plugax
from plugax.testing import declared_cases


@pytest.mark.plugax_cases("fft")
def test_declared_case(plugax_case):
    ran = plugax_case.check()
    assert ran[:1] == ["abstract_eval"] and "vmap" in ran and "jvp" in ran
    assert "transpose" in ran
    assert ("lowering" in ran) == hasattr(plugax, "jit")


def test_every_fft_type_has_declared_cases():
    kinds = {int(c.params["fft_type"]) for c in declared_cases("fft")}
    assert kinds == {0, 1, 2, 3}


def test_fft_family_is_loaded():
    assert "fft" in plugax.registry.loaded_names()
