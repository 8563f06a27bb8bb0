"""The `fft` primitive: XLA's FFT over the last 1-3 axes (lax.fft), and `plugax.lax.fft`.

One primitive with a `fft_type` (FFT, IFFT, RFFT, IRFFT) and the transform's
`fft_lengths`, as JAX's, because that is what StableHLO has (`stablehlo.fft`) and
every NumPy function (fft2, rfftn, hfft...) is a few lines on top of it.

Why each rule is what it is:
- eager: numpy.fft in the input's precision class, cast to JAX's dtype (NumPy
  computes complex128; complex64 in must give complex64 out).
- jvp: the transform is linear, so the tangent is the transform of the tangent.
- transpose: with JAX's convention (transpose, never adjoint; see docs/complex-and-fft.md)
  FFT and IFFT are symmetric matrices, so each is its own transpose. RFFT is
  "real -> complex, FFT, keep the first n//2+1 bins": its transpose is N * IRFFT of the
  conjugated cotangent with the bins that stand for two (every one but DC and, for
  even n, Nyquist) halved; IRFFT's is the conjugate of RFFT(ct) / N with those bins
  doubled. The kit's dot-product test (pairing Re(sum(a * b))) checks both.
- vmap: the transform acts on the trailing axes, so the batch axis goes first.
"""
from __future__ import annotations

import enum
import math
from typing import Any, Sequence

import numpy as np

from plugax.extend import (COMPLEX_OF_REAL, REAL_OF_COMPLEX, Primitive, RuleSet, ShapedArray,
                           canonicalize_dtype, deflinear, get_aval, moveaxis, to_inexact_dtype)

__all__ = ["FftType", "fft_p", "fft", "RULES"]


class FftType(enum.IntEnum):
    """The kind of transform, with JAX's (and XLA's) numbering."""
    FFT = 0      # complex -> complex, forward
    IFFT = 1     # complex -> complex, inverse
    RFFT = 2     # real -> complex (the n // 2 + 1 non-redundant bins)
    IRFFT = 3    # complex (n // 2 + 1 bins) -> real


def _fft_type(value: Any) -> FftType:
    if isinstance(value, str):
        try:
            return FftType[value.upper()]
        except KeyError:
            raise ValueError(f"Unknown FFT type '{value}'") from None
    if isinstance(value, (FftType, int)) and not isinstance(value, bool):
        return FftType(value)
    raise TypeError(f"Unknown FFT type value '{value}'")


fft_p = Primitive("fft")


