"""Front ends of the convolution: lax.conv_general_dilated and its wrappers,
plugax.numpy.convolve / correlate.

The wrappers only resolve arguments (padding strings to pairs, dimension
numbers to permutations, precision to its canonical pair) and bind the one
primitive, so every transformation sees a single conv_general_dilated.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from plugax.extend import bind, canonicalize_dtype, get_aval, promoted_type

from .conv import conv_general_dilated_p
from .dims import (ConvDimensionNumbers, conv_dimension_numbers, conv_general_permutations,
                   dilate_dim, padtype_to_pads)

__all__ = ["conv_general_dilated", "conv", "conv_with_general_padding", "conv_transpose",
           "convolve", "correlate", "LAX", "NUMPY"]


def _precision(precision: Any, fn_name: str) -> Any:
    if precision is None:
        return None
    import plugax.lax as lax
    return lax.canonicalize_precision(precision, fn_name)


def _asarray(x: Any) -> Any:
    if hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, np.ndarray):
        return x
    import plugax.numpy as pnp
    return pnp.asarray(x)


def conv_general_dilated(lhs: Any, rhs: Any, window_strides: Sequence[int],
                         padding: str | Sequence[tuple[int, int]],
                         lhs_dilation: Sequence[int] | None = None,
                         rhs_dilation: Sequence[int] | None = None,
                         dimension_numbers: Any = None, feature_group_count: int = 1,
                         batch_group_count: int = 1, precision: Any = None,
                         preferred_element_type: Any = None) -> Any:
    """lax.conv_general_dilated: XLA's general convolution (see the JAX docs).

    String padding is resolved here against the dilated kernel, as JAX does;
    with lhs dilation it is refused (use explicit pairs or conv_transpose).
    """
    lhs, rhs = _asarray(lhs), _asarray(rhs)
    lshape, rshape = get_aval(lhs).shape, get_aval(rhs).shape
    dnums = conv_dimension_numbers(lshape, rshape, dimension_numbers)
    nsp = len(lshape) - 2
    if lhs_dilation is None:
        lhs_dilation = (1,) * nsp
    elif isinstance(padding, str) and any(d != 1 for d in lhs_dilation):
        raise ValueError("String padding is not implemented for transposed convolution "
                         "using this op. Please either exactly specify the required padding "
                         "or use conv_transpose.")
    if rhs_dilation is None:
        rhs_dilation = (1,) * nsp
    if isinstance(padding, str):
        spatial_in = [lshape[d] for d in dnums.lhs_spec[2:]]
        kernel = [dilate_dim(rshape[d], r) for d, r in zip(dnums.rhs_spec[2:], rhs_dilation)]
        padding = padtype_to_pads(spatial_in, kernel, window_strides, padding)
    else:
        try:
            padding = tuple((int(lo), int(hi)) for lo, hi in padding)
        except (ValueError, TypeError) as e:
            raise ValueError(f"padding argument to conv_general_dilated should be a string or "
                             f"a sequence of (low, high) pairs, got {padding}") from e
    if preferred_element_type is not None:
        preferred_element_type = canonicalize_dtype(preferred_element_type)
    return bind(conv_general_dilated_p, lhs, rhs,
                window_strides=tuple(int(s) for s in window_strides),
                padding=tuple(padding), lhs_dilation=tuple(int(d) for d in lhs_dilation),
                rhs_dilation=tuple(int(d) for d in rhs_dilation), dimension_numbers=dnums,
                feature_group_count=int(feature_group_count),
                batch_group_count=int(batch_group_count),
                precision=_precision(precision, "conv_general_dilated"),
                preferred_element_type=preferred_element_type)


def conv(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: str,
         precision: Any = None, preferred_element_type: Any = None) -> Any:
    """lax.conv: NCHW input, OIHW kernel, no dilation."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs: Any, rhs: Any, window_strides: Sequence[int],
                              padding: Any, lhs_dilation: Sequence[int] | None,
                              rhs_dilation: Sequence[int] | None, precision: Any = None,
                              preferred_element_type: Any = None) -> Any:
    """lax.conv_with_general_padding: lax.conv with explicit padding and dilations."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def _conv_transpose_padding(k: int, s: int, padding: Any) -> tuple[int, int]:
    """Pads of the fractionally strided conv that inverts a forward conv's shape."""
    if padding == "SAME":
        total = k + s - 2
        before = k - 1 if s > k - 1 else int(np.ceil(total / 2))
    elif padding == "VALID":
        total = k + s - 2 + max(k - s, 0)
        before = k - 1
    elif isinstance(padding, tuple):
        pads = tuple(k - p - 1 for p in padding)
        before, total = pads[0], sum(pads)
    else:
        raise ValueError(f"Invalid padding mode: {padding}")
    return before, total - before


_TRANSPOSE_DEFAULTS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                       4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}


