"""Conformance cases for plugax-special (hook `plugax_test_cases`).

Test-only code: imported when a test suite collects the cases, never by
`import plugax`. The primitives are the built-in ones; with this plugin loaded
their impl is SciPy's, so these cases check that the SciPy impls agree with the
family's abstract_eval, jvp, vmap and (lowering=True) with what jit compiles.
Each example lies inside its function's domain (erf_inv in (-1, 1); lgamma and
digamma away from the poles at 0, -1, -2, ...).
"""
from __future__ import annotations

import numpy as np

from plugax.testing import Case

import plugax.lax as lax

FLOATS = ("float16", "bfloat16", "float32", "float64")
MATRIX = ("bool", "int32", "uint8") + FLOATS
X = np.linspace(-1.5, 1.5, 6, dtype=np.float32).reshape(2, 3)
UNIT = np.linspace(-0.8, 0.8, 6, dtype=np.float32).reshape(2, 3)
POS = np.linspace(0.6, 4.0, 6, dtype=np.float32).reshape(2, 3)


def cases() -> list[Case]:
    erf_p, erfc_p, erf_inv_p = lax.erf_p, lax.erfc_p, lax.erf_inv_p
    lgamma_p, digamma_p, polygamma_p = lax.lgamma_p, lax.digamma_p, lax.polygamma_p
    # lowering=True: each of these also compiles (jit) and is compared with the impl
    unary = [Case(erf_p, X, lowering=True), Case(erfc_p, X, lowering=True),
             Case(erf_inv_p, UNIT, lowering=True), Case(lgamma_p, POS, lowering=True),
             Case(digamma_p, POS, lowering=True)]
    for case in unary:
        case.rules += ("second_order",)
    typed = [Case(p, x[0], id=f"{p.name}-dtypes", dtypes=MATRIX, accepted_dtypes=FLOATS,
                  rules=("abstract_eval",))
             for p, x in ((erf_p, X), (erf_inv_p, UNIT), (lgamma_p, POS), (digamma_p, POS))]
    orders = np.array([[0, 1, 2], [1, 2, 3]], np.float32)
    poly = Case(polygamma_p, orders, POS, options={"jvp": {"argnums": 1, "rtol": 1e-3}},
                lowering=True, id="polygamma")   # not differentiable in the order m, as in JAX
    scalar = Case(erf_p, np.float32(0.3), id="erf-scalar")
    return unary + typed + [poly, scalar]
