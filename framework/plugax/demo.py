"""A short tour of plugax: `plugax demo` or `python -m plugax demo`.

Every operation below comes from a plugin. When a family is missing (not
installed, disabled, or failed to load) its steps are skipped with a message
saying what was missing, and the rest of the tour still runs.
"""
from __future__ import annotations

import traceback
from typing import Callable

import numpy as np

import plugax
import plugax.numpy as pnp
from plugax.errors import MissingRuleError, PluginError


def func1(first, second):
    """The first example of JAX's "Understanding jaxprs" page."""
    temp = first + pnp.sin(second) * 3.0
    return pnp.sum(temp)


def f(x):
    """Autodidax's running example: -sin(x) * 2 + x."""
    y = pnp.sin(x) * 2.0
    return -y + x


def add_one(x):
    return x + 1.0


def _family_missing(err: Exception) -> bool:
    """Errors that mean "no loaded plugin provides this", as opposed to bugs."""
    return (isinstance(err, (AttributeError, MissingRuleError, PluginError))
            or "no loaded plugin provides" in str(err)
            or (isinstance(err, TypeError) and "unsupported operand" in str(err)))


def _step(title: str, body: Callable[[], object]) -> bool:
    """Run one step; a missing family skips it, any other error fails the demo."""
    print(f"\n== {title}")
    try:
        print(body())
    except Exception as err:
        if not _family_missing(err):
            traceback.print_exc()
            return False
        print(f"   skipped, a family is missing: {type(err).__name__}: {err}")
    return True


def main() -> int:
    print("plugax", plugax.__version__, "- loaded plugins:")
    for rec in plugax.registry.records.values():
        reason = f" ({rec.reason})" if rec.reason else ""
        print(f"  {rec.name:<12} {rec.distribution} {rec.version:<8} {rec.status}{reason}, "
              f"{len(rec.primitives)} primitives")
    x8, ones8 = np.zeros(8, np.float32), np.ones(8, np.float32)
    steps = [
        ("make_jaxpr(func1)(zeros(8), ones(8))   # first + sin(second) * 3., summed",
         lambda: plugax.make_jaxpr(func1)(x8, ones8)),
        ("jvp(f, (3.0,), (1.0,))   # f(x) = -sin(x) * 2 + x: (f(3), f'(3))",
         lambda: plugax.jvp(f, (3.0,), (1.0,))),
        ("vmap(add_one)(arange(3.))", lambda: plugax.vmap(add_one)(np.arange(3.0, dtype=np.float32))),
        ("jacfwd(sin)(arange(3.))   # diagonal: cos(0), cos(1), cos(2)",
         lambda: plugax.jacfwd(pnp.sin)(np.arange(3.0, dtype=np.float32))),
    ]
    steps += [
        ("grad(f)(3.0)   # -2 cos(3) + 1", lambda: plugax.grad(f)(3.0)),
        ("jit(grad(f))(3.0)   # the same, compiled by XLA (xla_call plugin)",
         lambda: plugax.jit(plugax.grad(f))(3.0)),
        ("make_jaxpr(jit(f))(3.0)", lambda: plugax.make_jaxpr(plugax.jit(f))(3.0)),
        ("lax.scan: cumulative sum of arange(5.)   (control_flow plugin)",
         lambda: plugax.lax.scan(lambda c, x: (c + x, c + x), 0.0,
                                 np.arange(5.0, dtype=np.float32))[1]),
        ("jit(f).lower(3.0).as_text()   # StableHLO",
         lambda: plugax.jit(f).lower(3.0).as_text()),
    ]
    ok = all([_step(title, body) for title, body in steps])
    print("\nSee `plugax plugins` for which plugin provides each primitive and its rules.")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
