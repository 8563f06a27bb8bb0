"""The optional C accelerator (core/_eager.c), or None.

setup.py builds it where a C compiler is there; without it, or with
PLUGAX_EAGER_C=0 in the environment at import, every fast path runs in Python,
with the same results. Imports nothing from plugax, so the kernel's core
modules can read it without an import cycle.
"""
from __future__ import annotations

import importlib
import os

try:
    if os.environ.get("PLUGAX_EAGER_C", "1") == "0":
        raise ImportError("PLUGAX_EAGER_C=0")
    # the extension module itself (`from . import` would name the package, plugax.core)
    accel = importlib.import_module("._eager", __package__)
except ImportError:   # not built here, or switched off
    accel = None

__all__ = ["accel"]
