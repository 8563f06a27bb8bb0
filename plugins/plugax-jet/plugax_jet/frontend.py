"""`plugax.experimental.jet.jet`: JAX's interface to Taylor-mode differentiation.

``jet(fun, primals, series) -> (primal_out, series_out)``. For an argument x
and a curve through it, ``series[i] = [h_1, ..., h_K]`` are the derivatives
of the curve at 0 (``h_k = d^k x(t) / dt^k``); the result's series are the
derivatives of ``fun(x(t))``. So ``jet(f, (x,), ([v, 0, 0],))`` gives
``[f'(x)v, f''(x)[v, v], f'''(x)[v, v, v]]``: JAX's `factorial_scaled=True`
convention. Internally the Taylor *coefficients* h_k / k! are propagated
(trace.py); the scaling happens here, at the boundary.

Differences from JAX, both supersets: an argument may be a pytree, with
``series[i]`` the same tree whose leaves are lists of terms (JAX's own
output convention); and `zero_series` (a whole argument) or `zero_term`
(one term) may stand for zeros, like JAX's internal symbolic zeros.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import plugax.numpy as pnp
import plugax.tree_util as tu
from plugax.extend import flatten_fun, get_aval

from .generic import is_float
from .trace import instantiate_series, jet_flat, zero_series, zero_term

__all__ = ["jet", "zero_series", "zero_term"]


def jet(fun: Callable, primals: Sequence[Any], series: Sequence[Any]) -> tuple[Any, Any]:
    """Taylor-mode derivatives of `fun` at `primals` along the curve given by `series`.

    Returns ``(fun(*primals), series_out)``, `series_out` shaped like the output
    with each leaf a list of K terms (zeros where the output does not vary).
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(series, (tuple, list)):
        raise TypeError(f"jet: primals and series must be tuples or lists (one entry per "
                        f"positional argument of fun), got {type(primals).__name__} and "
                        f"{type(series).__name__}")
    if len(primals) != len(series):
        raise ValueError(f"jet: got {len(primals)} primals but {len(series)} series; give one "
                         f"series (a list of terms) per argument")
    flat_primals, flat_series, owners = [], [], []
    for i, (p, s) in enumerate(zip(primals, series)):
        leaves, tree = tu.tree_flatten(p)
        per_leaf = [zero_series] * len(leaves) if s is zero_series else _up_to(tree, s, i)
        flat_primals += [pnp.asarray(x) for x in leaves]
        flat_series += per_leaf
        owners += [i] * len(leaves)
    order = _order(flat_series, owners)
    coefficients = [_coefficients(x, s, i, order)
                    for x, s, i in zip(flat_primals, flat_series, owners)]
    in_tree = tu.tree_structure(tuple(primals))
    flat_fun, out_tree = flatten_fun(fun, in_tree)
    p_out, s_out = jet_flat(flat_fun, flat_primals, coefficients, order)
    terms = [[t if k == 1 else t * math.factorial(k) for k, t in
              enumerate(instantiate_series(p, s, order), start=1)]
             for p, s in zip(p_out, s_out)]
    return tu.tree_unflatten(out_tree(), p_out), tu.tree_unflatten(out_tree(), terms)


def _up_to(tree: Any, s: Any, i: int) -> list:
    """`s` flattened to one entry per leaf of the primal's structure `tree`."""
    if tu.treedef_is_leaf(tree):
        return [s]
    leaves, s_tree = tu.tree_flatten(s, is_leaf=lambda x: x is zero_series or _is_term_list(x))
    if s_tree != tree or not all(x is zero_series or _is_term_list(x) for x in leaves):
        raise ValueError(f"jet: series[{i}] must have the structure of primals[{i}] ({tree}) "
                         f"with a list of terms at each leaf; got {s!r}")
    return leaves


def _is_term_list(x: Any) -> bool:
    return isinstance(x, (list, tuple)) and all(tu.treedef_is_leaf(tu.tree_structure(t))
                                                or t is zero_term for t in x)


def _order(flat_series: list, owners: list) -> int:
    lengths = {}
    for s, i in zip(flat_series, owners):
        if s is zero_series:
            continue
        if not isinstance(s, (list, tuple)):
            raise TypeError(f"jet: series[{i}] must be a list of terms (one per order), got "
                            f"{type(s).__name__}")
        lengths.setdefault(len(s), i)
    if len(lengths) > 1:
        described = ", ".join(f"argument {i} has {n}" for n, i in lengths.items())
        raise ValueError(f"jet terms have inconsistent lengths for different arguments "
                         f"({described}); every argument needs the same number of terms")
    return next(iter(lengths), 0)


def _coefficients(x: Any, s: Any, i: int, order: int) -> Any:
    """Derivative terms -> Taylor coefficients (h_k / k!), checked against the primal."""
    if s is zero_series or all(t is zero_term for t in s):
        return zero_series
    aval = get_aval(x)
    if not is_float(x):
        raise TypeError(f"jet: argument {i} has dtype {aval.dtype}, which has no Taylor "
                        f"series; pass zero_series for it or make it floating point")
    out = []
    for k, t in enumerate(s, start=1):
        if t is zero_term:
            out.append(zero_term)
            continue
        t = pnp.asarray(t)
        t_aval = get_aval(t)
        if t_aval.shape != aval.shape:
            raise ValueError(f"jet: term {k - 1} of the series of argument {i} has shape "
                             f"{t_aval.shape}, but the primal has shape {aval.shape}; each term "
                             f"must have the primal's shape")
        t = t.astype(aval.dtype)
        out.append(t if k == 1 else t / math.factorial(k))
    return instantiate_series(x, out, order)
