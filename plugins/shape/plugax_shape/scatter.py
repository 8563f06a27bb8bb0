"""scatter, scatter-add, scatter-mul, scatter-min, scatter-max (see gather_scatter.py).

One impl and one batching rule serve the five: they differ only in how an update
combines with what is there. Their differentiation rules follow JAX's:

- scatter-add: linear in (operand, updates); transpose = (ct, gather(ct)).
- scatter: with unique indices linear in (operand, updates); otherwise the jvp
  scatters ids to find which update lands last on each position, masks the others
  out and becomes a scatter-add (so grad works with repeated indices too).
- scatter-mul: linear in the operand; the updates' tangent needs unique indices.
- scatter-min/max: tangents averaged over the ties that produced each output.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from plugax.extend import (Array, RuleSet, ShapedArray, Zero, bdim_at_front, bind,
                           checked_impl, instantiate, is_undefined_primal, linear_jvp,
                           shape_error)

from ._common import index_dtype_ok, lowering_of, zeros
from .dimension_numbers import (GatherScatterMode, ScatterDimensionNumbers,
                                _scatter_slice_sizes, _to_gather_dnums, scatter_dnums)
from .gather_scatter import (_shift, _window_index, _window_starts, gather_p, scatter_add_p,
                             scatter_max_p, scatter_min_p, scatter_mul_p, scatter_p)

_COMBINE = {"scatter": None, "scatter-add": np.add, "scatter-mul": np.multiply,
            "scatter-min": np.minimum, "scatter-max": np.maximum}
_BOOL_COMBINE = {"scatter-add": np.logical_or, "scatter-mul": np.logical_and,
                 "scatter-min": np.logical_and, "scatter-max": np.logical_or}


def _scatter_abstract_eval_for(prim):
    def abstract_eval(ctx, operand, indices, updates, *, dimension_numbers, indices_are_sorted,
                      unique_indices, mode, **_):
        dn = dimension_numbers
        avals = [operand, indices, updates]

        def fail(problem, fix):
            return shape_error(prim, avals, problem, fix, dimension_numbers=dn, mode=mode)
        if not index_dtype_ok(indices):
            raise fail("needs integer indices", "convert the indices to int32")
        if indices.ndim < 1 or indices.shape[-1] != len(dn.scatter_dims_to_operand_dims):
            raise fail("needs indices whose last axis (the index vector) has "
                       "len(scatter_dims_to_operand_dims) entries", "add a trailing index axis")
        if updates.dtype != operand.dtype:
            raise fail("needs updates of the operand's dtype", "convert the updates")
        r = operand.ndim
        dropped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
        window_axes = [d for d in range(r) if d not in dropped]
        batch_shape = indices.shape[:-1]
        if len(dropped) != len(dn.inserted_window_dims) + len(dn.operand_batching_dims) or \
                any(not 0 <= d < r for d in dropped | set(dn.scatter_dims_to_operand_dims)):
            raise fail("needs distinct inserted/batching operand axes and scatter dims inside "
                       "the operand", "fix dimension_numbers")
        if list(dn.update_window_dims) != sorted(set(dn.update_window_dims)) or \
                len(dn.update_window_dims) != len(window_axes) or \
                updates.ndim != len(batch_shape) + len(window_axes) or \
                any(not 0 <= d < updates.ndim for d in dn.update_window_dims):
            raise fail(f"needs updates of rank {len(batch_shape) + len(window_axes)} with "
                       f"{len(window_axes)} sorted update_window_dims",
                       "fix the updates' shape or dimension_numbers")
        scatter_axes = [d for d in range(updates.ndim) if d not in dn.update_window_dims]
        if tuple(updates.shape[d] for d in scatter_axes) != batch_shape or any(
                updates.shape[u] > operand.shape[o]
                for u, o in zip(dn.update_window_dims, window_axes)):
            raise fail(f"needs updates whose scatter axes are the indices' batch shape "
                       f"{batch_shape} and whose windows fit the operand",
                       "reshape the updates")
        if len(dn.operand_batching_dims) != len(dn.scatter_indices_batching_dims) or any(
                not 0 <= s < len(batch_shape) or operand.shape[o] != batch_shape[s]
                for o, s in zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims)):
            raise fail("needs operand_batching_dims and scatter_indices_batching_dims of equal "
                       "sizes, pairwise", "fix dimension_numbers")
        return ShapedArray(operand.shape, operand.dtype, operand.weak_type and updates.weak_type)
    return abstract_eval


def _scatter_impl_for(name):
    def impl(x, idx, upd, *, dimension_numbers, indices_are_sorted, unique_indices, mode, **_):
        dn = dimension_numbers
        sizes = _scatter_slice_sizes(x.shape, upd.shape, dn)
        starts, ok = _window_starts(x.shape, idx, dn.scatter_dims_to_operand_dims,
                                    dn.operand_batching_dims, dn.scatter_indices_batching_dims,
                                    sizes)
        scatter_axes = [d for d in range(upd.ndim) if d not in dn.update_window_dims]
        u = np.moveaxis(upd, scatter_axes, range(len(scatter_axes))).reshape(
            (len(starts),) + sizes)
        if mode is not GatherScatterMode.CLIP:      # XLA drops windows that do not fit
            starts, u = starts[ok], u[ok]
        out = np.array(x, copy=True)
        if not u.size:
            return out
        where = _window_index(starts, sizes)
        if name == "scatter":
            out[where] = u       # repeated indices: the last write wins
        else:
            (_BOOL_COMBINE[name] if x.dtype == np.bool_ else _COMBINE[name]).at(out, where, u)
        return out
    return impl


def _scatter_vmap_for(prim):
    def vmap(ctx, args, dims, *, dimension_numbers, **params):
        (x, idx, upd), (dx, di, du), dn = args, dims, dimension_numbers
        size = ctx.axis_size
        x, upd = bdim_at_front(x, dx, size), bdim_at_front(upd, du, size)
        if di is None:     # a window axis of the full batch size, first in operand and updates
            new = ScatterDimensionNumbers((0,) + _shift(dn.update_window_dims),
                                          _shift(dn.inserted_window_dims),
                                          _shift(dn.scatter_dims_to_operand_dims),
                                          _shift(dn.operand_batching_dims),
                                          dn.scatter_indices_batching_dims)
        else:              # a shared batching axis
            idx = bdim_at_front(idx, di, size)
            new = ScatterDimensionNumbers(_shift(dn.update_window_dims),
                                          _shift(dn.inserted_window_dims),
                                          _shift(dn.scatter_dims_to_operand_dims),
                                          (0,) + _shift(dn.operand_batching_dims),
                                          (0,) + _shift(dn.scatter_indices_batching_dims))
        return bind(prim, x, idx, upd, dimension_numbers=new, **params), 0
    return vmap


def _gather_back(operand_aval, ct, idx, upd_aval, dn, mode, **params):
    """What a scatter wrote, read back from `ct` (zero where the scatter dropped)."""
    return bind(gather_p, ct, idx, dimension_numbers=_to_gather_dnums(dn),
                slice_sizes=_scatter_slice_sizes(operand_aval.shape, upd_aval.shape, dn),
                indices_are_sorted=params.get("indices_are_sorted", False),
                unique_indices=params.get("unique_indices", False), mode=mode,
                fill_value=0 if mode is not GatherScatterMode.CLIP else None)


def _aval(v):
    return v.aval if is_undefined_primal(v) else _get_aval(v)


def _get_aval(v):
    from plugax.extend import get_aval
    return get_aval(v)


def _scatter_add_transpose(ctx, ct, x, idx, upd, *, dimension_numbers, mode, **params):
    if type(ct) is Zero:
        return [None, None, None]
    ct_x = ct if is_undefined_primal(x) else None
    ct_u = None
    if is_undefined_primal(upd):
        ct_u = _gather_back(_aval(x), ct, idx, upd.aval, dimension_numbers, mode, **params)
    return [ct_x, None, ct_u]


def _scatter_transpose(ctx, ct, x, idx, upd, *, dimension_numbers, mode, unique_indices,
                       **params):
    if not unique_indices:
        raise NotImplementedError("scatter transpose is only implemented where "
                                  "unique_indices=True (as in JAX); grad of x.at[i].set(v) "
                                  "goes through the jvp rule, which handles repeats")
    if type(ct) is Zero:
        return [None, None, None]
    upd_aval = _aval(upd)
    ct_x = ct_u = None
    if is_undefined_primal(x):
        ct_x = bind(scatter_p, ct, idx, zeros(upd_aval.shape, upd_aval.dtype),
                    dimension_numbers=dimension_numbers, mode=mode,
                    unique_indices=unique_indices, **params)
    if is_undefined_primal(upd):
        ct_u = _gather_back(_aval(x), ct, idx, upd_aval, dimension_numbers, mode,
                            unique_indices=unique_indices, **params)
    return [ct_x, None, ct_u]


def _scatter_mul_transpose(ctx, ct, x, idx, upd, **params):
    if is_undefined_primal(upd):
        raise NotImplementedError("scatter-mul is linear only in its operand: the updates' "
                                  "transpose is not defined (as in JAX)")
    if type(ct) is Zero:
        return [None, None, None]
    return [bind(scatter_mul_p, ct, idx, upd, **params), None, None]


def _select(pred, on_true, on_false):
    import plugax.lax as lax
    return lax.select_n(pred, on_false, on_true)


def _scatter_jvp(ctx, primals, tangents, *, dimension_numbers, unique_indices, **params):
    """JAX's jvp of scatter: unique indices are linear; otherwise find, with a scatter of
    ids, which update lands on each position, and add only those (a scatter-add)."""
    import plugax.lax as lax
    (x, idx, upd), (tx, _, tu) = primals, tangents
    dn, kw = dimension_numbers, dict(params, dimension_numbers=dimension_numbers)
    out = bind(scatter_p, x, idx, upd, unique_indices=unique_indices, **kw)
    if type(tx) is Zero and type(tu) is Zero:
        return out, Zero.from_value(out)
    tx, tu = instantiate(tx), instantiate(tu)
    if unique_indices:
        return out, bind(scatter_p, tx, idx, tu, unique_indices=True, **kw)
    x_aval, u_aval = _get_aval(x), _get_aval(upd)
    scatter_axes = [d for d in range(u_aval.ndim) if d not in dn.update_window_dims]
    n = int(np.prod([u_aval.shape[d] for d in scatter_axes], dtype=np.int64))
    id_dtype = np.int32 if n < 2 ** 31 - 1 else np.int64
    ids = zeros(u_aval.shape, id_dtype)      # 1 + the row-major number of each index vector
    stride = 1
    for d in reversed(scatter_axes):
        term = lax.mul(lax.broadcasted_iota(id_dtype, u_aval.shape, d),
                       Array(np.asarray(stride, id_dtype)))
        ids, stride = lax.add(ids, term), stride * u_aval.shape[d]
    ids = lax.add(ids, Array(np.ones((), id_dtype)))
    won = bind(scatter_p, zeros(x_aval.shape, id_dtype), idx, ids, unique_indices=False, **kw)
    landed = _gather_back(x_aval, won, idx, u_aval, dn, params["mode"],
                          indices_are_sorted=params.get("indices_are_sorted", False))
    keep_u = lax.eq(landed, ids)
    keep_x = lax.eq(won, zeros(x_aval.shape, id_dtype))

    def combine(a, b):
        a = _select(keep_x, a, zeros(x_aval.shape, x_aval.dtype))
        b = _select(keep_u, b, zeros(u_aval.shape, u_aval.dtype))
        return bind(scatter_add_p, a, idx, b, unique_indices=False, **kw)
    return out, combine(tx, tu)


def _scatter_mul_jvp(ctx, primals, tangents, *, dimension_numbers, unique_indices, **params):
    import plugax.lax as lax
    (x, idx, upd), (tx, _, tu) = primals, tangents
    kw = dict(params, dimension_numbers=dimension_numbers, unique_indices=unique_indices)
    out = bind(scatter_mul_p, x, idx, upd, **kw)
    if type(tx) is Zero and type(tu) is Zero:
        return out, Zero.from_value(out)
    t = zeros(_get_aval(x).shape, _get_aval(x).dtype)
    if type(tx) is not Zero:
        t = bind(scatter_mul_p, tx, idx, upd, **kw)
    if type(tu) is not Zero:
        if not unique_indices:
            raise NotImplementedError("scatter-mul gradients with respect to the updates are "
                                      "only implemented if unique_indices=True (as in JAX)")
        t = lax.add(t, lax.mul(x, bind(scatter_add_p, zeros(_get_aval(x).shape,
                                                            _get_aval(x).dtype), idx, tu,
                                       **kw)))
    return out, t


def _scatter_extremal_jvp_for(prim):
    def jvp(ctx, primals, tangents, *, dimension_numbers, **params):
        """Each output's tangent is the mean of the tangents of the values that tie for it
        (the operand's and every update's equal to the result), as in JAX."""
        import plugax.lax as lax
        (x, idx, upd), (tx, _, tu) = primals, tangents
        dn, kw = dimension_numbers, dict(params, dimension_numbers=dimension_numbers)
        out = bind(prim, x, idx, upd, **kw)
        if type(tx) is Zero and type(tu) is Zero:
            return out, Zero.from_value(out)
        tx, tu = instantiate(tx), instantiate(tu)
        xa, ua = _get_aval(x), _get_aval(upd)
        one_x, zero_x = _full(xa, 1), zeros(xa.shape, xa.dtype)
        one_u, zero_u = _full(ua, 1), zeros(ua.shape, ua.dtype)
        read = _gather_back(xa, out, idx, ua, dn, params["mode"],
                            indices_are_sorted=params.get("indices_are_sorted", False))
        won_u = lax.eq(upd, read)
        kept_x = lax.eq(x, out)
        add = dict(kw)
        n_u = bind(scatter_add_p, zero_x, idx, _select(won_u, one_u, zero_u), **add)
        n_total = lax.add(n_u, _select(kept_x, one_x, zero_x))
        t_u = bind(scatter_add_p, zero_x, idx, _select(won_u, tu, zero_u), **add)
        t_sum = lax.add(t_u, _select(kept_x, tx, zero_x))
        safe = _select(lax.eq(n_total, zero_x), one_x, n_total)
        return out, lax.div(t_sum, safe)
    return jvp


def _full(aval, value):
    from plugax.extend import broadcast_in_dim
    return broadcast_in_dim(Array(np.asarray(value, aval.dtype)), aval.shape, ())


_JVPS: dict[Any, Callable] = {
    scatter_p: _scatter_jvp,
    scatter_add_p: linear_jvp(scatter_add_p, [0, 2]),
    scatter_mul_p: _scatter_mul_jvp,
    scatter_min_p: _scatter_extremal_jvp_for(scatter_min_p),
    scatter_max_p: _scatter_extremal_jvp_for(scatter_max_p),
}
_TRANSPOSES = {scatter_p: _scatter_transpose, scatter_add_p: _scatter_add_transpose,
               scatter_mul_p: _scatter_mul_transpose}

RULES = []
for _prim in (scatter_p, scatter_add_p, scatter_mul_p, scatter_min_p, scatter_max_p):
    _ae = _scatter_abstract_eval_for(_prim)
    RULES.append(RuleSet(primitive=_prim, impl=checked_impl(_scatter_impl_for(_prim.name), _ae),
                         abstract_eval=_ae, jvp=_JVPS[_prim], batching=_scatter_vmap_for(_prim),
                         transpose=_TRANSPOSES.get(_prim), lowering=lowering_of(_prim)))


def _scatter_front(prim):
    def front(operand: Any, scatter_indices: Any, updates: Any,
              dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
              unique_indices: bool = False, mode: Any = None) -> Any:
        return bind(prim, operand, scatter_indices, updates,
                    dimension_numbers=scatter_dnums(dimension_numbers),
                    indices_are_sorted=bool(indices_are_sorted),
                    unique_indices=bool(unique_indices), mode=GatherScatterMode.from_any(mode))
    front.__name__ = prim.name.replace("-", "_")
    front.__doc__ = (f"lax.{front.__name__} with JAX's parameters (`mode=None` drops "
                     f"out-of-range windows, as in JAX).")
    return front


scatter = _scatter_front(scatter_p)
scatter_add = _scatter_front(scatter_add_p)
scatter_mul = _scatter_front(scatter_mul_p)
scatter_min = _scatter_front(scatter_min_p)
scatter_max = _scatter_front(scatter_max_p)

LAX = {"scatter": scatter, "scatter_mul": scatter_mul, "scatter_min": scatter_min,
       "scatter_max": scatter_max}
