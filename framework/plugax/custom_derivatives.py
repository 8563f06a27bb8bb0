"""custom_jvp and custom_vjp: user-supplied derivative rules for Python functions.

The call is handed to the current trace (`process_custom_jvp_call` /
`process_custom_vjp_call`): evaluation just runs the function, a JVP trace runs
the user's rule instead, a batch trace batches function and rule together. A
jaxpr trace (jit, make_jaxpr) must not lose the rule, so it stages a
`custom_jvp_call` / `custom_vjp_call` equation holding the traced function and
the rule; their jvp/vmap rules below hand the call back to the trace that
processes them, exactly as if the user's function had been called there. For
custom_vjp, the tangent is a `custom_lin` equation whose transpose calls the
user's backward function; it has no forward-mode meaning.

Rules may call functions with rules (docs/custom-derivatives.md, "Rules that call
functions with rules"): `fwd` and `bwd` run under the enclosing transformations,
so a derivative of a derivative differentiates them as code, and a partial
evaluation trace hands a call on known values to its parent as a call, so an
outer derivative still sees it and uses its rule.
"""
from __future__ import annotations

from functools import update_wrapper
from typing import Any, Callable, Sequence

from . import tree_util as tu
from .core import trace as core
from .core.avals import ShapedArray, get_aval
from .errors import PlugaxError
from .interpreters.ad_util import (Zero, instantiate, is_differentiable, tangent_aval,
                                   zeros_like_aval)
from .interpreters.custom_calls import (custom_jvp_call_p, custom_lin_p, custom_vjp_call_p,
                                        linearize_custom_vjp)
from .jaxpr.check import check_call_operands
from .jaxpr.interpret import eval_jaxpr
from . import stop_gradient as _stop_gradient
from .loader.hookspec import hookimpl
from .loader.ruleset import PluginInfo, RuleSet
from .structural import add_tangents

__all__ = ["custom_jvp", "custom_vjp", "custom_lin_p", "custom_jvp_call_p", "custom_vjp_call_p",
           "kernel_plugin"]


def _split_args(args: tuple, nondiff_argnums: tuple) -> tuple[list, list]:
    nondiff = [args[i] for i in nondiff_argnums]
    dyn = [a for i, a in enumerate(args) if i not in nondiff_argnums]
    return nondiff, dyn


def _merge_args(nondiff: list, dyn: Sequence[Any], nondiff_argnums: tuple) -> list:
    nd, dy = iter(nondiff), iter(dyn)
    return [next(nd) if i in nondiff_argnums else next(dy)
            for i in range(len(nondiff) + len(dyn))]


def _flatten_call(fun: Callable, args: tuple, nondiff_argnums: tuple) -> tuple:
    """Split a call of a custom-derivative function into what its trace handles.

    Returns the nondiff and differentiable arguments, the flat differentiable
    leaves and their tree, a dict where the output tree lands (`"out"`), and
    `flat_fun` taking and returning flat leaves (named after `fun`, so staged
    calls print it).
    """
    nondiff, dyn = _split_args(args, nondiff_argnums)
    flat, in_tree = tu.tree_flatten(tuple(dyn))
    trees: dict = {}

    def flat_fun(*xs: Any) -> list:
        out = fun(*_merge_args(nondiff, tu.tree_unflatten(in_tree, xs), nondiff_argnums))
        leaves, trees["out"] = tu.tree_flatten(out)
        return leaves

    flat_fun.__name__ = getattr(fun, "__name__", "fun")
    return nondiff, dyn, flat, in_tree, trees, flat_fun


