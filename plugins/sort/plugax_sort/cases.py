"""Test cases the sort family declares (hook `plugax_test_cases`).

Imported only when a test suite asks. The float keys are distinct, so the
permutation is locally constant and finite differences are valid (at a tie the
derivative is a choice, not a limit).
"""
from __future__ import annotations

import numpy as np

from plugax.testing import Case

from .sort import sort_p
from .topk import top_k_p

_RNG = np.random.default_rng(0)
DISTINCT = (_RNG.permutation(3 * 5).reshape(3, 5) / 4 - 1).astype(np.float32)
VALUES = _RNG.standard_normal((3, 5)).astype(np.float32)
INT_KEYS = np.array([[2, 0, 2, 1, 0], [1, 1, 0, 0, 1], [0, 2, 2, 0, 1]], np.int32)
_TOL = {"jvp": {"rtol": 1e-2, "atol": 1e-2}}


def cases() -> list[Case]:
    return [
        Case(sort_p, DISTINCT, dimension=1, is_stable=True, num_keys=1, lowering=True,
             options=_TOL),
        Case(sort_p, DISTINCT, VALUES, dimension=0, is_stable=True, num_keys=1,
             lowering=True, options=_TOL),
        Case(sort_p, INT_KEYS, DISTINCT, VALUES, dimension=1, is_stable=True, num_keys=2,
             lowering=True, options=_TOL),
        Case(top_k_p, DISTINCT, k=3, axis=1, lowering=True, options=_TOL),
        Case(top_k_p, DISTINCT, k=2, axis=0, lowering=True, options=_TOL),
    ]
