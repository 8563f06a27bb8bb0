"""The rest of JAX's dot-related lax names: batch_matmul, ragged_dot and
ragged_dot_general, and the types JAX's signatures mention (DotDimensionNumbers,
PrecisionLike, DotAlgorithm, DotAlgorithmPreset, RaggedDotDimensionNumbers, Tolerance,
AccuracyMode).

Why compositions: a ragged dot is a dot_general per group of rows (or of contracted
entries); here every group's product is formed with one dot_general and the rows are
then picked by a mask built from `group_sizes`, so the derivatives (with respect to
both operands), vmap and the lowering are dot_general's and select's. That costs
`groups` times the FLOPs of a dense dot, which is the price of having no grouped-GEMM
kernel on the CPU; the values are JAX's.

DotAlgorithm and DotAlgorithmPreset are accepted wherever `precision=` is; like a
Precision, they are hints to the compiler that do not change results on the CPU.
"""
from __future__ import annotations

import dataclasses
import enum
from typing import Any, NamedTuple, Sequence, Union

import numpy as np

from plugax.extend import get_aval

from .precision import Precision

__all__ = ["LAX"]

DotDimensionNumbers = tuple[tuple[Sequence[int], Sequence[int]],
                            tuple[Sequence[int], Sequence[int]]]


class DotAlgorithm(NamedTuple):
    """An explicit dot algorithm (operand storage types, accumulation type, passes); a
    hint to the compiler, as in JAX."""

    lhs_precision_type: Any
    rhs_precision_type: Any
    accumulation_type: Any
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False

    is_dot_algorithm = True


class DotAlgorithmPreset(enum.Enum):
    """JAX's named dot algorithms (a hint to the compiler, as `Precision` is)."""

    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()

    is_dot_algorithm = True

    def __repr__(self) -> str:
        return f"DotAlgorithmPreset.{self.name}"

    def __str__(self) -> str:
        return self.name


PrecisionLike = Union[None, str, Precision, tuple[str, str], tuple[Precision, Precision],
                      DotAlgorithm, DotAlgorithmPreset]


class AccuracyMode(enum.Enum):
    """How accurately a transcendental may be computed (JAX's `accuracy=` hint)."""

    HIGHEST = 1
    DEFAULT = 2


class Tolerance:
    """An accuracy target for a transcendental (`accuracy=` hint): atol, rtol, ulps."""

    def __init__(self, atol: float = 0.0, rtol: float = 0.0, ulps: int = 0):
        if atol < 0.0 or rtol < 0.0 or ulps < 0:
            raise ValueError("Tolerances must be non-negative.")
        if atol == 0.0 and rtol == 0.0 and ulps == 0:
            raise ValueError("At least one of atol, rtol, or ulps must be set.")
        self.atol, self.rtol, self.ulps = atol, rtol, ulps

    def __repr__(self) -> str:
        return f"Tolerance(atol={self.atol}, rtol={self.rtol}, ulps={self.ulps})"


@dataclasses.dataclass(frozen=True)
class RaggedDotDimensionNumbers:
    """ragged_dot_general's dimensions: `dot_dimension_numbers` as dot_general's, the
    lhs's ragged dimension(s), and the rhs's group dimension(s) (none when the ragged
    dimension is a contracting or batch one)."""

    dot_dimension_numbers: Any
    lhs_ragged_dimensions: Sequence[int]
    rhs_group_dimensions: Sequence[int]


def batch_matmul(lhs: Any, rhs: Any, precision: Any = None) -> Any:
    """Matrix products of the last two axes, batched over the leading ones (of equal
    sizes, no broadcasting, as in JAX)."""
    import plugax.lax as lax
    la, ra = get_aval(lhs), get_aval(rhs)
    if min(la.ndim, ra.ndim) < 2:
        raise ValueError(f"Arguments to batch_matmul must be at least 2D, got "
                         f"{la.ndim}, {ra.ndim}")
    if la.ndim != ra.ndim:
        raise ValueError(f"Arguments to batch_matmul must have same ndim, got "
                         f"{la.ndim}, {ra.ndim}")
    batch = tuple(range(la.ndim - 2))
    return lax.dot_general(lhs, rhs, (((la.ndim - 1,), (ra.ndim - 2,)), (batch, batch)),
                           precision=precision)


