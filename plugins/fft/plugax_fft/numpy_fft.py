"""plugax.numpy.fft: NumPy's FFT functions on the `fft` primitive, with JAX's behaviour.

Why each function goes through one core (`_fft_core`): XLA transforms only the
trailing axes, at most three at once, so every call moves its `axes` to the end,
crops or zero-pads them to `s` (or `n`), transforms, applies `norm`, and moves the
axes back; more than three axes are transformed three (or two) at a time, as JAX
does. The frequency helpers and shifts are plain array arithmetic.
"""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from plugax.extend import default_float_dtype, get_aval

from .primitive import FftType, fft as lax_fft

__all__ = ["NUMPY_FFT"]


# a complex dtype's real partner (the dtype of norm factors and of ihfft's 1/n)
REAL = {np.dtype(np.complex64): np.dtype(np.float32),
        np.dtype(np.complex128): np.dtype(np.float64)}


def _pnp():
    import plugax.numpy as pnp
    return pnp


def _norm_factor(s: Sequence[int], name: str, norm: str | None, dtype: np.dtype) -> Any:
    """The factor `norm` asks for ("backward": none; "ortho": 1/sqrt(N), "forward": 1/N
    on forward transforms, and their inverses on inverse ones)."""
    if norm is None or norm == "backward":
        return None
    size = float(np.prod(s))
    inverse = name.startswith("i")
    if norm == "ortho":
        factor = np.sqrt(size) if inverse else 1 / np.sqrt(size)
    elif norm == "forward":
        factor = size if inverse else 1 / size
    else:
        raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or '
                         f'"forward".')
    return np.asarray(factor, dtype)


def _fft_nd(x: Any, kind: FftType, s: Sequence[int]) -> Any:
    """The transform over the trailing len(s) axes, three (or two) axes at a time when
    there are more than three (XLA's limit), as JAX's _fft_core_nd."""
    pnp = _pnp()
    if len(s) <= 3:
        return lax_fft(x, kind, tuple(s))
    n = 2 if len(s) == 4 else 3
    ndim = get_aval(x).ndim
    src = tuple(range(ndim - len(s), ndim - n))
    dst = tuple(range(ndim - len(s) + n, ndim))
    if kind in (FftType.RFFT, FftType.FFT):
        x = lax_fft(x, kind, tuple(s)[-n:])
        x = pnp.moveaxis(x, src, dst)
        x = _fft_nd(x, FftType.FFT, s[:-n])
        return pnp.moveaxis(x, dst, src)
    x = pnp.moveaxis(x, src, dst)
    x = _fft_nd(x, FftType.IFFT, s[:-n])
    x = pnp.moveaxis(x, dst, src)
    return lax_fft(x, kind, tuple(s)[-n:])


def _fft_core(name: str, kind: FftType, a: Any, s: Sequence[int] | None,
              axes: Sequence[int] | None, norm: str | None) -> Any:
    pnp = _pnp()
    arr = pnp.asarray(a)
    ndim = get_aval(arr).ndim
    if s is not None:
        s = tuple(operator.index(n) for n in s)
        if any(n <= 0 for n in s):
            raise ValueError("Shape should be positive.")
    if s is not None and axes is not None and len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    orig_axes = axes
    if axes is None:
        axes = range(ndim) if s is None else range(ndim - len(s), ndim)
    axes = tuple(axes)
    if len(axes) != len({a % max(ndim, 1) for a in axes}):
        raise ValueError(f"plugax.numpy.fft.{name} does not support repeated axes. Got axes "
                         f"{axes}.")
    if orig_axes is not None:
        for a in orig_axes:
            if not -ndim <= a < ndim:
                raise ValueError(f"axis {a} is out of bounds for array of dimension {ndim}")
        orig_axes = tuple(a % ndim for a in orig_axes)
        axes = tuple(range(ndim - len(axes), ndim))
        if orig_axes == axes:
            orig_axes = None       # already the trailing axes: no transposes in the program
        else:
            arr = pnp.moveaxis(arr, orig_axes, axes)
    shape = tuple(get_aval(arr).shape)
    if s is not None:
        in_s = list(shape)
        for axis, n in zip(axes, s):
            in_s[axis] = n
        if kind == FftType.IRFFT:
            in_s[-1] = in_s[-1] // 2 + 1
        arr = arr[tuple(slice(n) for n in in_s)]                       # crop
        cropped = get_aval(arr).shape
        if tuple(cropped) != tuple(in_s):                                # zero-pad
            import plugax.lax as lax
            zero = np.zeros((), get_aval(arr).dtype)
            arr = lax.pad(arr, zero, [(0, n - m, 0) for n, m in zip(in_s, cropped)])
    elif kind == FftType.IRFFT:
        s = [shape[axis] for axis in axes[:-1]]
        if axes:
            s += [max(0, 2 * (shape[axes[-1]] - 1))]
    else:
        s = [shape[axis] for axis in axes]
    out = _fft_nd(arr, kind, s)
    factor = _norm_factor(s, name, norm, REAL.get(get_aval(out).dtype, get_aval(out).dtype))
    if factor is not None:
        out = pnp.multiply(out, factor)
    if orig_axes is not None:
        out = pnp.moveaxis(out, axes, tuple(orig_axes))
    return out


