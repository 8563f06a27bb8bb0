"""The fft family of plugax."""

# plugax first: importing it loads every plugin, this one included, so that a first
# `import <this package>.<module>` does not re-enter itself half-imported
import plugax  # noqa: F401,E402

if not hasattr(plugax, "registry"):  # a folder or file named plugax shadows the package
    raise ImportError(f"{__name__}: 'import plugax' found "
                      f"{getattr(plugax, '__file__', None) or list(getattr(plugax, '__path__', []))}"
                      f", which shadows the installed plugax package; rename or move it, or run "
                      f"from another directory (see plugax's docs/faq.md)")
