"""One function per primitive, JAX's lax names. Filled by plugins (namespace "lax")."""

# JAX names plugax leaves out on purpose, and why (the error says so)
_SHARD_MAP = ("plugax's shard_map does not lower it yet; the collectives psum, pmean, pmax, "
              "pmin, all_gather, psum_scatter, all_to_all, ppermute and axis_index work "
              "in shard_map and over vmap axes")
_ABSENT = {
    "psend": _SHARD_MAP, "precv": _SHARD_MAP, "ragged_all_to_all": _SHARD_MAP,
    "pcast": "it changes the varying-ness type that JAX gives every value in a shard_map; "
             "plugax's check_vma infers varying-ness from the traced body instead (loop "
             "carries that become varying are widened without a cast; for an invariant "
             "gather use all_gather(..., to='invarying'))",
}


def __getattr__(name: str):
    from .loader.registry import registry
    if name in _ABSENT:
        raise AttributeError(f"plugax.lax has no {name!r}; JAX's {name} is not supported "
                             f"because {_ABSENT[name]}")
    raise AttributeError(f"plugax.lax has no function {name!r}: no loaded plugin provides "
                         f"it (loaded plugins: {', '.join(registry.loaded_names()) or 'none'}; "
                         f"see `plugax plugins`)")