def conv_transpose(lhs: Any, rhs: Any, strides: Sequence[int], padding: Any,
                   rhs_dilation: Sequence[int] | None = None, dimension_numbers: Any = None,
                   transpose_kernel: bool = False, precision: Any = None,
                   preferred_element_type: Any = None,
                   use_consistent_padding: bool = False) -> Any:
    """lax.conv_transpose: a fractionally strided conv (lhs dilated by `strides`).

    As in JAX, the kernel is not flipped unless transpose_kernel=True, and integer
    pads are the transposed conv's own unless use_consistent_padding=True.
    """
    import plugax.lax as lax
    lhs, rhs = _asarray(lhs), _asarray(rhs)
    ndim = get_aval(lhs).ndim
    if dimension_numbers is None:
        if ndim not in _TRANSPOSE_DEFAULTS:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = _TRANSPOSE_DEFAULTS[ndim]
    dn = conv_dimension_numbers(get_aval(lhs).shape, get_aval(rhs).shape, dimension_numbers)
    k_spatial = [get_aval(rhs).shape[d] for d in dn.rhs_spec[2:]]
    if rhs_dilation is None:
        rhs_dilation = (1,) * (ndim - 2)
    if use_consistent_padding or (isinstance(padding, str) and padding in ("SAME", "VALID")):
        per_dim = [padding] * len(strides) if isinstance(padding, str) else padding
        pads = tuple(_conv_transpose_padding(dilate_dim(k, r), s,
                                             p if isinstance(p, str) else tuple(p))
                     for k, r, s, p in zip(k_spatial, rhs_dilation, strides, per_dim))
    else:
        pads = padding
    if transpose_kernel:
        rhs = lax.rev(rhs, tuple(dn.rhs_spec[2:]))
        perm = list(range(ndim))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = perm[dn.rhs_spec[1]], perm[dn.rhs_spec[0]]
        rhs = lax.transpose(rhs, tuple(perm))
    return conv_general_dilated(lhs, rhs, (1,) * (ndim - 2), pads, strides, rhs_dilation, dn,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


# --- plugax.numpy ---------------------------------------------------------------------------
def _conv_1d(fn_name: str, a: Any, v: Any, mode: str, flip: bool, precision: Any,
             preferred_element_type: Any) -> Any:
    """One NCH conv_general_dilated. NumPy slides the shorter input along the longer;
    for correlate that swap reverses the output (correlate(v, a) == correlate(a, v)[::-1])."""
    import plugax.lax as lax
    import plugax.numpy as pnp
    a, v = pnp.asarray(a), pnp.asarray(v)
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError(f"{fn_name}() only support 1-dimensional inputs, got shapes "
                         f"{a.shape} and {v.shape}")
    if a.size == 0 or v.size == 0:
        raise ValueError(f"{fn_name}: inputs cannot be empty, got shapes {a.shape} and "
                         f"{v.shape}")
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"{fn_name}: mode must be one of ['full', 'same', 'valid'], got "
                         f"{mode!r}")
    dtype = promoted_type(fn_name, [get_aval(a), get_aval(v)])[0]
    a, v = a.astype(dtype), v.astype(dtype)
    swapped = v.shape[0] > a.shape[0]
    if swapped:
        a, v = v, a
    if flip:
        v = lax.rev(v, (0,))
    n = v.shape[0]
    pads = {"valid": (0, 0), "same": (n // 2, n - n // 2 - 1), "full": (n - 1, n - 1)}[mode]
    out = conv_general_dilated(a[None, None, :], v[None, None, :], (1,), [pads],
                               precision=precision,
                               preferred_element_type=preferred_element_type)
    out = lax.reshape(out, (out.shape[2],))
    return lax.rev(out, (0,)) if swapped and not flip else out


def convolve(a: Any, v: Any, mode: str = "full", *, precision: Any = None,
             preferred_element_type: Any = None) -> Any:
    """numpy.convolve: the discrete linear convolution of two 1-D arrays."""
    return _conv_1d("convolve", a, v, mode, True, precision, preferred_element_type)


def correlate(a: Any, v: Any, mode: str = "valid", *, precision: Any = None,
              preferred_element_type: Any = None) -> Any:
    """numpy.correlate: the cross-correlation of two 1-D arrays (no conjugation needed
    for real inputs)."""
    return _conv_1d("correlate", a, v, mode, False, precision, preferred_element_type)


LAX = {"conv_general_dilated": conv_general_dilated, "conv": conv,
       "conv_with_general_padding": conv_with_general_padding,
       "conv_transpose": conv_transpose, "ConvDimensionNumbers": ConvDimensionNumbers,
       "conv_dimension_numbers": conv_dimension_numbers,
       "conv_general_permutations": conv_general_permutations,
       "padtype_to_pads": padtype_to_pads, "conv_general_dilated_p": conv_general_dilated_p}
NUMPY = {"convolve": convolve, "correlate": correlate}
