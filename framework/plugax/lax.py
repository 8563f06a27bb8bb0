"""One function per primitive, JAX's lax names. Filled by plugins (namespace "lax")."""

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
    from .loader.registry import registry
    if name in _ABSENT:
        raise AttributeError(f"plugax.lax has no {name!r}; JAX's {name} is not supported "
                             f"because {_ABSENT[name]}")
    raise AttributeError(f"plugax.lax has no function {name!r}: no loaded plugin provides "
                         f"it (loaded plugins: {', '.join(registry.loaded_names()) or 'none'}; "
                         f"see `plugax plugins`)")
