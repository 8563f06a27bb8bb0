"""The rest of JAX's convolution lax names: conv_general_dilated_patches (im2col),
conv_general_dilated_local (unshared convolution), the shape calculators
conv_shape_tuple / conv_general_shape_tuple / conv_transpose_shape_tuple /
reduce_window_shape_tuple, and the ConvGeneralDilatedDimensionNumbers type.

Why compositions: JAX builds patches as a grouped convolution with a one-hot kernel
(each output channel copies one input channel at one window offset), and the local
convolution as patches contracted with a per-position kernel by dot_general; done the
same way here, their derivatives, vmap and lowering are conv_general_dilated's and
dot_general's, and the feature order of the patches is JAX's (input channel slowest).
"""
from __future__ import annotations

import math
from typing import Any, Sequence, Union

import numpy as np

from plugax.extend import get_aval

from .api import _conv_transpose_padding
from .dims import (ConvDimensionNumbers, conv_dimension_numbers, conv_general_permutations,
                   dilate_dim, padtype_to_pads)

__all__ = ["LAX"]

ConvGeneralDilatedDimensionNumbers = Union[tuple[str, str, str], ConvDimensionNumbers, None]


def conv_general_dilated_patches(lhs: Any, filter_shape: Sequence[int],
                                 window_strides: Sequence[int], padding: Any,
                                 lhs_dilation: Sequence[int] | None = None,
                                 rhs_dilation: Sequence[int] | None = None,
                                 dimension_numbers: Any = None, precision: Any = None,
                                 preferred_element_type: Any = None) -> Any:
    """The patches a convolution with a `filter_shape` window would see: the output's
    feature dimension holds, for each input channel (slowest) and window offset, the
    input value there (C * prod(filter_shape) features)."""
    import plugax.lax as lax
    import plugax.numpy as jnp
    aval = get_aval(lhs)
    filter_shape = tuple(int(k) for k in filter_shape)
    dn = conv_dimension_numbers(aval.shape, (1, 1) + filter_shape, dimension_numbers)
    lhs_spec, rhs_spec, _ = dn
    size = math.prod(filter_shape)
    channels = aval.shape[lhs_spec[1]]
    eye = np.eye(size, dtype=aval.dtype)
    rhs = np.broadcast_to(eye, (channels, size, size)).reshape(
        (channels * size, 1) + filter_shape)
    rhs = jnp.moveaxis(jnp.asarray(rhs), (0, 1), (rhs_spec[0], rhs_spec[1]))
    return lax.conv_general_dilated(
        lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation, dimension_numbers=dn,
        precision=None if precision is None else (precision, lax.Precision.DEFAULT),
        feature_group_count=channels, preferred_element_type=preferred_element_type)


def conv_general_dilated_local(lhs: Any, rhs: Any, window_strides: Sequence[int],
                               padding: Any, filter_shape: Sequence[int],
                               lhs_dilation: Sequence[int] | None = None,
                               rhs_dilation: Sequence[int] | None = None,
                               dimension_numbers: Any = None, precision: Any = None) -> Any:
    """An unshared convolution: every output position has its own kernel. `rhs` holds,
    in rhs_spec's layout, (out features, C * prod(filter_shape) in features, *output
    spatial); the patches of `lhs` are contracted with it position by position."""
    import plugax.lax as lax
    import plugax.numpy as jnp
    c_precision = lax.canonicalize_precision(precision)
    lhs_precision = None if c_precision is None else c_precision[0]
    patches = conv_general_dilated_patches(lhs, filter_shape, window_strides, padding,
                                           lhs_dilation, rhs_dilation, dimension_numbers,
                                           lhs_precision)
    _, rhs_spec, out_spec = conv_dimension_numbers(get_aval(lhs).shape,
                                                   (1, 1) + tuple(filter_shape),
                                                   dimension_numbers)
    lhs_b, rhs_b = list(out_spec[2:]), list(rhs_spec[2:])
    rhs_b = [rhs_b[i] for i in sorted(range(len(rhs_b)), key=lambda k: lhs_b[k])]
    lhs_b = sorted(lhs_b)
    dn = (([out_spec[1]], [rhs_spec[1]]), (lhs_b, rhs_b))
    out = lax.dot_general(patches, rhs, dn, precision=precision)
    return jnp.moveaxis(out, (-2, -1), (out_spec[0], out_spec[1]))


