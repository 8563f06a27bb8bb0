"""linearize_flat: jvp whose tangent half is staged out by partial evaluation.

The general path of reverse mode (`linearize`, and `vjp` / `grad` under another
transformation): its linear jaxpr can be applied (`linearize`), transposed
(`backward_pass`), or staged into an enclosing trace. It lives below `autodiff`
so that the VJP tape (vjp_tape), which linearizes a primitive without a vjp
rule one application at a time, can use it too.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ..core.avals import get_aval
from ..core.trace import user_frame
from ..jaxpr.ir import ClosedJaxpr
from . import ad_util
from .ad_util import UndefPrimal, Zero, instantiate, tangent_aval
from .eager_program import EagerProgram
from .jvp import jvp_flat
from .partial_eval import dce_closed_jaxpr, partial_eval_flat
from .transpose import backward_pass

__all__ = ["linearize_flat"]


class _Linearized:
    """The result of linearizing a flat function: primal outputs and the linear jaxpr."""

    def __init__(self, primals_out, staged: ClosedJaxpr, diff_mask, known_tangents,
                 unknown_mask, in_avals):
        self.primals_out = primals_out
        # every staged equation: transposing needs no dead-code elimination (a dead
        # equation receives no cotangent and is skipped), so `grad` never pays for it
        self.staged = staged
        self._jaxpr: ClosedJaxpr | None = None
        self.diff_mask = diff_mask            # which inputs have (unknown) tangents
        self.known_tangents = known_tangents  # tangent outputs known without inputs (Zero...)
        self.unknown_mask = unknown_mask
        self.in_avals = in_avals
        self.program = None                   # the linear jaxpr compiled on first apply

    @property
    def jaxpr(self) -> ClosedJaxpr:
        """The linear jaxpr, with dead code eliminated (made on first use)."""
        if self._jaxpr is None:
            self._jaxpr = dce_closed_jaxpr(self.staged)
        return self._jaxpr

    def compact(self) -> "_Linearized":
        """Drop dead equations and the residuals only they use, for a linearization
        that is kept and applied or transposed many times (`vjp`, `linearize`)."""
        self.staged = self.jaxpr
        return self

    def apply(self, tangents: Sequence[Any]) -> list:
        """The tangent outputs; cheap to call many times (linearize once, apply many)."""
        diff_tangents = [t for t, d in zip(tangents, self.diff_mask) if d]
        if self.program is None:
            self.program = EagerProgram(self.jaxpr.jaxpr, self.jaxpr.consts)
        outs = iter(self.program.run(diff_tangents))
        return [next(outs) if unk else instantiate(k)
                for unk, k in zip(self.unknown_mask, self.known_tangents)]

    def transpose(self, cts: Sequence[Any]) -> list:
        staged = self.staged.jaxpr
        linear_args = [UndefPrimal(v.aval) for v in staged.invars]
        cts_unknown = [ct for ct, unk in zip(cts, self.unknown_mask) if unk]
        cts_in = iter(backward_pass(staged, self.staged.consts, linear_args, cts_unknown))
        return [next(cts_in) if d else Zero(tangent_aval(a))
                for d, a in zip(self.diff_mask, self.in_avals)]


def linearize_flat(fun: Callable, primals: Sequence[Any],
                   aux: Any = None, site: str | None = None) -> _Linearized:
    """Linearize flat `fun` at `primals`. With `aux` (a `flatten_fun_aux` store), the
    trailing outputs are auxiliary: they appear among `primals_out`, and only the
    main outputs get tangents. `site`: the user's call site, when the caller knows it
    (the tape, linearizing one step of a `grad`, reports the grad's)."""
    in_avals = [get_aval(p) for p in primals]
    diff_mask = [ad_util.is_differentiable(a.dtype) for a in in_avals]
    unknown_avals = [tangent_aval(a) for a, d in zip(in_avals, diff_mask) if d]
    n_in = len(primals)
    n_outs: list[int] = []  # not an attribute of f_jvp: f_jvp -> cell -> f_jvp is a cycle
    site = site or user_frame()   # both traces report the user's call site; find it once

    def f_jvp(*known_and_unknown: Any) -> list:
        primals_, unknowns = known_and_unknown[:n_in], iter(known_and_unknown[n_in:])
        tangents = [next(unknowns) if d else Zero(tangent_aval(a))
                    for d, a in zip(diff_mask, in_avals)]
        p_out, t_out = jvp_flat(fun, primals_, tangents, site)
        n_outs.append(len(p_out))
        return [*p_out, *(t_out if aux is None else t_out[:aux.n_main])]

    outs, jaxpr, unknown = partial_eval_flat(f_jvp, primals, unknown_avals, site, dce=False)
    n_out = n_outs[-1]
    if any(unknown[:n_out]):
        raise ValueError(
            "Linearization failed to produce known values for all output primals: an "
            "operation's jvp rule computed its primal output from the tangents, so reverse "
            "mode (grad, vjp, linearize) cannot separate the two. A jvp rule must compute "
            "primal outputs from primal inputs only; forward mode (jvp) still works."
            f"\n  at {site}")
    primals_out = outs[:n_out]
    return _Linearized(primals_out, jaxpr, diff_mask, outs[n_out:], unknown[n_out:], in_avals)
