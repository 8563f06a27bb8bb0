"""Test cases the conv family declares (hook `plugax_test_cases`).

Imported only when a test suite asks. The max/min windows get inputs with
distinct values, so each window's choice is unique and finite differences are
valid (at a tie the derivative is a choice, not a limit).
"""
from __future__ import annotations

import numpy as np

from plugax.testing import Case

from .conv import conv_general_dilated_p
from .dims import ConvDimensionNumbers
from .windows import (reduce_window_max_p, reduce_window_min_p, reduce_window_sum_p,
                      select_and_gather_add_p, select_and_scatter_add_p)

_RNG = np.random.default_rng(0)
X = _RNG.standard_normal((2, 5, 6, 4)).astype(np.float32)            # NHWC
W = _RNG.standard_normal((3, 2, 2, 4)).astype(np.float32)            # HWIO, 2 feature groups
DISTINCT = (_RNG.permutation(2 * 6 * 5).reshape(2, 6, 5) / 8).astype(np.float32)
_TOL = {"jvp": {"rtol": 2e-2, "atol": 2e-2}, "vmap": {"rtol": 1e-4, "atol": 1e-4},
        "second_order": {"rtol": 5e-2, "atol": 5e-2}}
_WINDOW = dict(window_dimensions=(1, 3, 2), window_strides=(1, 2, 1),
               padding=((0, 0), (1, 1), (0, 1)), base_dilation=(1, 1, 1),
               window_dilation=(1, 1, 1))
_SCATTER = {k: _WINDOW[k] for k in ("window_dimensions", "window_strides", "padding")}


def cases() -> list[Case]:
    conv = dict(window_strides=(2, 1), padding=((1, 0), (0, 1)), lhs_dilation=(1, 1),
                rhs_dilation=(1, 2),
                dimension_numbers=ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2)),
                feature_group_count=2, batch_group_count=1, precision=None,
                preferred_element_type=None)
    source = _RNG.standard_normal((2, 3, 5)).astype(np.float32)
    return [
        Case(conv_general_dilated_p, X, W, linear_argnums=(0,), second_order=True,
             lowering=True, options=_TOL, **conv),
        Case(conv_general_dilated_p, X, W, linear_argnums=(1,), options=_TOL, **conv),
        Case(reduce_window_sum_p, DISTINCT, linear_argnums=(0,), second_order=True,
             lowering=True, options=_TOL, **_WINDOW),
        Case(reduce_window_max_p, DISTINCT, lowering=True, options=_TOL, **_WINDOW),
        Case(reduce_window_min_p, DISTINCT, lowering=True, options=_TOL, **_WINDOW),
        Case(select_and_gather_add_p, DISTINCT, DISTINCT, rules=("abstract_eval", "vmap"),
             linear_argnums=(0,), lowering=True, options=_TOL, select_prim="max", **_WINDOW),
        Case(select_and_scatter_add_p, source, DISTINCT, rules=("abstract_eval", "vmap"),
             linear_argnums=(0,), lowering=True, options=_TOL, select_prim="max", **_SCATTER),
    ]
