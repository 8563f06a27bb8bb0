"""Test cases the linalg family declares (hook `plugax_test_cases`).

Imported only when a test suite asks. Inputs are small and well conditioned
(symmetric positive-definite for cholesky and eigh, distinct singular values for
svd). cholesky and eigh read one triangle of their operand, so a random
(asymmetric) tangent is outside their domain: the primitives themselves get the
checks that need no tangent, and JAX's symmetrising wrappers get the full matrix.
"""
from __future__ import annotations

import numpy as np

from plugax.testing import Case

from . import lax_api
from .eig import eig_p
from .hessenberg import hessenberg_p
from .primitives import cholesky_p, eigh_p, lu_p, qr_p, svd_p, triangular_solve_p

_RNG = np.random.default_rng(0)
A = (_RNG.standard_normal((3, 3)) + 2 * np.eye(3)).astype(np.float32)
SPD = (A @ A.T + 3 * np.eye(3)).astype(np.float32)
RECT = _RNG.standard_normal((4, 3)).astype(np.float32)
B = _RNG.standard_normal((3, 2)).astype(np.float32)
_TOL = {"jvp": {"rtol": 2e-2, "atol": 2e-3}, "vmap": {"rtol": 1e-4, "atol": 1e-5}}


def _cholesky(x):
    return lax_api.cholesky(x)


def _eigenvalues(x):
    return lax_api.eigh(x)[1]


def cases() -> list[Case]:
    no_tangent = ("abstract_eval", "vmap")
    return [
        Case(cholesky_p, SPD, rules=no_tangent, lowering=True, options=_TOL),
        Case(eigh_p, SPD, rules=no_tangent, lowering=True, options=_TOL, lower=True,
             sort_eigenvalues=True, subset_by_index=None, algorithm=None),
        Case(_cholesky, SPD, id="cholesky(symmetrized)", options=_TOL),
        Case(_eigenvalues, SPD, id="eigh(symmetrized)", options=_TOL),
        Case(triangular_solve_p, SPD, B, linear_argnums=(1,), lowering=True, options=_TOL,
             left_side=True, lower=True, transpose_a=False, conjugate_a=False,
             unit_diagonal=False),
        Case(lu_p, A, lowering=True, options=_TOL),
        Case(qr_p, RECT, lowering=True, options=_TOL, full_matrices=False, pivoting=False,
             use_magma=None),
        Case(svd_p, RECT, lowering=True, options=_TOL, full_matrices=False, compute_uv=False,
             subset_by_index=None, algorithm=None),
        # eigenvalues only: eigenvectors are fixed up to a phase that two LAPACKs choose
        # differently; no derivative for hessenberg and schur (as JAX), and a Schur form
        # is not unique, so schur's lowering is checked by its own tests (not here)
        Case(eig_p, A, lowering=True, options=_TOL, compute_left_eigenvectors=False,
             compute_right_eigenvectors=False, enable_eigvec_derivs=False,
             implementation=None),
        Case(hessenberg_p, A, rules=("abstract_eval", "vmap"), lowering=True, options=_TOL),
    ]
