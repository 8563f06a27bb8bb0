"""The reductions primitive family of plugax."""

# plugax first: importing it loads every plugin, this one included, so that a first
# `import <this package>.<module>` does not re-enter itself half-imported
import plugax  # noqa: F401,E402
