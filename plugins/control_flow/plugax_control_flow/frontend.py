"""`plugax.lax` control flow: cond, switch, while_loop, fori_loop, scan, map.

Each function flattens its pytree arguments, traces the user's functions to
sub-jaxprs (closed-over values become leading operands), checks that the
output structures and types agree, and binds one primitive.

Weak types: a carry that starts weak (say the Python float ``0.``) but comes
back strong from the body is made strong from the start, so every loop has one
type per value (JAX does the same). Branches of a cond may differ in weak type
alone; as in JAX, nothing is converted and the outputs take branch 0's types.
"""
from __future__ import annotations

import weakref
from typing import Any, Callable, Sequence

import numpy as np

import plugax.lax as lax
import plugax.tree_util as tu
from plugax.extend import ShapedArray, get_aval

from .common import (check_same_types, is_static, join_weak, permute_invars, strong,
                     trace_function, types_str, with_ignored_invars)
from .cond import cond_p
from .eager import MISS, eager_front_call
from .scan import scan_p
from .while_loop import while_p

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan", "lax_map", "LAX"]


# --- cond / switch ---------------------------------------------------------------------
def cond(pred: Any, true_fun: Callable, false_fun: Callable, *operands: Any) -> Any:
    """`true_fun(*operands)` if `pred` else `false_fun(*operands)`, as one `cond` eqn."""
    aval = _scalar_aval(pred, "cond", "pred")
    if aval.dtype.kind not in "biu":
        raise TypeError(f"cond: pred must be a boolean or integer scalar, got "
                        f"{aval.str_short()}")
    if aval.dtype.kind != "b":
        pred = lax.ne(pred, np.zeros((), aval.dtype))
    for name, fun in (("true_fun", true_fun), ("false_fun", false_fun)):
        if not callable(fun):
            raise TypeError(f"cond: {name} must be callable, got {fun!r}")
    index = lax.convert_element_type(pred, np.int32)
    return _bind_cond(index, [false_fun, true_fun], operands, ["false_fun", "true_fun"])


def switch(index: Any, branches: Sequence[Callable], *operands: Any) -> Any:
    """`branches[index](*operands)`, the index clamped into range, as one `cond` eqn."""
    aval = _scalar_aval(index, "switch", "index")
    if aval.dtype.kind not in "iu":
        raise TypeError(f"switch: index must be an integer scalar, got {aval.str_short()}")
    branches = list(branches)
    if not branches:   # JAX: ValueError("Empty branch sequence")
        raise ValueError("switch: empty branch sequence; pass at least one branch")
    if not all(callable(b) for b in branches):
        raise TypeError("switch: branches must be a non-empty sequence of callables")
    index = lax.convert_element_type(index, np.int32)
    if len(branches) == 1:
        return branches[0](*operands)
    index = lax.clamp(np.int32(0), index, np.int32(len(branches) - 1))
    return _bind_cond(index, branches, operands, [f"branch {i}" for i in range(len(branches))])


def _scalar_aval(x: Any, fn: str, what: str) -> ShapedArray:
    try:
        aval = get_aval(x)
    except TypeError:
        raise TypeError(f"{fn}: {what} must be a scalar array, got {x!r}") from None
    if aval.shape != ():
        raise TypeError(f"{fn}: {what} must be a scalar, got {aval.str_short()} "
                        f"(shape {aval.shape})")
    return aval


def _bind_cond(index: Any, funs: list, operands: tuple, labels: list) -> Any:
    ops_flat, in_tree = tu.tree_flatten(operands)
    in_avals = [get_aval(x) for x in ops_flat]
    traced = [trace_function(f, in_tree, in_avals) for f in funs]
    for (jaxpr, _, tree), label in zip(traced[1:], labels[1:]):
        check_same_types("cond branches' outputs", traced[0][2], traced[0][0].out_avals,
                         labels[0], tree, jaxpr.out_avals, label)
    branches, all_consts = _common_consts(traced)
    outs = cond_p.bind(index, *all_consts, *ops_flat, branches=branches)
    return tu.tree_unflatten(traced[0][2], outs)


def _common_consts(traced: list) -> tuple[tuple, list]:
    """Every branch takes every branch's consts (deduplicated), then the operands.

    A branch's own jaxpr takes ``[*own_consts, *operands]``; it gets unused
    inputs for the other branches' consts and its inputs reordered to
    ``[*all_consts, *operands]``.
    """
    position: dict[int, int] = {}
    consts: list = []
    for _, cs, _ in traced:
        for c in cs:
            if id(c) not in position:
                position[id(c)] = len(consts)
                consts.append(c)
    avals = [get_aval(c) for c in consts]
    branches = []
    for jaxpr, cs, _ in traced:
        n_own, n_all = len(cs), len(jaxpr.in_avals) + len(consts)
        own = {position[id(c)]: k for k, c in enumerate(cs)}
        # after appending one fresh input per const, input n_all - len(consts) + p
        # stands for const p
        fresh = n_all - len(consts)
        order = [own[p] if p in own else fresh + p for p in range(len(consts))]
        order += list(range(n_own, fresh))
        branches.append(permute_invars(with_ignored_invars(jaxpr, avals), order))
    return tuple(branches), consts


