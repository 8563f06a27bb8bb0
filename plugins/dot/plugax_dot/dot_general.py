"""dot_general: the one contraction primitive behind dot, matmul, tensordot and einsum.

`dimension_numbers = ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))`
as in lax. The output's dimensions are the batch dimensions (in lhs_batch
order), then lhs's free dimensions, then rhs's, each in operand order. The
primitive is bilinear, so its jvp applies it to each tangent in turn and each
operand's transpose is itself a dot_general (of the cotangent with the other
operand) followed by a transpose back into that operand's dimension order.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Sequence

import ml_dtypes
import numpy as np

from plugax.extend import (Primitive, RuleSet, ShapedArray, ShapeError, all_weak, bind,
                           canonicalize_dtype, defjvp, get_aval, is_undefined_primal,
                           linear_vjp, moveaxis, promote_types)

from .lowering import dot_general_lowering
from .precision import canonicalize_precision

__all__ = ["dot_general_p", "DotDimensionNumbers", "dot_general", "RULES", "LAX"]

dot_general_p = Primitive("dot_general")


class DotDimensionNumbers(tuple):
    """((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)) of int tuples: hashable, and
    printed as JAX prints it, with the innermost sequences as lists: `(([1], [0]), ([], []))`."""

    def __new__(cls, dims: Any) -> "DotDimensionNumbers":
        (lc, rc), (lb, rb) = dims
        as_ints = lambda s: tuple(map(int, s))  # noqa: E731
        return super().__new__(cls, ((as_ints(lc), as_ints(rc)), (as_ints(lb), as_ints(rb))))

    def __str__(self) -> str:
        (lc, rc), (lb, rb) = self
        return f"(({list(lc)}, {list(rc)}), ({list(lb)}, {list(rb)}))"

    __repr__ = __str__


_ONE_AXIS = ((0,), (1,))
_NARROW_FLOATS = frozenset(np.dtype(d) for d in (np.float16, ml_dtypes.bfloat16))


def _free(ndim: int, contract: Sequence[int], batch: Sequence[int]) -> list[int]:
    return [d for d in range(ndim) if d not in contract and d not in batch]


def _output_dtype(lhs: np.dtype, rhs: np.dtype, preferred: Any) -> np.dtype:
    if preferred is not None:
        return np.dtype(preferred)
    return promote_types((lhs, False), (rhs, False))[0]


# --- abstract evaluation -------------------------------------------------------------
def _error(lhs: ShapedArray, rhs: ShapedArray, dims: Any, problem: str) -> ShapeError:
    return ShapeError(f"primitive 'dot_general' {problem}; got operands ({lhs.str_short()}, "
                      f"{rhs.str_short()}) with dimension_numbers={dims}. Fix: pass "
                      f"((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch)) naming "
                      f"distinct in-range dimensions of equal sizes, or use plugax.numpy.dot "
                      f"/ matmul / einsum")


def _check(lhs: ShapedArray, rhs: ShapedArray, dims: DotDimensionNumbers) -> None:
    (lc, rc), (lb, rb) = dims
    for name, aval, used in (("lhs", lhs, lc + lb), ("rhs", rhs, rc + rb)):
        if any(not 0 <= d < aval.ndim for d in used) or len(set(used)) != len(used):
            raise _error(lhs, rhs, dims, f"needs distinct {name} dimensions in [0, "
                                         f"{aval.ndim})")
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise _error(lhs, rhs, dims, "needs as many lhs as rhs contracting (and batch) "
                                     "dimensions")
    for kind, ls, rs in (("contracting", lc, rc), ("batch", lb, rb)):
        if any(lhs.shape[a] != rhs.shape[b] for a, b in zip(ls, rs)):
            raise _error(lhs, rhs, dims, f"needs {kind} dimensions of equal sizes")


_checked_shapes: dict = {}   # (lhs shape, rhs shape, dims) -> output shape, checked once


def _abstract_eval(ctx, lhs: ShapedArray, rhs: ShapedArray, *, dimension_numbers,
                   precision=None, preferred_element_type=None) -> ShapedArray:
    """Checks and output shape are pure Python work per (shapes, dims), not per value:
    under grad every step re-traces the same products, so each is done once."""
    key = (lhs.shape, rhs.shape, dimension_numbers)
    shape = _checked_shapes.get(key)
    if shape is None:
        _check(lhs, rhs, dimension_numbers)
        shape = _out_shape(lhs.shape, rhs.shape, dimension_numbers)
        if len(_checked_shapes) < 4096:
            _checked_shapes[key] = shape
    dtype = _output_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
    return ShapedArray(shape, dtype, lhs.weak_type and rhs.weak_type)


def _out_shape(lhs: tuple, rhs: tuple, dims: DotDimensionNumbers) -> tuple:
    (lc, rc), (lb, rb) = dims
    return tuple(lhs[d] for d in lb) + tuple(lhs[d] for d in _free(len(lhs), lc, lb)) \
        + tuple(rhs[d] for d in _free(len(rhs), rc, rb))


# --- evaluation ------------------------------------------------------------------------
def _impl(ctx, lhs, rhs, *, dimension_numbers, precision=None, preferred_element_type=None):
    """np.dot for plain matrix/vector products, tensordot for other batch-free forms, and
    one batched matmul of (B, M, K) @ (B, K, N) when there are batch dims.

    Narrow floats are computed in float32 (NumPy has no fast bf16/f16 matmul). `precision`
    is a compiler hint: NumPy already computes every product at full precision.
    """
    (lc, rc), (lb, rb) = dimension_numbers
    out_dtype = preferred_element_type if preferred_element_type is not None \
        else lhs.dtype if lhs.dtype == rhs.dtype else _output_dtype(lhs.dtype, rhs.dtype, None)
    work = np.dtype(np.float32) if out_dtype in _NARROW_FLOATS else out_dtype
    lhs = lhs if lhs.dtype == work else lhs.astype(work)
    rhs = rhs if rhs.dtype == work else rhs.astype(work)
    if not lb:
        if lc == (lhs.ndim - 1,) and rc == (0,) and rhs.ndim <= 2:
            out = np.dot(lhs, rhs)
        elif lhs.ndim == 2 and rhs.ndim == 2 and lc in _ONE_AXIS and rc in _ONE_AXIS:
            # the forms reverse mode makes (x.T @ ct, ct @ w.T): a transposed view and
            # np.dot are several times cheaper than tensordot
            out = np.dot(lhs.T if lc == (0,) else lhs, rhs.T if rc == (1,) else rhs)
        else:
            out = np.tensordot(lhs, rhs, (lc, rc))
        return out if out.dtype == out_dtype else out.astype(out_dtype)
    lf, rf = _free(lhs.ndim, lc, lb), _free(rhs.ndim, rc, rb)
    size = lambda x, ds: int(np.prod([x.shape[d] for d in ds], dtype=np.int64))  # noqa: E731
    batch = [lhs.shape[d] for d in lb]
    a = np.transpose(lhs, lb + tuple(lf) + lc).reshape(size(lhs, lb), size(lhs, lf),
                                                        size(lhs, lc))
    b = np.transpose(rhs, rb + rc + tuple(rf)).reshape(size(rhs, rb), size(rhs, rc),
                                                        size(rhs, rf))
    out = np.matmul(a, b).reshape(batch + [lhs.shape[d] for d in lf]
                                  + [rhs.shape[d] for d in rf])
    return out.astype(out_dtype, copy=False)


# --- differentiation -------------------------------------------------------------------
_jvp = defjvp(dot_general_p,
              lambda g, ans, x, y, **params: dot_general_p.bind(g, y, **params),
              lambda g, ans, x, y, **params: dot_general_p.bind(x, g, **params))


def _transpose_operand(ct: Any, other: Any, aval: ShapedArray, own: tuple, theirs: tuple,
                       own_free_first: bool, precision: Any = None) -> Any:
    """Cotangent of one operand: contract `ct` with the other operand over the other
    operand's free dims (pairing batch dims), then permute into this operand's order.

    `own` / `theirs` are (contracting, batch) dims of this and the other operand;
    `own_free_first` says whether this operand's free dims precede the other's in `ct`
    (true for lhs).
    """
    dims, perm, other_first = _transpose_plan(aval.ndim, get_aval(other).ndim, own, theirs,
                                              own_free_first)
    operands = (other, ct) if other_first else (ct, other)
    params = {"precision": precision} if precision is not None else {}
    out = dot_general_p.bind(*operands, dimension_numbers=dims,
                             preferred_element_type=aval.dtype, **params)
    if perm is None:   # the usual case: no permutation (and no import) needed
        return out
    import plugax.lax as lax
    return lax.transpose(out, perm)


@lru_cache(maxsize=1024)
def _transpose_plan(own_ndim: int, their_ndim: int, own: tuple, theirs: tuple,
                    own_free_first: bool) -> tuple[DotDimensionNumbers, tuple | None, bool]:
    """The dimension numbers of the cotangent's dot_general, the permutation back into
    this operand's order (None if none is needed), and whether the other operand goes
    first. Pure index arithmetic on ranks and dims, so it is computed once per form
    (reverse mode repeats the same ones).

    The product can be written `ct . other` or `other . ct`; they differ only in the
    order of the output dims. The first that needs no permutation is used, which saves
    a transpose for the common `x.T @ ct` cotangent of a matmul's right operand.
    """
    (oc, ob), (tc, tb) = own, theirs
    own_free = _free(own_ndim, oc, ob)
    their_free = _free(their_ndim, tc, tb)
    nb = len(ob)
    start = nb + (len(own_free) if own_free_first else 0)
    ct_their_free = tuple(range(start, start + len(their_free)))
    ct_batch = tuple(range(nb))
    # output dims as this operand's dims: batch (ob order) first; then ct's remaining
    # dims (this operand's free dims, in order) and the other's remaining dims (its
    # contracting dims in its order, each standing for its partner in `oc`), in the
    # order of the two operands
    partner = dict(zip(tc, oc))
    contracted = [partner[d] for d in sorted(tc)]
    plans = [
        (DotDimensionNumbers(((ct_their_free, tuple(their_free)), (ct_batch, tb))),
         list(ob) + own_free + contracted, False),
        (DotDimensionNumbers(((tuple(their_free), ct_their_free), (tb, ct_batch))),
         list(ob) + contracted + own_free, True)]
    for dims, out_as_own, other_first in plans:
        perm = tuple(sorted(range(len(out_as_own)), key=out_as_own.__getitem__))
        if perm == tuple(range(len(perm))):
            return dims, None, other_first
    dims, out_as_own, _ = plans[0]
    return dims, tuple(sorted(range(len(out_as_own)), key=out_as_own.__getitem__)), False


def _transpose(ctx, ct, lhs, rhs, *, dimension_numbers, precision=None,
               preferred_element_type=None):
    (lc, rc), (lb, rb) = dimension_numbers
    if is_undefined_primal(lhs) and is_undefined_primal(rhs):
        raise ShapeError("primitive 'dot_general' is linear in each operand separately; "
                         "transpose was asked to solve for both")
    if is_undefined_primal(lhs):
        return [_transpose_operand(ct, rhs, lhs.aval, (lc, lb), (rc, rb), True, precision), None]
    return [None, _transpose_operand(ct, lhs, rhs.aval, (rc, rb), (lc, lb), False, precision)]


# --- batching ---------------------------------------------------------------------------
def _vmap(ctx, args, dims, *, dimension_numbers, **params):
    """Both batched: the batch axes become a new leading batch dimension. One batched:
    its batch axis is just another free dimension of that operand."""
    (lc, rc), (lb, rb) = dimension_numbers
    (lhs, rhs), (ld, rd) = args, dims
    shift = lambda ds, b: tuple(d + (d >= b) for d in ds)  # noqa: E731
    if ld is not None and rd is not None:
        lhs, rhs = moveaxis(lhs, ld, 0), moveaxis(rhs, rd, 0)
        new = ((shift(lc, 0), shift(rc, 0)), ((0,) + shift(lb, 0), (0,) + shift(rb, 0)))
        out_dim = 0
    elif ld is not None:
        new = ((shift(lc, ld), rc), (shift(lb, ld), rb))
        lfree = _free(get_aval(lhs).ndim, new[0][0], new[1][0])
        out_dim = len(lb) + lfree.index(ld)
    else:
        new = ((lc, shift(rc, rd)), (lb, shift(rb, rd)))
        rfree = _free(get_aval(rhs).ndim, new[0][1], new[1][1])
        n_lfree = get_aval(lhs).ndim - len(lc) - len(lb)
        out_dim = len(lb) + n_lfree + rfree.index(rd)
    out = dot_general_p.bind(lhs, rhs, dimension_numbers=DotDimensionNumbers(new), **params)
    return out, out_dim


RULES = [RuleSet(primitive=dot_general_p, impl=_impl, abstract_eval=_abstract_eval, jvp=_jvp,
                 vjp=linear_vjp(dot_general_p, joint=False), batching=_vmap, transpose=_transpose,
                 lowering={"default": dot_general_lowering})]


def dot_general(lhs: Any, rhs: Any, dimension_numbers: Any, precision: Any = None,
                preferred_element_type: Any = None) -> Any:
    """lax.dot_general: contract `lhs` and `rhs` over the given dimensions.

    preferred_element_type, when given, is the output dtype; precision (None, a
    lax.Precision, a string such as "highest", or a pair) only reaches the compiler
    (XLA's precision_config), as in JAX. Each is left out of the params when None, so
    the jaxpr prints as JAX's does.
    """
    if type(dimension_numbers) is not DotDimensionNumbers:
        dimension_numbers = _as_dimension_numbers(dimension_numbers)
    params = {"dimension_numbers": dimension_numbers}
    if precision is not None:
        params["precision"] = canonicalize_precision(precision, "dot_general")
    if preferred_element_type is not None:
        params["preferred_element_type"] = canonicalize_dtype(preferred_element_type)
    return bind(dot_general_p, lhs, rhs, **params)


_dimension_numbers: dict = {}   # plain nested tuples -> DotDimensionNumbers


def _as_dimension_numbers(dims: Any) -> DotDimensionNumbers:
    """DotDimensionNumbers(dims), memoised for hashable `dims`: matmul and dot pass the
    same few plain tuples on every call, and building one walks all four sequences."""
    try:
        found = _dimension_numbers.get(dims)
    except TypeError:   # lists inside: normalise every time
        return DotDimensionNumbers(dims)
    if found is None:
        found = DotDimensionNumbers(dims)
        if len(_dimension_numbers) < 1024:
            _dimension_numbers[dims] = found
    return found


def dot(lhs: Any, rhs: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """lax.dot: vector/matrix products contracting lhs's last and rhs's first dimension."""
    lhs_ndim, rhs_ndim = get_aval(lhs).ndim, get_aval(rhs).ndim
    if not 1 <= lhs_ndim <= 2 or not 1 <= rhs_ndim <= 2:
        raise TypeError(f"lax.dot takes operands of rank 1 or 2, got ranks {lhs_ndim} and "
                        f"{rhs_ndim}; use lax.dot_general or plugax.numpy.dot")
    return dot_general(lhs, rhs, (((lhs_ndim - 1,), (0,)), ((), ())), precision,
                       preferred_element_type)


LAX = {"dot_general": dot_general, "dot": dot}
