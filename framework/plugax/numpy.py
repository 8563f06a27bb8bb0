"""NumPy-style functions. Filled by plugins (hook `plugax_frontend`, namespace "numpy").

The plugins' functions arrive when the plugins load, on first use: a name this module
does not hold yet loads them (see plugax.first_use). NumPy's scalar types are bound
at import; `ndarray` and the dtype names and helpers of numpy_dtypes (`bfloat16`,
`iinfo`, ...: they need ml_dtypes) on first access.
"""
from numpy import (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,  # noqa: F401
                   float16, float32, float64, dtype, pi, e, inf, nan, newaxis)

from . import first_use as _first_use

# A package to the import system, so that `import plugax.numpy.linalg` (a namespace the
# plugins make) reaches the finder that loads them (loader/lazy.py) before they are loaded.
__path__: list = []

# JAX names plugax leaves out on purpose, and why (the error says so)
_ABSENT: dict[str, str] = {}
_MISSING = object()


def _kernel_names() -> dict:
    """The names this module takes from the kernel: `ndarray`, numpy_dtypes' names."""
    from ml_dtypes import bfloat16

    from . import numpy_dtypes
    from .core.array import Array
    return {"ndarray": Array, "bfloat16": bfloat16,
            **{n: getattr(numpy_dtypes, n) for n in numpy_dtypes.__all__}}


def _bind_kernel_names() -> None:
    """Before the plugins' functions are planned (and for dir()): every kernel name
    bound, so a plugin's function of the same name is refused as before."""
    for name, value in _kernel_names().items():
        globals().setdefault(name, value)


def __getattr__(name: str):
    if name[:1] == "_":   # private: what tools probe a module for, not a first use
        raise AttributeError(f"module 'plugax.numpy' has no attribute {name!r}")
    value = _kernel_names().get(name, _MISSING)
    if value is _MISSING:
        value = _first_use.lookup_after_load(globals(), name, _MISSING)
    else:
        globals()[name] = value
    if value is not _MISSING:
        return value
    from .loader.registry import registry
    if name in _ABSENT:
        raise AttributeError(f"plugax.numpy has no {name!r}; JAX's {name} is not supported "
                             f"because {_ABSENT[name]}")
    raise AttributeError(f"plugax.numpy has no function {name!r}: no loaded plugin provides "
                         f"it (loaded plugins: {', '.join(registry.loaded_names()) or 'none'}; "
                         f"see `plugax plugins`)")


def __dir__() -> list[str]:
    _bind_kernel_names()
    return _first_use.names_after_load(globals())


_first_use.before_load.append(_bind_kernel_names)
