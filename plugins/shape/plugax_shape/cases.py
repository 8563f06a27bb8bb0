"""Test cases the shape family declares (hook `plugax_test_cases`): the gather and
scatter primitives on the layouts NumPy indexing and vmap produce.

Imported only when a test suite asks. Indices are in range and, where a case is
declared linear in the updates of `scatter`, unique (its transpose needs that).
"""
from __future__ import annotations

import numpy as np

from plugax.testing import Case

from .gather_scatter import (GatherDimensionNumbers as G, GatherScatterMode as M,
                             ScatterDimensionNumbers as S, gather_p, scatter_add_p,
                             scatter_max_p, scatter_min_p, scatter_mul_p, scatter_p)

X = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(4, 3)
ROWS = np.array([[2], [0], [2]], np.int32)          # a repeat: accumulates in scatter-add
UNIQUE = np.array([[3], [1]], np.int32)
PAIRS = np.array([[1, 2], [3, 0]], np.int32)
U3 = np.linspace(0.5, 2.0, 9, dtype=np.float32).reshape(3, 3)
U2 = np.linspace(-0.5, 1.5, 6, dtype=np.float32).reshape(2, 3)
_FLAGS = dict(indices_are_sorted=False, unique_indices=False)


def cases() -> list[Case]:
    rows_g = dict(dimension_numbers=G((1,), (0,), (0,)), slice_sizes=(1, 3), fill_value=None,
                  **_FLAGS)
    rows_s = S((1,), (0,), (0,))
    return [
        Case(gather_p, X, ROWS, linear_argnums=0, lowering=True, mode=M.CLIP, **rows_g),
        Case(gather_p, X, PAIRS, linear_argnums=0, lowering=True, mode=M.FILL_OR_DROP,
             dimension_numbers=G((), (0, 1), (0, 1)), slice_sizes=(1, 1), fill_value=None,
             **_FLAGS),
        Case(scatter_add_p, X, ROWS, U3, linear_argnums=(0, 2), lowering=True,
             dimension_numbers=rows_s, mode=M.FILL_OR_DROP, **_FLAGS),
        Case(scatter_p, X, UNIQUE, U2, linear_argnums=(0, 2), lowering=True,
             dimension_numbers=rows_s, mode=M.FILL_OR_DROP, indices_are_sorted=False,
             unique_indices=True),
        Case(scatter_mul_p, X, UNIQUE, U2, lowering=True, dimension_numbers=rows_s,
             mode=M.FILL_OR_DROP, indices_are_sorted=False, unique_indices=True),
        Case(scatter_min_p, X, ROWS, U3, lowering=True, dimension_numbers=rows_s,
             mode=M.CLIP, **_FLAGS),
        Case(scatter_max_p, X, ROWS, U3, lowering=True, dimension_numbers=rows_s,
             mode=M.CLIP, **_FLAGS),
    ]
