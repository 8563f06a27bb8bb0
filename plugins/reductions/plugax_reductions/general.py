"""lax.reduce (a user's computation over axes), reduce_xor, and cumlogsumexp.

- `reduce_xor` is one more fold like reduce_and/or (bool or integers, zero derivative),
  lowered to one `stablehlo.reduce` with `xor`.
- `cumlogsumexp` is a cumulative reduction like cumsum (NumPy's
  `logaddexp.accumulate`); as for cumprod, its jvp differentiates JAX's associative
  scan of `logaddexp`, so -inf entries get JAX's derivative.
- `reduce(operands, init_values, computation, dimensions)` does what JAX does: when the
  computation traces to one add/mul/max/min/and/or/xor and the init values are that
  monoid's identity, it is that reduction primitive (so it keeps their derivatives and
  lowerings); otherwise it folds `computation` over the reduced elements, in order, with
  `lax.scan` (so it is differentiable, batchable and jittable like any scan; XLA's
  reduce may associate differently, which matters only for a non-associative
  computation, whose result XLA leaves unspecified).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from plugax.extend import Primitive, bind, defjvp, get_aval, user_reduction_axes

from ._common import LOGICAL, highest, lowest
from .cumulative import associative_scan, defcumulative
from .lowering import reduce_values
from .reduce import defreduction

__all__ = ["reduce_xor_p", "cumlogsumexp_p", "RULES", "LAX"]

reduce_xor_p = Primitive("reduce_xor")
cumlogsumexp_p = Primitive("cumlogsumexp")


def _xor_lowering(ctx, x, *, axes):
    dtype = ctx.avals_in[0].dtype
    (out,) = reduce_values(ctx, [x], [ctx.constant(np.zeros((), dtype), dtype)], [dtype], axes,
                           lambda a, b: [ctx.hlo.xor(a, b)])
    return out


def _is_float(dtype: np.dtype) -> bool:
    return dtype.kind == "f" or dtype.name == "bfloat16"


FLOAT = (_is_float, "a floating-point dtype")


def _logaddexp(a: Any, b: Any) -> Any:
    import plugax.numpy as jnp
    return jnp.logaddexp(a, b)


def _cumlogsumexp_lowering(ctx, x, *, axis, reverse):
    """The associative scan of logaddexp, lowered as a composition."""
    return ctx.lower_fun(lambda v: associative_scan(_logaddexp, v, axis, reverse), x)[0]


def _cumlogsumexp_jvp(ctx, primals, tangents, *, axis, reverse):
    """JAX's rule: the jvp of the associative scan of logaddexp (as cumprod's is of mul)."""
    import plugax
    from plugax.extend import Zero
    (x,), (g,) = primals, tangents
    ans = cumlogsumexp_p.bind(x, axis=axis, reverse=reverse)
    if type(g) is Zero:
        return ans, Zero.from_value(ans)
    scan = lambda v: associative_scan(_logaddexp, v, axis, reverse)  # noqa: E731
    return ans, plugax.jvp(scan, (x,), (g,))[1]


class _LogAddExp:
    """np.logaddexp with the `accumulate` defcumulative calls (bfloat16/float16 in f32:
    NumPy has no loop for bfloat16)."""

    @staticmethod
    def accumulate(x: np.ndarray, axis: int, dtype: Any) -> np.ndarray:
        wide = np.float32 if x.dtype.itemsize < 4 else x.dtype
        return np.logaddexp.accumulate(x.astype(wide), axis=axis).astype(dtype)


RULES = [
    defreduction(reduce_xor_p, lambda x, *, axes: np.bitwise_xor.reduce(
                     x, axis=axes, initial=np.zeros((), x.dtype)), accepts=LOGICAL,
                 jvp=defjvp(reduce_xor_p), lowering=_xor_lowering),
    defcumulative(cumlogsumexp_p, _LogAddExp, accepts=FLOAT,
                  jvp=_cumlogsumexp_jvp,
                  lowering=_cumlogsumexp_lowering),
]


# --- the lax functions ---------------------------------------------------------------------
def reduce_xor(operand: Any, axes: Sequence[int]) -> Any:
    """Bitwise (logical, for bool) xor of `operand` over `axes`."""
    return bind(reduce_xor_p, operand,
                axes=user_reduction_axes("lax.reduce_xor", get_aval(operand), axes))


def cumlogsumexp(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """log(cumsum(exp(operand))) along `axis`, computed stably."""
    aval = get_aval(operand)
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"lax.cumlogsumexp: axis must be an int, got {axis!r}")
    if not -aval.ndim <= axis < aval.ndim:
        raise ValueError(f"lax.cumlogsumexp: axis {axis} is out of bounds for an operand "
                         f"{aval.str_short()} (rank {aval.ndim})")
    return bind(cumlogsumexp_p, operand, axis=int(axis) % aval.ndim, reverse=bool(reverse))


# monoid primitive name -> (lax reduction name, identity(dtype) or None when none fits)
_MONOIDS: dict[str, tuple[str, Callable]] = {
    "add": ("reduce_sum", lambda d: 0),
    "mul": ("reduce_prod", lambda d: 1),
    "max": ("reduce_max", lowest),
    "min": ("reduce_min", highest),
    "and": ("reduce_and", lambda d: True if d == np.bool_ else -1 if d.kind == "i"
            else np.iinfo(d).max),
    "or": ("reduce_or", lambda d: 0),
    "xor": ("reduce_xor", lambda d: 0),
}


def _concrete(x: Any) -> np.ndarray | None:
    from plugax.extend import Tracer
    if isinstance(x, Tracer):
        return None
    return np.asarray(x)


def _monoid(computation: Callable, operand: Any, init: Any) -> str | None:
    """The lax reduction `computation` is with `init` as its identity, or None."""
    import plugax
    aval = get_aval(operand)
    scalar = np.zeros((), aval.dtype)
    try:
        closed = plugax.make_jaxpr(computation)(scalar, scalar)
    except Exception:   # not traceable on scalars as a binary function: fold it
        return None
    jaxpr = closed.jaxpr
    if len(jaxpr.eqns) != 1 or len(jaxpr.outvars) != 1 or closed.consts:
        return None
    eqn = jaxpr.eqns[0]
    name = eqn.primitive.name
    if name not in _MONOIDS or list(eqn.invars) != list(jaxpr.invars) \
            or eqn.outvars[0] is not jaxpr.outvars[0]:
        return None
    reduction, identity = _MONOIDS[name]
    if name in ("and", "or", "xor") and aval.dtype.kind not in "biu":
        return None
    value = _concrete(init)
    if value is None or value.shape != ():
        return None
    if value.astype(aval.dtype) != np.asarray(identity(aval.dtype)).astype(aval.dtype):
        return None
    return reduction


def reduce(operands: Any, init_values: Any, computation: Callable[[Any, Any], Any],
           dimensions: Sequence[int]) -> Any:
    """Reduce `operands` (an array or a pytree of arrays of one shape) over `dimensions`
    with `computation(accumulated, element)`, starting from `init_values` (the same
    pytree of scalars)."""
    import plugax.lax as lax
    import plugax.numpy as jnp
    from plugax.tree_util import tree_flatten, tree_unflatten
    flat_ops, tree = tree_flatten(operands)
    flat_init, init_tree = tree_flatten(init_values)
    if init_tree != tree:
        raise TypeError(f"lax.reduce: operands and init_values must have the same tree "
                        f"structure, got {tree} and {init_tree}")
    if not flat_ops:
        raise TypeError("lax.reduce needs at least one operand")
    shapes = {get_aval(x).shape for x in flat_ops}
    if len(shapes) > 1:
        raise TypeError(f"lax.reduce: the operands must have one shape, got "
                        f"{sorted(shapes)}")
    shape = shapes.pop()
    dims = user_reduction_axes("lax.reduce", get_aval(flat_ops[0]), dimensions)
    for x, init in zip(flat_ops, flat_init):
        if np.shape(init) != () and get_aval(init).shape != ():
            raise TypeError(f"lax.reduce: init values must be scalars, got one of shape "
                            f"{get_aval(init).shape}")
    inits = [lax.convert_element_type(i, get_aval(x).dtype) for x, i in zip(flat_ops, flat_init)]
    if len(flat_ops) == 1:
        name = _monoid(computation, flat_ops[0], flat_init[0])
        if name is not None:
            out = getattr(lax, name)(flat_ops[0], dims)
            return tree_unflatten(tree, [out])
    kept = tuple(i for i in range(len(shape)) if i not in dims)
    rest = tuple(shape[i] for i in kept)
    n = int(np.prod([shape[i] for i in dims], dtype=np.int64))
    xs = [jnp.reshape(jnp.transpose(x, dims + kept), (n,) + rest) for x in flat_ops]
    carry0 = [lax.broadcast_in_dim(i, rest, ()) for i in inits]

    def body(carry, x):
        out = computation(tree_unflatten(tree, carry), tree_unflatten(tree, x))
        flat_out, out_tree = tree_flatten(out)
        if out_tree != tree:
            raise TypeError(f"lax.reduce: the computation must return the operands' "
                            f"structure {tree}, got {out_tree}")
        return [lax.convert_element_type(o, get_aval(c).dtype) for o, c in
                zip(flat_out, carry)], None
    if n == 0:
        return tree_unflatten(tree, carry0)
    final, _ = lax.scan(body, carry0, xs)
    return tree_unflatten(tree, final)


LAX = {"reduce": reduce, "reduce_xor": reduce_xor, "cumlogsumexp": cumlogsumexp}