# --- loops -----------------------------------------------------------------------------
def _carry_avals(init_flat: list) -> list[ShapedArray]:
    return [get_aval(x) for x in init_flat]


def _promote_carry(what: str, init_flat: list, in_tree: Any, out_tree: Any,
                   out_avals: list) -> tuple[list, list[ShapedArray], bool]:
    """Check the body's carry against the initial one; make both strong where one is."""
    in_avals = _carry_avals(init_flat)
    check_same_types(f"{what} carry output and input", in_tree, in_avals, "input carry",
                     out_tree, out_avals, "body output")
    target = join_weak(in_avals, out_avals)
    new_init = [strong(x, a) for x, a in zip(init_flat, target)]
    changed = target != in_avals or target != list(out_avals)
    return new_init, target, changed


def _strong_outputs(fun: Callable, avals: list) -> Callable:
    def strong_fun(*args):
        leaves, tree = tu.tree_flatten(fun(*args))
        return tu.tree_unflatten(tree, [strong(x, a) for x, a in zip(leaves, avals)])
    return strong_fun


def while_loop(cond_fun: Callable, body_fun: Callable, init_val: Any) -> Any:
    """Repeat `val = body_fun(val)` while `cond_fun(val)`; one `while` eqn."""
    try:
        static = ("while", weakref.ref(cond_fun))
    except TypeError:
        static = None
    if static is not None:
        out = eager_front_call(body_fun, static, lambda fun: (
            lambda init: while_loop(cond_fun, fun(), init)), (init_val,))
        if out is not MISS:   # eager: one cached jitted call (eager.py)
            return out
    init_flat, carry_tree = tu.tree_flatten(init_val)
    in_tree = tu.tree_structure((init_val,))  # the functions take the carry as one argument
    body, body_consts, out_tree = trace_function(body_fun, in_tree, _carry_avals(init_flat))
    init_flat, target, changed = _promote_carry("while_loop body_fun", init_flat, carry_tree,
                                                out_tree, body.out_avals)
    if changed:
        body, body_consts, out_tree = trace_function(_strong_outputs(body_fun, target),
                                                     in_tree, target)
    cond_jaxpr, cond_consts, pred_tree = trace_function(cond_fun, in_tree, target)
    pred_avals = cond_jaxpr.out_avals
    if not tu.treedef_is_leaf(pred_tree) or len(pred_avals) != 1 or \
            pred_avals[0].shape != () or pred_avals[0].dtype != np.bool_:
        raise TypeError(f"while_loop: cond_fun must return a boolean scalar, got "
                        f"{types_str(pred_tree, pred_avals)}")
    outs = while_p.bind(*cond_consts, *body_consts, *init_flat, cond_jaxpr=cond_jaxpr,
                        body_jaxpr=body, cond_nconsts=len(cond_consts),
                        body_nconsts=len(body_consts))
    return tu.tree_unflatten(carry_tree, outs)


def fori_loop(lower: Any, upper: Any, body_fun: Callable, init_val: Any) -> Any:
    """`for i in range(lower, upper): val = body_fun(i, val)`.

    With static bounds (Python ints or concrete values) this is a `scan` of
    known length, so reverse-mode differentiation works; otherwise a `while`.
    """
    if type(lower) is int and type(upper) is int:
        out = eager_front_call(body_fun, ("fori", lower, upper), lambda fun: (
            lambda init: fori_loop(lower, upper, fun(), init)), (init_val,))
        if out is not MISS:   # eager: one cached jitted call (eager.py)
            return out
    dtype = _bound_dtype(lower, upper)
    if is_static(lower) and is_static(upper):
        lo, hi = int(lower), int(upper)

        def scan_body(carry, _):
            i, val = carry
            return (i + 1, body_fun(i, val)), None
        # the index starts as the Python int `lo`, so it is weakly typed, as in JAX
        (_, out), _ = scan(scan_body, (lo, init_val), None, length=max(hi - lo, 0))
        return out

    def while_body(carry):
        i, hi, val = carry
        return i + 1, hi, body_fun(i, val)
    lower, upper = (_as_bound(b, dtype) for b in (lower, upper))
    _, _, out = while_loop(lambda c: lax.lt(c[0], c[1]), while_body, (lower, upper, init_val))
    return out


