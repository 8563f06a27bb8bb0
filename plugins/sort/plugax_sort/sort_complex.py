"""plugax.numpy.sort_complex: complex values sorted along the last axis by real part,
then imaginary part (NumPy's and XLA's order for complex numbers).

Why here and not in the sort primitive: the primitive sorts real keys; a complex
array is the two real keys (real, imag) sorted together, then put back together,
which every transformation of sort and complex already handles.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from plugax.extend import COMPLEX_OF_REAL, canonicalize_dtype, get_aval, to_inexact_dtype

__all__ = ["NUMPY"]


def sort_complex(a: Any) -> Any:
    """The values of `a` sorted along its last axis, as a complex array (integers and
    floats become complex64, or complex128 from float64 under x64, as in JAX)."""
    import plugax.lax as lax
    import plugax.numpy as pnp
    x = pnp.asarray(a)
    dtype = get_aval(x).dtype
    if dtype.kind != "c":
        real = to_inexact_dtype(dtype)
        real = real if real in COMPLEX_OF_REAL else np.dtype(np.float32)
        x = lax.convert_element_type(x, canonicalize_dtype(COMPLEX_OF_REAL[real]))
    if get_aval(x).ndim == 0:
        return x
    re, im = lax.sort((pnp.real(x), pnp.imag(x)), num_keys=2)
    return lax.complex(re, im)


NUMPY = {"sort_complex": sort_complex}