def _group_mask(group_sizes: Any, n: int) -> Any:
    """bool[g, n]: position j of the ragged axis belongs to group i (positions past the
    last group belong to none)."""
    import plugax.lax as lax
    import plugax.numpy as jnp
    sizes = jnp.asarray(group_sizes)
    ends = jnp.cumsum(sizes)
    starts = ends - sizes
    pos = lax.broadcasted_iota(get_aval(ends).dtype, (get_aval(sizes).shape[0], n), 1)
    return (pos >= starts[:, None]) & (pos < ends[:, None])


def ragged_dot(lhs: Any, rhs: Any, group_sizes: Any, precision: Any = None,
               preferred_element_type: Any = None, group_offset: Any = None) -> Any:
    """out[m] = lhs[m] @ rhs[g(m)], where g(m) is the group of row m: the rows come in
    consecutive groups of `group_sizes` (lhs: [m, k], rhs: [g, k, n], group_sizes: [g]);
    rows past the last group are zero."""
    dn = RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), (0,), (0,))
    return ragged_dot_general(lhs, rhs, group_sizes, dn, precision, preferred_element_type,
                              group_offset)


def ragged_dot_general(lhs: Any, rhs: Any, group_sizes: Any,
                       ragged_dot_dimension_numbers: RaggedDotDimensionNumbers,
                       precision: Any = None, preferred_element_type: Any = None,
                       group_offset: Any = None) -> Any:
    """JAX's ragged_dot_general in its three modes: a ragged non-contracting lhs
    dimension with an rhs group dimension (ragged_dot), a ragged contracting dimension
    (each group contracts its own slice; the result gains a leading group axis), and a
    ragged batch dimension (dot_general's values); batch dimensions are mapped over, with
    group_sizes given per batch entry ([b..., g]) or shared ([g])."""
    import plugax.lax as lax
    import plugax.numpy as jnp
    if group_offset is not None:
        raise NotImplementedError("ragged_dot: group_offset (for sharded groups) is not "
                                  "supported by plugax")
    dn = ragged_dot_dimension_numbers
    (lc, rc), (lb, rb) = dn.dot_dimension_numbers
    lc, rc, lb, rb = (tuple(int(a) for a in t) for t in (lc, rc, lb, rb))
    ragged, groups = tuple(dn.lhs_ragged_dimensions), tuple(dn.rhs_group_dimensions)
    la, ra = get_aval(lhs), get_aval(rhs)
    if len(ragged) != 1:
        raise TypeError(f"ragged_dot_general needs exactly one lhs ragged dimension, got "
                        f"{ragged}")
    r = ragged[0] % la.ndim
    g = get_aval(group_sizes).shape[-1]
    if r in lb:          # a ragged batch dimension: each group is a run of batch entries,
        # each multiplied as dot_general would (JAX's values)
        return lax.dot_general(lhs, rhs, ((lc, rc), (lb, rb)), precision=precision,
                               preferred_element_type=preferred_element_type)
    if lb:               # batch dimensions: map over the first (group sizes per batch entry,
        # or shared), the result's group axis (ragged contraction) staying in front
        import plugax
        bl, br = lb[0], rb[0]
        sizes = jnp.asarray(group_sizes)
        inner_dn = RaggedDotDimensionNumbers(
            ((tuple(c - (c > bl) for c in lc), tuple(c - (c > br) for c in rc)),
             (tuple(b - (b > bl) for b in lb[1:]), tuple(b - (b > br) for b in rb[1:]))),
            (r - (r > bl),), tuple(d - (d > br) for d in (a % ra.ndim for a in groups)))
        inner = lambda a, b, s: ragged_dot_general(  # noqa: E731
            a, b, s, inner_dn, precision, preferred_element_type)
        return plugax.vmap(inner, in_axes=(bl, br, 0 if sizes.ndim > 1 else None),
                           out_axes=0 if r not in lc else 1)(lhs, rhs, sizes)
    if get_aval(group_sizes).ndim != 1:
        raise NotImplementedError("ragged_dot_general: group_sizes with dimensions other "
                                  "than the batch dimensions and the groups is not "
                                  "supported by plugax")
    mask = _group_mask(group_sizes, la.shape[r])
    dtype = preferred_element_type
    if r not in lc:      # ragged rows: every group's product, then pick each row's group
        if len(groups) != 1:
            raise TypeError("ragged_dot_general with a ragged non-contracting dimension "
                            "needs one rhs group dimension")
        gd = groups[0] % ra.ndim
        rc_in = tuple(c - (c > gd) for c in rc)
        rhs_groups = jnp.moveaxis(rhs, gd, 0)      # [g, ...rhs without group]
        per_group = lax.dot_general(lhs, rhs_groups, ((lc, tuple(c + 1 for c in rc_in)),
                                                      ((), ())),
                                    precision=precision, preferred_element_type=dtype)
        # per_group: lhs free dims, then g, then rhs free dims; the ragged axis is among
        # the lhs free dims at position r minus the contracted dims before it
        lhs_free = [d for d in range(la.ndim) if d not in lc]
        pos, n_lhs = lhs_free.index(r), len(lhs_free)
        shape = [1] * get_aval(per_group).ndim
        shape[pos], shape[n_lhs] = la.shape[r], g
        m = jnp.reshape(jnp.transpose(mask), shape)     # [.., m, .., g, ..]
        picked = jnp.where(m, per_group, jnp.zeros((), get_aval(per_group).dtype))
        return jnp.sum(picked, axis=n_lhs, dtype=get_aval(per_group).dtype)
    # ragged contracting dimension: group i contracts over its own entries only
    if groups:
        raise TypeError("ragged_dot_general with a ragged contracting dimension takes no "
                        "rhs group dimension")
    shape = [1] * la.ndim
    shape[r] = la.shape[r]
    outs = [lax.dot_general(jnp.where(jnp.reshape(mask[i], shape), lhs,
                                      jnp.zeros((), la.dtype)), rhs, ((lc, rc), ((), ())),
                            precision=precision, preferred_element_type=dtype)
            for i in range(g)]
    return jnp.stack(outs)