def conv_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                     strides: Sequence[int], pads: Any, batch_group_count: int = 1
                     ) -> tuple[int, ...]:
    """The output shape of a convolution in the canonical (N, C, *spatial) layout."""
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError(f"Wrong number of explicit pads for convolution: expected "
                        f"{len(lhs_shape) - 2}, got {len(pads)}.")
    padded = [n + lo + hi for n, (lo, hi) in zip(lhs_shape[2:], pads)]
    if any(p < 0 for p in padded):
        raise ValueError(f"Negative padding is larger than the size of the corresponding "
                         f"dimension: got padding={pads} for lhs_shape[2:]="
                         f"{tuple(lhs_shape[2:])}")
    space = [max(0, (p - k) // s + 1) for p, k, s in zip(padded, rhs_shape[2:], strides)]
    batch = lhs_shape[0]
    if batch_group_count > 1:
        if batch % batch_group_count:
            raise ValueError(f"batch_group_count {batch_group_count} must divide the lhs "
                             f"batch dimension {batch}")
        batch //= batch_group_count
    return (int(batch), int(rhs_shape[0]), *space)


def conv_general_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                             window_strides: Sequence[int], padding: Any,
                             dimension_numbers: Sequence[str]) -> tuple[int, ...]:
    """conv_shape_tuple in the layout `dimension_numbers` names."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    out = conv_shape_tuple([lhs_shape[i] for i in lhs_perm], [rhs_shape[i] for i in rhs_perm],
                           window_strides, padding)
    return tuple(int(out[i]) for i in np.argsort(out_perm))


def conv_transpose_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                               window_strides: Sequence[int], padding: Any,
                               dimension_numbers: Sequence[str]) -> tuple[int, ...]:
    """The output shape of lax.conv_transpose, in the layout `dimension_numbers` names."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    lhs_t, rhs_t = [lhs_shape[i] for i in lhs_perm], [rhs_shape[i] for i in rhs_perm]
    if isinstance(padding, str):
        padding = [_conv_transpose_padding(k, s, padding)
                   for k, s in zip(rhs_t[2:], window_strides)]
    total = [sum(p) for p in padding]
    space = [(i - 1) * s - k + 2 + p
             for i, k, s, p in zip(lhs_t[2:], rhs_t[2:], window_strides, total)]
    out = (lhs_t[0], rhs_t[0], *space)
    return tuple(int(out[i]) for i in np.argsort(out_perm))


def reduce_window_shape_tuple(operand_shape: Sequence[int], window_dimensions: Sequence[int],
                              window_strides: Sequence[int], padding: Sequence[Any],
                              base_dilation: Sequence[int] | None = None,
                              window_dilation: Sequence[int] | None = None
                              ) -> tuple[int, ...]:
    """The output shape of lax.reduce_window with explicit (low, high) padding."""
    if base_dilation is not None:
        operand_shape = [dilate_dim(n, d) for n, d in zip(operand_shape, base_dilation)]
    if window_dilation is not None:
        window_dimensions = [dilate_dim(n, d) for n, d in zip(window_dimensions,
                                                              window_dilation)]
    return tuple(int((n + lo + hi - w) // s + 1) for n, (lo, hi), w, s in
                 zip(operand_shape, padding, window_dimensions, window_strides))


LAX: dict[str, Any] = {
    "conv_general_dilated_patches": conv_general_dilated_patches,
    "conv_general_dilated_local": conv_general_dilated_local,
    "conv_shape_tuple": conv_shape_tuple, "conv_general_shape_tuple": conv_general_shape_tuple,
    "conv_transpose_shape_tuple": conv_transpose_shape_tuple,
    "reduce_window_shape_tuple": reduce_window_shape_tuple,
    "ConvGeneralDilatedDimensionNumbers": ConvGeneralDilatedDimensionNumbers,
}
