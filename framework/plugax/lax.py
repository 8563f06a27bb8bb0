"""One function per primitive, JAX's lax names. Filled by plugins (namespace "lax").

The functions arrive when the plugins load, on first use: a name this module does not
hold yet loads them (see plugax.first_use).
"""
from . import first_use as _first_use

# A package to the import system, so that `import plugax.lax.linalg` (a namespace the
# plugins make) reaches the finder that loads them (loader/lazy.py) before they are loaded.
__path__: list = []
_MISSING = object()

# JAX names plugax leaves out on purpose, and why (the error says so)
_SHARD_MAP = ("plugax's shard_map does not lower it yet; the collectives psum, pmean, pmax, "
              "pmin, all_gather, psum_scatter, all_to_all, ppermute and axis_index work "
              "in shard_map and over vmap axes")
_ABSENT = {
    "psend": _SHARD_MAP, "precv": _SHARD_MAP, "ragged_all_to_all": _SHARD_MAP,
    "pvary": "JAX removed it in v0.10.0 (deprecated in v0.8.2); use "
             "`plugax.lax.pcast(..., to='varying')`",
}


def __getattr__(name: str):
    if name[:1] == "_":   # private: what tools probe a module for, not a first use
        raise AttributeError(f"module 'plugax.lax' has no attribute {name!r}")
    value = _first_use.lookup_after_load(globals(), name, _MISSING)
    if value is not _MISSING:
        return value
    from .loader.registry import registry
    if name in _ABSENT:
        raise AttributeError(f"plugax.lax has no {name!r}; JAX's {name} is not supported "
                             f"because {_ABSENT[name]}")
    raise AttributeError(f"plugax.lax has no function {name!r}: no loaded plugin provides "
                         f"it (loaded plugins: {', '.join(registry.loaded_names()) or 'none'}; "
                         f"see `plugax plugins`)")


def __dir__() -> list[str]:
    return _first_use.names_after_load(globals())
