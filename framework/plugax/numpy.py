"""NumPy-style functions. Filled by plugins (hook `plugax_frontend`, namespace "numpy")."""
from numpy import (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,  # noqa: F401
                   float16, float32, float64, dtype, pi, e, inf, nan, newaxis)
from ml_dtypes import bfloat16  # noqa: F401

from .core.array import Array as ndarray  # noqa: F401
from .numpy_dtypes import *  # noqa: F401,F403  (dtype names and helpers, as JAX's)


# JAX names plugax leaves out on purpose, and why (the error says so)
_ABSENT: dict[str, str] = {}


def __getattr__(name: str):
    from .loader.registry import registry
    if name in _ABSENT:
        raise AttributeError(f"plugax.numpy has no {name!r}; JAX's {name} is not supported "
                             f"because {_ABSENT[name]}")
    raise AttributeError(f"plugax.numpy has no function {name!r}: no loaded plugin provides "
                         f"it (loaded plugins: {', '.join(registry.loaded_names()) or 'none'}; "
                         f"see `plugax plugins`)")
