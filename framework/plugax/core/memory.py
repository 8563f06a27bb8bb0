"""Eager results that could never fit in memory are refused before they are computed.

Why: NumPy happily builds a huge result as a zero-stride view (a broadcast), or
starts filling an array that the OS then swaps or kills; the next operation (a
sum of `zeros((10**6, 10**6))`) grinds for minutes. XLA, and so JAX, fails at
once when it cannot allocate a buffer. `check_fits` is that error, eagerly: the
output aval says how many bytes a result needs before any rule runs.
"""
from __future__ import annotations

import math
import os

import numpy as np

from ..errors import ResourceExhaustedError
from .frames import user_frame

__all__ = ["check_fits", "physical_memory"]


def _memory_bytes() -> int | None:
    """This machine's physical memory, or None where the OS does not say."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


physical_memory = _memory_bytes()


def check_fits(what: str, shape: tuple, dtype: np.dtype) -> None:
    """Raise ResourceExhaustedError if a `dtype[shape]` result of `what` (a primitive's
    name) needs more bytes than this machine has."""
    nbytes = math.prod(shape) * np.dtype(dtype).itemsize   # Python ints: no overflow
    if physical_memory is not None and nbytes > physical_memory:
        raise ResourceExhaustedError(
            f"RESOURCE_EXHAUSTED: {what} to {np.dtype(dtype).name}{list(shape)} needs "
            f"{nbytes / 2**30:,.1f} GiB, more than this machine's memory "
            f"({physical_memory / 2**30:,.1f} GiB); an eager result must fit in memory (as "
            f"an XLA buffer must under jit)\n  at {user_frame()}")
