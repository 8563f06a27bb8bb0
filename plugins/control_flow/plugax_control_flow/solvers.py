"""lax.custom_root and lax.custom_linear_solve: user solvers differentiated implicitly,
with JAX's semantics.

Why: differentiating *through* an iterative solver (Newton steps, a conjugate-gradient
while_loop) is expensive, inaccurate or impossible (a while_loop has no reverse-mode
derivative). The implicit function theorem gives the derivative from the answer alone:

- custom_root: f(x, θ) = 0 defines x(θ); ẋ = -(∂f/∂x)⁻¹ (∂f/∂θ · θ̇), where the inverse
  is the user's `tangent_solve` applied to the linearisation of f at the solution. θ is
  whatever f closes over; this is a custom_jvp over those values (found by tracing f),
  so grad works whenever tangent_solve is linear and transposable, as in JAX.
- custom_linear_solve: x = A⁻¹ b with A = matvec; ẋ = A⁻¹ (ḃ - Ȧ x). It is a primitive,
  `custom_linear_solve`, linear in b, whose transpose solves with Aᵀ by
  `transpose_solve` (or `solve`, when symmetric): so reverse mode never differentiates
  or transposes the solver itself, and a CG in a while_loop has a gradient. Its params
  hold the (closure-converted) functions; vmap maps them, jit lowers `solve`.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from plugax.extend import (Primitive, RuleSet, ShapedArray, Zero, close_over_nothing,
                           eval_jaxpr, get_aval, instantiate, is_undefined_primal,
                           trace_to_jaxpr)

__all__ = ["custom_linear_solve_p", "RULES", "LAX"]


def _tree():
    from plugax.tree_util import tree_flatten, tree_unflatten
    return tree_flatten, tree_unflatten


def _convert(fn: Callable, avals: list) -> tuple[Callable, list, list]:
    """`fn` (flat arrays -> flat arrays) traced once: a function of (consts, *args) that
    closes over nothing, the consts it closed over, and its output avals."""
    closed = trace_to_jaxpr(lambda *xs: list(fn(*xs)), avals)
    jaxpr = close_over_nothing(closed.jaxpr)
    out_avals = [v.aval for v in closed.jaxpr.outvars]
    return (lambda *args: eval_jaxpr(jaxpr, [], *args)), list(closed.consts), out_avals


def _is_inexact(x: Any) -> bool:
    dtype = get_aval(x).dtype
    return dtype.kind in "fc" or dtype.name == "bfloat16"


# --- custom_root ------------------------------------------------------------------------------
def custom_root(f: Callable, initial_guess: Any, solve: Callable, tangent_solve: Callable,
                has_aux: bool = False) -> Any:
    """x with f(x) = 0, found by `solve(f, initial_guess)`, differentiated implicitly with
    `tangent_solve(g, y)` (which solves the linear g(x) = y) instead of through `solve`."""
    import plugax
    tree_flatten, tree_unflatten = _tree()
    guess_flat, tree = tree_flatten(initial_guess)
    avals = [get_aval(g) for g in guess_flat]

    def f_flat(*x):
        out, out_tree = tree_flatten(f(tree_unflatten(tree, list(x))))
        if out_tree != tree:
            raise TypeError(f"custom_root: f must return the structure of initial_guess "
                            f"({tree}), got {out_tree}")
        return out
    f_fn, consts, out_avals = _convert(f_flat, avals)
    for a, o in zip(avals, out_avals):
        if (a.shape, a.dtype) != (o.shape, o.dtype):
            raise TypeError(f"custom_root: f must return values of initial_guess's types, "
                            f"got {o.str_short()} for {a.str_short()}")
    diff = [i for i, c in enumerate(consts) if _is_inexact(c)]

    def f_of(cs: list, x_flat: list) -> list:
        return f_fn(*cs, *x_flat)

    def with_diff(cs: list, values: list) -> list:
        out = list(cs)
        for i, v in zip(diff, values):
            out[i] = v
        return out

    def root(diff_consts, guess):
        cs = with_diff(consts, diff_consts)
        user_f = lambda x: tree_unflatten(tree, f_of(cs, tree_flatten(x)[0]))  # noqa: E731
        out = solve(user_f, tree_unflatten(tree, guess))
        solution, aux = out if has_aux else (out, None)
        sol_flat, sol_tree = tree_flatten(solution)
        if sol_tree != tree:
            raise TypeError(f"custom_root: solve must return the structure of initial_guess "
                            f"({tree}), got {sol_tree}")
        return sol_flat, aux

    @plugax.custom_jvp
    def implicit(diff_consts, guess):
        sol, aux = root(diff_consts, guess)
        return sol, plugax.lax.stop_gradient(aux) if has_aux else aux

    @implicit.defjvp
    def implicit_jvp(primals, tangents):
        diff_consts, guess = primals
        consts_dot, _ = tangents          # the guess does not move the root
        sol, aux = implicit(diff_consts, guess)
        cs = with_diff(consts, diff_consts)
        _, rhs = plugax.jvp(lambda d: f_of(with_diff(cs, d), sol), (list(diff_consts),),
                            (list(consts_dot),))

        def linearised(x_dot: Any) -> Any:
            _, out = plugax.jvp(lambda x: f_of(cs, x), (sol,), (tree_flatten(x_dot)[0],))
            return tree_unflatten(tree, out)
        sol_dot = tree_flatten(tangent_solve(linearised, tree_unflatten(tree, rhs)))[0]
        aux_dot = None if aux is None else plugax.tree_util.tree_map(
            lambda a: np.zeros(get_aval(a).shape, _tangent_dtype(a)), aux)
        return (sol, aux), ([plugax.numpy.negative(t) for t in sol_dot], aux_dot)

    sol, aux = implicit([consts[i] for i in diff], list(guess_flat))
    solution = tree_unflatten(tree, sol)
    return (solution, aux) if has_aux else solution


def _tangent_dtype(x: Any) -> Any:
    from plugax.extend import float0
    return get_aval(x).dtype if _is_inexact(x) else float0


# --- custom_linear_solve: the primitive ------------------------------------------------------------
custom_linear_solve_p = Primitive("custom_linear_solve", multiple_results=True)


def _groups(args: list, counts: tuple) -> list[list]:
    out, i = [], 0
    for n in counts:
        out.append(list(args[i:i + n]))
        i += n
    out.append(list(args[i:]))
    return out


def _solve_call(args: list, *, fns, counts, n_aux, **_) -> list:
    """Run the solve on (consts..., b): the value of the primitive."""
    mv, vm, s, ts, b = _groups(args, counts)
    return list(fns[2](*s, *b))


def _impl(ctx, *args, **params):
    return [np.asarray(v) for v in _solve_call(list(args), **params)]


def _abstract_eval(ctx, *avals, fns, counts, n_aux, aux_avals):
    b = avals[sum(counts):]
    return [ShapedArray(a.shape, a.dtype, a.weak_type) for a in b] + list(aux_avals)


def _jvp(ctx, primals, tangents, *, fns, counts, n_aux, aux_avals):
    import plugax
    import plugax.lax as lax
    params = dict(fns=fns, counts=counts, n_aux=n_aux, aux_avals=aux_avals)
    outs = custom_linear_solve_p.bind(*primals, **params)
    n_b = len(primals) - sum(counts)
    x = outs[:n_b]
    mv, vm, s, ts, b = _groups(list(primals), counts)
    mv_dot, _, _, _, b_dot = _groups(list(tangents), counts)
    rhs = [instantiate(t) if type(t) is Zero else t for t in b_dot] \
        if any(type(t) is not Zero for t in b_dot) else None
    moving = [i for i, t in enumerate(mv_dot) if type(t) is not Zero]
    if moving:   # Ȧ x: the matvec differentiated in its constants at the solution
        def apply(*moved):
            cs = list(mv)
            for i, v in zip(moving, moved):
                cs[i] = v
            return fns[0](*cs, *x)
        _, a_dot_x = plugax.jvp(apply, tuple(mv[i] for i in moving),
                                tuple(mv_dot[i] for i in moving))
        rhs = [lax.neg(v) for v in a_dot_x] if rhs is None else \
            [lax.sub(r, v) for r, v in zip(rhs, a_dot_x)]
    if rhs is None:
        return outs, [Zero.from_value(o) for o in outs]
    consts = list(primals[:sum(counts)])
    x_dot = custom_linear_solve_p.bind(*consts, *rhs, **params)[:n_b]
    return outs, list(x_dot) + [Zero.from_value(o) for o in outs[n_b:]]


def _transpose(ctx, cts, *args, fns, counts, n_aux, aux_avals):
    """x = A⁻¹ b is linear in b; bᵀ's cotangent is A⁻ᵀ ct: the same primitive with the
    roles of matvec/vecmat and solve/transpose_solve swapped."""
    mv, vm, s, ts, b = _groups(list(args), counts)
    if any(is_undefined_primal(c) for c in mv + vm + s + ts):
        raise ValueError("custom_linear_solve is linear only in b; its matvec and solver "
                         "constants must be known when transposing")
    if fns[3] is None:
        raise TypeError("custom_linear_solve: reverse-mode differentiation needs "
                        "transpose_solve (or symmetric=True)")
    n_b = len(b)
    ct_x = [instantiate(c) if type(c) is Zero else c for c in cts[:n_b]]
    if all(type(c) is Zero for c in cts[:n_b]):
        return [None] * sum(counts) + [Zero(x.aval) for x in b]
    swapped = dict(fns=(fns[1], fns[0], fns[3], fns[2]),
                   counts=(counts[1], counts[0], counts[3], counts[2]), n_aux=0, aux_avals=())
    ct_b = custom_linear_solve_p.bind(*vm, *mv, *ts, *s, *ct_x, **swapped)
    return [None] * sum(counts) + list(ct_b)


def _vmap(ctx, args, dims, *, fns, counts, n_aux, aux_avals):
    """Every batched operand to axis 0 (b broadcast when only constants are batched);
    each function mapped over its constants' batch axes and b's."""
    import plugax
    from plugax.extend import bdim_at_front
    n = ctx.axis_size
    groups_args = _groups(list(args), counts)
    groups_dims = _groups(list(dims), counts)
    moved = [[x if d is None else bdim_at_front(x, d, n) for x, d in zip(g, gd)]
             for g, gd in zip(groups_args, groups_dims)]
    in_dims = [[None if d is None else 0 for d in gd] for gd in groups_dims]
    moved[4] = [bdim_at_front(x, d, n) for x, d in zip(groups_args[4], groups_dims[4])]
    in_dims[4] = [0] * len(moved[4])

    def mapped(fn, const_dims):
        if fn is None:
            return None
        return plugax.vmap(lambda *a: list(fn(*a)), in_axes=(*const_dims, *in_dims[4]))
    new_fns = tuple(mapped(fn, in_dims[i]) for i, fn in enumerate(fns))
    aux = tuple(ShapedArray((n,) + a.shape, a.dtype, a.weak_type) for a in aux_avals)
    outs = custom_linear_solve_p.bind(*[x for g in moved for x in g], fns=new_fns,
                                      counts=counts, n_aux=n_aux, aux_avals=aux)
    return outs, [0] * len(outs)


def _lower(ctx, *args, fns, counts, n_aux, aux_avals):
    return ctx.lower_fun(lambda *a: _solve_call(list(a), fns=fns, counts=counts, n_aux=n_aux),
                         *args, multiple_results=True)


RULES = [RuleSet(custom_linear_solve_p, impl=_impl, abstract_eval=_abstract_eval, jvp=_jvp,
                 transpose=_transpose, batching=_vmap, lowering={"default": _lower})]


def custom_linear_solve(matvec: Callable, b: Any, solve: Callable,
                        transpose_solve: Callable | None = None, symmetric: bool = False,
                        has_aux: bool = False) -> Any:
    """x with matvec(x) = b, found by `solve(matvec, b)`, differentiated implicitly
    (ẋ = A⁻¹(ḃ - Ȧx)); reverse mode solves with the transpose by
    `transpose_solve(vecmat, b)` (`solve` itself when symmetric)."""
    import plugax
    tree_flatten, tree_unflatten = _tree()
    b_flat, tree = tree_flatten(b)
    avals = [get_aval(v) for v in b_flat]
    if symmetric:
        transpose_solve = solve

    def user(fn_flat: Callable) -> Callable:
        return lambda x: tree_unflatten(tree, list(fn_flat(*tree_flatten(x)[0])))

    def mv_flat(*x):
        out, out_tree = tree_flatten(matvec(tree_unflatten(tree, list(x))))
        if out_tree != tree:
            raise TypeError(f"custom_linear_solve: matvec must return the structure of b "
                            f"({tree}), got {out_tree}")
        return out
    mv_fn, mv_consts, _ = _convert(mv_flat, avals)
    mv_user = user(lambda *x: mv_fn(*mv_consts, *x))

    def vm_flat(*y):
        transposed = plugax.linear_transpose(lambda x: mv_user(x), tree_unflatten(tree, [
            np.zeros(a.shape, a.dtype) for a in avals]))
        (out,) = transposed(tree_unflatten(tree, list(y)))
        return tree_flatten(out)[0]
    vm_fn, vm_consts, _ = _convert(vm_flat, avals)
    vm_user = user(lambda *y: vm_fn(*vm_consts, *y))

    n_aux_box: list = []

    def solver_flat(which: Callable, op: Callable) -> Callable:
        def run(*rhs):
            out = which(op, tree_unflatten(tree, list(rhs)))
            x, aux = out if has_aux else (out, None)
            x_flat, x_tree = tree_flatten(x)
            if x_tree != tree:
                raise TypeError(f"custom_linear_solve: solve must return the structure of b "
                                f"({tree}), got {x_tree}")
            aux_flat, aux_tree = tree_flatten(aux) if has_aux else ([], None)
            n_aux_box[:] = [aux_tree, len(aux_flat)]
            return [*x_flat, *aux_flat]
        return run
    s_fn, s_consts, s_out = _convert(solver_flat(solve, mv_user), avals)
    aux_tree, n_aux = n_aux_box
    for a, o in zip(avals, s_out):
        if (a.shape, a.dtype) != (o.shape, o.dtype):
            raise TypeError(f"custom_linear_solve: solve must return values of b's types, "
                            f"got {o.str_short()} for {a.str_short()}")
    if transpose_solve is not None:
        ts_fn, ts_consts, _ = _convert(
            lambda *r: solver_flat(transpose_solve, vm_user)(*r)[:len(avals)], avals)
        ts_only = ts_fn
    else:
        ts_only, ts_consts = None, []
    s_only = s_fn
    counts = (len(mv_consts), len(vm_consts), len(s_consts), len(ts_consts))
    outs = custom_linear_solve_p.bind(
        *mv_consts, *vm_consts, *s_consts, *ts_consts, *b_flat,
        fns=(mv_fn, vm_fn, s_only, ts_only), counts=counts, n_aux=n_aux,
        aux_avals=tuple(s_out[len(avals):]))
    x = tree_unflatten(tree, list(outs[:len(avals)]))
    if has_aux:
        return x, tree_unflatten(aux_tree, list(outs[len(avals):]))
    return x


# linear_solve_p: JAX's handle for its custom_linear_solve primitive
LAX: dict[str, Any] = {"custom_root": custom_root, "custom_linear_solve": custom_linear_solve,
                       "linear_solve_p": custom_linear_solve_p}
