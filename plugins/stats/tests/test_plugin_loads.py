"""The stats family loads, fills its namespaces, and fails clearly without a special function."""
import sys

import pytest

import plugax
import plugax.scipy.stats as pst


def test_stats_family_is_loaded_with_its_namespaces():
    assert "stats" in plugax.registry.loaded_names()
    import plugax.scipy.optimize as opt
    import plugax.scipy.signal as sig
    import plugax.scipy.stats.norm as norm      # a dotted namespace is an importable module
    assert norm is pst.norm and callable(opt.minimize) and callable(sig.convolve)


def test_a_missing_special_function_is_named(monkeypatch):
    monkeypatch.delattr(sys.modules["plugax.scipy.special"], "ndtr", raising=False)
    with pytest.raises(NotImplementedError, match="norm.cdf needs plugax.scipy.special.ndtr"):
        pst.norm.cdf(0.5)
