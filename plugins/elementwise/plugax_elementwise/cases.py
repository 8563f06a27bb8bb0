"""Test cases the elementwise family declares (hook `plugax_test_cases`).

Imported only when a test suite asks for the cases, so plugax.testing is never
loaded by ordinary use of the family. The examples stay inside each
primitive's domain (log and sqrt positive, asin inside (-1, 1)).
"""
from __future__ import annotations

import numpy as np

from plugax.testing import Case

from . import arithmetic as A, logic as L, transcendental as T

FLOATS = ("float16", "bfloat16", "float32", "float64")
ALL = ("bool", "int8", "int32", "uint8") + FLOATS
X = np.linspace(-0.9, 0.8, 6, dtype=np.float32).reshape(2, 3)
POS = np.linspace(0.5, 2.0, 6, dtype=np.float32).reshape(2, 3)
I = np.array([[-7, 5, 3], [2, -1, 9]], np.int32)


def cases() -> list[Case]:
    smooth = [Case(p, X, second_order=True, dtypes=ALL, accepted_dtypes=FLOATS)
              for p in (T.sin_p, T.tanh_p, T.exp_p, T.logistic_p, T.atan_p)]
    positive = [Case(p, POS, second_order=True) for p in (T.log_p, T.sqrt_p)]
    binary = [Case(A.mul_p, X, POS, second_order=True, dtypes=ALL[1:],
                   accepted_dtypes=ALL[1:]),
              Case(A.add_p, X, POS, linear_argnums=(0, 1)),
              Case(T.atan2_p, X, POS, second_order=True),
              Case(L.lt_p, I, I[::-1], dtypes=ALL, accepted_dtypes=ALL)]
    return smooth + positive + binary
