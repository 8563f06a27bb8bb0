"""Conformance cases of the special_functions family (hook `plugax_test_cases`).

Test-only code: imported when a test suite collects the cases, never by
`import plugax`. Each example lies inside its function's domain, away from
poles (lgamma, digamma at 0, -1, ...) and branch switches of the series, where
finite differences are meaningful. Every primitive also compiles (lowering=True)
and is compared with its eager impl.
"""
from __future__ import annotations

import numpy as np

from plugax.testing import Case

from .expanded import (bessel_i0e_p, igamma_grad_a_p, igamma_p, igammac_p,
                       regularized_incomplete_beta_p)
from .primitives import (bessel_i1e_p, digamma_p, erf_inv_p, erf_p, erfc_p, lgamma_p,
                         polygamma_p, zeta_p)

FLOATS = ("float16", "bfloat16", "float32", "float64")
MATRIX = ("bool", "int32", "uint8") + FLOATS
X = np.linspace(-1.5, 1.5, 6, dtype=np.float32).reshape(2, 3)
UNIT = np.linspace(-0.8, 0.8, 6, dtype=np.float32).reshape(2, 3)
POS = np.linspace(0.6, 4.0, 6, dtype=np.float32).reshape(2, 3)
A = np.array([[0.7, 1.5, 3.0], [2.2, 5.0, 0.9]], np.float32)
XG = np.array([[0.4, 2.5, 1.1], [3.0, 6.5, 0.2]], np.float32)   # both branches of igamma
FRAC = np.array([[0.2, 0.5, 0.8], [0.35, 0.6, 0.1]], np.float32)
ORDERS = np.array([[0, 1, 2], [1, 2, 3]], np.float32)
S = np.array([[2.0, 3.5, 5.0], [1.5, 2.5, 4.0]], np.float32)


def cases() -> list[Case]:
    unary = [Case(p, x, lowering=True, second_order=True)
             for p, x in ((erf_p, X), (erfc_p, X), (erf_inv_p, UNIT), (lgamma_p, POS),
                          (digamma_p, POS), (bessel_i0e_p, X), (bessel_i1e_p, X))]
    typed = [Case(p, x[0], id=f"{p.name}-dtypes", dtypes=MATRIX, accepted_dtypes=FLOATS,
                  rules=("abstract_eval",))
             for p, x in ((erf_p, X), (erf_inv_p, UNIT), (lgamma_p, POS), (digamma_p, POS),
                          (bessel_i0e_p, X))]
    jvp_x = {"jvp": {"argnums": 1, "rtol": 1e-3}}
    binary = [
        # not differentiable in the order m / exponent s (as in JAX)
        Case(polygamma_p, ORDERS, POS, options=jvp_x, lowering=True, id="polygamma"),
        Case(zeta_p, S, POS, options=jvp_x, lowering=True, id="zeta"),
        Case(igamma_p, A, XG, options={"jvp": {"rtol": 1e-3}}, lowering=True, id="igamma"),
        Case(igammac_p, A, XG, options={"jvp": {"rtol": 1e-3}}, lowering=True, id="igammac"),
        Case(igamma_grad_a_p, A, XG, rules=("abstract_eval", "vmap"), lowering=True,
             id="igamma_grad_a"),
        # differentiable in x only: the checks that differentiate every operand (grad,
        # third parties' jet) would raise JAX's "not supported" for a and b
        Case(regularized_incomplete_beta_p, A, POS, FRAC, lowering=True, id="betainc",
             rules=("abstract_eval", "jvp", "vmap", "jit"),
             options={"jvp": {"argnums": 2, "rtol": 1e-3}}),
    ]
    scalar = [Case(erf_p, np.float32(0.3), id="erf-scalar"),
              Case(igamma_p, np.float32(2.0), XG, id="igamma-scalar-a",
                   rules=("abstract_eval", "jvp", "vmap"), options={"jvp": {"rtol": 1e-3}})]
    return unary + typed + binary + scalar
