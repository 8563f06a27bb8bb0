"""Dimension numbers and padding of convolutions and windows.

`ConvDimensionNumbers(lhs_spec, rhs_spec, out_spec)` says, as JAX's does, where
each operand keeps its dimensions: lhs_spec = (batch, feature, *spatial),
rhs_spec = (out feature, in feature, *spatial), out_spec = (batch, feature,
*spatial). Every rule works in that canonical order ("NC...", "OI...", "NC...")
by permuting with the specs, so one implementation serves NCHW, NHWC, 1-D and
3-D. Spatial dimensions are matched by their letter, in the rhs string's order
(which is why window_strides follow the kernel's spatial order).
"""
from __future__ import annotations

from typing import Any, NamedTuple, Sequence

__all__ = ["ConvDimensionNumbers", "conv_dimension_numbers", "conv_general_permutations",
           "padtype_to_pads", "dilate_dim", "window_out_dim"]


class ConvDimensionNumbers(NamedTuple):
    """Where lhs, rhs and the output keep their batch/feature/spatial dimensions."""

    lhs_spec: tuple
    rhs_spec: tuple
    out_spec: tuple


def conv_dimension_numbers(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                           dimension_numbers: Any) -> ConvDimensionNumbers:
    """ConvDimensionNumbers from None (NC..., OI..., NC...), three strings, or itself."""
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return ConvDimensionNumbers(*(tuple(map(int, s)) for s in dimension_numbers))
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(f"convolution requires lhs and rhs ndim to be equal, got "
                        f"{len(lhs_shape)} and {len(rhs_shape)} (shapes {tuple(lhs_shape)} "
                        f"and {tuple(rhs_shape)})")
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if not isinstance(dimension_numbers, (list, tuple)) or len(dimension_numbers) != 3:
        raise TypeError(f"convolution dimension_numbers must be None, a "
                        f"ConvDimensionNumbers or three strings such as ('NHWC', 'HWIO', "
                        f"'NHWC'), got {dimension_numbers!r}")
    if not all(isinstance(s, str) for s in dimension_numbers):
        if all(isinstance(s, (tuple, list)) for s in dimension_numbers):
            return ConvDimensionNumbers(*(tuple(map(int, s)) for s in dimension_numbers))
        raise TypeError(f"convolution dimension_numbers elements must be strings, got "
                        f"{dimension_numbers!r}")
    for i, spec in enumerate(dimension_numbers):
        if len(spec) != len(lhs_shape):
            raise TypeError(f"convolution dimension_numbers[{i}] must have len equal to the "
                            f"ndim of lhs and rhs, got {len(spec)} ({spec!r}) for lhs and rhs "
                            f"shapes {tuple(lhs_shape)} and {tuple(rhs_shape)}")
    return ConvDimensionNumbers(*conv_general_permutations(dimension_numbers))


def conv_general_permutations(dimension_numbers: Sequence[str]) -> tuple:
    """The three specs as permutations into the canonical (N, C, *spatial) order."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    pairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (a, b) in enumerate(pairs):
        spec = dimension_numbers[i]
        if not spec.count(a) == spec.count(b) == 1:
            raise TypeError(f"convolution dimension_numbers[{i}] must contain the characters "
                            f"'{a}' and '{b}' exactly once, got {spec!r}")
        if len(set(spec)) != len(spec):
            raise TypeError(f"convolution dimension_numbers[{i}] cannot have duplicate "
                            f"characters, got {spec!r}")
    spatial = [set(s) - set(p) for s, p in zip(dimension_numbers, pairs)]
    if not spatial[0] == spatial[1] == spatial[2]:
        raise TypeError(f"convolution dimension_numbers elements must each have the same set "
                        f"of spatial characters, got {tuple(dimension_numbers)}")

    def perm(spec: str, pair: tuple) -> tuple:
        dims = [i for i, c in enumerate(spec) if c not in pair]
        if spec is not rhs_spec:
            dims.sort(key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1])) + tuple(dims)

    return tuple(perm(s, p) for s, p in zip(dimension_numbers, pairs))


def dilate_dim(d: int, dilation: int) -> int:
    """Size of a dimension of size d with dilation-1 holes between elements."""
    return 0 if d == 0 else 1 + dilation * (d - 1)


def window_out_dim(padded: int, window: int, stride: int) -> int:
    """Number of windows of size `window` stepping by `stride` in `padded` elements."""
    return 0 if padded < window else (padded - window) // stride + 1


def padtype_to_pads(in_shape: Sequence[int], window_shape: Sequence[int],
                    window_strides: Sequence[int], padding: str) -> list[tuple[int, int]]:
    """(low, high) pads for "VALID" (none), "SAME" (output = ceil(in / stride), the odd
    element at the end) and "SAME_LOWER" (the odd element at the start)."""
    if not isinstance(padding, str):
        raise TypeError(f"padding must be 'SAME', 'SAME_LOWER' or 'VALID', got {padding!r}")
    kind = padding.upper()
    if kind == "VALID":
        return [(0, 0)] * len(in_shape)
    if kind not in ("SAME", "SAME_LOWER"):
        raise RuntimeError(f"Unrecognized padding type: expected 'VALID', 'SAME' or "
                           f"'SAME_LOWER', got {padding!r}")
    pads = []
    for n, k, s in zip(in_shape, window_shape, window_strides):
        out = -(-n // s)
        total = max((out - 1) * s + k - n, 0)
        low = total // 2 if kind == "SAME" else total - total // 2
        pads.append((low, total - low))
    return pads
