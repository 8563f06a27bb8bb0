"""Reverse mode: linearize, vjp, grad and friends, built from jvp + partial eval + transpose.

linearize = jvp whose tangent half is staged out by partial evaluation
(interpreters/linearize.py); vjp = linearize whose linear jaxpr is then run
backwards (`backward_pass`); grad = vjp with a cotangent of one. Primal work
happens in Python as it runs. At the top level (no enclosing transformation),
vjp, grad and value_and_grad record a VJP tape instead (interpreters/vjp_tape):
the same cotangents, without staging a linear jaxpr.
"""
from __future__ import annotations

from functools import wraps
from typing import Any, Callable, Sequence

from . import dtypes
from . import tree_util as tu
from .api import (AuxOutputs, argnums_partial, as_arrays, check_callable, flatten_fun,
                  flatten_fun_aux)
from .core.array import shared_constant
from .core.avals import ShapedArray, get_aval
from .interpreters import ad_util
from .interpreters.ad_util import UndefPrimal, Zero, instantiate, tangent_aval
from .interpreters.staging import trace_to_jaxpr
from .interpreters.linearize import _Linearized, linearize_flat
from .interpreters.transpose import backward_pass
from .interpreters.vjp_tape.linearize import tape_applies, tape_linearize_flat

__all__ = ["linearize", "vjp", "grad", "value_and_grad", "linear_transpose", "linearize_flat"]


