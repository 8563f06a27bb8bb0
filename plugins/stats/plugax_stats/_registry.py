"""The table of distributions: `DISTRIBUTIONS["norm"]["logpdf"]` is `plugax.scipy.stats.norm.logpdf`.

Why a decorator instead of one Python module per distribution: 26 distributions of
two to eight short functions each read better grouped by kind (continuous,
discrete, multivariate), and the plugin's `plugax_frontend` turns each entry into
the dotted namespace `scipy.stats.<name>` that JAX users import.
"""
from __future__ import annotations

from typing import Callable

DISTRIBUTIONS: dict[str, dict[str, Callable]] = {}


def member(dist: str) -> Callable[[Callable], Callable]:
    """Register the decorated `<dist>_<fn>` function as `plugax.scipy.stats.<dist>.<fn>`."""
    def register(fn: Callable) -> Callable:
        short = fn.__name__[len(dist) + 1:]
        assert fn.__name__ == f"{dist}_{short}", fn.__name__
        fn.__name__, fn.__qualname__ = short, f"{dist}.{short}"
        DISTRIBUTIONS.setdefault(dist, {})[short] = fn
        return fn
    return register
