"""`plugax.numpy.vectorize`: NumPy's vectorize (with generalized-ufunc signatures) as
JAX's: the function is vmapped over the broadcast loop axes, so it runs once, traced,
instead of once per element.
"""
from __future__ import annotations

import functools
import re
from typing import Any, Callable, Collection

import numpy as np

import plugax
import plugax.numpy as pnp
from plugax.extend import get_aval

__all__ = ["vectorize"]

_DIMS = r"\(\s*(?:\w+(?:\s*,\s*\w+)*)?\s*\)"
_SIGNATURE = re.compile(rf"^{_DIMS}(?:\s*,\s*{_DIMS})*\s*->\s*{_DIMS}(?:\s*,\s*{_DIMS})*$")


def _parse(signature: str) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    if not _SIGNATURE.match(signature):
        raise ValueError(f"vectorize: not a valid gufunc signature: {signature!r}")
    ins, outs = signature.split("->")

    def groups(s: str) -> list[tuple[str, ...]]:
        return [tuple(d.strip() for d in g.split(",") if d.strip())
                for g in re.findall(r"\(([^)]*)\)", s)]
    return groups(ins), groups(outs)


def vectorize(pyfunc: Callable, *, excluded: Collection[int | str] = frozenset(),
              signature: str | None = None) -> Callable:
    """pyfunc mapped over the leading (broadcast) axes of its array arguments; with a
    signature such as '(n),(n)->()', the named trailing axes are handed to pyfunc
    whole. `excluded` positions and keywords are passed through unvectorized, as are
    all keyword arguments (JAX vectorizes positional arguments only)."""
    core_in, core_out = _parse(signature) if signature is not None else (None, None)

    @functools.wraps(pyfunc)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        static = {i: a for i, a in enumerate(args) if i in excluded or a is None}
        dynamic = [pnp.asarray(a) for i, a in enumerate(args) if i not in static]
        dims = core_in if core_in is not None else [()] * len(args)
        dims = [d for i, d in enumerate(dims) if i not in static]
        if len(dims) != len(dynamic):
            raise TypeError(f"vectorize: wrong number of positional arguments: expected "
                            f"{len(dims)}, got {len(dynamic)} (signature={signature!r})")
        sizes: dict[str, int] = {}
        loops = []
        for a, d in zip(dynamic, dims):
            shape = get_aval(a).shape
            if len(shape) < len(d):
                raise ValueError(f"vectorize: input with shape {shape} does not have enough "
                                 f"dimensions for its core dimensions {d} "
                                 f"(signature={signature!r})")
            for name, size in zip(d, shape[len(shape) - len(d):]):
                if sizes.setdefault(name, size) != size:
                    raise ValueError(f"vectorize: inconsistent size for core dimension "
                                     f"{name!r}: {sizes[name]} vs {size} "
                                     f"(signature={signature!r})")
            loops.append(shape[:len(shape) - len(d)])
        loop = np.broadcast_shapes(*loops) if loops else ()
        full = [pnp.broadcast_to(a, loop + get_aval(a).shape[len(lp):])
                for a, lp in zip(dynamic, loops)]

        def call(*dyn: Any) -> Any:
            it = iter(dyn)
            merged = [static[i] if i in static else next(it)
                      for i in range(len(static) + len(dyn))]
            out = pyfunc(*merged, **kwargs)
            if core_out is not None:
                outs = out if isinstance(out, tuple) else (out,)
                if len(core_out) > 1 and not isinstance(out, tuple):
                    raise TypeError(f"vectorize: output must be a tuple when multiple "
                                    f"outputs are expected (signature={signature!r})")
                if len(outs) != len(core_out):
                    raise TypeError(f"vectorize: wrong number of output arguments: expected "
                                    f"{len(core_out)}, got {len(outs)}")
                for o, d in zip(outs, core_out):
                    shape = np.shape(o) if not hasattr(o, "shape") else tuple(o.shape)
                    if len(shape) != len(d):
                        raise ValueError(f"vectorize: output shape {shape} does not match "
                                         f"the core dimensions {d} (signature={signature!r})")
            return out

        fn = call
        for _ in loop:
            fn = plugax.vmap(fn)
        return fn(*full)
    return wrapped