def _bound_dtype(lower: Any, upper: Any) -> np.dtype:
    """The loop index's dtype: that of a strongly typed bound, else the default int."""
    avals = [get_aval(b) for b in (lower, upper)]
    for a, name in zip(avals, ("lower", "upper")):
        if a.shape != () or a.dtype.kind not in "iu":
            raise TypeError(f"fori_loop: {name} must be an integer scalar, got "
                            f"{a.str_short()}")
    strong_ones = [a.dtype for a in avals if not a.weak_type]
    return np.dtype(strong_ones[0] if strong_ones else avals[0].dtype)


def _as_bound(x: Any, dtype: np.dtype) -> Any:
    """A loop bound of the loop's dtype; only a differing dtype is converted."""
    return x if get_aval(x).dtype == dtype else lax.convert_element_type(x, dtype)


def scan(f: Callable, init: Any, xs: Any = None, length: int | None = None,
         reverse: bool = False, unroll: int | bool = 1) -> tuple[Any, Any]:
    """Loop `carry, y = f(carry, x)` over the leading axis of `xs`; returns (carry, ys)."""
    out = eager_front_call(f, ("scan", length, reverse, unroll), lambda fun: (
        lambda init, xs: scan(fun(), init, xs, length, reverse, unroll)), (init, xs))
    if out is not MISS:   # eager: one cached jitted call (eager.py)
        return out
    xs_flat, xs_tree = tu.tree_flatten(xs)
    length = _scan_length(xs_flat, length)
    x_avals = [ShapedArray(a.shape[1:], a.dtype, a.weak_type) for a in map(get_aval, xs_flat)]
    init_flat, carry_tree = tu.tree_flatten(init)
    in_tree = tu.tree_structure((init, tu.tree_unflatten(xs_tree, [0] * len(xs_flat))))

    def trace(fun, carry_avals):
        return trace_function(fun, in_tree, [*carry_avals, *x_avals])

    body, consts, out_tree = trace(f, _carry_avals(init_flat))
    carry_out_tree, n_carry = _split_body_tree(out_tree, carry_tree)
    init_flat, target, changed = _promote_carry("scan", init_flat, carry_tree, carry_out_tree,
                                                body.out_avals[:n_carry])
    if changed:
        body, consts, out_tree = trace(_strong_carry(f, target), target)
    num_args = len(consts) + len(init_flat) + len(xs_flat)
    outs = scan_p.bind(*consts, *init_flat, *xs_flat, jaxpr=body, length=length,
                       reverse=bool(reverse), linear=(False,) * num_args,
                       num_consts=len(consts), num_carry=len(init_flat),
                       unroll=_unroll(unroll, length), _split_transpose=False)
    return tu.tree_unflatten(out_tree, outs)


def _scan_length(xs_flat: list, length: int | None) -> int:
    lengths = {get_aval(x).shape[0] if get_aval(x).shape else None for x in xs_flat}
    if None in lengths:
        raise TypeError("scan: every leaf of xs must be an array with a leading axis to "
                        "scan over; got a scalar")
    if length is not None:
        lengths.add(int(length))
    if not lengths:
        raise ValueError("scan: pass `length` when xs is None (or has no leaves)")
    if len(lengths) > 1:
        shapes = [get_aval(x).shape for x in xs_flat]
        raise ValueError(f"scan: the leading axes of xs must agree (and with length="
                         f"{length}); got shapes {shapes}")
    return lengths.pop()


def _split_body_tree(out_tree: Any, carry_tree: Any) -> tuple[Any, int]:
    """The body must return a pair (carry, y); the carry's tree and leaf count."""
    dummy = tu.tree_unflatten(out_tree, [0] * out_tree.num_leaves)
    if not (isinstance(dummy, tuple) and len(dummy) == 2):
        raise TypeError(f"scan: the body must return a pair (carry, y), got {out_tree}")
    carry_out_tree = tu.tree_structure(dummy[0])
    return carry_out_tree, carry_out_tree.num_leaves


def _strong_carry(f: Callable, target: list) -> Callable:
    def strong_f(carry, x):
        new_carry, y = f(carry, x)
        leaves, tree = tu.tree_flatten(new_carry)
        return tu.tree_unflatten(tree, [strong(c, a) for c, a in zip(leaves, target)]), y
    return strong_f


def _unroll(unroll: int | bool, length: int) -> int:
    if isinstance(unroll, bool):
        return max(length, 1) if unroll else 1
    if int(unroll) < 1:
        raise ValueError(f"scan: unroll must be a positive int or a bool, got {unroll!r}")
    return int(unroll)


def lax_map(f: Callable, xs: Any) -> Any:
    """`f` applied to each slice of `xs` along its leading axis, results stacked."""
    _, ys = scan(lambda carry, x: (carry, f(x)), (), xs)
    return ys


LAX = {"cond": cond, "switch": switch, "while_loop": while_loop, "fori_loop": fori_loop,
       "scan": scan, "map": lax_map}