class custom_jvp:
    """A function with a custom forward-mode rule; reverse mode follows by linearity."""

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        update_wrapper(self, fun)
        self.fun, self.nondiff_argnums, self.jvp = fun, tuple(nondiff_argnums), None

    def defjvp(self, jvp: Callable) -> Callable:
        """`jvp(*nondiff_args, primals, tangents) -> (primal_out, tangent_out)`."""
        self.jvp = jvp
        return jvp

    def defjvps(self, *jvps: Callable | None) -> None:
        """One rule per argument: `jvp_i(g_i, ans, *primals)`; None means no dependence."""
        def jvp(primals, tangents):
            ans = self.fun(*primals)
            out = None
            for rule, t in zip(jvps, tangents):
                if rule is not None:
                    term = rule(t, ans, *primals)
                    out = term if out is None else tu.tree_map(add_tangents, out, term)
            return ans, out
        self.defjvp(jvp)

    def __call__(self, *args: Any) -> Any:
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function "
                                 f"{getattr(self.fun, '__name__', self.fun)} using defjvp.")
        nondiff, dyn, flat, in_tree, trees, flat_fun = _flatten_call(self.fun, args,
                                                                     self.nondiff_argnums)

        def flat_jvp(primals: list, tangents: list) -> tuple[list, list]:
            p_out, t_out = self.jvp(*nondiff, tu.tree_unflatten(in_tree, primals),
                                    tu.tree_unflatten(in_tree, tangents))
            p_flat, p_tree = tu.tree_flatten(p_out)
            t_flat, t_tree = tu.tree_flatten(t_out)
            if p_tree != t_tree:
                raise TypeError(f"custom_jvp rule must return primal and tangent outputs with "
                                f"equal tree structure; got {p_tree} and {t_tree}")
            _check_custom_tangents(p_flat, t_flat)
            trees["out"] = p_tree
            return p_flat, t_flat

        outs = core.current_trace().process_custom_jvp_call(flat_fun, flat_jvp, flat)
        return tu.tree_unflatten(trees["out"], outs)


def _check_custom_tangents(p_flat: list, t_flat: list) -> None:
    """Each tangent a custom rule returns must have its primal's tangent type: one of
    another shape or dtype was passed on and gave a silently wrong derivative."""
    for p, t in zip(p_flat, t_flat):
        want = tangent_aval(get_aval(p))
        got = t.aval if type(t) is Zero else get_aval(t)
        if got.shape != want.shape or (got.dtype != want.dtype and not (
                got.weak_type and is_differentiable(got.dtype)
                and is_differentiable(want.dtype))):
            raise TypeError(f"Custom JVP rule must produce primal and tangent outputs with "
                            f"corresponding shapes and dtypes. Expected {want.str_short()} "
                            f"(tangent type of {get_aval(p).str_short()}) but got "
                            f"{got.str_short()}.")


class custom_vjp:
    """A function with a custom reverse-mode rule given as `fwd` and `bwd`."""

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        update_wrapper(self, fun)
        self.fun, self.nondiff_argnums = fun, tuple(nondiff_argnums)
        self.fwd = self.bwd = None

    def defvjp(self, fwd: Callable, bwd: Callable) -> None:
        """`fwd(*args) -> (out, residuals)`; `bwd(*nondiff_args, residuals, ct) -> cts`."""
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args: Any) -> Any:
        if self.fwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function "
                                 f"{getattr(self.fun, '__name__', self.fun)} using defvjp.")
        nondiff, dyn, flat, in_tree, trees, flat_fun = _flatten_call(self.fun, args,
                                                                     self.nondiff_argnums)

        def flat_fwd(*xs: Any) -> tuple[list, list]:
            out, res = self.fwd(*_merge_args(nondiff, tu.tree_unflatten(in_tree, xs),
                                             self.nondiff_argnums))
            out_flat, trees["out"] = tu.tree_flatten(out)
            res_flat, trees["res"] = tu.tree_flatten(res)
            return out_flat, res_flat

        def flat_bwd(res: list, cts: list) -> list:
            ct_tree = tu.tree_unflatten(trees["out"], [instantiate(c) for c in cts])
            cts_in = self.bwd(*nondiff, tu.tree_unflatten(trees["res"], res), ct_tree)
            if not isinstance(cts_in, (tuple, list)) or len(cts_in) != len(dyn):
                raise TypeError(f"custom_vjp bwd must return a tuple with one cotangent per "
                                f"differentiable argument ({len(dyn)}), got {cts_in!r}")
            leaves = []
            for k, (ct, arg) in enumerate(zip(cts_in, dyn)):
                arg_leaves, arg_tree = tu.tree_flatten(arg)
                if ct is None:
                    leaves += [zeros_like_aval(core.get_aval(a)) for a in arg_leaves]
                    continue
                ct_leaves, ct_tree = tu.tree_flatten(ct)
                _check_bwd_output(k, arg_leaves, arg_tree, ct_leaves, ct_tree)
                leaves += ct_leaves
            return leaves

        outs = core.current_trace().process_custom_vjp_call(flat_fun, flat_fwd, flat_bwd, flat)
        return tu.tree_unflatten(trees["out"], outs)


