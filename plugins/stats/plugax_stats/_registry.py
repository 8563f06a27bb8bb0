"""The table of distributions: `DISTRIBUTIONS["norm"]["logpdf"]` is `plugax.scipy.stats.norm.logpdf`.

Why a decorator instead of one Python module per distribution: 26 distributions of
two to eight short functions each read better grouped by kind (continuous,
discrete, multivariate), and the plugin's `plugax_frontend` turns each entry into
the dotted namespace `scipy.stats.<name>` that JAX users import.
"""
from __future__ import annotations

import functools
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


def derived(dist: str, name: str, outer: str, inner: Callable) -> Callable:
    """Register `plugax.numpy.<outer>(inner(...))` as `plugax.scipy.stats.<dist>.<name>`:
    the members that are another member's exp or log (pdf = exp(logpdf), logcdf =
    log(cdf), ...), with `inner`'s signature (functools.wraps), so each formula is
    written once. `outer` is looked up when called: plugax.numpy is filled by plugins."""
    import plugax.numpy as jnp

    @functools.wraps(inner)
    def fn(*args, **kwargs):
        return getattr(jnp, outer)(inner(*args, **kwargs))
    fn.__name__, fn.__qualname__ = name, f"{dist}.{name}"
    fn.__doc__ = f"{outer}({dist}.{inner.__name__}(...)), SciPy's {dist}.{name}."
    DISTRIBUTIONS.setdefault(dist, {})[name] = fn
    return fn
