"""SciPy impls for built-in special-function primitives, given with `overrides=True`.

plugax's special_functions family defines erf, erfc, erf_inv, lgamma, digamma and
polygamma (impl, abstract_eval, jvp, vmap, lowering). This distribution replaces
only their *impl* rule — what eager evaluation runs — with SciPy's ufuncs, which
are correctly rounded in double precision. The primitive objects are the built-in
ones, looked up by name (`plugax.extend.get_primitive`); a RuleSet without an
abstract_eval *adds to or replaces* rules of a primitive another plugin defines,
and `overrides=True` says the replacement is on purpose (without it, loading
would be refused as a conflict naming both distributions). Every other rule —
the jvp, vmap and the CHLO lowering that `jit` compiles — stays the family's.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from plugax.extend import RuleSet, get_primitive

__all__ = ["rules", "SCIPY_NAMES"]

# primitive name (jax.lax's) -> the scipy.special ufunc that computes it
SCIPY_NAMES = {"erf": "erf", "erfc": "erfc", "erf_inv": "erfinv", "lgamma": "gammaln",
               "digamma": "digamma", "polygamma": "polygamma"}


def _scipy(name: str) -> Callable:
    """Run the SciPy ufunc `scipy.special.<name>` in at least float32 (it has no
    float16/bfloat16 loops), cast back. SciPy is imported on first use: importing
    it costs ~150 ms, which `import plugax` (which loads every plugin) must not pay.
    Where SciPy's value at a pole differs from XLA's (what jit and JAX compute), XLA's
    is used, so eager and jit agree: see _AT_POLES."""
    def impl(ctx, *xs: np.ndarray) -> np.ndarray:
        import scipy.special
        fn = getattr(scipy.special, name)
        dtype = xs[0].dtype
        wide = np.float32 if dtype.itemsize < 4 else dtype
        with np.errstate(all="ignore"):
            xs = [np.asarray(x, wide) for x in xs]
            out = np.asarray(fn(*xs))
            fix = _AT_POLES.get(name)
            return np.asarray(fix(out, *xs) if fix else out).astype(dtype)
    impl.__name__ = f"scipy_{name}"
    return impl


def _poles(x: np.ndarray) -> np.ndarray:
    """Where x is a non-positive integer (signed zeros included)."""
    return (x <= 0) & (x == np.floor(x))


# XLA: lgamma(-inf) = +inf (SciPy: -inf); digamma is NaN at its poles 0, -1, ...
# (SciPy: -inf at +0, +inf at -0, NaN elsewhere); polygamma(m >= 1, +inf) is NaN
# (SciPy: 0), which is what grad of digamma at +inf gives in JAX.
_AT_POLES = {
    "gammaln": lambda out, x: np.where(x == -np.inf, np.inf, out),
    "digamma": lambda out, x: np.where(_poles(x), np.nan, out),
    "polygamma": lambda out, m, x: np.where((x == np.inf) & (m >= 1), np.nan, out),
}


def rules() -> list[RuleSet]:
    """The overriding RuleSets. Built when the registry asks (the plugax_primitive_rules
    hook), not at import: the built-in primitives exist only once their family has
    answered. A name not found yet is skipped; the registry remembers the miss and
    asks again once every plugin has answered (plugax-jet does the same)."""
    out = []
    for prim_name, scipy_name in SCIPY_NAMES.items():
        try:
            prim = get_primitive(prim_name)
        except LookupError:
            continue
        out.append(RuleSet(prim, impl=_scipy(scipy_name), overrides=True))
    return out