def scaled_dot(lhs: Any, rhs: Any, *, lhs_scale: Any = None, rhs_scale: Any = None,
               dimension_numbers: Any = None, preferred_element_type: Any = None) -> Any:
    """(lhs * lhs_scale) @ (rhs * rhs_scale) by dot_general, each scale repeated along the
    contracting dimension over sub-channels of (operand size / scale size) entries; the
    product is computed in float32 and given in `preferred_element_type` (JAX's default:
    bfloat16)."""
    import plugax.lax as lax
    import plugax.numpy as jnp
    la, ra = get_aval(lhs), get_aval(rhs)
    if dimension_numbers is None:
        if la.ndim == ra.ndim == 2:
            dimension_numbers = (((1,), (0,)), ((), ()))
        elif la.ndim == ra.ndim == 3:
            dimension_numbers = (((2,), (1,)), ((0,), (0,)))
        else:
            raise TypeError(f"scaled_dot needs dimension_numbers for operands of ranks "
                            f"{la.ndim} and {ra.ndim}")
    (lc, rc), _ = dimension_numbers

    def scaled(x, scale, contracting):
        x = lax.convert_element_type(x, np.float32)
        if scale is None:
            return x
        (axis,) = contracting
        n, m = get_aval(x).shape[axis], get_aval(scale).shape[axis]
        if m == 0 or n % m:
            raise TypeError(f"scaled_dot: the operand's contracting size {n} must be a "
                            f"multiple of its scale's ({m})")
        return x * jnp.repeat(lax.convert_element_type(scale, np.float32), n // m, axis=axis)
    out = lax.dot_general(scaled(lhs, lhs_scale, lc), scaled(rhs, rhs_scale, rc),
                          dimension_numbers, preferred_element_type=np.float32)
    import plugax.numpy as pnp
    return lax.convert_element_type(out, pnp.bfloat16 if preferred_element_type is None
                                    else preferred_element_type)


LAX: dict[str, Any] = {
    "batch_matmul": batch_matmul, "scaled_dot": scaled_dot, "ragged_dot": ragged_dot,
    "ragged_dot_general": ragged_dot_general, "DotDimensionNumbers": DotDimensionNumbers,
    "DotAlgorithm": DotAlgorithm, "DotAlgorithmPreset": DotAlgorithmPreset,
    "PrecisionLike": PrecisionLike, "AccuracyMode": AccuracyMode, "Tolerance": Tolerance,
    "RaggedDotDimensionNumbers": RaggedDotDimensionNumbers,
}