def _check_bwd_output(k: int, arg_leaves: list, arg_tree, ct_leaves: list, ct_tree) -> None:
    """A bwd output must be structured and shaped like its argument (as JAX requires):
    a cotangent of another shape would otherwise broadcast into the sum of
    cotangents, or reach a compiled call with the wrong buffer, far from its cause."""
    if ct_tree != arg_tree:
        raise TypeError(f"custom_vjp bwd must return, for differentiable argument {k}, a "
                        f"cotangent structured like the argument ({arg_tree}); got {ct_tree}")
    for a, c in zip(arg_leaves, ct_leaves):
        if isinstance(c, Zero):
            continue
        want, got = core.get_aval(a).shape, core.get_aval(c).shape
        if want != got:
            raise ValueError(f"custom_vjp bwd must return, for differentiable argument {k}, "
                             f"a cotangent shaped like the argument: expected shape {want}, "
                             f"got {got}")


# --- the custom_lin primitive: the tangent of a custom_vjp call ---------------
def _custom_lin_abstract_eval(ctx, *avals: ShapedArray, num_res, bwd, out_avals, nonzeros):
    return list(out_avals)


def _custom_lin_no_forward(ctx, *args, **params):
    raise PlugaxError("can't apply forward-mode autodiff (jvp) to a custom_vjp function; "
                      "use custom_jvp, or reverse mode (vjp/grad)")


def _custom_lin_transpose(ctx, cts, *args, num_res, bwd, out_avals, nonzeros):
    res = list(args[:num_res])
    cts_in = bwd(res, [instantiate(c) for c in cts])
    return [None] * num_res + [ct for ct, nz in zip(cts_in, nonzeros) if nz]


# --- staged custom calls: what a jaxpr trace records for custom_jvp / custom_vjp ---
def _call_jaxpr_fun(call_jaxpr):
    return lambda *xs: eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *xs)


def _custom_call_impl(ctx, *args, call_jaxpr, **_):
    from .core.array import Array, host_value
    outs = eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *[Array(a) for a in args])
    return [host_value(o) for o in outs]


def _custom_call_expand(ctx, *args, call_jaxpr, **_):
    """The call as a decomposition: its body, evaluated under whatever trace is
    current. A third-party transformation (jet) derives its rule from this; the
    custom rule does not apply to it, as JAX's jet also runs the function itself."""
    return eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *args)


def _custom_call_abstract_eval(ctx, *avals, call_jaxpr, name, **_):
    check_call_operands(f"the custom-derivative call of '{name}'", call_jaxpr, avals)
    return list(call_jaxpr.out_avals)


def _custom_call_lowering(ctx, *args, call_jaxpr, **_):
    return ctx.lower_jaxpr(call_jaxpr, *args)


def _custom_jvp_call_jvp(ctx, primals, tangents, *, call_jaxpr, jvp, name):
    p_out, t_out = jvp(list(primals), [instantiate(t) for t in tangents])
    return list(p_out), list(t_out)


