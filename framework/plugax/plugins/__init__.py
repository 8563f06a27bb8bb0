"""The plugin system: hook specs, typed records, the registry and rule helpers."""