def linearize(f: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """`(f(*primals), f_lin)` where `f_lin(*tangents)` is the jvp, without redoing primal
    work; with `has_aux`, `(out, f_lin, aux)`."""
    check_callable(f, "linearize")
    primals_flat, in_tree = tu.tree_flatten(primals)
    lin, out_tree, aux = _linearize_tree(f, primals_flat, in_tree, has_aux)
    lin.compact()

    def f_lin(*tangents: Any) -> Any:
        t_flat, t_tree = tu.tree_flatten(tangents)
        if t_tree != in_tree:
            raise TypeError(f"linearized function expects tangents structured like the "
                            f"primals, {in_tree}; got {t_tree}")
        _check_linearized_tangents(t_flat, primals_flat)
        return tu.tree_unflatten(out_tree, as_arrays(lin.apply(t_flat)))

    out = tu.tree_unflatten(out_tree, as_arrays(lin.primals_out))
    return (out, f_lin, aux) if has_aux else (out, f_lin)


def _check_linearized_tangents(t_flat: list, primals_flat: list) -> None:
    """A tangent must have its primal's tangent type: the linear jaxpr was staged for
    those shapes, and another shape fails deep inside it naming a primitive the user
    never called (or, for a rank-0 tangent, broadcasts into a wrong answer)."""
    for t, p in zip(t_flat, primals_flat):
        want, got = tangent_aval(get_aval(p)), get_aval(t)
        if got.shape != want.shape or (got.dtype != want.dtype and not (
                got.weak_type and ad_util.is_differentiable(want.dtype))):
            raise ValueError(f"linearized function called on tangent values inconsistent "
                             f"with the original primal values: got tangent "
                             f"{got.str_short()} for primal {get_aval(p).str_short()}, but "
                             f"expected {want.str_short()}")


def _linearize_tree(f: Callable, primals_flat: list, in_tree: tu.PyTreeDef,
                    has_aux: bool, tape: bool = False) -> tuple[Any, tu.PyTreeDef, Any]:
    """Linearize `f` on flat primals; the main outputs' tree and the aux data (None
    without `has_aux`). Aux values are cut off `primals_out`, so the linearization
    sees only the main outputs. `tape`: the caller only transposes (vjp, grad), so at
    the top level the VJP tape serves (vjp_tape) instead of a linear jaxpr."""
    linearize = tape_linearize_flat if tape and tape_applies() else linearize_flat
    if not has_aux:
        flat_fun, out_tree = flatten_fun(f, in_tree)
        return linearize(flat_fun, primals_flat), out_tree(), None
    flat_fun, store = flatten_fun_aux(f, in_tree)
    lin = linearize(flat_fun, primals_flat, store)
    aux = tu.tree_unflatten(store.aux_tree, as_arrays(lin.primals_out[store.n_main:]))
    lin.primals_out = lin.primals_out[:store.n_main]
    return lin, store.out_tree, aux


def vjp(f: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """`(f(*primals), f_vjp)`; `f_vjp(ct)` returns one cotangent per primal argument."""
    check_callable(f, "vjp")
    primals_flat, in_tree = tu.tree_flatten(primals)
    lin, out_tree, aux = _linearize_tree(f, primals_flat, in_tree, has_aux, tape=True)
    lin.compact()
    out = tu.tree_unflatten(out_tree, as_arrays(lin.primals_out))

    def f_vjp(*cts: Any) -> tuple:
        ct_flat = _flatten_cotangent(cts, out_tree, "vjp")
        _check_cotangent_types(ct_flat, lin.primals_out)
        cts_in = as_arrays([instantiate(c) for c in lin.transpose(ct_flat)])
        return tu.tree_unflatten(in_tree, cts_in)

    return (out, f_vjp, aux) if has_aux else (out, f_vjp)


def _flatten_cotangent(cts: tuple, out_tree: tu.PyTreeDef, what: str) -> list:
    """The leaves of a cotangent, which must be structured like the function's output."""
    ct_flat, ct_tree = tu.tree_flatten(cts[0] if len(cts) == 1 else cts)
    if ct_tree != out_tree:
        raise TypeError(f"{what}: the cotangent must be structured like the output, "
                        f"{out_tree}; got {ct_tree}")
    return ct_flat


def _check_cotangent_types(ct_flat: list, primals_out: list, what: str = "vjp") -> None:
    """Each cotangent must have its output's tangent type: a cotangent of another shape
    would be silently broadcast or reduced by the transposed rules into a wrong answer.
    `primals_out` holds the outputs, or their ShapedArrays."""
    for k, (ct, out) in enumerate(zip(ct_flat, primals_out)):
        out_aval = out if type(out) is ShapedArray else get_aval(out)
        want = ad_util.tangent_aval(out_aval)
        got = get_aval(ct)
        if got.shape != want.shape or (got.dtype != want.dtype and not got.weak_type):
            raise ValueError(f"unexpected type (shape/dtype) for argument {k} of the {what} "
                             f"function: got {got.str_short()}, but expected "
                             f"{want.str_short()} because the corresponding output of the "
                             f"{'differentiated' if what == 'vjp' else 'transposed'} function "
                             f"had type {out_aval.str_short()}")


def _check_grad_inputs(leaves: list, in_tree: tu.PyTreeDef, argnums: tuple,
                       allow_int: bool = False, holomorphic: bool = False) -> None:
    """Every differentiated leaf must be inexact (an integer's gradient would be a
    meaningless zero); the error names the argument. `allow_int` lets integer and
    boolean leaves through, with float0 gradients, as in JAX. `holomorphic` promises
    a complex-differentiable f: every input must then be complex."""
    for x in leaves if holomorphic else ():
        dtype = get_aval(x).dtype
        if dtype.kind != "c":
            raise TypeError(f"grad with holomorphic=True requires inputs with complex "
                            f"dtype, but got {dtype.name}.")
    if allow_int:
        return
    for k, x in enumerate(leaves):
        aval = get_aval(x)
        if not ad_util.is_differentiable(aval.dtype):
            raise TypeError(f"grad requires real- or complex-valued inputs (input dtype that is "
                            f"a sub-dtype of np.inexact), but got {aval.dtype.name} for "
                            f"argument {_argnum_of_leaf(k, in_tree, argnums)}. If you want to "
                            f"use Boolean- or integer-valued inputs, use vjp or set allow_int to True.")


def _argnum_of_leaf(k: int, in_tree: tu.PyTreeDef, argnums: tuple) -> int:
    """Which argument the k-th leaf of the flattened differentiated arguments is in."""
    counts = [tu.tree_structure(a).num_leaves for a in tu.tree_unflatten(
        in_tree, list(range(in_tree.num_leaves)))]
    for argnum, n in zip(argnums, counts):
        if k < n:
            return argnum
        k -= n
    return argnums[-1]


def _check_scalar_output(out_flat: list, out_tree: tu.PyTreeDef,
                         holomorphic: bool = False) -> None:
    if len(out_flat) != 1 or not tu.treedef_is_leaf(out_tree):
        raise TypeError(f"Gradient only defined for scalar-output functions. Output was "
                        f"{out_tree} (a pytree, not one scalar).")
    aval = get_aval(out_flat[0])
    if aval.shape != ():
        raise TypeError(f"Gradient only defined for scalar-output functions. Output had shape: "
                        f"{aval.shape}.")
    if holomorphic:
        if aval.dtype.kind != "c":
            raise TypeError(f"grad with holomorphic=True requires outputs with complex "
                            f"dtype, but got {aval.dtype.name}.")
    elif not dtypes.is_float(aval.dtype):
        # a complex output is refused too: its "gradient" is not defined without a
        # choice (holomorphic or not), and transposing from a real one gave 0
        hint = (" For holomorphic differentiation, pass holomorphic=True. For "
                "differentiation of non-holomorphic functions involving complex outputs, "
                "use plugax.vjp directly." if aval.dtype.kind == "c" else "")
        raise TypeError(f"grad requires real-valued outputs (output dtype that is a sub-dtype "
                        f"of np.floating), but got {aval.dtype.name}.{hint}")


def value_and_grad(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
                   holomorphic: bool = False, allow_int: bool = False) -> Callable:
    """A function returning `(f(*args), gradient of f w.r.t. args[argnums])`.

    With `allow_int`, integer and boolean arguments are allowed; their gradients are
    float0 zeros (there is no derivative along an integer), as in JAX. Complex
    inputs of a real f get JAX's df/dx - i df/dy (the transpose, never the adjoint,
    of the linearised f applied to 1.0); `holomorphic=True` lets a complex f of
    complex inputs through and gives its complex derivative f'(z) (the cotangent
    1 + 0j pulled back)."""
    check_callable(f, "value_and_grad")
    multiple = not isinstance(argnums, int)
    nums = tuple(argnums) if multiple else (argnums,)

    @wraps(f)
    def value_and_grad_f(*args: Any) -> Any:
        # vjp, written out on flat lists: one flatten of the arguments, none of the
        # output or of the cotangent (a scalar output is a single leaf)
        f_partial, dyn = argnums_partial(f, nums, args)
        primals_flat, in_tree = tu.tree_flatten(dyn)
        _check_grad_inputs(primals_flat, in_tree, nums, allow_int, holomorphic)
        lin, out_tree, aux = _linearize_tree(f_partial, primals_flat, in_tree, has_aux,
                                             tape=True)
        ans = as_arrays(lin.primals_out)
        _check_scalar_output(ans, out_tree, holomorphic)
        cts = lin.transpose([shared_constant(1, ans[0].dtype)])   # the starting cotangent
        grads = tu.tree_unflatten(in_tree, as_arrays([instantiate(c) for c in cts]))
        g = grads if multiple else grads[0]
        value = ans[0]
        return ((value, aux), g) if has_aux else (value, g)

    return value_and_grad_f


def grad(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
         holomorphic: bool = False, allow_int: bool = False) -> Callable:
    """The gradient of scalar-valued `f` w.r.t. the arguments at `argnums` (see
    `value_and_grad` for `holomorphic` and `allow_int`)."""
    check_callable(f, "grad")
    vg = value_and_grad(f, argnums, has_aux, holomorphic, allow_int)

    @wraps(f)
    def grad_f(*args: Any) -> Any:
        out, g = vg(*args)
        return (g, out[1]) if has_aux else g

    return grad_f


def linear_transpose(f: Callable, *primals: Any) -> Callable:
    """The transpose of linear `f`, traced at the types of `primals`."""
    primals_flat, in_tree = tu.tree_flatten(primals)
    flat_fun, out_tree = flatten_fun(f, in_tree)
    in_avals = [get_aval(p) for p in primals_flat]
    closed = trace_to_jaxpr(flat_fun, in_avals)

    def f_transpose(*cts: Any) -> tuple:
        ct_flat = _flatten_cotangent(cts, out_tree(), "linear_transpose")
        # a cotangent of another shape was broadcast or summed into a wrong answer
        _check_cotangent_types(ct_flat, [v.aval for v in closed.jaxpr.outvars],
                               "linear_transpose")
        args = [UndefPrimal(a) for a in in_avals]
        cts_in = backward_pass(closed.jaxpr, closed.consts, args, ct_flat)
        return tu.tree_unflatten(in_tree, [instantiate(c) for c in cts_in])

    return f_transpose
