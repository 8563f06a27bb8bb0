"""The callback family: `pure_callback` and `debug_callback`, Python called from plugax
code eagerly and from compiled programs (see primitives.py)."""
