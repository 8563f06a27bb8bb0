"""One function per primitive, JAX's lax names. Filled by plugins (namespace "lax")."""


def __getattr__(name: str):
    from .loader.registry import registry
    raise AttributeError(f"plugax.lax has no function {name!r}: no loaded plugin provides "
                         f"it (loaded plugins: {', '.join(registry.loaded_names()) or 'none'}; "
                         f"see `plugax plugins`)")
