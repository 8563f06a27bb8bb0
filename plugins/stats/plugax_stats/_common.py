"""Helpers shared by the distributions: argument promotion and late-bound special functions.

Why late binding: the special functions the distributions need (ndtr, betainc,
gammainc, i0e, ...) come from other families (plugax-special, the elementwise
family, the special_functions family). Looking them up in
`plugax.scipy.special` when a distribution is *called*, not when this module is
imported, lets the families load in any order, and a function no loaded plugin
gives fails with an error that names it instead of an ImportError at startup.
"""
from __future__ import annotations

import sys
from typing import Any, Callable

import numpy as np

import plugax.numpy as jnp
from plugax.extend import promote_dtypes

__all__ = ["promote", "special", "where_nan", "NEG_INF"]

NEG_INF = -np.inf


def promote(fn_name: str, *args: Any) -> list:
    """The arguments in their common inexact dtype (ints and bools become the default
    float, Python scalars stay weak), as JAX's distributions promote them."""
    return promote_dtypes(fn_name, *args, category="inexact")


def special(name: str, user: str) -> Callable:
    """`plugax.scipy.special.<name>` as loaded now; `user` (e.g. "beta.cdf") goes into
    the error when no loaded plugin gives it."""
    module = sys.modules.get("plugax.scipy.special")
    fn = getattr(module, name, None) if module is not None else None
    if fn is None:
        raise NotImplementedError(
            f"plugax.scipy.stats.{user} needs plugax.scipy.special.{name}, which no loaded "
            f"plugin gives (it belongs to the special_functions family; see `python -m "
            f"plugax plugins`)")
    return fn


def where_nan(bad: Any, value: Any) -> Any:
    """`value` with NaN where the parameters are invalid (`bad`), as SciPy answers."""
    return jnp.where(bad, np.nan, value)