def _custom_jvp_call_vmap(ctx, args, dims, *, call_jaxpr, jvp, name):
    from .interpreters.batching import all_front, vmap_flat
    fun = _call_jaxpr_fun(call_jaxpr)
    outs = vmap_flat(lambda *xs: core.current_trace().process_custom_jvp_call(fun, jvp, xs),
                     ctx.axis_size, dims, args, all_front())
    return outs, [0] * len(outs)


def _custom_vjp_call_jvp(ctx, primals, tangents, *, call_jaxpr, fwd, bwd, name):
    return linearize_custom_vjp(fwd, bwd, primals, tangents)


def _custom_vjp_call_vmap(ctx, args, dims, *, call_jaxpr, fwd, bwd, name):
    from .interpreters.batching import all_front, vmap_flat
    fun = _call_jaxpr_fun(call_jaxpr)
    outs = vmap_flat(lambda *xs: core.current_trace().process_custom_vjp_call(fun, fwd, bwd, xs),
                     ctx.axis_size, dims, args, all_front())
    return outs, [0] * len(outs)


def _custom_jvp_call_transpose(ctx, cts, *args, call_jaxpr, jvp, name):
    """A custom_jvp call in a linear function (a custom_jvp function applied to tangents,
    e.g. inside another rule): transpose the function itself, as JAX does; its rule is
    a forward-mode rule and says nothing about the transpose."""
    from .interpreters.ad_util import is_undefined_primal
    from .interpreters.transpose import backward_pass
    cts_in = iter(backward_pass(call_jaxpr.jaxpr, call_jaxpr.consts, list(args), list(cts)))
    return [next(cts_in) if is_undefined_primal(a) else None for a in args]


def _custom_vjp_call_transpose(ctx, cts, *args, call_jaxpr, fwd, bwd, name):
    raise PlugaxError(
        f"can't transpose custom_vjp function {name} applied to tangent values (e.g. "
        f"called on the tangents inside a custom_jvp rule): its bwd is a VJP at a primal "
        f"point, not the transpose of a linear function, and differentiating its body "
        f"instead would silently ignore the rule. JAX refuses this too; make the function "
        f"a custom_jvp, or call it on primal values.")


class _KernelPlugin:
    """The kernel's own primitives, registered through the same plugin path as families."""

    @hookimpl
    def plugax_plugin_info(self) -> PluginInfo:
        return PluginInfo(name="kernel", description="custom derivatives and stop_gradient")

    @hookimpl
    def plugax_frontend(self) -> dict:
        return {"lax": {"stop_gradient": _stop_gradient.stop_gradient}}

    @hookimpl
    def plugax_primitive_rules(self) -> list:
        common = dict(abstract_eval=_custom_call_abstract_eval, impl=_custom_call_impl,
                      expand=_custom_call_expand,
                      lowering={"default": _custom_call_lowering})
        return [RuleSet(custom_lin_p, abstract_eval=_custom_lin_abstract_eval,
                        impl=_custom_lin_no_forward, jvp=_custom_lin_no_forward,
                        batching=_custom_lin_no_forward, transpose=_custom_lin_transpose,
                        # reaching lowering means a jitted jvp/linearize of a custom_vjp
                        # function: say so, rather than "no lowering rule"
                        lowering={"default": _custom_lin_no_forward}),
                RuleSet(custom_jvp_call_p, jvp=_custom_jvp_call_jvp, batching=_custom_jvp_call_vmap,
                        transpose=_custom_jvp_call_transpose, **common),
                RuleSet(custom_vjp_call_p, jvp=_custom_vjp_call_jvp, batching=_custom_vjp_call_vmap,
                        transpose=_custom_vjp_call_transpose, **common),
                *_stop_gradient.RULES]


kernel_plugin = _KernelPlugin()