def _abstract_eval(ctx, x: ShapedArray, *, fft_type: FftType,
                   fft_lengths: tuple) -> ShapedArray:
    """JAX's shape and dtype rules (its ValueErrors and wording)."""
    k = len(fft_lengths)
    if k > x.ndim:
        raise ValueError(f"FFT input shape {x.shape} must have at least as many input "
                         f"dimensions as fft_lengths {fft_lengths}.")
    if not 1 <= k <= 3:
        raise ValueError(f"primitive 'fft' transforms 1 to 3 trailing axes (XLA's limit), "
                         f"got fft_lengths {fft_lengths}; plugax.numpy.fft.fftn splits more")
    minor = x.shape[x.ndim - k:]
    if fft_type == FftType.RFFT:
        if x.dtype not in COMPLEX_OF_REAL or x.dtype.itemsize < 4:
            raise ValueError(f"RFFT input must be float32 or float64, got {x.dtype}")
        if minor != fft_lengths:
            raise ValueError(f"RFFT input shape {x.shape} minor dimensions must be equal to "
                             f"fft_lengths {fft_lengths}")
        shape = x.shape[:x.ndim - k] + fft_lengths[:-1] + (fft_lengths[-1] // 2 + 1,)
        return ShapedArray(shape, COMPLEX_OF_REAL[x.dtype])
    if x.dtype.kind != "c":
        name = "IRFFT" if fft_type == FftType.IRFFT else "FFT"
        raise ValueError(f"{name} input must be complex64 or complex128, got {x.dtype}")
    if fft_type == FftType.IRFFT:
        if minor[:-1] != fft_lengths[:-1]:
            raise ValueError(f"IRFFT input shape {x.shape} minor dimensions must be equal "
                             f"to all except the last fft_length, got "
                             f"fft_lengths={fft_lengths}")
        return ShapedArray(x.shape[:x.ndim - k] + fft_lengths, REAL_OF_COMPLEX[x.dtype])
    if minor != fft_lengths:
        raise ValueError(f"FFT input shape {x.shape} minor dimensions must be equal to "
                         f"fft_lengths {fft_lengths}")
    return ShapedArray(x.shape, x.dtype)


def _impl(ctx, x: np.ndarray, *, fft_type: FftType, fft_lengths: tuple) -> np.ndarray:
    axes = tuple(range(x.ndim - len(fft_lengths), x.ndim))
    if fft_type == FftType.FFT:
        out, dtype = np.fft.fftn(x, axes=axes), x.dtype
    elif fft_type == FftType.IFFT:
        out, dtype = np.fft.ifftn(x, axes=axes), x.dtype
    elif fft_type == FftType.RFFT:
        out, dtype = np.fft.rfftn(x, axes=axes), COMPLEX_OF_REAL[x.dtype]
    else:
        # numpy.fft.irfftn reads only the bins it needs, as XLA does
        out, dtype = np.fft.irfftn(x, s=fft_lengths, axes=axes), REAL_OF_COMPLEX[x.dtype]
    return np.asarray(out).astype(dtype, copy=False)


def _double_bins(x: Any, n: int, factor: float) -> Any:
    """x (last axis: the n // 2 + 1 bins of a length-n real transform) with every bin
    that stands for two (all but DC, and Nyquist when n is even) times `factor`."""
    import plugax.numpy as pnp
    m = get_aval(x).shape[-1]
    weights = np.full((m,), factor)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    dtype = REAL_OF_COMPLEX[get_aval(x).dtype]
    return pnp.multiply(x, pnp.asarray(weights.astype(dtype)))


def _transpose(ctx, ct: Any, x: Any, *, fft_type: FftType, fft_lengths: tuple) -> list:
    import plugax.lax as lax
    n, size = fft_lengths[-1], math.prod(fft_lengths)
    if fft_type == FftType.RFFT:
        halved = _double_bins(lax.conj(ct), n, 0.5)
        out = fft_p.bind(halved, fft_type=FftType.IRFFT, fft_lengths=fft_lengths)
        return [lax.mul(out, np.asarray(size, get_aval(out).dtype))]
    if fft_type == FftType.IRFFT:
        spectrum = fft_p.bind(ct, fft_type=FftType.RFFT, fft_lengths=fft_lengths)
        doubled = _double_bins(spectrum, n, 2.0)
        scaled = lax.mul(doubled, np.asarray(1 / size, get_aval(doubled).dtype))
        return [lax.conj(scaled)]
    return [fft_p.bind(ct, fft_type=fft_type, fft_lengths=fft_lengths)]


def _batching(ctx, args: Sequence[Any], dims: Sequence[Any], **params: Any) -> tuple:
    x, d = args[0], dims[0]
    return fft_p.bind(moveaxis(x, d, 0), **params), 0


def _lowering(ctx, x, *, fft_type: FftType, fft_lengths: tuple):
    hlo = ctx.hlo
    return hlo.fft(x, hlo.FftTypeAttr.get(FftType(fft_type).name),
                   ctx.ir.DenseI64ArrayAttr.get([int(n) for n in fft_lengths]))


def _lowering_gpu(ctx, x, *, fft_type: FftType, fft_lengths: tuple):
    """On GPUs, a multi-axis IRFFT as JAX lowers it there (cuFFT's multi-axis C2R can
    overwrite its input): an IFFT over the outer axes, with the last axis moved out of
    the way, then a 1-D IRFFT over the last axis."""
    if FftType(fft_type) != FftType.IRFFT or len(fft_lengths) == 1:
        return _lowering(ctx, x, fft_type=fft_type, fft_lengths=fft_lengths)
    hlo, ir = ctx.hlo, ctx.ir
    rank = len(ctx.avals_in[0].shape)
    target = rank - len(fft_lengths)
    perm_out = list(range(rank))
    perm_out.insert(target, perm_out.pop(-1))
    x = hlo.transpose(x, ir.DenseI64ArrayAttr.get(perm_out))
    x = hlo.fft(x, hlo.FftTypeAttr.get("IFFT"),
                ir.DenseI64ArrayAttr.get([int(n) for n in fft_lengths[:-1]]))
    perm_in = list(range(rank))
    perm_in.append(perm_in.pop(target))
    x = hlo.transpose(x, ir.DenseI64ArrayAttr.get(perm_in))
    return hlo.fft(x, hlo.FftTypeAttr.get("IRFFT"),
                   ir.DenseI64ArrayAttr.get([int(fft_lengths[-1])]))


RULES = [RuleSet(fft_p, impl=_impl, abstract_eval=_abstract_eval, jvp=deflinear(fft_p),
                 transpose=_transpose, batching=_batching,
                 lowering={"default": _lowering, "gpu": _lowering_gpu,
                           "cuda": _lowering_gpu, "rocm": _lowering_gpu})]


def fft(x: Any, fft_type: FftType | str, fft_lengths: Sequence[int]) -> Any:
    """lax.fft: the transform `fft_type` over the trailing len(fft_lengths) axes. The
    operand is converted first, as JAX's: to complex for FFT/IFFT/IRFFT, to its
    inexact dtype for RFFT (which refuses complex)."""
    import plugax.lax as lax
    import plugax.numpy as pnp
    kind = _fft_type(fft_type)
    x = pnp.asarray(x)
    dtype = get_aval(x).dtype
    if kind == FftType.RFFT:
        if dtype.kind == "c":
            raise ValueError("only real valued inputs supported for rfft")
        x = lax.convert_element_type(x, to_inexact_dtype(dtype))
    elif dtype.kind != "c":
        real = to_inexact_dtype(dtype)
        x = lax.convert_element_type(x, canonicalize_dtype(COMPLEX_OF_REAL[real]))
    lengths = tuple(int(n) for n in fft_lengths)
    if not lengths:
        return x
    return fft_p.bind(x, fft_type=kind, fft_lengths=lengths)