def _one_axis(name: str, axis: Any) -> None:
    if isinstance(axis, (list, tuple)):
        raise ValueError(f"plugax.numpy.fft.{name} does not support multiple axes. Please "
                         f"use plugax.numpy.fft.{name}n. Got axis = {axis!r}.")


def _two_axes(name: str, axes: Sequence[int]) -> None:
    if len(axes) != 2:
        raise ValueError(f"plugax.numpy.fft.{name} only supports 2 axes. Got axes = {axes!r}.")


def _make_1d(name: str, kind: FftType):
    def fn(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
        _one_axis(name, axis)
        return _fft_core(name, kind, a, None if n is None else [n], [axis], norm)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"numpy.fft.{name}: the 1-D transform along `axis` (cropped/padded to n)."
    return fn


def _make_2d(name: str, kind: FftType):
    def fn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
           norm: str | None = None) -> Any:
        _two_axes(name, axes)
        return _fft_core(name, kind, a, s, axes, norm)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"numpy.fft.{name}: the 2-D transform over `axes` (sizes `s`)."
    return fn


def _make_nd(name: str, kind: FftType):
    def fn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str | None = None) -> Any:
        return _fft_core(name, kind, a, s, axes, norm)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"numpy.fft.{name}: the N-D transform over `axes` (all by default)."
    return fn


def hfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The real spectrum of a Hermitian-symmetric signal given by its first half:
    irfft(conj(a)) * n, as NumPy defines it."""
    pnp = _pnp()
    _one_axis("hfft", axis)
    conj_a = pnp.conj(pnp.asarray(a))
    nn = (get_aval(conj_a).shape[axis] - 1) * 2 if n is None else n
    out = _fft_core("hfft", FftType.IRFFT, conj_a, None if n is None else [n], [axis], norm)
    return pnp.multiply(out, np.asarray(nn, get_aval(out).dtype))


def ihfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The inverse of hfft: conj(rfft(a)) / n."""
    pnp = _pnp()
    _one_axis("ihfft", axis)
    arr = pnp.asarray(a)
    nn = get_aval(arr).shape[axis] if n is None else n
    out = _fft_core("ihfft", FftType.RFFT, arr, None if n is None else [n], [axis], norm)
    return pnp.multiply(pnp.conj(out), np.asarray(1 / nn, REAL[get_aval(out).dtype]))


def _check_freq_args(name: str, n: Any, d: Any) -> None:
    if isinstance(n, (list, tuple)):
        raise ValueError(f"The n argument of plugax.numpy.fft.{name} only takes an int. "
                         f"Got n = {list(n)}.")
    if isinstance(d, (list, tuple)):
        raise ValueError(f"The d argument of plugax.numpy.fft.{name} only takes a single "
                         f"value. Got d = {list(d)}.")


def fftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None) -> Any:
    """The sample frequencies of an n-point FFT: [0, 1, ..., n//2 - 1, -n//2, ..., -1] / (d n)."""
    pnp = _pnp()
    _check_freq_args("fftfreq", n, d)
    dtype = np.dtype(dtype or default_float_dtype())
    k = (np.arange(n) + n // 2) % n - n // 2
    return pnp.divide(pnp.asarray(k.astype(dtype)), pnp.asarray(d * n, dtype=dtype))


def rfftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None) -> Any:
    """The sample frequencies of an n-point rfft: [0, 1, ..., n//2] / (d n)."""
    pnp = _pnp()
    _check_freq_args("rfftfreq", n, d)
    dtype = np.dtype(dtype or default_float_dtype())
    k = np.arange(0, n // 2 + 1)
    return pnp.divide(pnp.asarray(k.astype(dtype)), pnp.asarray(d * n, dtype=dtype))


def _shift(name: str, x: Any, axes: Any, sign: int) -> Any:
    pnp = _pnp()
    x = pnp.asarray(x)
    shape = get_aval(x).shape
    if axes is None:
        axes = tuple(range(len(shape)))
        shift = [sign * (dim // 2) for dim in shape]
    elif isinstance(axes, int):
        shift = sign * (shape[axes] // 2)
    else:
        shift = [sign * (shape[ax] // 2) for ax in axes]
    return pnp.roll(x, shift, axes)


def fftshift(x: Any, axes: None | int | Sequence[int] = None) -> Any:
    """The zero frequency moved to the centre (a roll by half of each axis)."""
    return _shift("fftshift", x, axes, 1)


def ifftshift(x: Any, axes: None | int | Sequence[int] = None) -> Any:
    """The inverse of fftshift."""
    return _shift("ifftshift", x, axes, -1)


NUMPY_FFT: dict[str, Any] = {
    **{n: _make_1d(n, k) for n, k in (("fft", FftType.FFT), ("ifft", FftType.IFFT),
                                      ("rfft", FftType.RFFT), ("irfft", FftType.IRFFT))},
    **{n: _make_2d(n, k) for n, k in (("fft2", FftType.FFT), ("ifft2", FftType.IFFT),
                                      ("rfft2", FftType.RFFT), ("irfft2", FftType.IRFFT))},
    **{n: _make_nd(n, k) for n, k in (("fftn", FftType.FFT), ("ifftn", FftType.IFFT),
                                      ("rfftn", FftType.RFFT), ("irfftn", FftType.IRFFT))},
    "hfft": hfft, "ihfft": ihfft, "fftfreq": fftfreq, "rfftfreq": rfftfreq,
    "fftshift": fftshift, "ifftshift": ifftshift,
}
