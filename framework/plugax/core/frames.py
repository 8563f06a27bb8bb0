"""Where the user's code is: the call site that error messages and tracers name.

Its own module because both the trace machinery and the rule tables report the
user's line, and neither should import the other for it.
"""
from __future__ import annotations

import os
import sys

import numpy as np

__all__ = ["user_frame"]


def user_frame() -> str:
    """'file:line (function)' of the innermost frame outside plugax, for error messages."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        internal = _internal_files.get(filename)
        if internal is None:   # every trace calls this: classify each file only once
            name = filename.replace("\\", "/")
            internal = _internal_files[filename] = (
                name.startswith(_KERNEL_DIR) or "/plugax_" in name or "contextlib" in name
                or name.startswith(_NUMPY_DIR))
        if not internal:
            name = filename.replace("\\", "/")
            return f"{name}:{frame.f_lineno} ({frame.f_code.co_name})"
        frame = frame.f_back
    return "<unknown>"


_internal_files: dict[str, bool] = {}


_KERNEL_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))).replace("\\", "/")
# NumPy's own frames are skipped too: `np.ones_like(tracer)` is reported at the user's line
_NUMPY_DIR = os.path.dirname(os.path.abspath(np.__file__)).replace("\\", "/") + "/"
