"""plugax.lax's special functions: each binds its primitive as is (lax does not
promote: operands must share one floating-point dtype; rank-0 ones broadcast)."""
from __future__ import annotations

from typing import Any

from .expanded import (bessel_i0e_p, igamma_grad_a_p, igamma_p, igammac_p, random_gamma_grad,
                       regularized_incomplete_beta_p)
from .primitives import (bessel_i1e_p, digamma_p, erf_inv_p, erf_p, erfc_p, lgamma_p,
                         polygamma_p, zeta_p)

__all__ = ["LAX"]


def betainc(a: Any, b: Any, x: Any) -> Any:
    """The regularized incomplete beta function I_x(a, b) (primitive
    regularized_incomplete_beta, as JAX names it)."""
    return regularized_incomplete_beta_p.bind(a, b, x)


def _binder(prim: Any) -> Any:
    def fn(*args: Any) -> Any:
        return prim.bind(*args)
    fn.__name__ = fn.__qualname__ = prim.name
    fn.__doc__ = f"lax.{prim.name}: binds the {prim.name} primitive (no promotion)."
    return fn


_PRIMS = (erf_p, erfc_p, erf_inv_p, lgamma_p, digamma_p, polygamma_p, zeta_p, bessel_i1e_p,
          bessel_i0e_p, igamma_p, igammac_p, igamma_grad_a_p)

LAX: dict[str, Any] = {
    **{p.name: _binder(p) for p in _PRIMS},
    **{f"{p.name}_p": p for p in (*_PRIMS, regularized_incomplete_beta_p)},
    "betainc": betainc, "random_gamma_grad": random_gamma_grad,
}
