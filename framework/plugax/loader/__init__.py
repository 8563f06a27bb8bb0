"""The plugin loader: hook specs, typed records, the registry that builds the rule tables, and rule helpers.

Named `loader` (not `plugins`) so that "plugins" means one thing in this codebase: the
primitive families and third-party distributions under the top-level `plugins/` folder."""
