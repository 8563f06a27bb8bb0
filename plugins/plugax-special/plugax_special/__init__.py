"""plugax-special: special-function primitives for plugax, loaded as plugin `special`."""
__version__ = "0.1.0"   # before plugax: loading this plugin (below) reads it

# plugax first: importing it loads every plugin, this one included, so that a first
# `import <this package>.<module>` does not re-enter itself half-imported
import plugax  # noqa: F401,E402
