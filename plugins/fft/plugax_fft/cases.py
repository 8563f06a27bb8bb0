"""Test cases the fft family declares (hook `plugax_test_cases`): each transform type
over one, two and three trailing axes, with even and odd last lengths (the RFFT/IRFFT
transposes treat the Nyquist bin differently), checked by the kit: abstract_eval, jvp
against finite differences, transpose by the dot-product test, vmap against a loop,
jit and the lowering against numpy.fft."""
from __future__ import annotations

import numpy as np

from plugax.testing import DEFAULT_RULES, Case

from .primitive import FftType, fft_p

_RNG = np.random.default_rng(0)


def _complex(*shape: int) -> np.ndarray:
    return (_RNG.standard_normal(shape) + 1j * _RNG.standard_normal(shape)).astype(np.complex64)


def _real(*shape: int) -> np.ndarray:
    return _RNG.standard_normal(shape).astype(np.float32)


def cases() -> list[Case]:
    out = []
    for lengths in ((6,), (5,), (3, 4), (2, 3, 5)):
        batch = (2,) if len(lengths) < 3 else ()
        x, z = _real(*batch, *lengths), _complex(*batch, *lengths)
        half = _complex(*batch, *lengths[:-1], lengths[-1] // 2 + 1)
        for kind, operand in ((FftType.FFT, z), (FftType.IFFT, z), (FftType.RFFT, x),
                              (FftType.IRFFT, half)):
            out.append(Case(fft_p, operand, fft_type=kind, fft_lengths=lengths,
                            linear_argnums=0, lowering=True,
                            # the kit's checks only: jet's Taylor rules are real-only
                            rules=DEFAULT_RULES))
    return out
