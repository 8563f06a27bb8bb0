"""`jitted`: plugax.jit with static parameters, built on first call."""
from __future__ import annotations

import functools
from typing import Any, Callable

import plugax


def jitted(*static: str) -> Callable:
    """`plugax.jit` with the named parameters static (shapes, dtypes, modes), like JAX's
    module-level `@jit(static_argnames=...)`. Built on first call: plugins are imported
    while `import plugax` runs, before `plugax.jit` exists."""
    def wrap(fn: Callable) -> Callable:
        compiled: list = []

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            if not compiled:
                compiled.append(plugax.jit(fn, static_argnames=static))
            return compiled[0](*args, **kwargs)
        return call
    return wrap
