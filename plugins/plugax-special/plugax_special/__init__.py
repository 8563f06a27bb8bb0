"""plugax-special: special-function primitives for plugax, loaded as plugin `special`."""
__version__ = "0.1.0"
